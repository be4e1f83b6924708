// SPDX-License-Identifier: GPL-2.0
/*
 * An open file that was unlinked, with 100 KiB of data and a position, and a
 * new file created afterwards under the same name. After SIGTERM the first
 * must still be unlinked (fstat nlink 0, "(deleted)" in /proc/self/fd), hold
 * its data at its position and stay writable, and must not be the new file;
 * the new file keeps its own contents and its single link.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define FNAME "unlinked_file.data"
#define SIZE (100 * 1024)
#define POS 12345

static int check_gone(int fd, struct stat *st0)
{
	static unsigned char buf[SIZE];
	char path[64], link[4096];
	struct stat st;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	if (fstat(fd, &st) || st.st_nlink != 0 || st.st_size != SIZE ||
	    !strstr(link, "(deleted)")) {
		fail("unlinked file: nlink %lu size %ld link \"%s\"", (unsigned long)st.st_nlink,
		     (long)st.st_size, link);
		return 1;
	}
	if (st.st_ino == st0->st_ino && st.st_dev == st0->st_dev) {
		fail("the unlinked file is now the new file of the same name");
		return 1;
	}
	if (lseek(fd, 0, SEEK_CUR) != POS || pread(fd, buf, SIZE, 0) != SIZE ||
	    datachk(buf, SIZE, 91, NULL)) {
		fail("unlinked file: position %ld or contents differ",
		     (long)lseek(fd, 0, SEEK_CUR));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static unsigned char buf[SIZE];
	struct stat st_new, st;
	char small[32];
	int fd, fd_new;
	uint32_t v = 0xfeedf00d, got;

	test_init(argc, argv);
	datagen(buf, SIZE, 91);
	fd = open(FNAME, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, buf, SIZE) != SIZE || lseek(fd, POS, SEEK_SET) != POS ||
	    unlink(FNAME)) {
		fail("cannot set up the unlinked file: %m");
		return 1;
	}
	fd_new = open(FNAME, O_RDWR | O_CREAT | O_EXCL, 0640);
	if (fd_new < 0 || write(fd_new, "the new one", 11) != 11 || fstat(fd_new, &st_new)) {
		fail("cannot create the new file: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (check_gone(fd, &st_new))
		return 1;
	if (stat(FNAME, &st) || st.st_ino != st_new.st_ino || st.st_nlink != 1 ||
	    pread(fd_new, small, sizeof(small), 0) != 11 || memcmp(small, "the new one", 11)) {
		fail("the new file under the old name changed");
		return 1;
	}
	if (pwrite(fd, &v, sizeof(v), SIZE) != sizeof(v) || pread(fd, &got, 4, SIZE) != 4 ||
	    got != v || fstat(fd, &st) || st.st_size != SIZE + 4) {
		fail("the unlinked file cannot be written any more: %m");
		return 1;
	}
	pass();
	return 0;
}
