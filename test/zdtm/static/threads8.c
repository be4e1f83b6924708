// SPDX-License-Identifier: GPL-2.0
/*
 * 8 threads, each with its own counter (shared memory) and a shadow copy and
 * a datagen buffer on its own stack. After SIGTERM each thread must still run
 * (its counter advances), with the same tid and intact stack.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "zdtmtst.h"

#define NTHREADS 8

struct worker {
	pthread_t thread;
	pid_t tid;
	int index;
	volatile uint64_t counter;
	volatile int bad; /* why the thread stopped early: a message index */
	uint64_t shadow_at_end;
} __attribute__((aligned(64)));

static struct worker workers[NTHREADS];
static volatile int stop_workers;

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct timespec nap = { 0, 200 * 1000 };
	unsigned char stackbuf[2048];
	volatile uint64_t shadow = 0;

	datagen(stackbuf, sizeof(stackbuf), 100 + w->index);
	w->tid = syscall(SYS_gettid);
	while (!stop_workers) {
		if (w->counter != shadow) {
			w->bad = 1;
			break;
		}
		w->counter++;
		shadow++;
		nanosleep(&nap, NULL);
	}
	if (datachk(stackbuf, sizeof(stackbuf), 100 + w->index, NULL))
		w->bad = 2;
	if (syscall(SYS_gettid) != w->tid)
		w->bad = 3;
	w->shadow_at_end = shadow;
	return NULL;
}

/* Every counter moved past @seen within 10 s: the threads are running. */
static int all_advanced(const uint64_t *seen)
{
	for (int round = 0; round < 10000; round++) {
		int i;

		for (i = 0; i < NTHREADS; i++)
			if (workers[i].counter <= seen[i] && !workers[i].bad)
				break;
		if (i == NTHREADS)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

int main(int argc, char **argv)
{
	static const char *const why[] = { "", "counter and shadow differ", "stack data changed",
					   "tid changed" };
	uint64_t seen[NTHREADS] = { 0 };
	int ret = 0;

	test_init(argc, argv);
	for (int i = 0; i < NTHREADS; i++) {
		workers[i].index = i;
		if (pthread_create(&workers[i].thread, NULL, worker_fn, &workers[i])) {
			fail("pthread_create %d failed", i);
			return 1;
		}
	}
	if (all_advanced(seen)) {
		fail("threads did not start counting");
		return 1;
	}
	test_daemon();
	test_waitsig();

	for (int i = 0; i < NTHREADS; i++)
		seen[i] = workers[i].counter;
	if (all_advanced(seen)) {
		fail("some thread stopped counting after SIGTERM");
		ret = 1;
	}
	stop_workers = 1;
	for (int i = 0; i < NTHREADS; i++) {
		struct worker *w = &workers[i];

		pthread_join(w->thread, NULL);
		if (w->bad) {
			fail("thread %d (tid %d): %s", i, w->tid, why[w->bad]);
			ret = 1;
		} else if (w->counter != w->shadow_at_end) {
			fail("thread %d: counter %lu, shadow %lu", i, (unsigned long)w->counter,
			     (unsigned long)w->shadow_at_end);
			ret = 1;
		}
	}
	if (!ret)
		pass();
	return ret;
}
