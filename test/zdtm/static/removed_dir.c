// SPDX-License-Identifier: GPL-2.0
/*
 * Directories removed while open: one opened O_RDONLY and again O_PATH, owned
 * by 1000:1001 with mode 0750; one whose parent directory was removed with
 * it; a new directory made at the first one's name since; and a child whose
 * working directory (mode 0710) was removed under it. After SIGTERM
 * each fd must still be a removed directory (nlink 0, "(deleted)" in
 * /proc/self/fd) with its owner and mode, the two fds of the first one the
 * same directory, the new directory untouched, and the child's cwd still a
 * removed directory with its mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static int removed(int fd, const char *what, struct stat *st)
{
	char path[64], link[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	if (fstat(fd, st) || !S_ISDIR(st->st_mode) || st->st_nlink != 0 ||
	    !strstr(link, "(deleted)")) {
		fail("%s: mode %o nlink %lu link %s", what, st->st_mode,
		     (unsigned long)st->st_nlink, link);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct stat a, b, c, nst, nst2;
	int d1, d1p, d2, p[2], status;
	char path[64], link[256];
	pid_t child;
	ssize_t n;

	test_init(argc, argv);
	if (mkdir("rdir", 0700) || chown("rdir", 1000, 1001) || chmod("rdir", 0750) ||
	    mkdir("rparent", 0700) || mkdir("rparent/child", 0700))
		goto err;
	d1 = open("rdir", O_RDONLY | O_DIRECTORY);
	d1p = open("rdir", O_PATH);
	d2 = open("rparent/child", O_RDONLY | O_DIRECTORY);
	if (d1 < 0 || d1p < 0 || d2 < 0 || rmdir("rdir") || rmdir("rparent/child") ||
	    rmdir("rparent") || mkdir("rdir", 0755) || stat("rdir", &nst) || pipe(p))
		goto err;
	child = fork();
	if (child < 0)
		goto err;
	if (child == 0) {
		if (mkdir("rcwd", 0710) || chmod("rcwd", 0710) || chdir("rcwd") ||
		    rmdir("../rcwd") || write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	if (read(p[0], path, 1) != 1)
		goto err;
	test_daemon();
	test_waitsig();

	if (removed(d1, "rdir", &a) || removed(d1p, "rdir (O_PATH)", &b) ||
	    removed(d2, "rparent/child", &c))
		return 1;
	if (a.st_ino != b.st_ino || a.st_uid != 1000 || a.st_gid != 1001 ||
	    (a.st_mode & 07777) != 0750 || !(fcntl(d1p, F_GETFL) & O_PATH)) {
		fail("rdir: inode %lu/%lu %u:%u mode %o", (unsigned long)a.st_ino,
		     (unsigned long)b.st_ino, a.st_uid, a.st_gid, a.st_mode);
		return 1;
	}
	if (stat("rdir", &nst2) || nst2.st_ino != nst.st_ino || access("rparent", F_OK) == 0) {
		fail("the new rdir changed, or rparent came back");
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/cwd", child);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	if (stat(path, &c) || !S_ISDIR(c.st_mode) || c.st_nlink || (c.st_mode & 07777) != 0710 ||
	    !strstr(link, "rcwd (deleted)")) {
		fail("the child's cwd: %s, mode %o nlink %lu", link, c.st_mode,
		     (unsigned long)c.st_nlink);
		return 1;
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
