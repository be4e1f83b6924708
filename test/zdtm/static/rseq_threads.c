// SPDX-License-Identifier: GPL-2.0
/*
 * Threads with glibc's rseq registration (the default since glibc 2.35). Each
 * thread pins itself to a CPU and checks that the kernel keeps the cpu_id of
 * its rseq area right. After SIGTERM each thread must still be registered at
 * the same area: cpu_id matches getcpu(), moves when the thread is moved to
 * another CPU (a stale copy from the images would not), and registering the
 * same area again gives EBUSY (not 0: unregistered; not EINVAL: another area);
 * the thread can then unregister it (same length and signature) and register
 * it again.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NTHREADS 3

struct worker {
	pthread_t th;
	int idx;
	volatile int ready;
	char why[160];
};

static struct worker w[NTHREADS];
static volatile int go_check;
static int ncpus;
/* The length glibc registered with: __rseq_size or sizeof(struct rseq), by glibc version. */
static unsigned int reg_len;

static struct rseq *my_rseq(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* cpu_id of the rseq area equals getcpu() on @cpu, within 1 s; 0 or -EIO with @why. */
static int cpu_matches(struct worker *me, int cpu, const char *when)
{
	volatile struct rseq *rs = my_rseq();
	unsigned int now = 0;

	if (pin(cpu)) {
		snprintf(me->why, sizeof(me->why), "%s: cannot pin to cpu %d: %m", when, cpu);
		return -EIO;
	}
	for (int i = 0; i < 1000; i++) {
		sched_yield();
		syscall(SYS_getcpu, &now, NULL, NULL);
		if (now == (unsigned int)cpu && rs->cpu_id == now && rs->cpu_id_start == now)
			return 0;
		test_sleep_ms(1);
	}
	snprintf(me->why, sizeof(me->why), "%s: rseq cpu_id %u cpu_id_start %u, getcpu %u (cpu %d)",
		 when, rs->cpu_id, rs->cpu_id_start, now, cpu);
	return -EIO;
}

static void *worker_fn(void *arg)
{
	struct worker *me = arg;
	int cpu = me->idx % ncpus, other = (me->idx + 1) % ncpus;
	long r;

	if (cpu_matches(me, cpu, "before ready"))
		goto out;
	if (!reg_len && syscall(SYS_rseq, my_rseq(), __rseq_size, 0, RSEQ_SIG) && errno == EBUSY)
		reg_len = __rseq_size;
	if (!reg_len && syscall(SYS_rseq, my_rseq(), 32, 0, RSEQ_SIG) && errno == EBUSY)
		reg_len = 32;
	if (!reg_len) {
		snprintf(me->why, sizeof(me->why), "cannot find the registered rseq length");
		goto out;
	}
	me->ready = 1;
	while (!go_check)
		test_sleep_ms(1);
	if (cpu_matches(me, cpu, "after SIGTERM") || cpu_matches(me, other, "after a move"))
		goto out;
	r = syscall(SYS_rseq, my_rseq(), reg_len, 0, RSEQ_SIG);
	if (r != -1 || errno != EBUSY) {
		snprintf(me->why, sizeof(me->why),
			 "registering the area again returned %ld (%m), expected EBUSY", r);
		goto out;
	}
	/* the registration is the program's own: it can end it and make it again */
	if (syscall(SYS_rseq, my_rseq(), reg_len, RSEQ_FLAG_UNREGISTER, RSEQ_SIG) ||
	    syscall(SYS_rseq, my_rseq(), reg_len, 0, RSEQ_SIG)) {
		snprintf(me->why, sizeof(me->why), "unregistering and registering again: %m");
		goto out;
	}
	cpu_matches(me, other, "registered again");
out:
	me->ready = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	sigset_t term;

	test_init(argc, argv);
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (__rseq_size == 0 || (int)my_rseq()->cpu_id == RSEQ_CPU_ID_REGISTRATION_FAILED) {
		fail("glibc did not register rseq (glibc.pthread.rseq tunable?)");
		return 1;
	}
	if (ncpus < 2)
		test_msg("one CPU: the move to another CPU checks nothing\n");
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	for (int i = 0; i < NTHREADS; i++) {
		w[i].idx = i;
		if (pthread_create(&w[i].th, NULL, worker_fn, &w[i])) {
			fail("pthread_create failed");
			return 1;
		}
	}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	for (int i = 0; i < NTHREADS; i++) {
		while (!w[i].ready)
			test_sleep_ms(1);
		if (w[i].why[0]) {
			fail("thread %d: %s", i, w[i].why);
			return 1;
		}
	}
	test_daemon();
	test_waitsig();

	go_check = 1;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].why[0]) {
			fail("thread %d: %s", i, w[i].why);
			return 1;
		}
	}
	pass();
	return 0;
}
