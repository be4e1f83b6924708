// SPDX-License-Identifier: GPL-2.0
/*
 * Signal-driven I/O: a pipe's read end with O_ASYNC, owned by the process
 * (F_SETOWN) and F_SETSIG(SIGRTMIN + 1); one end of a socket pair owned by
 * the main thread (F_SETOWN_EX, F_OWNER_TID) with the default SIGIO; and a
 * pipe with an owner but without O_ASYNC. After SIGTERM the owners, the
 * signals and O_ASYNC must be as they were, and writing into the pipe must
 * queue SIGRTMIN + 1 with si_fd naming the read end, as before the dump.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

static int owner_is(int fd, int type, pid_t pid, int sig, int async)
{
	struct f_owner_ex o = {};
	int fl = fcntl(fd, F_GETFL);

	if (fcntl(fd, F_GETOWN_EX, &o) || (type >= 0 && (int)o.type != type) || o.pid != pid ||
	    fcntl(fd, F_GETSIG) != sig || !!(fl & O_ASYNC) != async) {
		fail("fd %d: owner type %d pid %d sig %d async %d, expected %d %d %d %d", fd,
		     o.type, o.pid, fcntl(fd, F_GETSIG), !!(fl & O_ASYNC), type, pid, sig, async);
		return -EINVAL;
	}
	return 0;
}

/* A byte into @wfd queues SIGRTMIN+1 for the read end @rfd. */
static int signal_comes(int rfd, int wfd)
{
	struct timespec ts = { .tv_sec = 5 };
	sigset_t set;
	siginfo_t si;
	char c;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	if (write(wfd, "x", 1) != 1 || sigtimedwait(&set, &si, &ts) != SIGRTMIN + 1) {
		fail("no SIGRTMIN+1 after a write into the pipe: %m");
		return neg_errno();
	}
	if (si.si_fd != rfd || !(si.si_band & POLLIN) || read(rfd, &c, 1) != 1) {
		fail("SIGRTMIN+1 with si_fd %d band %#lx, expected fd %d", si.si_fd, si.si_band,
		     rfd);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct f_owner_ex tid = { .type = F_OWNER_TID };
	int p[2], q[2], sk[2];
	sigset_t set;

	test_init(argc, argv);
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	sigaddset(&set, SIGIO);
	sigprocmask(SIG_BLOCK, &set, NULL);
	tid.pid = (pid_t)syscall(SYS_gettid);
	if (pipe(p) || pipe(q) || socketpair(AF_UNIX, SOCK_STREAM, 0, sk) ||
	    fcntl(p[0], F_SETOWN, getpid()) || fcntl(p[0], F_SETSIG, SIGRTMIN + 1) ||
	    fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK) || fcntl(sk[0], F_SETOWN_EX, &tid) ||
	    fcntl(sk[0], F_SETFL, O_ASYNC) || fcntl(q[0], F_SETOWN, getpid())) {
		fail("setup: %m");
		return 1;
	}
	if (signal_comes(p[0], p[1]))
		return 1;
	test_daemon();
	test_waitsig();

	if (owner_is(p[0], F_OWNER_PID, getpid(), SIGRTMIN + 1, 1) ||
	    owner_is(sk[0], F_OWNER_TID, tid.pid, 0, 1) ||
	    owner_is(q[0], F_OWNER_PID, getpid(), 0, 0) || owner_is(p[1], -1, 0, 0, 0))
		return 1;
	if (signal_comes(p[0], p[1]))
		return 1;
	pass();
	return 0;
}
