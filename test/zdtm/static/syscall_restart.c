// SPDX-License-Identifier: GPL-2.0
/*
 * Threads asleep in system calls that the kernel restarts transparently when
 * no handler runs: read() on an empty pipe, waitpid() on a live child, and
 * pthread_cond_wait() (a futex). SIGTERM is blocked in them, so no handler
 * ever interrupts them. After SIGTERM the main thread feeds each one: read()
 * must return the bytes written, waitpid() the child's exit status 5, the
 * condition wait must end with the predicate set; none may have returned
 * EINTR or early. A restore that resumes them with an error shows here.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static int p[2], child_go[2];
static pid_t kid;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int predicate;
static volatile int in_call[3];
static char why[3][128];

static void *reader(void *arg)
{
	char buf[16] = "";
	ssize_t n;

	(void)arg;
	in_call[0] = 1;
	n = read(p[0], buf, sizeof(buf));
	if (n != 6 || memcmp(buf, "hello!", 6))
		snprintf(why[0], sizeof(why[0]), "read() returned %zd (%s) \"%.*s\"", n,
			 n < 0 ? strerror(errno) : "", n > 0 ? (int)n : 0, buf);
	return NULL;
}

static void *waiter(void *arg)
{
	int status = 0;
	pid_t r;

	(void)arg;
	in_call[1] = 1;
	r = waitpid(kid, &status, 0);
	if (r != kid || !WIFEXITED(status) || WEXITSTATUS(status) != 5)
		snprintf(why[1], sizeof(why[1]), "waitpid() returned %d (%s), status 0x%x", r,
			 r < 0 ? strerror(errno) : "", status);
	return NULL;
}

static void *cond_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	in_call[2] = 1;
	while (!predicate)
		pthread_cond_wait(&cv, &mu);
	if (predicate != 1)
		snprintf(why[2], sizeof(why[2]), "woke with predicate %d", predicate);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fns[3])(void *) = { reader, waiter, cond_waiter };
	pthread_t th[3];
	sigset_t term;
	char c;

	test_init(argc, argv);
	if (pipe(p) || pipe(child_go)) {
		fail("pipe: %m");
		return 1;
	}
	kid = fork();
	if (kid == 0)
		_exit(read(child_go[0], &c, 1) == 1 ? 5 : 6);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	for (int i = 0; i < 3; i++) {
		if (pthread_create(&th[i], NULL, fns[i], NULL)) {
			fail("pthread_create failed");
			return 1;
		}
	}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	for (int i = 0; i < 3; i++)
		while (!in_call[i])
			test_sleep_ms(1);
	test_sleep_ms(50); /* into the calls themselves */
	test_daemon();
	test_waitsig();

	for (int i = 0; i < 3; i++) {
		if (why[i][0]) {
			fail("thread %d ended its call before it was fed: %s", i, why[i]);
			return 1;
		}
	}
	if (write(p[1], "hello!", 6) != 6 || write(child_go[1], "g", 1) != 1) {
		fail("write: %m");
		return 1;
	}
	pthread_mutex_lock(&mu);
	predicate = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		if (why[i][0]) {
			fail("thread %d: %s", i, why[i]);
			return 1;
		}
	}
	pass();
	return 0;
}
