// SPDX-License-Identifier: GPL-2.0
/*
 * Device nodes removed while open: a node of /dev/null (1:3) and one of
 * /dev/zero (1:5) made with mknod in the test's directory, given to
 * 1000:1001 with mode 0620, opened (read-write and read-only) and removed.
 * After SIGTERM each fd must still be that device (writes vanish, reads give
 * zeros), removed (nlink 0), with its owner and mode; the null node with
 * the old times and the trusted.* attribute it was given (made again by
 * mknod at restore: a new inode).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "zdtmtst.h"

static int check(int fd, dev_t rdev, const char *what)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISCHR(st.st_mode) || st.st_rdev != rdev || st.st_nlink ||
	    st.st_uid != 1000 || st.st_gid != 1001 || (st.st_mode & 07777) != 0620) {
		fail("%s: mode %o rdev %u:%u nlink %lu owner %u:%u", what, st.st_mode,
		     major(st.st_rdev), minor(st.st_rdev), (unsigned long)st.st_nlink, st.st_uid,
		     st.st_gid);
		return -EINVAL;
	}
	return 0;
}

static const struct timespec null_ts[2] = { { 1000000001, 7 }, { 1000000002, 8 } };

static int check_attrs(int fd)
{
	struct stat st;
	char v[8];

	if (fstat(fd, &st) || st.st_atim.tv_sec != null_ts[0].tv_sec ||
	    st.st_atim.tv_nsec != null_ts[0].tv_nsec || st.st_mtim.tv_sec != null_ts[1].tv_sec ||
	    st.st_mtim.tv_nsec != null_ts[1].tv_nsec) {
		fail("dnull: atime %ld.%09ld mtime %ld.%09ld, not the ones it was given",
		     (long)st.st_atim.tv_sec, st.st_atim.tv_nsec, (long)st.st_mtim.tv_sec,
		     st.st_mtim.tv_nsec);
		return -EINVAL;
	}
	if (fgetxattr(fd, "trusted.zdtm", v, sizeof(v)) != 3 || memcmp(v, "dev", 3)) {
		fail("dnull: trusted.zdtm is not kept: %m");
		return neg_errno();
	}
	return 0;
}

int main(int argc, char **argv)
{
	int null, zero;
	char buf[8] = "xxxxxxx";

	test_init(argc, argv);
	if (mknod("dnull", S_IFCHR | 0600, makedev(1, 3)) ||
	    mknod("dzero", S_IFCHR | 0600, makedev(1, 5)) || chown("dnull", 1000, 1001) ||
	    chown("dzero", 1000, 1001) || chmod("dnull", 0620) || chmod("dzero", 0620) ||
	    setxattr("dnull", "trusted.zdtm", "dev", 3, 0) ||
	    utimensat(AT_FDCWD, "dnull", null_ts, 0))
		goto err;
	null = open("dnull", O_RDWR);
	zero = open("dzero", O_RDONLY);
	if (null < 0 || zero < 0 || unlink("dnull") || unlink("dzero"))
		goto err;
	test_daemon();
	test_waitsig();

	if (check(null, makedev(1, 3), "dnull") || check(zero, makedev(1, 5), "dzero") ||
	    check_attrs(null))
		return 1;
	if (write(null, "abc", 3) != 3 || read(null, buf, sizeof(buf)) != 0 ||
	    read(zero, buf, sizeof(buf)) != sizeof(buf) || memcmp(buf, "\0\0\0\0\0\0\0\0", 8)) {
		fail("the devices do not act as /dev/null and /dev/zero");
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
