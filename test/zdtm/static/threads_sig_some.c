// SPDX-License-Identifier: GPL-2.0
/*
 * Forty threads, every third with a real-time signal queued to it alone
 * (rt_tgsigqueueinfo, its index in the value), blocked everywhere; the
 * others with none. The dump reads a thread's queue by PTRACE_PEEKSIGINFO
 * only where the BPF task iterator shows one (dump/thread-facts.c: forty
 * threads are enough for it to run): after SIGTERM each thread must hold
 * its own signal with its value, or none, and the process-wide queue none.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NTHREADS 40
#define SIG_THR (SIGRTMIN + 3)

struct worker {
	pthread_t th;
	pid_t tid;
	int idx;
	const char *why;
};

static struct worker w[NTHREADS];
static volatile int phase; /* 1: the workers check now */
static volatile int nready, ndone;

static bool has_signal(int idx)
{
	return idx % 3 == 0;
}

static void *worker_fn(void *arg)
{
	struct worker *me = arg;
	struct timespec zero = { 0, 0 };
	sigset_t set, pend;
	siginfo_t si;

	me->tid = syscall(SYS_gettid);
	__atomic_add_fetch(&nready, 1, __ATOMIC_SEQ_CST);
	while (!phase)
		test_sleep_ms(1);
	sigemptyset(&set);
	sigaddset(&set, SIG_THR);
	/* sigpending() is the thread's own queue and the process's */
	sigpending(&pend);
	if (sigismember(&pend, SIG_THR) != has_signal(me->idx))
		me->why = has_signal(me->idx) ? "its signal is gone" : "a signal it never had";
	else if (has_signal(me->idx) && (sigtimedwait(&set, &si, &zero) != SIG_THR ||
					 si.si_value.sival_int != 700 + me->idx))
		me->why = "its signal has another value";
	else if (sigtimedwait(&set, &si, &zero) >= 0)
		me->why = "a second signal queued";
	__atomic_add_fetch(&ndone, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

int main(int argc, char **argv)
{
	sigset_t set;
	int i;

	test_init(argc, argv);
	sigemptyset(&set);
	sigaddset(&set, SIG_THR);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < NTHREADS; i++) {
		w[i].idx = i;
		if (pthread_create(&w[i].th, NULL, worker_fn, &w[i])) {
			fail("pthread_create failed");
			return 1;
		}
	}
	while (nready < NTHREADS)
		test_sleep_ms(1);
	for (i = 0; i < NTHREADS; i++) {
		siginfo_t si = { .si_signo = SIG_THR, .si_code = SI_QUEUE };

		if (!has_signal(i))
			continue;
		si.si_pid = getpid();
		si.si_uid = getuid();
		si.si_value.sival_int = 700 + i;
		if (syscall(SYS_rt_tgsigqueueinfo, getpid(), w[i].tid, SIG_THR, &si)) {
			fail("cannot queue to thread %d: %m", i);
			return 1;
		}
	}
	test_daemon();
	test_waitsig();

	phase = 1;
	while (ndone < NTHREADS)
		test_sleep_ms(1);
	for (i = 0; i < NTHREADS; i++)
		if (w[i].why) {
			fail("thread %d (tid %d): %s", i, w[i].tid, w[i].why);
			return 1;
		}
	sigpending(&set);
	if (sigismember(&set, SIG_THR)) {
		fail("the main thread sees %d pending", SIG_THR);
		return 1;
	}
	pass();
	return 0;
}
