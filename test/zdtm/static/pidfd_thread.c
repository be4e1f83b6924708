// SPDX-License-Identifier: GPL-2.0
/*
 * A pidfd of one of the process's own threads (PIDFD_THREAD, 6.9), opened
 * non-blocking (close-on-exec, as pidfd_open() makes it), dup()ed to a
 * second fd without close-on-exec. After SIGTERM:
 * fdinfo says the same thread (its tid), both fds are one description with
 * O_EXCL (PIDFD_THREAD) and O_NONBLOCK, close-on-exec as it was; the pidfd
 * is not readable while the thread runs and becomes readable when the
 * thread exits (and not when the other thread does).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static volatile int stop[2];
static volatile pid_t tids[2];

static void *body(void *arg)
{
	int i = (int)(long)arg;

	tids[i] = (pid_t)syscall(SYS_gettid);
	while (!stop[i])
		test_sleep_ms(5);
	return NULL;
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

int main(int argc, char **argv)
{
	pthread_t th[2];
	int fd, dfd, i;

	test_init(argc, argv);
	for (i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, body, (void *)(long)i))
			goto err;
	while (!tids[0] || !tids[1])
		test_sleep_ms(1);
	fd = (int)syscall(SYS_pidfd_open, tids[0], PIDFD_THREAD | O_NONBLOCK);
	if (fd < 0)
		goto err;
	dfd = dup(fd); /* pidfd_open() sets close-on-exec: this one has none */
	if (dfd < 0)
		goto err;
	test_daemon();
	test_waitsig();

	if (test_fdinfo_pid(fd) != tids[0] || test_fdinfo_pid(dfd) != tids[0]) {
		fail("the pidfds name %d and %d, not thread %d", test_fdinfo_pid(fd),
		     test_fdinfo_pid(dfd), tids[0]);
		return 1;
	}
	if ((fcntl(fd, F_GETFL) & (O_EXCL | O_NONBLOCK)) != (O_EXCL | O_NONBLOCK) ||
	    !(fcntl(fd, F_GETFD) & FD_CLOEXEC) || (fcntl(dfd, F_GETFD) & FD_CLOEXEC)) {
		fail("flags %#o, close-on-exec %d/%d", fcntl(fd, F_GETFL), fcntl(fd, F_GETFD),
		     fcntl(dfd, F_GETFD));
		return 1;
	}
	/* one description: a flag changed through one fd shows through the other */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) ||
	    (fcntl(dfd, F_GETFL) & O_NONBLOCK)) {
		fail("the two fds are not one description any more");
		return 1;
	}
	if (readable(fd)) {
		fail("the pidfd is readable while its thread runs");
		return 1;
	}
	stop[1] = 1;
	pthread_join(th[1], NULL);
	if (readable(fd)) {
		fail("the pidfd became readable when the other thread exited");
		return 1;
	}
	stop[0] = 1;
	pthread_join(th[0], NULL);
	for (i = 0; i < 500 && !readable(dfd); i++)
		test_sleep_ms(10);
	if (!readable(dfd)) {
		fail("the pidfd did not become readable when its thread exited");
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
