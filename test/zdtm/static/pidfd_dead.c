// SPDX-License-Identifier: GPL-2.0
/*
 * pidfds of processes that have exited and been reaped (fdinfo Pid: -1): one
 * of a child that exited with code 42 (pidfd_open(), non-blocking), one of a
 * child killed by SIGKILL (clone3 CLONE_PIDFD). After SIGTERM each must still
 * be a pidfd of a dead process (Pid: -1 in fdinfo, readable by poll()) with
 * the same flags and exit status (PIDFD_GET_INFO with PIDFD_INFO_EXIT).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static int dead(int fd, int status, int flags, const char *what)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int fl = fcntl(fd, F_GETFL);

	if (test_fdinfo_pid(fd) != -1 || test_pidfd_exit_status(fd) != status ||
	    poll(&p, 1, 0) != 1 || (fl & O_NONBLOCK) != flags) {
		fail("%s: Pid %d, status %#x (expected %#x), poll %#x, flags %#x", what,
		     test_fdinfo_pid(fd), test_pidfd_exit_status(fd), status, p.revents, fl);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int a, b = -1, sa, sb;
	pid_t ca, cb;
	struct {
		uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	} args = { .flags = 0x1000 /* CLONE_PIDFD */, .exit_signal = SIGCHLD };

	int go[2];
	char c;

	test_init(argc, argv);
	if (pipe(go))
		return 1;
	ca = fork();
	if (ca == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(42);
	}
	a = (int)syscall(__NR_pidfd_open, ca, O_NONBLOCK);
	args.pidfd = (uint64_t)(uintptr_t)&b;
	cb = (pid_t)syscall(__NR_clone3, &args, sizeof(args));
	if (cb == 0) {
		pause();
		_exit(1);
	}
	if (ca < 0 || cb < 0 || a < 0 || b < 0) {
		fail("setup: %m");
		return 1;
	}
	if (write(go[1], "x", 1) != 1)
		return 1;
	kill(cb, SIGKILL);
	if (waitpid(ca, &sa, 0) != ca || waitpid(cb, &sb, 0) != cb) {
		fail("setup: waitpid: %m");
		return 1;
	}
	if (test_pidfd_exit_status(a) != sa || test_pidfd_exit_status(b) != sb) {
		fail("this kernel gives no exit status through a pidfd (6.15)");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (dead(a, sa, O_NONBLOCK, "pidfd of the child that exited with 42") ||
	    dead(b, sb, 0, "pidfd of the child killed by SIGKILL"))
		return 1;
	pass();
	return 0;
}
