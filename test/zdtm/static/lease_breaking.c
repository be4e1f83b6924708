// SPDX-License-Identifier: GPL-2.0
/*
 * Leases with a break pending (F_SETLEASE, with --file-locks): a write lease
 * on lease_d that child A's open for reading is downgrading (its break
 * signalled with SIGUSR1), a read lease on lease_u that child B's open for
 * writing is breaking (SIGUSR2). The children are blocked in open() when the
 * tree is dumped, the holder got each signal once. After SIGTERM:
 * F_GETLEASE gives the break's target (F_RDLCK, F_UNLCK), both children are
 * still waiting, the holder then downgrades one lease and gives up the other,
 * both opens succeed, and the holder got each signal exactly once in all.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static volatile sig_atomic_t nr_usr1, nr_usr2, fd_usr1 = -1, fd_usr2 = -1;

static void on_break(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGUSR1) {
		nr_usr1++;
		fd_usr1 = si->si_fd;
	} else {
		nr_usr2++;
		fd_usr2 = si->si_fd;
	}
}

/* A child blocked in open(@path, @flags) until the lease lets it through: exit 0 then. */
static pid_t opener(const char *path, int flags, int d, int u)
{
	pid_t p = fork();

	if (p == 0) {
		int fd;

		close(d);
		close(u);
		fd = open(path, flags);
		_exit(fd >= 0 ? 0 : 1);
	}
	return p;
}

static int exited_ok(pid_t p, const char *what)
{
	int st;

	if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fail("%s: its open failed (status %#x)", what, st);
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_break, .sa_flags = SA_SIGINFO | SA_RESTART };
	int d, u, i, st;
	pid_t a, b;

	test_init(argc, argv);
	d = open("lease_d", O_RDONLY | O_CREAT, 0644);
	u = open("lease_u", O_RDONLY | O_CREAT, 0644);
	if (d < 0 || u < 0 || sigaction(SIGUSR1, &sa, NULL) || sigaction(SIGUSR2, &sa, NULL) ||
	    fcntl(d, F_SETSIG, SIGUSR1) || fcntl(u, F_SETSIG, SIGUSR2) ||
	    fcntl(d, F_SETLEASE, F_WRLCK) || fcntl(u, F_SETLEASE, F_RDLCK))
		goto err;
	a = opener("lease_d", O_RDONLY, d, u);
	b = opener("lease_u", O_WRONLY, d, u);
	if (a < 0 || b < 0)
		goto err;
	for (i = 0; i < 1000 && (!nr_usr1 || !nr_usr2); i++)
		test_sleep_ms(10);
	if (nr_usr1 != 1 || nr_usr2 != 1 || fcntl(d, F_GETLEASE) != F_RDLCK ||
	    fcntl(u, F_GETLEASE) != F_UNLCK) {
		fail("setup: signals %d/%d, leases %d/%d", (int)nr_usr1, (int)nr_usr2,
		     fcntl(d, F_GETLEASE), fcntl(u, F_GETLEASE));
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (fcntl(d, F_GETLEASE) != F_RDLCK || fcntl(u, F_GETLEASE) != F_UNLCK) {
		fail("leases now %d and %d, expected breaks to read and to none",
		     fcntl(d, F_GETLEASE), fcntl(u, F_GETLEASE));
		return 1;
	}
	if (waitpid(a, &st, WNOHANG) != 0 || waitpid(b, &st, WNOHANG) != 0) {
		fail("an opener is no longer waiting for its lease");
		return 1;
	}
	/* the downgrade lets A's read-only open through, giving up lets B's through */
	if (fcntl(d, F_SETLEASE, F_RDLCK) || !exited_ok(a, "child A (read)"))
		return 1;
	if (fcntl(d, F_GETLEASE) != F_RDLCK) {
		fail("lease_d is %d after the downgrade", fcntl(d, F_GETLEASE));
		return 1;
	}
	if (fcntl(u, F_SETLEASE, F_UNLCK) || !exited_ok(b, "child B (write)"))
		return 1;
	if (nr_usr1 != 1 || nr_usr2 != 1 || fd_usr1 != d || fd_usr2 != u) {
		fail("break signals: SIGUSR1 %d times (si_fd %d), SIGUSR2 %d times (si_fd %d)",
		     (int)nr_usr1, (int)fd_usr1, (int)nr_usr2, (int)fd_usr2);
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
