// SPDX-License-Identifier: GPL-2.0
/*
 * Victim of refused.sh: a process holding an object criu-like refuses by
 * name. argv[1] names it:
 *   aio       an AIO context (io_setup()): its ring is mapped in the task
 *   io_uring-poll    an io_uring with a request in flight (a poll of an empty pipe)
 *   io_uring-sqpoll  an io_uring with a submission thread (IORING_SETUP_SQPOLL)
 *   io_uring-sqpoll-threads  the same in a process of 100 more threads
 *   pidfd-thread-scm  a pidfd of one of its threads (PIDFD_THREAD) held only
 *             in a unix socket's queue
 *   clone-vm  a child process sharing its address space (CLONE_VM without
 *             CLONE_THREAD, as a vfork child before its exec), dying with it
 * It prints "ready PID" and echoes stdin to stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <sys/mman.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A ring with a poll of an empty pipe in flight, or with a submission thread. */
static int uring(int sqpoll)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqes;
	char *r;
	int fd, pfd[2];

	memset(&p, 0, sizeof(p));
	p.flags = sqpoll ? IORING_SETUP_SQPOLL : 0;
	fd = (int)syscall(SYS_io_uring_setup, 8, &p);
	if (fd < 0 || sqpoll)
		return fd < 0 ? -errno : 0;
	r = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQ_RING);
	sqes = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQES);
	if (r == MAP_FAILED || sqes == MAP_FAILED || pipe(pfd))
		return -errno;
	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_POLL_ADD;
	sqes[0].fd = pfd[0];
	sqes[0].poll32_events = POLLIN;
	((unsigned int *)(r + p.sq_off.array))[0] = 0;
	*(unsigned int *)(r + p.sq_off.tail) = 1;
	return syscall(SYS_io_uring_enter, fd, 1, 0, 0, NULL, 0) == 1 ? 0 : -EIO;
}

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
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = sizeof(buf)
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	pthread_t th;
	int sk[2], pfd, err;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sk))
		return -errno;
	err = pthread_create(&th, NULL, sleeper, NULL);
	if (err)
		return -err; /* the error number, errno untouched */
	while (!thread_tid)
		usleep(1000);
	pfd = (int)syscall(SYS_pidfd_open, thread_tid, O_EXCL /* PIDFD_THREAD */);
	if (pfd < 0)
		return -errno;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &pfd, sizeof(int));
	if (sendmsg(sk[0], &mh, 0) != 1)
		return -errno;
	return close(pfd);
}

/* The child of clone-vm: raw syscalls only (the libc's state is its parent's). */
static int vm_child(void *arg)
{
	(void)arg;
	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	for (;;)
		syscall(SYS_pause);
	return 0;
}

static int clone_vm(void)
{
	static char stack[64 << 10] __attribute__((aligned(16)));

	return clone(vm_child, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL) < 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	char c;

	if (!strcmp(what, "aio")) {
		aio_context_t ctx = 0;

		if (syscall(SYS_io_setup, 16, &ctx))
			return 1;
	} else if (!strcmp(what, "io_uring-poll") || !strcmp(what, "io_uring-sqpoll")) {
		if (uring(what[9] == 's'))
			return 1;
	} else if (!strcmp(what, "io_uring-sqpoll-threads")) {
		/* the submission thread among many: the seize checks those side by side */
		for (int i = 0; i < 100; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, sleeper, NULL))
				return 1;
		}
		if (uring(1))
			return 1;
	} else if (!strcmp(what, "pidfd-thread-scm")) {
		if (pidfd_thread_scm())
			return 1;
	} else if (!strcmp(what, "clone-vm")) {
		if (clone_vm())
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
