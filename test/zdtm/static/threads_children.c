// SPDX-License-Identifier: GPL-2.0
/*
 * Children forked by threads other than the main one, in a process of 80
 * threads: threads 5, 40 and 79 each fork a child that waits for SIGTERM.
 * The seize finds a process's children in the children file of each of its
 * threads (read side by side for so many threads, and not read again once a
 * thread had none): a child missed there would not be dumped. After SIGTERM
 * each child must be the test's again (waitpid() of it from the main thread
 * sees it exit 0).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "threads-util.h"
#include "zdtmtst.h"

#define NTHREADS 80

static const int forkers[] = { 5, 40, 79 };
#define NKIDS ((int)(sizeof(forkers) / sizeof(forkers[0])))

static volatile pid_t kids[NKIDS];
static volatile int ready, stop;

static void *thread_fn(void *arg)
{
	int i = (int)(long)arg, k;

	for (k = 0; k < NKIDS; k++) {
		pid_t kid;

		if (forkers[k] != i)
			continue;
		kid = fork();
		if (kid == 0) {
			test_waitsig();
			_exit(0);
		}
		kids[k] = kid < 0 ? -1 : kid;
	}
	__atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
	while (!stop)
		test_sleep_ms(5);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NTHREADS];
	int pids[NKIDS], k, ret;
	long i;

	test_init(argc, argv);
	if (test_threads_start(th, NTHREADS, thread_fn))
		return 1;
	while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < NTHREADS)
		test_sleep_ms(1);
	for (k = 0; k < NKIDS; k++) {
		if (kids[k] <= 0) {
			fail("thread %d could not fork", forkers[k]);
			return 1;
		}
		pids[k] = kids[k];
	}
	test_daemon();
	test_waitsig();
	ret = test_reap_children(pids, NKIDS);
	stop = 1;
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	if (ret) {
		fail("a child forked by a thread did not come back as the test's");
		return 1;
	}
	pass();
	return 0;
}
