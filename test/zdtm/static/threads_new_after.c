// SPDX-License-Identifier: GPL-2.0
/*
 * Life goes on after the restore: two threads that exit before the dump
 * leave their stacks in glibc's cache, two keep running. After SIGTERM the
 * process must be able to create 16 new threads (reusing cached stacks),
 * each allocating memory with malloc (per-thread arenas) and getting its
 * own tid and working TLS, join them and the old ones, and fork a child that
 * does the same. A restore with an inconsistent TLS, robust list or
 * clear_child_tid state breaks pthread_create or pthread_join.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NNEW 16

static __thread int tls_mark;
static volatile int old_stop;

static void *short_fn(void *arg)
{
	return arg;
}

static void *old_fn(void *arg)
{
	tls_mark = (int)(long)arg;
	while (!old_stop)
		test_sleep_ms(2);
	return tls_mark == (int)(long)arg ? arg : NULL;
}

static void *new_fn(void *arg)
{
	size_t n = 1 << 16;
	unsigned char *p = malloc(n);
	long ok;

	tls_mark = (int)(long)arg;
	if (!p)
		return NULL;
	datagen(p, n, (long)arg);
	ok = !datachk(p, n, (long)arg, NULL) && tls_mark == (int)(long)arg &&
	     syscall(SYS_gettid) != getpid();
	free(p);
	return ok ? arg : NULL;
}

/* Create, run and join NNEW threads; 0 or -EIO. */
static int new_threads(void)
{
	pthread_t th[NNEW];

	for (long i = 0; i < NNEW; i++)
		if (pthread_create(&th[i], NULL, new_fn, (void *)(i + 1)))
			return -EIO;
	for (long i = 0; i < NNEW; i++) {
		void *r;

		if (pthread_join(th[i], &r) || r != (void *)(i + 1))
			return -EIO;
	}
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t old[2], gone[2];
	sigset_t term;
	int status;
	pid_t kid;

	test_init(argc, argv);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	for (long i = 0; i < 2; i++) {
		void *r;

		if (pthread_create(&gone[i], NULL, short_fn, (void *)i) ||
		    pthread_join(gone[i], &r) ||
		    pthread_create(&old[i], NULL, old_fn, (void *)(100 + i))) {
			fail("pthread_create failed");
			return 1;
		}
	}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	test_daemon();
	test_waitsig();

	if (new_threads()) {
		fail("new threads after the restore failed");
		return 1;
	}
	old_stop = 1;
	for (long i = 0; i < 2; i++) {
		void *r;

		if (pthread_join(old[i], &r) || r != (void *)(100 + i)) {
			fail("joining old thread %ld failed or its TLS changed", i);
			return 1;
		}
	}
	kid = fork();
	if (kid == 0)
		_exit(new_threads() ? 1 : 0);
	if (kid < 0 || waitpid(kid, &status, 0) != kid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fail("a child forked after the restore could not run threads (status 0x%x)",
		     status);
		return 1;
	}
	pass();
	return 0;
}
