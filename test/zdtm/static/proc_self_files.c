// SPDX-License-Identifier: GPL-2.0
/*
 * Files of processes of the tree in /proc, held open: /proc/self/stat at fd
 * 50 read past its pid field (a dup at 53, one description), /proc/CHILD/status
 * of a child at fd 51 (close-on-exec) read past its Name: line, and
 * /proc/self/fd as a directory at fd 52 (O_NONBLOCK, close-on-exec) read
 * three entries in. After SIGTERM each names the restored process (the pid
 * field of stat, Name: and Pid: of the status, the link of the directory),
 * reading goes on from where it was (what a new open gives from the same
 * offset), 50 and 53 still share their position, and the flags and
 * close-on-exec bits are the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define FD_STAT 50
#define FD_STATUS 51
#define FD_DIR 52
#define FD_STAT_DUP 53
#define CHILD_NAME "psf-child"
#define DIR_HEAD 3 /* entries read before the dump: ".", ".." and "0" */
#define MAX_NAMES 256

static const int fds[] = { FD_STAT, FD_STATUS, FD_DIR, FD_STAT_DUP };

struct d64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* Up to @max names read from the directory @fd, one entry per call; the count. */
static int read_names(int fd, char (*out)[16], int max)
{
	char buf[40] __attribute__((aligned(8)));
	int n = 0;

	while (n < max) {
		long len = syscall(SYS_getdents64, fd, buf, sizeof(buf));

		if (len <= 0)
			break;
		for (long off = 0; off < len && n < max; off += ((struct d64 *)(buf + off))->reclen)
			snprintf(out[n++], 16, "%s", ((struct d64 *)(buf + off))->name);
	}
	return n;
}

