// SPDX-License-Identifier: GPL-2.0
/*
 * Times and extended attributes of the nodes a restore makes again: a unix
 * socket's file (bind() makes a new one), a removed FIFO with unread data
 * (mkfifo), a pty slave (a new devpts node), each given old times, and the
 * first two a trusted.* attribute (the kernel allows user.* on regular files
 * and directories only; trusted.* needs the host's root: left out in a user
 * namespace). The directory holding them has old times too, which making
 * and removing entries in it would move. After the restore every time is
 * the same to the nanosecond, the attributes hold their values.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "zdtmtst.h"

#define DIR_NAME "node_times.d"
#define SOCK_NAME DIR_NAME "/sock"
#define FIFO_NAME DIR_NAME "/fifo"
#define XATTR "trusted.zdtm"

static const struct timespec sock_ts[2] = { { 1000000001, 11 }, { 1000000002, 22 } };
static const struct timespec fifo_ts[2] = { { 1100000001, 33 }, { 1100000002, 44 } };
static const struct timespec pts_ts[2] = { { 1200000001, 0 }, { 1200000002, 0 } };
static const struct timespec dir_ts[2] = { { 1300000001, 55 }, { 1300000002, 66 } };

static bool with_xattrs;

static bool same(const struct stat *st, const struct timespec ts[2])
{
	return st->st_atim.tv_sec == ts[0].tv_sec && st->st_atim.tv_nsec == ts[0].tv_nsec &&
	       st->st_mtim.tv_sec == ts[1].tv_sec && st->st_mtim.tv_nsec == ts[1].tv_nsec;
}

static int check_times(const char *what, const struct stat *st, const struct timespec ts[2])
{
	if (same(st, ts))
		return 0;
	fail("%s: atime %ld.%09ld mtime %ld.%09ld instead of %ld.%09ld and %ld.%09ld", what,
	     (long)st->st_atim.tv_sec, st->st_atim.tv_nsec, (long)st->st_mtim.tv_sec,
	     st->st_mtim.tv_nsec, (long)ts[0].tv_sec, ts[0].tv_nsec, (long)ts[1].tv_sec,
	     ts[1].tv_nsec);
	return -EINVAL;
}

static int check_xattr(const char *what, const char *path, bool follow, const char *want)
{
	char buf[64];
	ssize_t n;

	if (!with_xattrs)
		return 0;
	n = follow ? getxattr(path, XATTR, buf, sizeof(buf))
		   : lgetxattr(path, XATTR, buf, sizeof(buf));
	if (n != (ssize_t)strlen(want) || memcmp(buf, want, (size_t)n)) {
		fail("%s: %s is %.*s (%zd bytes), not %s: %m", what, XATTR, n > 0 ? (int)n : 0, buf,
		     n, want);
		return neg_errno();
	}
	return 0;
}

static int bound_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sk = socket(AF_UNIX, SOCK_DGRAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", SOCK_NAME);
	if (sk < 0 || bind(sk, (struct sockaddr *)&sa, sizeof(sa))) {
		fail("unix socket %s: %m", SOCK_NAME);
		return neg_errno();
	}
	if (with_xattrs && lsetxattr(SOCK_NAME, XATTR, "sock", 4, 0)) {
		fail("lsetxattr %s: %m", SOCK_NAME);
		return neg_errno();
	}
	if (utimensat(AT_FDCWD, SOCK_NAME, sock_ts, AT_SYMLINK_NOFOLLOW)) {
		fail("utimensat %s: %m", SOCK_NAME);
		return neg_errno();
	}
	return sk;
}

/* Made, filled, given its times and removed: the times are the last change. */
static int removed_fifo(void)
{
	int fd;

	if (mkfifo(FIFO_NAME, 0640)) {
		fail("mkfifo: %m");
		return neg_errno();
	}
	fd = open(FIFO_NAME, O_RDWR | O_NONBLOCK);
	if (fd < 0 || write(fd, "fifo data", 9) != 9) {
		fail("the FIFO: %m");
		return neg_errno();
	}
	if (with_xattrs && fsetxattr(fd, XATTR, "fifo", 4, 0)) {
		fail("fsetxattr on the FIFO: %m");
		return neg_errno();
	}
	if (futimens(fd, fifo_ts) || unlink(FIFO_NAME)) {
		fail("the FIFO's times or unlink: %m");
		return neg_errno();
	}
	return fd;
}

static int pty_slave(char *name, size_t size)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), s;

	if (m < 0 || grantpt(m) || unlockpt(m) || ptsname_r(m, name, size)) {
		fail("pty: %m");
		return neg_errno();
	}
	s = open(name, O_RDWR | O_NOCTTY);
	if (s < 0 || utimensat(AT_FDCWD, name, pts_ts, 0)) {
		fail("pty slave %s: %m", name);
		return neg_errno();
	}
	return m;
}

int main(int argc, char **argv)
{
	char pts[64], self[64];
	struct stat st;
	int sk, fifo, m;

	test_init(argc, argv);
	if (mkdir(DIR_NAME, 0755) && errno != EEXIST) {
		fail("mkdir: %m");
		return 1;
	}
	/* trusted.* needs CAP_SYS_ADMIN of the host: not in a user namespace of the test's */
	with_xattrs = !setxattr(DIR_NAME, XATTR, "d", 1, 0);
	test_msg("trusted.* attributes %s\n", with_xattrs ? "set" : "refused: left out");
	sk = bound_socket();
	fifo = removed_fifo();
	m = pty_slave(pts, sizeof(pts));
	if (sk < 0 || fifo < 0 || m < 0)
		return 1;
	if (utimensat(AT_FDCWD, DIR_NAME, dir_ts, 0)) {
		fail("utimensat %s: %m", DIR_NAME);
		return 1;
	}
	test_daemon();
	test_waitsig();
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fifo);
	if (lstat(SOCK_NAME, &st) || !S_ISSOCK(st.st_mode)) {
		fail("%s is no socket file after the restore: %m", SOCK_NAME);
		return 1;
	}
	if (check_times("socket file", &st, sock_ts) ||
	    check_xattr("socket file", SOCK_NAME, false, "sock"))
		return 1;
	if (fstat(fifo, &st) || check_times("removed FIFO", &st, fifo_ts) ||
	    check_xattr("removed FIFO", self, true, "fifo"))
		return 1;
	if (stat(pts, &st) || check_times(pts, &st, pts_ts))
		return 1;
	if (stat(DIR_NAME, &st) || check_times("their directory", &st, dir_ts))
		return 1;
	pass();
	return 0;
}
