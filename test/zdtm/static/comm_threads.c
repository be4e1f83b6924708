// SPDX-License-Identifier: GPL-2.0
/*
 * Task names: the main thread renamed with PR_SET_NAME, three threads each
 * with its own name (one 15 characters long, the maximum). After SIGTERM
 * every thread must read its own name with PR_GET_NAME and in
 * /proc/self/task/TID/comm; a restore that names every thread after the
 * process (or after the binary) fails.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NTHREADS 3

static const char *const names[NTHREADS + 1] = { "zdtm-main", "worker one", "w2",
						 "fifteen-chars-x" };

struct worker {
	pthread_t th;
	pid_t tid;
	int idx;
	volatile int ready;
	char got[16];
};

static struct worker w[NTHREADS + 1];
static volatile int go_check;

static int comm_of(pid_t tid, char *buf, size_t size)
{
	char path[64];
	long n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	n = test_read_file(path, buf, size);
	if (n <= 0)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void *worker_fn(void *arg)
{
	struct worker *me = arg;

	me->tid = syscall(SYS_gettid);
	prctl(PR_SET_NAME, names[me->idx]);
	me->ready = 1;
	while (!go_check)
		test_sleep_ms(2);
	prctl(PR_GET_NAME, me->got);
	me->ready = 2;
	return NULL;
}

int main(int argc, char **argv)
{
	char comm[64];
	sigset_t term;

	test_init(argc, argv);
	w[0].tid = getpid();
	prctl(PR_SET_NAME, names[0]);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	for (int i = 1; i <= NTHREADS; i++) {
		w[i].idx = i;
		if (pthread_create(&w[i].th, NULL, worker_fn, &w[i])) {
			fail("pthread_create failed");
			return 1;
		}
		while (!w[i].ready)
			test_sleep_ms(1);
	}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	test_daemon();
	test_waitsig();

	for (int i = 0; i <= NTHREADS; i++) {
		if (comm_of(w[i].tid, comm, sizeof(comm)) || strcmp(comm, names[i])) {
			fail("thread %d (tid %d): comm \"%s\", expected \"%s\"", i, w[i].tid, comm,
			     names[i]);
			return 1;
		}
	}
	prctl(PR_GET_NAME, w[0].got);
	go_check = 1;
	for (int i = 1; i <= NTHREADS; i++)
		pthread_join(w[i].th, NULL);
	for (int i = 0; i <= NTHREADS; i++) {
		if (strcmp(w[i].got, names[i])) {
			fail("thread %d: PR_GET_NAME \"%s\", expected \"%s\"", i, w[i].got,
			     names[i]);
			return 1;
		}
	}
	pass();
	return 0;
}
