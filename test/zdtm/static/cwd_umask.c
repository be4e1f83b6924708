// SPDX-License-Identifier: GPL-2.0
/*
 * The working directory (a name with a space, created by the test) and the
 * umask must survive, and the umask must still apply to new files.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define DIR_NAME "zdtm cwd.dir"
#define MASK 027

int main(int argc, char **argv)
{
	char before[PATH_MAX], now[PATH_MAX];
	struct stat st0, st1;
	mode_t mask;
	int fd;

	test_init(argc, argv);
	if ((mkdir(DIR_NAME, 0755) && errno != EEXIST) || chdir(DIR_NAME) ||
	    !getcwd(before, sizeof(before)) || stat(".", &st0)) {
		fail("cannot set up %s: %m", DIR_NAME);
		return 1;
	}
	umask(MASK);
	test_daemon();
	test_waitsig();

	if (!getcwd(now, sizeof(now)) || strcmp(now, before)) {
		fail("cwd is %s, expected %s", now, before);
		return 1;
	}
	if (stat(".", &st1) || st1.st_dev != st0.st_dev || st1.st_ino != st0.st_ino) {
		fail("cwd is another directory with the same name");
		return 1;
	}
	mask = umask(MASK);
	if (mask != MASK) {
		fail("umask is %03o, expected %03o", mask, MASK);
		return 1;
	}
	fd = open("umask-probe", O_CREAT | O_WRONLY | O_TRUNC, 0666);
	if (fd < 0 || fstat(fd, &st1) || (st1.st_mode & 0777) != (0666 & ~MASK)) {
		fail("a new file got mode %03o, expected %03o", st1.st_mode & 0777, 0666 & ~MASK);
		return 1;
	}
	close(fd);
	unlink("umask-probe");
	pass();
	return 0;
}
