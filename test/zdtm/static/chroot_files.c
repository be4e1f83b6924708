// SPDX-License-Identifier: GPL-2.0
/*
 * Files opened inside a chroot: the test chroots into a directory of its
 * own, opens a file and a directory there (and keeps one opened before the
 * chroot, outside it), and writes to the file. After SIGTERM it must still
 * be chrooted there (/ is that directory, getcwd() is "/"), and each fd must
 * be the same file with its position.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

int main(int argc, char **argv)
{
	struct stat in_before, dir_before, out_before, st;
	char cwd[PATH_MAX], buf[16];
	int in, dir, out;

	test_init(argc, argv);
	if (mkdir("chroot_files.root", 0755))
		goto err;
	out = open("chroot_files.outside", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (out < 0 || write(out, "outside", 7) != 7 || fstat(out, &out_before) ||
	    chroot("chroot_files.root") || chdir("/"))
		goto err;
	in = open("/inside.txt", O_RDWR | O_CREAT | O_TRUNC, 0600);
	dir = open("/", O_RDONLY | O_DIRECTORY);
	if (in < 0 || dir < 0 || write(in, "inside", 6) != 6 || fstat(in, &in_before) ||
	    fstat(dir, &dir_before))
		goto err;
	test_daemon();
	test_waitsig();

	if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, "/") || stat("/inside.txt", &st) ||
	    st.st_ino != in_before.st_ino) {
		fail("not in the chroot any more: cwd %s, /inside.txt %m", cwd);
		return 1;
	}
	if (fstat(in, &st) || st.st_ino != in_before.st_ino || lseek(in, 0, SEEK_CUR) != 6 ||
	    pread(in, buf, 6, 0) != 6 || memcmp(buf, "inside", 6) || fstat(dir, &st) ||
	    st.st_ino != dir_before.st_ino || fstat(out, &st) || st.st_ino != out_before.st_ino ||
	    lseek(out, 0, SEEK_CUR) != 7) {
		fail("a file opened in or before the chroot changed");
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
