// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX record locks (fcntl F_SETLK), dumped with --file-locks: the root
 * holds a write lock on [0, 100) and a read lock from 200 to the end of
 * posix.a, and has a second description of that file; a child holds a write
 * lock on [10, 20) of posix.b, and the root a read lock on all of an
 * unlinked file (through a dup of its fd). After SIGTERM another process sees each lock
 * with its owner and range (F_GETLK), cannot take a conflicting one, and can
 * take what is free.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static int setlk(int fd, int cmd, short type, off_t start, off_t len, struct flock *ret)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	int r = fcntl(fd, cmd, &fl);

	if (ret)
		*ret = fl;
	return r ? -errno : 0;
}

/* In another process: what the locks of posix.a (root @root) and posix.b (@kid) allow. */
static int probe(pid_t root, pid_t kid)
{
	int a = open("posix.a", O_RDWR), b = open("posix.b", O_RDWR);
	struct flock fl;

	if (a < 0 || b < 0)
		return 10;
	if (setlk(a, F_GETLK, F_WRLCK, 0, 1, &fl) || fl.l_type != F_WRLCK || fl.l_pid != root ||
	    fl.l_start != 0 || fl.l_len != 100)
		return 11;
	if (setlk(a, F_SETLK, F_WRLCK, 50, 10, NULL) != -EAGAIN &&
	    setlk(a, F_SETLK, F_WRLCK, 50, 10, NULL) != -EACCES)
		return 12;
	if (setlk(a, F_SETLK, F_WRLCK, 100, 100, NULL))
		return 13; /* the gap between the two locks */
	if (setlk(a, F_SETLK, F_RDLCK, 300, 100, NULL))
		return 14; /* read locks share */
	if (setlk(a, F_GETLK, F_WRLCK, 1 << 20, 1, &fl) || fl.l_type != F_RDLCK ||
	    fl.l_pid != root || fl.l_start != 200 || fl.l_len != 0)
		return 15;
	if (setlk(b, F_GETLK, F_WRLCK, 0, 0, &fl) || fl.l_type != F_WRLCK || fl.l_pid != kid ||
	    fl.l_start != 10 || fl.l_len != 10)
		return 16;
	return 0;
}

/* In another process, with a new description of the unlinked file: its read lock is there. */
static int probe_gone(int g)
{
	pid_t root = getpid(), pid = fork();
	int status;

	if (pid == 0) {
		char self[64];
		struct flock fl;
		int fd;

		snprintf(self, sizeof(self), "/proc/self/fd/%d", g);
		fd = open(self, O_RDWR);
		if (fd < 0 || setlk(fd, F_GETLK, F_WRLCK, 5, 1, &fl) || fl.l_type != F_RDLCK ||
		    fl.l_pid != root || setlk(fd, F_SETLK, F_RDLCK, 5, 1, NULL))
			_exit(1);
		_exit(setlk(fd, F_SETLK, F_WRLCK, 5, 1, NULL) == -EAGAIN ? 0 : 2);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return neg_errno();
	return WEXITSTATUS(status);
}

static int run_probe(pid_t kid)
{
	pid_t root = getpid(), pid = fork();
	int status;

	if (pid == 0)
		_exit(probe(root, kid));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return neg_errno();
	return WEXITSTATUS(status);
}

static int child(int ready)
{
	int b = open("posix.b", O_RDWR);

	if (b < 0 || setlk(b, F_SETLK, F_WRLCK, 10, 10, NULL) || write(ready, "k", 1) != 1)
		return 1;
	test_waitsig();
	return 0;
}

int main(int argc, char **argv)
{
	int a, a2, g, p[2], r;
	pid_t kid;

	test_init(argc, argv);
	a = open("posix.a", O_RDWR | O_CREAT | O_TRUNC, 0600);
	a2 = open("posix.a", O_RDONLY);
	r = open("posix.b", O_RDWR | O_CREAT | O_TRUNC, 0600);
	g = open("posix.gone", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (g < 0 || unlink("posix.gone") || setlk(g, F_SETLK, F_RDLCK, 0, 0, NULL) ||
	    dup2(g, 20) != 20) {
		fail("cannot lock the unlinked file: %m");
		return 1;
	}
	if (a < 0 || a2 < 0 || r < 0 || close(r) || pipe(p) ||
	    setlk(a, F_SETLK, F_WRLCK, 0, 100, NULL) || setlk(a, F_SETLK, F_RDLCK, 200, 0, NULL)) {
		fail("cannot set up the locks: %m");
		return 1;
	}
	kid = fork();
	if (kid == 0)
		_exit(child(p[1]));
	if (kid < 0 || test_wait_ready(p[0], 1)) {
		fail("the child did not take its lock");
		return 1;
	}
	r = run_probe(kid);
	if (r) {
		fail("the locks are not as set up before the dump (probe %d)", r);
		return 1;
	}
	test_daemon();
	test_waitsig();

	r = run_probe(kid);
	if (r) {
		fail("the locks did not survive (probe %d: see probe())", r);
		return 1;
	}
	r = probe_gone(g);
	if (r) {
		fail("the lock on the unlinked file did not survive (%d)", r);
		return 1;
	}
	if (test_reap_children(&kid, 1)) {
		fail("the child failed");
		return 1;
	}
	unlink("posix.a");
	unlink("posix.b");
	pass();
	return 0;
}
