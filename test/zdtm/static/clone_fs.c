// SPDX-License-Identifier: GPL-2.0
/*
 * Processes sharing one fs context (clone(CLONE_FS) without CLONE_THREAD): a
 * child shares its parent's and a grandchild the child's, while a forked
 * child has its own. Before the dump the parent enters cfs_a and sets the
 * umask 027; the forked child enters cfs_c. After SIGTERM the sharing must
 * be the same (kcmp(KCMP_FS)), the cwd and umask too, and a chdir by the
 * grandchild must move the parent's cwd, not the forked child's.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "zdtmtst.h"

static int cmd[2], ack[2];
static char stack1[65536] __attribute__((aligned(16)));
static char stack2[65536] __attribute__((aligned(16)));

static long same_fs(pid_t a, pid_t b)
{
	return syscall(SYS_kcmp, a, b, KCMP_FS, 0, 0);
}

/* The grandchild: enters the directory it is sent, answers with 'k' or 'e'. */
static int grandchild(void *arg)
{
	char dir[16];
	ssize_t n;

	(void)arg;
	for (;;) {
		n = read(cmd[0], dir, sizeof(dir) - 1);
		if (n <= 0)
			_exit(1);
		dir[n] = '\0';
		if (write(ack[1], chdir(dir) ? "e" : "k", 1) != 1)
			_exit(1);
	}
}

/* The child: its own CLONE_FS child, whose pid it sends, then waits. */
static int child(void *arg)
{
	pid_t g = clone(grandchild, stack2 + sizeof(stack2), CLONE_FS | SIGCHLD, NULL);

	(void)arg;
	if (g < 0 || write(ack[1], &g, sizeof(g)) != sizeof(g))
		_exit(1);
	for (;;)
		pause();
}

static int cwd_is(const char *pid, const char *name)
{
	char path[64], link[PATH_MAX];
	ssize_t n;
	const char *base;

	snprintf(path, sizeof(path), "/proc/%s/cwd", pid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;
	link[n] = '\0';
	base = strrchr(link, '/');
	return base && !strcmp(base + 1, name);
}

int main(int argc, char **argv)
{
	pid_t c, g, f;
	char buf[16], fpid[16];
	mode_t um;
	int status;

	test_init(argc, argv);
	if (mkdir("cfs_a", 0755) || mkdir("cfs_b", 0755) || mkdir("cfs_c", 0755) || pipe(cmd) ||
	    pipe(ack))
		goto err;
	c = clone(child, stack1 + sizeof(stack1), CLONE_FS | SIGCHLD, NULL);
	if (c < 0 || read(ack[0], &g, sizeof(g)) != sizeof(g))
		goto err;
	f = fork();
	if (f < 0)
		goto err;
	if (f == 0) {
		if (chdir("cfs_c"))
			_exit(1);
		for (;;)
			pause();
	}
	if (chdir("cfs_a"))
		goto err;
	umask(027);
	test_daemon();
	test_waitsig();

	if (same_fs(getpid(), c) || same_fs(c, g) || same_fs(getpid(), f) <= 0) {
		fail("sharing: parent/child %ld, child/grandchild %ld, parent/forked %ld",
		     same_fs(getpid(), c), same_fs(c, g), same_fs(getpid(), f));
		return 1;
	}
	um = umask(0);
	snprintf(fpid, sizeof(fpid), "%d", f);
	if (um != 027 || !cwd_is("self", "cfs_a") || !cwd_is(fpid, "cfs_c")) {
		fail("umask %o, cwd not cfs_a, or the forked child's not cfs_c", um);
		return 1;
	}
	if (write(cmd[1], "../cfs_b", 8) != 8 || read(ack[0], buf, 1) != 1 || buf[0] != 'k') {
		fail("the grandchild did not enter ../cfs_b");
		return 1;
	}
	if (!cwd_is("self", "cfs_b") || !cwd_is(fpid, "cfs_c")) {
		fail("the grandchild's chdir did not move the parent's cwd, or moved the forked "
		     "one");
		return 1;
	}
	kill(c, SIGKILL);
	kill(g, SIGKILL);
	kill(f, SIGKILL);
	waitpid(c, &status, 0);
	waitpid(f, &status, 0);
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
