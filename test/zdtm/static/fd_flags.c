// SPDX-License-Identifier: GPL-2.0
/*
 * File status and descriptor flags on sparse fd numbers: access modes,
 * O_APPEND, O_NONBLOCK, O_SYNC, O_DSYNC, O_NOATIME, close-on-exec on some.
 * After SIGTERM /proc/self/fdinfo must give the same flags and position for
 * each, F_GETFD the same close-on-exec, and an exec()ed shell must see
 * exactly the fds without close-on-exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

struct fdspec {
	int fd, flags, cloexec;
	off_t pos;
	char fdinfo[128]; /* the pos and flags lines */
};

static struct fdspec specs[] = {
	{ 7, O_RDONLY, 0, 10 },
	{ 17, O_WRONLY | O_APPEND, 1, 0 },
	{ 33, O_RDWR | O_NONBLOCK, 0, 333 },
	{ 300, O_RDWR | O_SYNC, 1, 3000 },
	{ 301, O_WRONLY | O_DSYNC | O_NOATIME, 0, 1 },
	{ 1000, O_RDONLY | O_NONBLOCK | O_NOATIME, 1, 4095 },
};

#define NSPECS (sizeof(specs) / sizeof(specs[0]))

static int fdinfo(int fd, char *buf, size_t size)
{
	char path[64], info[1024], *pos, *flags;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (test_read_file(path, info, sizeof(info)) < 0 || !(pos = strstr(info, "pos:")) ||
	    !(flags = strstr(info, "flags:")))
		return -ENOENT;
	snprintf(buf, size, "%.*s %.*s", (int)strcspn(pos, "\n"), pos, (int)strcspn(flags, "\n"),
		 flags);
	return 0;
}

/* A shell after exec sees fds 7, 33, 301 and not 17, 300, 1000. */
static int exec_view(void)
{
	static const char script[] =
		"for fd in 7 33 301; do [ -e /proc/$$/fd/$fd ] || exit 1; done;"
		"for fd in 17 300 1000; do [ -e /proc/$$/fd/$fd ] && exit 2; done;"
		"exit 0";
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(3);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return WEXITSTATUS(status);
}

static int check(void)
{
	char now[128];
	int r;

	for (size_t i = 0; i < NSPECS; i++) {
		struct fdspec *s = &specs[i];

		if (fdinfo(s->fd, now, sizeof(now)) || strcmp(now, s->fdinfo)) {
			fail("fd %d: fdinfo \"%s\", expected \"%s\"", s->fd, now, s->fdinfo);
			return 1;
		}
		if (fcntl(s->fd, F_GETFD) != (s->cloexec ? FD_CLOEXEC : 0)) {
			fail("fd %d: close-on-exec %d, expected %d", s->fd, fcntl(s->fd, F_GETFD),
			     s->cloexec);
			return 1;
		}
	}
	r = exec_view();
	if (r) {
		fail("after exec: %s", r == 1	? "an fd without close-on-exec is missing"
				       : r == 2 ? "an fd with close-on-exec survived"
						: "the shell failed");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char data[8192];

	test_init(argc, argv);
	for (size_t i = 0; i < NSPECS; i++) {
		struct fdspec *s = &specs[i];
		char name[64];
		int fd;

		snprintf(name, sizeof(name), "fd_flags.%d", s->fd);
		fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, data, sizeof(data)) != sizeof(data) || close(fd)) {
			fail("create %s: %m", name);
			return 1;
		}
		fd = open(name, s->flags | (s->cloexec ? O_CLOEXEC : 0));
		if (fd < 0 || dup3(fd, s->fd, s->cloexec ? O_CLOEXEC : 0) != s->fd || close(fd) ||
		    lseek(s->fd, s->pos, SEEK_SET) != s->pos ||
		    fdinfo(s->fd, s->fdinfo, sizeof(s->fdinfo))) {
			fail("fd %d: %m", s->fd);
			return 1;
		}
	}
	if (check())
		return 1;
	test_daemon();
	test_waitsig();

	if (check())
		return 1;
	pass();
	return 0;
}
