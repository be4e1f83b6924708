// SPDX-License-Identifier: GPL-2.0
/*
 * A directory of 200 files read half-way with getdents64 through an fd (the
 * position is an opaque hash cookie on most file systems, not a byte count).
 * After SIGTERM the next getdents64 calls must return exactly the entries
 * that were still to come, in the same order.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NFILES 200

struct d64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* The names of up to @max entries read from @fd into @out, one per call; the count. */
static int read_names(int fd, char (*out)[32], int max)
{
	/* One entry per call (a name of 8 characters takes 32 bytes, two take 48 or more). */
	char buf[40] __attribute__((aligned(8)));
	int n = 0;

	while (n < max) {
		long len = syscall(SYS_getdents64, fd, buf, sizeof(buf));

		if (len <= 0)
			break;
		for (long off = 0; off < len;) {
			struct d64 *d = (struct d64 *)(buf + off);

			if (n < max)
				snprintf(out[n++], 32, "%s", d->name);
			off += d->reclen;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	static char all[NFILES + 8][32], rest[NFILES + 8][32], got[NFILES + 8][32];
	int fd, nall, nhead, nrest, n;
	off_t pos;

	test_init(argc, argv);
	if (mkdir("dir_pos.dir", 0755) && errno != EEXIST) {
		fail("mkdir: %m");
		return 1;
	}
	for (int i = 0; i < NFILES; i++) {
		char name[64];
		int f;

		snprintf(name, sizeof(name), "dir_pos.dir/file-%03d", i);
		f = open(name, O_CREAT | O_WRONLY, 0644);
		if (f < 0 || close(f)) {
			fail("create %s: %m", name);
			return 1;
		}
	}
	fd = open("dir_pos.dir", O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		fail("open: %m");
		return 1;
	}
	/* The whole listing once, then the first part again, and note what is left. */
	nall = read_names(fd, all, NFILES + 8);
	lseek(fd, 0, SEEK_SET);
	nhead = read_names(fd, got, nall / 2);
	pos = lseek(fd, 0, SEEK_CUR);
	nrest = nall - nhead;
	memcpy(rest, all + nhead, sizeof(rest[0]) * nrest);
	if (nall != NFILES + 2 || nhead < 10) {
		fail("listing gave %d entries, the head %d", nall, nhead);
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (lseek(fd, 0, SEEK_CUR) != pos) {
		fail("directory position %ld, expected %ld", (long)lseek(fd, 0, SEEK_CUR),
		     (long)pos);
		return 1;
	}
	n = read_names(fd, got, NFILES + 8);
	if (n != nrest) {
		fail("the rest of the listing has %d entries, expected %d (of %d)", n, nrest, nall);
		return 1;
	}
	for (int i = 0; i < nrest; i++) {
		if (strcmp(got[i], rest[i])) {
			fail("entry %d of the rest is %s, expected %s", i, got[i], rest[i]);
			return 1;
		}
	}
	pass();
	return 0;
}
