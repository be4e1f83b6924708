// SPDX-License-Identifier: GPL-2.0
/*
 * CPU affinity per thread: the main thread on every CPU, one thread pinned to
 * the last CPU, one to CPU 0. After SIGTERM each thread's mask must be the
 * same (sched_getaffinity per tid) and the pinned threads must run where they
 * are pinned (getcpu). Needs two CPUs to mean anything; on one it checks the
 * masks only.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

struct worker {
	pthread_t th;
	pid_t tid;
	int cpu; /* -1: all */
	cpu_set_t mask;
	volatile int phase;
	volatile int ran_on;
};

static struct worker w[3];

static void *worker_fn(void *arg)
{
	struct worker *me = arg;
	unsigned int cpu = 0;

	me->tid = syscall(SYS_gettid);
	if (me->cpu >= 0) {
		CPU_ZERO(&me->mask);
		CPU_SET(me->cpu, &me->mask);
		if (sched_setaffinity(0, sizeof(me->mask), &me->mask))
			me->tid = -1;
	}
	me->phase = 1;
	while (me->phase != 2)
		test_sleep_ms(2);
	syscall(SYS_getcpu, &cpu, NULL, NULL);
	me->ran_on = cpu;
	me->phase = 3;
	return NULL;
}

int main(int argc, char **argv)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	sigset_t term;

	test_init(argc, argv);
	w[0].cpu = -1;
	w[0].tid = getpid();
	w[1].cpu = ncpu - 1;
	w[2].cpu = 0;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	for (int i = 1; i < 3; i++) {
		if (pthread_create(&w[i].th, NULL, worker_fn, &w[i])) {
			fail("pthread_create failed");
			return 1;
		}
		while (!w[i].phase)
			test_sleep_ms(1);
		if (w[i].tid < 0) {
			fail("sched_setaffinity to cpu %d failed", w[i].cpu);
			return 1;
		}
	}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	if (sched_getaffinity(0, sizeof(w[0].mask), &w[0].mask)) {
		fail("sched_getaffinity: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	for (int i = 0; i < 3; i++) {
		cpu_set_t now;

		if (sched_getaffinity(w[i].tid, sizeof(now), &now) ||
		    !CPU_EQUAL(&now, &w[i].mask)) {
			fail("thread %d (tid %d): %d CPUs in its mask, expected %d%s", i, w[i].tid,
			     CPU_COUNT(&now), CPU_COUNT(&w[i].mask),
			     w[i].cpu >= 0 ? " (pinned)" : "");
			return 1;
		}
	}
	for (int i = 1; i < 3; i++) {
		w[i].phase = 2;
		pthread_join(w[i].th, NULL);
		if (w[i].ran_on != w[i].cpu) {
			fail("thread %d runs on cpu %d, pinned to %d", i, w[i].ran_on, w[i].cpu);
			return 1;
		}
	}
	pass();
	return 0;
}
