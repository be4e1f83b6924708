// SPDX-License-Identifier: GPL-2.0
/*
 * Namespace files held open: /proc/self/ns/{net,uts,ipc,mnt,pid,
 * pid_for_children,cgroup,time,user} of the test itself, and the uts
 * namespace of a child (through /proc/CHILD/ns/uts) with an fd the child does
 * not have. After SIGTERM each fd must still be a namespace file of the same
 * type, and name the namespace the restored task (or child) is in now: the
 * same inode as its /proc/PID/ns link (inodes of a container's namespaces
 * are new after a restore; the host's stay).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR 9

static const char *kinds[NR] = { "net",	   "uts",  "ipc", "mnt", "pid", "pid_for_children",
				 "cgroup", "time", "user" };

static int same_ns(int fd, pid_t pid, const char *kind)
{
	struct stat a, b;
	char path[64], la[64] = "", lb[64] = "";

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, kind);
	if (fstat(fd, &a) || stat(path, &b) || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
		snprintf(la, sizeof(la), "/proc/self/fd/%d", fd);
		readlink(la, lb, sizeof(lb) - 1);
		fail("fd %d (%s) is inode %lu, %s is %lu", fd, lb, (unsigned long)a.st_ino, path,
		     (unsigned long)b.st_ino);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int fd[NR], cfd, i, status;
	char path[64];
	pid_t child;

	test_init(argc, argv);
	for (i = 0; i < NR; i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", kinds[i]);
		fd[i] = open(path, O_RDONLY);
		if (fd[i] < 0) {
			fail("open %s: %m", path);
			return 1;
		}
	}
	child = fork();
	if (child < 0) {
		fail("fork: %m");
		return 1;
	}
	if (child == 0) {
		for (i = 0; i < NR; i++)
			close(fd[i]);
		for (;;)
			pause();
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/uts", child);
	cfd = open(path, O_RDONLY);
	if (cfd < 0) {
		fail("open %s: %m", path);
		return 1;
	}
	test_daemon();
	test_waitsig();

	for (i = 0; i < NR; i++)
		if (same_ns(fd[i], getpid(), kinds[i]))
			return 1;
	if (same_ns(cfd, child, "uts"))
		return 1;
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	pass();
	return 0;
}
