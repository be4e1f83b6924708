// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/console and a virtual console (/dev/tty1) held open without being the
 * controlling terminal (O_NOCTTY), as daemons and init systems keep them:
 * dumped without --shell-job, as CRIU dumps them. After SIGTERM each fd must
 * still be that device with its flags, and the test still has no
 * controlling terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "zdtmtst.h"

static int same(int fd, unsigned int ma, unsigned int mi, int flags, const char *what)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	if (fstat(fd, &st) || !S_ISCHR(st.st_mode) || major(st.st_rdev) != ma ||
	    minor(st.st_rdev) != mi || (fl & (O_ACCMODE | O_NONBLOCK)) != flags) {
		fail("%s: rdev %u:%u flags %#x, expected %u:%u %#x", what, major(st.st_rdev),
		     minor(st.st_rdev), fl, ma, mi, flags);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int con, vt;

	test_init(argc, argv);
	con = open("/dev/console", O_WRONLY | O_NOCTTY | O_NONBLOCK);
	vt = open("/dev/tty1", O_RDONLY | O_NOCTTY);
	if (con < 0 || vt < 0) {
		fail("open /dev/console or /dev/tty1: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (same(con, 5, 1, O_WRONLY | O_NONBLOCK, "/dev/console") ||
	    same(vt, 4, 1, O_RDONLY, "/dev/tty1"))
		return 1;
	if (open("/dev/tty", O_RDONLY) >= 0 || errno != ENXIO) {
		fail("the test has a controlling terminal now: %m");
		return 1;
	}
	pass();
	return 0;
}
