// SPDX-License-Identifier: GPL-2.0
/*
 * Victim of refused.sh: a process holding an object criu-like refuses by
 * name. argv[1] names it:
 *   aio       an AIO context (io_setup()): its ring is mapped in the task
 *   io_uring  an io_uring instance (io_uring_setup())
 *   pidfd-thread-scm  a pidfd of one of its threads (PIDFD_THREAD) held only
 *             in a unix socket's queue
 * It prints "ready PID" and echoes stdin to stdout.
 */
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile pid_t thread_tid;

static void *sleeper(void *arg)
{
	(void)arg;
	thread_tid = (pid_t)syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

/* A pidfd of a thread of its own, sent into a socketpair's queue and closed. */
static int pidfd_thread_scm(void)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = "p", .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			     .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	pthread_t th;
	int sk[2], pfd;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sk) || pthread_create(&th, NULL, sleeper, NULL))
		return -1;
	while (!thread_tid)
		usleep(1000);
	pfd = (int)syscall(SYS_pidfd_open, thread_tid, O_EXCL /* PIDFD_THREAD */);
	if (pfd < 0)
		return -1;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &pfd, sizeof(int));
	if (sendmsg(sk[0], &mh, 0) != 1)
		return -1;
	return close(pfd);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	char c;

	if (!strcmp(what, "aio")) {
		aio_context_t ctx = 0;

		if (syscall(SYS_io_setup, 16, &ctx))
			return 1;
	} else if (!strcmp(what, "io_uring")) {
		unsigned long params[15] = { 0 }; /* struct io_uring_params: 120 bytes */

		if (syscall(SYS_io_uring_setup, 8, params) < 0)
			return 1;
	} else if (!strcmp(what, "pidfd-thread-scm")) {
		if (pidfd_thread_scm())
			return 1;
	} else {
		return 2;
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (read(0, &c, 1) == 1)
		if (write(1, &c, 1) != 1)
			return 1;
	return 0;
}
