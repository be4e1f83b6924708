// SPDX-License-Identifier: GPL-2.0
/*
 * Open files: a position in the middle of a file, an O_APPEND descriptor,
 * two fds sharing one open file description (dup), and an unlinked file with
 * its contents. After SIGTERM all positions, flags and sharing must hold.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define LEN 20000
#define POS 12345

static unsigned char data[LEN], got[LEN];

static int check_file(int fd, const char *what, uint64_t seed)
{
	size_t off;

	if (pread(fd, got, LEN, 0) != LEN || datachk(got, LEN, seed, &off)) {
		fail("%s: contents differ", what);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int fd, app, dupfd, gone, flags_fd, flags_app;
	struct stat st;
	off_t pos;

	test_init(argc, argv);
	datagen(data, LEN, 1);
	fd = open("file_pos.data", O_RDWR | O_CREAT | O_TRUNC, 0644);
	app = open("file_pos.log", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	gone = open("file_pos.unlinked", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || app < 0 || gone < 0 || write(fd, data, LEN) != LEN ||
	    lseek(fd, POS, SEEK_SET) != POS || write(app, "a", 1) != 1 ||
	    unlink("file_pos.unlinked")) {
		fail("cannot set up the files: %m");
		return 1;
	}
	datagen(data, LEN, 2);
	if (write(gone, data, LEN) != LEN || lseek(gone, 77, SEEK_SET) != 77) {
		fail("cannot fill the unlinked file: %m");
		return 1;
	}
	dupfd = dup(fd);
	flags_fd = fcntl(fd, F_GETFL);
	flags_app = fcntl(app, F_GETFL);
	test_daemon();
	test_waitsig();

	if (lseek(fd, 0, SEEK_CUR) != POS || fcntl(fd, F_GETFL) != flags_fd ||
	    fcntl(app, F_GETFL) != flags_app || !(flags_app & O_APPEND)) {
		fail("position or flags changed");
		return 1;
	}
	/* A shared description: moving one fd moves the other. */
	pos = lseek(dupfd, 100, SEEK_CUR);
	if (pos != POS + 100 || lseek(fd, 0, SEEK_CUR) != POS + 100) {
		fail("fd and its dup no longer share a position");
		return 1;
	}
	if (write(app, "b", 1) != 1 || fstat(app, &st) || st.st_size != 2) {
		fail("O_APPEND write did not go to the end (size %ld)", (long)st.st_size);
		return 1;
	}
	if (fstat(gone, &st) || st.st_nlink != 0 || lseek(gone, 0, SEEK_CUR) != 77) {
		fail("the unlinked file has %ld links or moved", (long)st.st_nlink);
		return 1;
	}
	if (check_file(fd, "file_pos.data", 1) || check_file(gone, "unlinked file", 2))
		return 1;
	pass();
	return 0;
}
