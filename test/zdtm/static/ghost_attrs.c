// SPDX-License-Identifier: GPL-2.0
/*
 * What the restore must give an unlinked file it makes again besides its
 * data: an unlinked file owned by 1000:1001 with mode 0604, a user.*
 * extended attribute and times set in the past; a memfd owned by 1002:1003
 * with mode 0640. After SIGTERM each must have the same owner, mode, times
 * (atime and mtime to the nanosecond) and extended attribute.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "zdtmtst.h"

#define FNAME "ghost_attrs.data"

static int same(const char *what, int fd, const struct stat *b)
{
	struct stat a;

	if (fstat(fd, &a) || a.st_uid != b->st_uid || a.st_gid != b->st_gid ||
	    a.st_mode != b->st_mode || a.st_mtim.tv_sec != b->st_mtim.tv_sec ||
	    a.st_mtim.tv_nsec != b->st_mtim.tv_nsec || a.st_atim.tv_sec != b->st_atim.tv_sec ||
	    a.st_atim.tv_nsec != b->st_atim.tv_nsec) {
		fail("%s: %u:%u mode %o mtime %ld.%09ld atime %ld.%09ld, expected %u:%u %o "
		     "%ld.%09ld %ld.%09ld",
		     what, a.st_uid, a.st_gid, a.st_mode, (long)a.st_mtim.tv_sec, a.st_mtim.tv_nsec,
		     (long)a.st_atim.tv_sec, a.st_atim.tv_nsec, b->st_uid, b->st_gid, b->st_mode,
		     (long)b->st_mtim.tv_sec, b->st_mtim.tv_nsec, (long)b->st_atim.tv_sec,
		     b->st_atim.tv_nsec);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec ts[2] = { { 1000000000, 123456789 }, { 1100000000, 987654321 } };
	struct stat fst, mst;
	char val[32];
	int fd, mfd;
	ssize_t n;

	test_init(argc, argv);
	fd = open(FNAME, O_RDWR | O_CREAT | O_TRUNC, 0600);
	mfd = memfd_create("ghost_attrs", 0);
	if (fd < 0 || mfd < 0 || write(fd, "contents", 8) != 8 || write(mfd, "m", 1) != 1 ||
	    fchown(fd, 1000, 1001) || fchmod(fd, 0604) ||
	    fsetxattr(fd, "user.criu_like", "value-1", 7, 0) || futimens(fd, ts) || unlink(FNAME) ||
	    fchown(mfd, 1002, 1003) || fchmod(mfd, 0640) || fstat(fd, &fst) || fstat(mfd, &mst)) {
		fail("setup: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (same("unlinked file", fd, &fst) || same("memfd", mfd, &mst))
		return 1;
	n = fgetxattr(fd, "user.criu_like", val, sizeof(val));
	if (n != 7 || memcmp(val, "value-1", 7)) {
		fail("unlinked file: user.criu_like is %zd bytes: %m", n);
		return 1;
	}
	pass();
	return 0;
}
