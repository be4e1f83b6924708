// SPDX-License-Identifier: GPL-2.0
/*
 * File leases (F_SETLEASE, with --file-locks): a read lease on lease_r and a
 * write lease on lease_w, both opened read-only, the write lease's
 * description also dup()ed, its breaks signalled with SIGUSR1 (F_SETSIG).
 * After SIGTERM: F_GETLEASE says the same of both; a child opening lease_w
 * for writing without blocking gets EWOULDBLOCK and the holder gets its
 * SIGUSR1 with si_fd, the lease is given up and the child's open succeeds;
 * a read-only open of lease_r breaks nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static volatile sig_atomic_t broke_fd = -1;

static void on_break(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	broke_fd = si->si_fd;
}

/* In a child: the exit status says how the open of @path with @flags went. */
static int child_open(const char *path, int flags)
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		int fd = open(path, flags | O_NONBLOCK);

		_exit(fd >= 0 ? 0 : errno == EWOULDBLOCK ? 1 : 2);
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return neg_errno();
	return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_break, .sa_flags = SA_SIGINFO | SA_RESTART };
	int r, w, w2, i;

	test_init(argc, argv);
	r = open("lease_r", O_RDONLY | O_CREAT, 0644);
	w = open("lease_w", O_RDONLY | O_CREAT, 0644);
	if (r < 0 || w < 0 || sigaction(SIGUSR1, &sa, NULL) || fcntl(w, F_SETSIG, SIGUSR1) ||
	    fcntl(r, F_SETLEASE, F_RDLCK) || fcntl(w, F_SETLEASE, F_WRLCK))
		goto err;
	w2 = dup(w);
	if (w2 < 0)
		goto err;
	test_daemon();
	test_waitsig();

	if (fcntl(r, F_GETLEASE) != F_RDLCK || fcntl(w2, F_GETLEASE) != F_WRLCK) {
		fail("leases now %d and %d, expected read and write", fcntl(r, F_GETLEASE),
		     fcntl(w2, F_GETLEASE));
		return 1;
	}
	if (child_open("lease_r", O_RDONLY) != 0) {
		fail("a read-only open of lease_r failed");
		return 1;
	}
	i = child_open("lease_w", O_WRONLY);
	if (i != 1) {
		fail("opening lease_w for writing did not meet the write lease (%d)", i);
		return 1;
	}
	for (i = 0; i < 500 && broke_fd < 0; i++)
		test_sleep_ms(10);
	if (broke_fd != w && broke_fd != w2) {
		fail("no SIGUSR1 for the lease break (si_fd %d)", (int)broke_fd);
		return 1;
	}
	if (fcntl(w, F_SETLEASE, F_UNLCK) || child_open("lease_w", O_WRONLY) != 0) {
		fail("lease_w cannot be opened once the lease is given up: %m");
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
