// SPDX-License-Identifier: GPL-2.0
/*
 * 200 threads with small stacks, each with its tid, a counter and a value on
 * its stack. After SIGTERM /proc/self/task must list the same 200 tids (plus
 * the main thread), every thread must still count, then each checks its tid
 * and stack value when told to stop and is joined.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NTHREADS 200

struct worker {
	pthread_t th;
	volatile pid_t tid;
	volatile uint64_t count;
	volatile int bad;
} __attribute__((aligned(64)));

static struct worker w[NTHREADS];
static volatile int stop;

static void *worker_fn(void *arg)
{
	struct worker *me = arg;
	struct timespec nap = { 0, 5 * 1000 * 1000 };
	volatile uint64_t mark = 0xabcd0000 + (me - w);
	pid_t tid = syscall(SYS_gettid);

	me->tid = tid;
	while (!stop) {
		me->count++;
		nanosleep(&nap, NULL);
	}
	if (syscall(SYS_gettid) != tid || mark != 0xabcd0000 + (uint64_t)(me - w))
		me->bad = 1;
	return NULL;
}

static int cmp_pid(const void *a, const void *b)
{
	return *(const pid_t *)a - *(const pid_t *)b;
}

/* The sorted tids of /proc/self/task into @tids; their number. */
static int task_tids(pid_t *tids, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max)
		if (de->d_name[0] != '.')
			tids[n++] = atoi(de->d_name);
	closedir(d);
	qsort(tids, n, sizeof(*tids), cmp_pid);
	return n;
}

static int all_counting(void)
{
	static uint64_t seen[NTHREADS];
	int i;

	for (i = 0; i < NTHREADS; i++)
		seen[i] = w[i].count;
	for (int round = 0; round < 1000; round++) {
		for (i = 0; i < NTHREADS && w[i].count > seen[i]; i++)
			;
		if (i == NTHREADS)
			return 0;
		test_sleep_ms(10);
	}
	return -ETIMEDOUT;
}

int main(int argc, char **argv)
{
	static pid_t before[NTHREADS + 8], after[NTHREADS + 8];
	pthread_attr_t attr;
	sigset_t term;
	int n0, n1;

	test_init(argc, argv);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	for (int i = 0; i < NTHREADS; i++) {
		if (pthread_create(&w[i].th, &attr, worker_fn, &w[i])) {
			fail("pthread_create %d failed", i);
			return 1;
		}
	}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	n0 = task_tids(before, NTHREADS + 8);
	if (n0 != NTHREADS + 1 || all_counting()) {
		fail("%d tasks, expected %d, or not all counting", n0, NTHREADS + 1);
		return 1;
	}
	test_daemon();
	test_waitsig();

	n1 = task_tids(after, NTHREADS + 8);
	for (int i = 0; i < n0; i++) {
		if (n1 != n0 || before[i] != after[i]) {
			fail("tids changed: %d tasks now, task %d is %d, was %d", n1, i, after[i],
			     before[i]);
			return 1;
		}
	}
	if (all_counting()) {
		fail("some thread stopped counting");
		return 1;
	}
	stop = 1;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].bad) {
			fail("thread %d (tid %d): tid or stack value changed", i, w[i].tid);
			return 1;
		}
	}
	pass();
	return 0;
}
