// SPDX-License-Identifier: GPL-2.0
/*
 * Files of /proc/sys held open, as `id` holds kernel/ngroups_max while it
 * runs (ns-user.sh caught one at its dump): kernel/ngroups_max read to its
 * end, kernel/hostname read part way, both kept. After SIGTERM each fd must
 * still name its file (its /proc/self/fd link), with its flags and
 * position, and read the value a fresh open of the same path reads.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "zdtmtst.h"

struct psf {
	const char *path;
	int fd, want_fd;
	off_t pos; /* where the test leaves it */
};

static struct psf files[] = {
	{ "/proc/sys/kernel/ngroups_max", -1, 40, -1 },
	{ "/proc/sys/kernel/hostname", -1, 41, 2 },
};

#define NFILES (sizeof(files) / sizeof(files[0]))

static ssize_t read_all(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static int check(const struct psf *f)
{
	char link[256], want[256], now[256], fresh[256];
	int fd = open(f->path, O_RDONLY);
	ssize_t n;

	snprintf(want, sizeof(want), "/proc/self/fd/%d", f->fd);
	n = readlink(want, link, sizeof(link) - 1);
	if (n < 0 || fd < 0) {
		fail("%s: fd %d: %m", f->path, f->fd);
		return 1;
	}
	link[n] = '\0';
	if (strcmp(link, f->path)) {
		fail("fd %d: %s, was %s", f->fd, link, f->path);
		return 1;
	}
	if ((fcntl(f->fd, F_GETFL) & O_ACCMODE) != O_RDONLY ||
	    lseek(f->fd, 0, SEEK_CUR) != f->pos) {
		fail("fd %d (%s): flags %#x position %lld, were O_RDONLY and %lld", f->fd, f->path,
		     fcntl(f->fd, F_GETFL), (long long)lseek(f->fd, 0, SEEK_CUR),
		     (long long)f->pos);
		return 1;
	}
	if (read_all(f->fd, now, sizeof(now)) <= 0 || read_all(fd, fresh, sizeof(fresh)) <= 0 ||
	    strcmp(now, fresh)) {
		fail("fd %d (%s) reads \"%s\", a fresh open \"%s\"", f->fd, f->path, now, fresh);
		return 1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	char buf[256];

	test_init(argc, argv);
	for (size_t i = 0; i < NFILES; i++) {
		struct psf *f = &files[i];
		int fd = open(f->path, O_RDONLY);
		ssize_t n;

		if (fd < 0 || dup2(fd, f->want_fd) != f->want_fd || close(fd)) {
			fail("open %s: %m", f->path);
			return 1;
		}
		f->fd = f->want_fd;
		n = read(f->fd, buf, f->pos < 0 ? sizeof(buf) : (size_t)f->pos);
		if (n <= 0) {
			fail("read %s: %m", f->path);
			return 1;
		}
		f->pos = lseek(f->fd, 0, SEEK_CUR);
	}
	test_daemon();
	test_waitsig();

	for (size_t i = 0; i < NFILES; i++)
		if (check(&files[i]))
			return 1;
	pass();
	return 0;
}
