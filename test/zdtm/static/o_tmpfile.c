// SPDX-License-Identifier: GPL-2.0
/*
 * An O_TMPFILE file (never had a name) with 64 KiB of data and a position.
 * After SIGTERM it must still have no name (nlink 0), its data and position,
 * and it must still be an O_TMPFILE opened without O_EXCL: linkat() with
 * AT_EMPTY_PATH gives it a name, and reading through that name gives the data.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define SIZE (64 * 1024)

int main(int argc, char **argv)
{
	static unsigned char buf[SIZE];
	struct stat st;
	int fd, named;

	test_init(argc, argv);
	fd = open(".", O_TMPFILE | O_RDWR, 0600);
	datagen(buf, SIZE, 81);
	if (fd < 0 || write(fd, buf, SIZE) != SIZE || lseek(fd, 4321, SEEK_SET) != 4321) {
		fail("O_TMPFILE: %m");
		return 1;
	}
	unlink("o_tmpfile.linked");
	test_daemon();
	test_waitsig();

	if (fstat(fd, &st) || st.st_nlink != 0 || st.st_size != SIZE ||
	    lseek(fd, 0, SEEK_CUR) != 4321) {
		fail("nlink %lu size %ld position %ld, expected 0 %d 4321",
		     (unsigned long)st.st_nlink, (long)st.st_size, (long)lseek(fd, 0, SEEK_CUR),
		     SIZE);
		return 1;
	}
	if (pread(fd, buf, SIZE, 0) != SIZE || datachk(buf, SIZE, 81, NULL)) {
		fail("the data changed");
		return 1;
	}
	if (linkat(fd, "", AT_FDCWD, "o_tmpfile.linked", AT_EMPTY_PATH)) {
		fail("linkat(AT_EMPTY_PATH): %m");
		return 1;
	}
	named = open("o_tmpfile.linked", O_RDONLY);
	if (named < 0 || pread(named, buf, SIZE, 0) != SIZE || datachk(buf, SIZE, 81, NULL) ||
	    fstat(fd, &st) || st.st_nlink != 1) {
		fail("the linked name does not give the file");
		return 1;
	}
	pass();
	return 0;
}
