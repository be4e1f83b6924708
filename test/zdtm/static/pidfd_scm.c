// SPDX-License-Identifier: GPL-2.0
/*
 * pidfds held only in an SCM_RIGHTS queue: a datagram of a socketpair
 * carries a pidfd of a waiting child (PIDFD_NONBLOCK) and a pidfd of a
 * child that exited with 42 and was reaped; a stream carries another pidfd
 * of the waiting child. The sender closed its own copies before the dump.
 * After SIGTERM the messages are received: each fd is a pidfd (link) of the
 * same process (fdinfo Pid:, or -1 and the exit status for the dead one),
 * with its flags; the child can be signalled through them, and once
 * SIGKILLed through the datagram's, waitid(P_PIDFD) on the stream's reaps it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int is_pidfd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	return !strcmp(link, "anon_inode:[pidfd]");
}

static int send_fds(int sk, const int *fds, int n)
{
	char buf[CMSG_SPACE(sizeof(int) * 2)] = { 0 };
	struct iovec iov = { .iov_base = "p", .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = buf,
			     .msg_controllen = CMSG_SPACE(sizeof(int) * n) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	return sendmsg(sk, &mh, 0) == 1 ? 0 : neg_errno();
}

/* The fds of one message, into @fds; how many, or -1. */
static int recv_fds(int sk, int *fds, int max)
{
	char buf[CMSG_SPACE(sizeof(int) * 4)], c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = sizeof(buf)
	};
	struct cmsghdr *cm;
	int n;

	if (recvmsg(sk, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1 || c != 'p')
		return neg_errno();
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
	if (n > max)
		return -ENOBUFS;
	memcpy(fds, CMSG_DATA(cm), sizeof(int) * n);
	return n;
}

int main(int argc, char **argv)
{
	int dg[2], st[2], go[2], fds[4], got[4], sdead, n;
	pid_t waiting, gone;
	siginfo_t si;
	char c;

	test_init(argc, argv);
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, dg) || socketpair(AF_UNIX, SOCK_STREAM, 0, st) ||
	    pipe(go))
		return 1;
	waiting = fork();
	if (waiting == 0) {
		for (;;)
			pause();
	}
	gone = fork();
	if (gone == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(42);
	}
	fds[0] = (int)syscall(__NR_pidfd_open, waiting, O_NONBLOCK);
	fds[1] = (int)syscall(__NR_pidfd_open, gone, 0);
	fds[2] = (int)syscall(__NR_pidfd_open, waiting, 0);
	if (waiting < 0 || gone < 0 || fds[0] < 0 || fds[1] < 0 || fds[2] < 0 ||
	    write(go[1], "x", 1) != 1 || waitpid(gone, &sdead, 0) != gone) {
		fail("setup: %m");
		return 1;
	}
	if (test_pidfd_exit_status(fds[1]) != sdead) {
		fail("this kernel gives no exit status through a pidfd (6.15)");
		return 1;
	}
	if (send_fds(dg[0], fds, 2) || send_fds(st[0], fds + 2, 1)) {
		fail("sendmsg: %m");
		return 1;
	}
	close(fds[0]);
	close(fds[1]);
	close(fds[2]);

	test_daemon();
	test_waitsig();

	n = recv_fds(dg[1], got, 4);
	if (n != 2 || recv_fds(st[1], got + 2, 2) != 1) {
		fail("the queues do not hold the pidfds: %d fds in the datagram", n);
		return 1;
	}
	if (!is_pidfd(got[0]) || !is_pidfd(got[1]) || !is_pidfd(got[2])) {
		fail("an fd received is not a pidfd");
		return 1;
	}
	if (test_fdinfo_pid(got[0]) != waiting || test_fdinfo_pid(got[2]) != waiting ||
	    !(fcntl(got[0], F_GETFL) & O_NONBLOCK) || (fcntl(got[2], F_GETFL) & O_NONBLOCK)) {
		fail("the waiting child's pidfds: Pid %d and %d (expected %d), flags %#x and %#x",
		     test_fdinfo_pid(got[0]), test_fdinfo_pid(got[2]), waiting,
		     fcntl(got[0], F_GETFL), fcntl(got[2], F_GETFL));
		return 1;
	}
	if (test_fdinfo_pid(got[1]) != -1 || test_pidfd_exit_status(got[1]) != sdead) {
		fail("the dead child's pidfd: Pid %d, status %#x (expected -1, %#x)",
		     test_fdinfo_pid(got[1]), test_pidfd_exit_status(got[1]), sdead);
		return 1;
	}
	if (syscall(__NR_pidfd_send_signal, got[2], 0, NULL, 0) ||
	    syscall(__NR_pidfd_send_signal, got[0], SIGKILL, NULL, 0)) {
		fail("pidfd_send_signal: %m");
		return 1;
	}
	memset(&si, 0, sizeof(si));
	/* the blocking one: waitid() on a PIDFD_NONBLOCK one may say EAGAIN */
	if (waitid(P_PIDFD, (id_t)got[2], &si, WEXITED) || si.si_pid != waiting ||
	    si.si_code != CLD_KILLED || si.si_status != SIGKILL) {
		fail("waitid(P_PIDFD) on the received pidfd: %m (pid %d, code %d)", si.si_pid,
		     si.si_code);
		return 1;
	}
	pass();
	return 0;
}