/* Everything @fd gives from its position on, NUL-terminated; the length or -1. */
static ssize_t read_rest(int fd, char *buf, size_t size)
{
	size_t got = 0;
	ssize_t n;

	while (got < size - 1 && (n = read(fd, buf + got, size - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	return n < 0 ? neg_errno() : (ssize_t)got;
}

/* What a new open of @path gives from offset @off on, in @buf. */
static ssize_t fresh_from(const char *path, off_t off, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0 || lseek(fd, off, SEEK_SET) != off)
		return neg_errno();
	n = read_rest(fd, buf, size);
	close(fd);
	return n;
}

/* The length of @s up to and including its first @c (the whole length without one). */
static size_t upto(const char *s, char c)
{
	const char *p = strchr(s, c);

	return p ? (size_t)(p - s) + 1 : strlen(s);
}

/*
 * fd 50 goes on after "PID (": the comm and ")" as a new open gives them from
 * there; 53 moved with it; from 0 it is the stat of this process.
 */
static int check_stat(off_t pos)
{
	char rest[1024], fresh[1024];
	int pid = 0;

	if (lseek(FD_STAT, 0, SEEK_CUR) != pos) {
		fail("fd %d: position %lld, it was %lld", FD_STAT,
		     (long long)lseek(FD_STAT, 0, SEEK_CUR), (long long)pos);
		return 1;
	}
	if (read_rest(FD_STAT, rest, sizeof(rest)) <= 0 ||
	    fresh_from("/proc/self/stat", pos, fresh, sizeof(fresh)) <= 0 ||
	    strncmp(rest, fresh, upto(fresh, ')'))) {
		fail("fd %d reads \"%.40s\" from %lld, a new open \"%.40s\"", FD_STAT, rest,
		     (long long)pos, fresh);
		return 1;
	}
	if (lseek(FD_STAT_DUP, 0, SEEK_CUR) != lseek(FD_STAT, 0, SEEK_CUR)) {
		fail("fds %d and %d no longer share their position", FD_STAT, FD_STAT_DUP);
		return 1;
	}
	if (lseek(FD_STAT, 0, SEEK_SET) || read_rest(FD_STAT, rest, sizeof(rest)) <= 0 ||
	    sscanf(rest, "%d ", &pid) != 1 || pid != getpid()) {
		fail("fd %d: the stat of pid %d, not of this process (%d)", FD_STAT, pid, getpid());
		return 1;
	}
	return 0;
}

/* fd 51 goes on after the Name: line as a new open does; from 0 it is the child's. */
static int check_status(pid_t child, off_t pos)
{
	char rest[4096], fresh[4096], path[64], name[32] = "", *p;
	int pid = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", child);
	if (read_rest(FD_STATUS, rest, sizeof(rest)) <= 0 ||
	    fresh_from(path, pos, fresh, sizeof(fresh)) <= 0 ||
	    strncmp(rest, fresh, upto(fresh, ':'))) {
		fail("fd %d reads \"%.20s\" from %lld, a new open \"%.20s\"", FD_STATUS, rest,
		     (long long)pos, fresh);
		return 1;
	}
	/* the text read on is of the child as it is now (its parent: this process) */
	p = strstr(rest, "\nPPid:\t");
	if (!p || sscanf(p, "\nPPid:\t%d", &pid) != 1 || pid != getpid()) {
		fail("fd %d reads on PPid %d, not this process (%d)", FD_STATUS, pid, getpid());
		return 1;
	}
	if (lseek(FD_STATUS, 0, SEEK_SET) || read_rest(FD_STATUS, rest, sizeof(rest)) <= 0 ||
	    sscanf(rest, "Name:\t%31s", name) != 1 || !(p = strstr(rest, "\nPid:\t")) ||
	    sscanf(p, "\nPid:\t%d", &pid) != 1 || strcmp(name, CHILD_NAME) || pid != child) {
		fail("fd %d: the status of \"%s\" pid %d, not of the child %d", FD_STATUS, name,
		     pid, child);
		return 1;
	}
	return 0;
}

/*
 * fd 52 lists the rest of this process's fds from where it was, as a new
 * open of /proc/self/fd does from the same offset (less that open's own fd).
 */
static int check_dir(off_t pos)
{
	static char rest[MAX_NAMES][16], fresh[MAX_NAMES][16];
	char link[64], want[64], own[16];
	int nrest, nfresh, i, j, fd;
	ssize_t n;

	n = readlink("/proc/self/fd/52", link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	snprintf(want, sizeof(want), "/proc/%d/fd", getpid());
	if (strcmp(link, want)) {
		fail("fd %d is \"%s\", not %s", FD_DIR, link, want);
		return 1;
	}
	if (lseek(FD_DIR, 0, SEEK_CUR) != pos) {
		fail("fd %d: position %lld, it was %lld", FD_DIR,
		     (long long)lseek(FD_DIR, 0, SEEK_CUR), (long long)pos);
		return 1;
	}
	nrest = read_names(FD_DIR, rest, MAX_NAMES);
	fd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY);
	if (fd < 0 || lseek(fd, pos, SEEK_SET) != pos)
		return 1;
	nfresh = read_names(fd, fresh, MAX_NAMES);
	snprintf(own, sizeof(own), "%d", fd);
	close(fd);
	for (i = j = 0; i < nfresh; i++)
		if (strcmp(fresh[i], own))
			memcpy(fresh[j++], fresh[i], sizeof(fresh[i]));
	nfresh = j;
	if (nrest != nfresh || nrest < 4) {
		fail("fd %d lists %d more entries, a new open %d", FD_DIR, nrest, nfresh);
		return 1;
	}
	for (i = 0; i < nrest; i++)
		if (strcmp(rest[i], fresh[i])) {
			fail("fd %d: entry %d is \"%s\", a new open gives \"%s\"", FD_DIR,
			     DIR_HEAD + i, rest[i], fresh[i]);
			return 1;
		}
	return 0;
}

static int set_up(pid_t child, off_t *pos)
{
	static char head[DIR_HEAD][16];
	char path[64], buf[256];
	int a, b, c, len;

	snprintf(path, sizeof(path), "/proc/%d/status", child);
	a = open("/proc/self/stat", O_RDONLY);
	b = open(path, O_RDONLY | O_CLOEXEC);
	c = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_NONBLOCK);
	if (a < 0 || b < 0 || c < 0 || dup2(a, FD_STAT) < 0 || dup3(b, FD_STATUS, O_CLOEXEC) < 0 ||
	    dup3(c, FD_DIR, O_CLOEXEC) < 0 || dup2(a, FD_STAT_DUP) < 0 || close(a) || close(b) ||
	    close(c))
		return neg_errno();
	/* past "PID (" of stat */
	len = snprintf(buf, sizeof(buf), "%d (", getpid());
	if (read(FD_STAT, buf, (size_t)len) != len)
		return neg_errno();
	pos[0] = len;
	/* past the Name: line of the child's status */
	len = snprintf(buf, sizeof(buf), "Name:\t%s\n", CHILD_NAME);
	if (read(FD_STATUS, path, (size_t)len) != len || memcmp(path, buf, (size_t)len))
		return neg_errno();
	pos[1] = len;
	if (read_names(FD_DIR, head, DIR_HEAD) != DIR_HEAD)
		return neg_errno();
	pos[2] = lseek(FD_DIR, 0, SEEK_CUR);
	return pos[2] > 0 ? 0 : neg_errno();
}

int main(int argc, char **argv)
{
	int fl[4], fdfl[4], i, p[2];
	off_t pos[3] = { 0 }; /* set_up() fills them */
	pid_t child;
	char c;

	test_init(argc, argv);
	if (pipe(p))
		return 1;
	child = fork();
	if (child == 0) {
		signal(SIGTERM, SIG_IGN); /* the parent kills it */
		prctl(PR_SET_NAME, CHILD_NAME);
		close(p[0]);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	if (child < 0 || read(p[0], &c, 1) != 1 || set_up(child, pos)) {
		fail("cannot set up the /proc files: %m");
		if (child > 0)
			kill(child, SIGKILL);
		return 1;
	}
	close(p[0]);
	for (i = 0; i < 4; i++) {
		fl[i] = fcntl(fds[i], F_GETFL);
		fdfl[i] = fcntl(fds[i], F_GETFD);
	}
	test_daemon();
	test_waitsig();

	for (i = 0; i < 4; i++)
		if (fcntl(fds[i], F_GETFL) != fl[i] || fcntl(fds[i], F_GETFD) != fdfl[i]) {
			fail("fd %d: flags %#x/%#x, expected %#x/%#x", fds[i],
			     fcntl(fds[i], F_GETFL), fcntl(fds[i], F_GETFD), fl[i], fdfl[i]);
			goto err;
		}
	if (check_stat(pos[0]) || check_status(child, pos[1]) || check_dir(pos[2]))
		goto err;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	pass();
	return 0;
err:
	kill(child, SIGKILL);
	return 1;
}
