// SPDX-License-Identifier: GPL-2.0
/*
 * Files of a process that has exited and was reaped, held open: its /proc/N
 * directory and /proc/N/stat, opened while the child lived. Reads give
 * ESRCH, the directory's link shows " (deleted)", the file's does not. The
 * restore opens them while a short-lived child has pid N again, which exits
 * (Documentation/files.md): afterwards they must behave the same (ESRCH, the
 * same links and types), and no process N may be left.
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

struct seen {
	int read_err, openat_err;
	char dir_link[128], file_link[128];
	mode_t dir_mode, file_mode;
};

static void fd_link(int fd, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
}

static void look(int dfd, int sfd, struct seen *s)
{
	char buf[256];
	struct stat st;
	int fd;

	memset(s, 0, sizeof(*s));
	errno = 0;
	s->read_err = pread(sfd, buf, sizeof(buf), 0) < 0 ? errno : 0;
	errno = 0;
	fd = openat(dfd, "stat", O_RDONLY);
	s->openat_err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	fd_link(dfd, s->dir_link, sizeof(s->dir_link));
	fd_link(sfd, s->file_link, sizeof(s->file_link));
	if (!fstat(dfd, &st))
		s->dir_mode = st.st_mode & S_IFMT;
	if (!fstat(sfd, &st))
		s->file_mode = st.st_mode & S_IFMT;
}

int main(int argc, char **argv)
{
	struct seen before, after;
	char path[64], c;
	int p[2], dfd, sfd;
	pid_t child;

	test_init(argc, argv);
	if (pipe(p)) {
		fail("pipe: %m");
		return 1;
	}
	child = fork();
	if (child == 0) {
		close(p[1]);
		_exit(read(p[0], &c, 1) < 0);
	}
	close(p[0]);
	snprintf(path, sizeof(path), "/proc/%d", child);
	dfd = open(path, O_RDONLY | O_DIRECTORY);
	snprintf(path, sizeof(path), "/proc/%d/stat", child);
	sfd = open(path, O_RDONLY);
	close(p[1]);
	if (child < 0 || dfd < 0 || sfd < 0 || waitpid(child, NULL, 0) != child) {
		fail("setup: %m");
		return 1;
	}
	look(dfd, sfd, &before);
	if (before.read_err != ESRCH || !strstr(before.dir_link, "(deleted)")) {
		fail("setup: read gives %d, dir link %s", before.read_err, before.dir_link);
		return 1;
	}

	test_daemon();
	test_waitsig();

	look(dfd, sfd, &after);
	if (after.read_err != before.read_err || after.openat_err != before.openat_err) {
		fail("read gives %d (was %d), openat %d (was %d)", after.read_err, before.read_err,
		     after.openat_err, before.openat_err);
		return 1;
	}
	if (strcmp(after.dir_link, before.dir_link) || strcmp(after.file_link, before.file_link)) {
		fail("links %s, %s; were %s, %s", after.dir_link, after.file_link, before.dir_link,
		     before.file_link);
		return 1;
	}
	if (after.dir_mode != before.dir_mode || after.file_mode != before.file_mode) {
		fail("types %o %o, were %o %o", after.dir_mode, after.file_mode, before.dir_mode,
		     before.file_mode);
		return 1;
	}
	if (!kill(child, 0) || errno != ESRCH) {
		fail("pid %d lives after the restore", child);
		return 1;
	}
	pass();
	return 0;
}
