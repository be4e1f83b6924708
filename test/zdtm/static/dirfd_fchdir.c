// SPDX-License-Identifier: GPL-2.0
/*
 * Directory file descriptors: one on "dir_a" (used with openat), an O_PATH fd
 * on a file, and the cwd moved with fchdir() into "dir_b/sub" (through a
 * directory fd that is then closed). After SIGTERM the cwd must be dir_b/sub,
 * the directory fd must be dir_a (same inode, openat finds its file), the
 * O_PATH fd keeps O_PATH and its file, and the numbers are the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define DIRFD 40
#define PATHFD 41

static int setup(struct stat *st_a, struct stat *st_f, char *cwd0)
{
	int fd, sub;

	if ((mkdir("dir_a", 0755) && errno != EEXIST) ||
	    (mkdir("dir_b", 0755) && errno != EEXIST) ||
	    (mkdir("dir_b/sub", 0755) && errno != EEXIST))
		return -errno;
	fd = open("dir_a/file", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "in dir_a", 8) != 8 || close(fd))
		return -errno;
	fd = open("dir_a", O_RDONLY | O_DIRECTORY);
	if (fd < 0 || dup2(fd, DIRFD) != DIRFD || close(fd) || fstat(DIRFD, st_a))
		return -errno;
	fd = open("dir_a/file", O_PATH);
	if (fd < 0 || dup2(fd, PATHFD) != PATHFD || close(fd) || fstat(PATHFD, st_f))
		return -errno;
	sub = open("dir_b/sub", O_RDONLY | O_DIRECTORY);
	if (sub < 0 || fchdir(sub) || close(sub) || !getcwd(cwd0, PATH_MAX))
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	char cwd0[PATH_MAX], cwd[PATH_MAX], buf[16];
	struct stat st_a, st_f, st;
	int fd, ret;

	test_init(argc, argv);
	ret = setup(&st_a, &st_f, cwd0);
	if (ret) {
		errno = -ret;
		fail("setup: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, cwd0)) {
		fail("cwd is \"%s\", expected \"%s\"", cwd, cwd0);
		return 1;
	}
	if (fstat(DIRFD, &st) || st.st_ino != st_a.st_ino || st.st_dev != st_a.st_dev ||
	    !(fcntl(DIRFD, F_GETFL) & O_DIRECTORY)) {
		fail("fd %d is no longer dir_a", DIRFD);
		return 1;
	}
	fd = openat(DIRFD, "file", O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf)) != 8 || memcmp(buf, "in dir_a", 8)) {
		fail("openat(dir_a fd, \"file\") failed: %m");
		return 1;
	}
	close(fd);
	if (fstat(PATHFD, &st) || st.st_ino != st_f.st_ino || !(fcntl(PATHFD, F_GETFL) & O_PATH) ||
	    read(PATHFD, buf, 1) != -1 || errno != EBADF) {
		fail("fd %d is no longer an O_PATH fd on dir_a/file", PATHFD);
		return 1;
	}
	if (stat("../../dir_a/file", &st) || st.st_ino != st_f.st_ino) {
		fail("dir_a/file not found relative to the cwd");
		return 1;
	}
	pass();
	return 0;
}
