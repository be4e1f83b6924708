// SPDX-License-Identifier: GPL-2.0
/*
 * Roots removed from outside: child A chroots into "rroot" (mode 0751, owner
 * 1000:1001) and enters it, child B chroots into "rroot2" and keeps its cwd
 * outside it (the test's directory); the parent then removes both
 * directories. After SIGTERM each child checks from inside: its / is a
 * removed directory (nlink 0) with its mode and owner, empty, its own "..";
 * A's cwd is its root, B's cwd is still the test's directory (same inode as
 * before) and not under its root. The parent also checks /proc/PID/root
 * shows "(deleted)".
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

/* 0 when / is a removed, empty directory of @mode owned by 1000:1001 (or any owner if !@owner) */
static int check_root(mode_t mode, int owner)
{
	struct stat r, rr, ent;
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (stat("/", &r) || stat("/..", &rr) || !S_ISDIR(r.st_mode) || r.st_nlink != 0 ||
	    (r.st_mode & 07777) != mode || r.st_ino != rr.st_ino || r.st_dev != rr.st_dev)
		return 1;
	if (owner && (r.st_uid != 1000 || r.st_gid != 1001))
		return 2;
	d = opendir("/");
	if (!d)
		return 3;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	if (n || stat("/x", &ent) == 0)
		return 4;
	return 0;
}

static pid_t start(const char *dir, mode_t mode, int enter, int *go, int *ready_fd)
{
	int ready[2], gop[2];
	struct stat before, now;
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(gop) || mkdir(dir, 0700) || chmod(dir, mode) ||
	    (enter && chown(dir, 1000, 1001)) || stat(".", &before))
		return neg_errno();
	pid = fork();
	if (pid < 0)
		return neg_errno();
	if (pid == 0) {
		close(gop[1]);
		if (chroot(dir) || (enter && chdir("/")) || write(ready[1], "r", 1) != 1)
			_exit(10);
		if (read(gop[0], &c, 1) != 1)
			_exit(11);
		if (check_root(mode, enter))
			_exit(20 + check_root(mode, enter));
		if (stat(".", &now))
			_exit(30);
		if (enter) {
			struct stat r;

			if (stat("/", &r) || r.st_ino != now.st_ino || r.st_dev != now.st_dev)
				_exit(31);
		} else if (now.st_ino != before.st_ino || now.st_dev != before.st_dev ||
			   now.st_nlink == 0) {
			_exit(32);
		}
		_exit(0);
	}
	close(gop[0]);
	*go = gop[1];
	*ready_fd = ready[0];
	return pid;
}

int main(int argc, char **argv)
{
	int go_a, go_b, ready_a, ready_b, status, ret = 0;
	pid_t a, b;
	char c, path[64], link[256];
	ssize_t n;

	test_init(argc, argv);
	a = start("rroot", 0751, 1, &go_a, &ready_a);
	b = start("rroot2", 0755, 0, &go_b, &ready_b);
	if (a < 0 || b < 0 || read(ready_a, &c, 1) != 1 || read(ready_b, &c, 1) != 1 ||
	    rmdir("rroot") || rmdir("rroot2")) {
		fail("setup: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	snprintf(path, sizeof(path), "/proc/%d/root", a);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	if (!strstr(link, "rroot (deleted)")) {
		fail("the root of A reads %s", link);
		ret = 1;
	}
	if (write(go_a, "g", 1) != 1 || write(go_b, "g", 1) != 1 || waitpid(a, &status, 0) != a) {
		fail("cannot wake the children: %m");
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("child A (cwd = root): status %#x", status);
		ret = 1;
	}
	if (waitpid(b, &status, 0) != b || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("child B (cwd outside its root): status %#x", status);
		ret = 1;
	}
	if (!ret)
		pass();
	return ret;
}
