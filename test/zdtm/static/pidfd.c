// SPDX-License-Identifier: GPL-2.0
/*
 * pidfds of a child that waits: one from pidfd_open() at fd 40 with a dup at
 * 42 (one description), one with PIDFD_NONBLOCK and close-on-exec at 41,
 * watched by an epoll. After SIGTERM each is still a pidfd of the child
 * (link, fdinfo Pid:), with its flags and close-on-exec bit, 40 and 42 still
 * share their flags, the child can be signalled through them; once it is
 * SIGKILLed through one, the pidfds turn readable, the epoll reports it, and
 * waitid(P_PIDFD) reaps it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif

#define FD_PLAIN 40
#define FD_NONBLOCK 41
#define FD_DUP 42
#define EP_DATA 0x91dfdull

static const int fds[] = { FD_PLAIN, FD_NONBLOCK, FD_DUP };

static int pidfd_open(pid_t pid, unsigned int flags)
{
	return (int)syscall(__NR_pidfd_open, pid, flags);
}

static int pidfd_send_signal(int fd, int sig)
{
	return (int)syscall(__NR_pidfd_send_signal, fd, sig, NULL, 0);
}

static int check_one(int fd, pid_t child, int fl, int fdfl)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	if (strcmp(link, "anon_inode:[pidfd]")) {
		fail("fd %d is \"%s\", not a pidfd", fd, link);
		return 1;
	}
	if (test_fdinfo_pid(fd) != child) {
		fail("fd %d: fdinfo Pid: %d, expected %d", fd, test_fdinfo_pid(fd), child);
		return 1;
	}
	if (fcntl(fd, F_GETFL) != fl || fcntl(fd, F_GETFD) != fdfl) {
		fail("fd %d: flags %#x/%#x, expected %#x/%#x", fd, fcntl(fd, F_GETFL),
		     fcntl(fd, F_GETFD), fl, fdfl);
		return 1;
	}
	if (pidfd_send_signal(fd, 0)) {
		fail("fd %d: pidfd_send_signal(0): %m", fd);
		return 1;
	}
	return 0;
}

/* 40 and 42 are one description: a flag set through one is seen through the other. */
static int check_shared(int fl)
{
	int ok;

	if (fcntl(FD_PLAIN, F_SETFL, fl | O_NONBLOCK))
		return 1;
	ok = fcntl(FD_DUP, F_GETFL) & O_NONBLOCK;
	if (fcntl(FD_PLAIN, F_SETFL, fl) || !ok) {
		fail("fds %d and %d are no longer one description", FD_PLAIN, FD_DUP);
		return 1;
	}
	return 0;
}

/* Kill the child through a pidfd: readable, reported by @ep, reaped by waitid(P_PIDFD). */
static int check_exit(int ep, pid_t child)
{
	struct pollfd pfd = { .fd = FD_NONBLOCK, .events = POLLIN };
	struct epoll_event ev;
	siginfo_t si = { 0 };

	if (poll(&pfd, 1, 0) != 0) {
		fail("the pidfd is readable while the child lives");
		return 1;
	}
	if (pidfd_send_signal(FD_PLAIN, SIGKILL)) {
		fail("pidfd_send_signal(SIGKILL): %m");
		return 1;
	}
	if (poll(&pfd, 1, 5000) != 1 || !(pfd.revents & POLLIN)) {
		fail("the pidfd did not turn readable when the child died");
		return 1;
	}
	if (epoll_wait(ep, &ev, 1, 5000) != 1 || ev.data.u64 != EP_DATA) {
		fail("the epoll watching the pidfd did not report the exit");
		return 1;
	}
	if (waitid((idtype_t)P_PIDFD, FD_DUP, &si, WEXITED) || si.si_pid != child ||
	    si.si_code != CLD_KILLED || si.si_status != SIGKILL) {
		fail("waitid(P_PIDFD) did not reap the killed child: %m (pid %d code %d)",
		     si.si_pid, si.si_code);
		return 1;
	}
	return 0;
}

static int set_up(pid_t child, int *ep)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = EP_DATA };
	int a = pidfd_open(child, 0), b = pidfd_open(child, PIDFD_NONBLOCK);

	if (a < 0 || b < 0 || dup2(a, FD_PLAIN) < 0 || dup3(b, FD_NONBLOCK, O_CLOEXEC) < 0 ||
	    dup2(a, FD_DUP) < 0 || close(a) || close(b))
		return neg_errno();
	*ep = epoll_create1(0);
	return *ep < 0 || epoll_ctl(*ep, EPOLL_CTL_ADD, FD_NONBLOCK, &ev) ? neg_errno() : 0;
}

int main(int argc, char **argv)
{
	int fl[3], fdfl[3], ep, i;
	pid_t child;

	test_init(argc, argv);
	child = fork();
	if (child == 0) {
		signal(SIGTERM, SIG_IGN); /* the parent kills it, through a pidfd */
		for (;;)
			pause();
	}
	if (child < 0 || set_up(child, &ep)) {
		fail("cannot set up the pidfds: %m");
		if (child > 0)
			kill(child, SIGKILL);
		return 1;
	}
	for (i = 0; i < 3; i++) {
		fl[i] = fcntl(fds[i], F_GETFL);
		fdfl[i] = fcntl(fds[i], F_GETFD);
	}
	test_daemon();
	test_waitsig();

	for (i = 0; i < 3; i++)
		if (check_one(fds[i], child, fl[i], fdfl[i]))
			goto err;
	if (check_shared(fl[0]) || check_exit(ep, child))
		goto err;
	pass();
	return 0;
err:
	kill(child, SIGKILL);
	return 1;
}
