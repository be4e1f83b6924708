// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread signal state: four threads, each with its own blocked set and a
 * signal queued to it alone (rt_tgsigqueueinfo, with the thread's index as the
 * value), blocked by that thread only. After SIGTERM each thread must have
 * its own mask back (also in /proc/self/task/TID/status), its own signal
 * pending with its value, and no other thread's signal.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NTHREADS 4

struct worker {
	pthread_t th;
	pid_t tid;
	int idx;
	sigset_t mask; /* as read back after setting it */
	const char *why;
	char detail[128];
};

static struct worker w[NTHREADS];
static volatile int phase; /* 2: the workers check now */
static volatile int nready, ndone;

static int my_sig(int idx)
{
	return SIGRTMIN + 4 + idx;
}

static void *worker_fn(void *arg)
{
	struct worker *me = arg;
	struct timespec zero = { 0, 0 };
	sigset_t set, pend;
	siginfo_t si;

	me->tid = syscall(SYS_gettid);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, my_sig(me->idx));
	/* A different extra standard signal blocked per thread. */
	sigaddset(&set, SIGUSR1 + me->idx % 2 * (SIGUSR2 - SIGUSR1));
	sigaddset(&set, SIGWINCH - me->idx);
	pthread_sigmask(SIG_SETMASK, &set, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &me->mask);
	__atomic_add_fetch(&nready, 1, __ATOMIC_SEQ_CST);
	while (phase < 2)
		test_sleep_ms(1);

	pthread_sigmask(SIG_BLOCK, NULL, &set);
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&set, s) != sigismember(&me->mask, s)) {
			snprintf(me->detail, sizeof(me->detail),
				 "signal %d blocked %d, expected %d", s, sigismember(&set, s),
				 sigismember(&me->mask, s));
			me->why = me->detail;
		}
	sigpending(&pend);
	for (int i = 0; i < NTHREADS && !me->why; i++)
		if (sigismember(&pend, my_sig(i)) != (i == me->idx))
			me->why = "the pending set holds another thread's signal or misses its own";
	sigemptyset(&set);
	sigaddset(&set, my_sig(me->idx));
	if (!me->why && (sigtimedwait(&set, &si, &zero) != my_sig(me->idx) ||
			 si.si_value.sival_int != 500 + me->idx))
		me->why = "its signal is gone or has another value";
	__atomic_add_fetch(&ndone, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* SigBlk of a thread from /proc, as hex text. */
static int sigblk(pid_t tid, char *buf, size_t size)
{
	char path[64], status[4096], *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	if (test_read_file(path, status, sizeof(status)) < 0 || !(p = strstr(status, "SigBlk:")))
		return -ENOENT;
	snprintf(buf, size, "%.*s", (int)strcspn(p, "\n"), p);
	return 0;
}

int main(int argc, char **argv)
{
	char blk[NTHREADS][64], now[64];

	test_init(argc, argv);
	for (int i = 0; i < NTHREADS; i++) {
		w[i].idx = i;
		if (pthread_create(&w[i].th, NULL, worker_fn, &w[i])) {
			fail("pthread_create failed");
			return 1;
		}
	}
	while (nready < NTHREADS)
		test_sleep_ms(1);
	for (int i = 0; i < NTHREADS; i++) {
		siginfo_t si = { .si_signo = my_sig(i), .si_code = SI_QUEUE };

		si.si_pid = getpid();
		si.si_uid = getuid();
		si.si_value.sival_int = 500 + i;
		if (syscall(SYS_rt_tgsigqueueinfo, getpid(), w[i].tid, my_sig(i), &si) ||
		    sigblk(w[i].tid, blk[i], sizeof(blk[i]))) {
			fail("cannot queue to thread %d: %m", i);
			return 1;
		}
	}
	test_daemon();
	test_waitsig();

	for (int i = 0; i < NTHREADS; i++) {
		if (sigblk(w[i].tid, now, sizeof(now)) || strcmp(now, blk[i])) {
			fail("thread %d: /proc %s, expected %s", i, now, blk[i]);
			return 1;
		}
	}
	phase = 2;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].why) {
			fail("thread %d (tid %d): %s", i, w[i].tid, w[i].why);
			return 1;
		}
	}
	pass();
	return 0;
}
