// SPDX-License-Identifier: GPL-2.0
/*
 * Processes sharing one fd table (clone(CLONE_FILES) without CLONE_THREAD):
 * a child shares its parent's table and a grandchild the child's, while a
 * forked child has a table of its own. The table holds a file at a high
 * number, a dup of it and a pipe. After SIGTERM: the sharing is the same
 * (kcmp(KCMP_FILES)), the table has exactly the fds it had (each restored
 * once: no fd more or less), the dup is one description with the file; a
 * dup2() and a close() done by the grandchild are seen by the parent, a
 * file the child opens too, and the forked child's table is untouched.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "zdtmtst.h"

#define FILE_FD 70
#define DUP_FD 71
#define NEW_FD 90

static int cmd[2], ack[2];
static char stack1[65536] __attribute__((aligned(16)));
static char stack2[65536] __attribute__((aligned(16)));

static long kcmp(pid_t a, pid_t b, int type, long x, long y)
{
	return syscall(SYS_kcmp, a, b, type, x, y);
}

/* Runs what it is told in the table it shares: 'd' dup2(FILE_FD, NEW_FD), 'c' close(DUP_FD). */
static int worker(void *arg)
{
	char c;

	(void)arg;
	for (;;) {
		if (read(cmd[0], &c, 1) != 1)
			_exit(1);
		if (c == 'd')
			c = dup2(FILE_FD, NEW_FD) == NEW_FD ? 'k' : 'e';
		else if (c == 'c')
			c = close(DUP_FD) ? 'e' : 'k';
		else if (c == 'o')
			c = open("cf_new", O_RDWR | O_CREAT, 0600) >= 0 ? 'k' : 'e';
		if (write(ack[1], &c, 1) != 1)
			_exit(1);
	}
}

/* The child: its own CLONE_FILES child (the worker), whose pid it sends, then waits. */
static int child(void *arg)
{
	pid_t g = clone(worker, stack2 + sizeof(stack2), CLONE_FILES | SIGCHLD, NULL);

	(void)arg;
	if (g < 0 || write(ack[1], &g, sizeof(g)) != sizeof(g))
		_exit(1);
	for (;;)
		pause();
}

/* The fd numbers of /proc/@pid/fd as a bitmap of the first 1024. */
static int fd_set_of(const char *pid, unsigned char *set)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	d = opendir(path);
	if (!d)
		return neg_errno();
	memset(set, 0, 128);
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] == '.' || fd == dirfd(d))
			continue;
		if (fd < 0 || fd >= 1024) {
			closedir(d);
			return -ERANGE; /* past the bitmap */
		}
		set[fd / 8] |= (unsigned char)(1u << (fd % 8));
	}
	closedir(d);
	return 0;
}

static int ask(char c)
{
	char r;

	return write(cmd[1], &c, 1) == 1 && read(ack[0], &r, 1) == 1 && r == 'k' ? 0 : -EIO;
}

int main(int argc, char **argv)
{
	unsigned char before[128], after[128], fbefore[128], fafter[128];
	char fpid[16], buf[8];
	pid_t c, g, f;
	int fd, status;

	test_init(argc, argv);
	fd = open("cf_file", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "abcdef", 6) != 6 || dup2(fd, FILE_FD) != FILE_FD ||
	    dup2(fd, DUP_FD) != DUP_FD || close(fd) || lseek(FILE_FD, 2, SEEK_SET) != 2 ||
	    pipe(cmd) || pipe(ack))
		goto err;
	c = clone(child, stack1 + sizeof(stack1), CLONE_FILES | SIGCHLD, NULL);
	if (c < 0 || read(ack[0], &g, sizeof(g)) != sizeof(g))
		goto err;
	f = fork();
	if (f < 0)
		goto err;
	if (f == 0) {
		for (;;)
			pause();
	}
	test_daemon();
	snprintf(fpid, sizeof(fpid), "%d", f);
	if (fd_set_of("self", before) || fd_set_of(fpid, fbefore))
		goto err;
	test_waitsig();

	if (kcmp(getpid(), c, KCMP_FILES, 0, 0) || kcmp(c, g, KCMP_FILES, 0, 0) ||
	    kcmp(getpid(), f, KCMP_FILES, 0, 0) <= 0) {
		fail("sharing: parent/child %ld, child/grandchild %ld, parent/forked %ld",
		     kcmp(getpid(), c, KCMP_FILES, 0, 0), kcmp(c, g, KCMP_FILES, 0, 0),
		     kcmp(getpid(), f, KCMP_FILES, 0, 0));
		return 1;
	}
	if (fd_set_of("self", after) || memcmp(before, after, sizeof(before))) {
		fail("the shared table's fds are not the ones it had");
		return 1;
	}
	if (fd_set_of(fpid, fafter) || memcmp(fbefore, fafter, sizeof(fbefore))) {
		fail("the forked child's fds are not the ones it had");
		return 1;
	}
	if (kcmp(getpid(), getpid(), KCMP_FILE, FILE_FD, DUP_FD) ||
	    lseek(DUP_FD, 0, SEEK_CUR) != 2 || read(FILE_FD, buf, 2) != 2 || memcmp(buf, "cd", 2)) {
		fail("the file and its dup are not one description at offset 2");
		return 1;
	}
	if (ask('d') || kcmp(getpid(), getpid(), KCMP_FILE, FILE_FD, NEW_FD)) {
		fail("the grandchild's dup2 is not seen by the parent");
		return 1;
	}
	if (ask('c') || fcntl(DUP_FD, F_GETFD) != -1 || errno != EBADF) {
		fail("the grandchild's close is not seen by the parent");
		return 1;
	}
	if (fcntl(NEW_FD, F_GETFD) < 0 || fd_set_of(fpid, fafter) ||
	    memcmp(fbefore, fafter, sizeof(fbefore))) {
		fail("the forked child's table changed with the shared one");
		return 1;
	}
	if (fd_set_of("self", before) || ask('o') || fd_set_of("self", after) ||
	    !memcmp(before, after, sizeof(before))) {
		fail("a file the grandchild opened is not in the parent's table");
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
