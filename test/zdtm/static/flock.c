// SPDX-License-Identifier: GPL-2.0
/*
 * flock() locks, dumped with --file-locks: an exclusive lock on flock.a and a
 * shared one on flock.b, both descriptions inherited by a child. After
 * SIGTERM another description of each file cannot take what conflicts,
 * can share flock.b, and the root's fdinfo shows the locks. flock locks
 * belong to the description: once the child is gone, the root still holds
 * them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

/* In another process, with new descriptions: 0 when the locks are as set up. */
static int probe(void)
{
	int a = open("flock.a", O_RDONLY), b = open("flock.b", O_RDONLY);

	if (a < 0 || b < 0)
		return 10;
	if (!flock(a, LOCK_SH | LOCK_NB) || errno != EWOULDBLOCK)
		return 11;
	if (!flock(b, LOCK_EX | LOCK_NB) || errno != EWOULDBLOCK)
		return 12;
	if (flock(b, LOCK_SH | LOCK_NB))
		return 13;
	return 0;
}

static int run_probe(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(probe());
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return neg_errno();
	return WEXITSTATUS(status);
}

/* The fdinfo of @fd shows a FLOCK lock of @type. */
static int fdinfo_has(int fd, const char *type)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (test_read_file(path, buf, sizeof(buf)) < 0 || !strstr(buf, "FLOCK") ||
	    !strstr(buf, type))
		return 0;
	return 1;
}

int main(int argc, char **argv)
{
	int a, b, r;
	pid_t kid;

	test_init(argc, argv);
	a = open("flock.a", O_RDWR | O_CREAT | O_TRUNC, 0600);
	b = open("flock.b", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (a < 0 || b < 0 || flock(a, LOCK_EX) || flock(b, LOCK_SH)) {
		fail("cannot set up the locks: %m");
		return 1;
	}
	kid = fork();
	if (kid == 0) {
		test_waitsig();
		_exit(0);
	}
	r = run_probe();
	if (kid < 0 || r) {
		fail("the locks are not as set up before the dump (probe %d)", r);
		return 1;
	}
	test_daemon();
	test_waitsig();

	r = run_probe();
	if (r || !fdinfo_has(a, "WRITE") || !fdinfo_has(b, "READ")) {
		fail("the locks did not survive (probe %d: see probe(), or fdinfo)", r);
		return 1;
	}
	if (test_reap_children(&kid, 1)) {
		fail("the child failed");
		return 1;
	}
	r = run_probe();
	if (r) {
		fail("the locks went with the child (probe %d)", r);
		return 1;
	}
	unlink("flock.a");
	unlink("flock.b");
	pass();
	return 0;
}
