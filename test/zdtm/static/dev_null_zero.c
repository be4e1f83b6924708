// SPDX-License-Identifier: GPL-2.0
/*
 * Character devices: /dev/null open write-only, read-write with O_APPEND at a
 * high fd, /dev/zero read-only and non-blocking, and a private /dev/zero
 * mapping with data written to it. After SIGTERM each fd must be the same
 * device (st_rdev) with the same flags and still behave (null swallows and
 * reads EOF, zero gives zeros), and the mapping keeps its data.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "zdtmtst.h"

struct dev {
	const char *path;
	int flags, fd, want_fd;
	unsigned int major, minor;
};

static struct dev devs[] = {
	{ "/dev/null", O_WRONLY, -1, 10, 1, 3 },
	{ "/dev/null", O_RDWR | O_APPEND, -1, 321, 1, 3 },
	{ "/dev/zero", O_RDONLY | O_NONBLOCK, -1, 11, 1, 5 },
};

#define NDEVS (sizeof(devs) / sizeof(devs[0]))
#define FLMASK (O_ACCMODE | O_APPEND | O_NONBLOCK)

static int check(struct dev *d)
{
	unsigned char buf[4096];
	struct stat st;
	int fl = fcntl(d->fd, F_GETFL);

	if (fstat(d->fd, &st) || !S_ISCHR(st.st_mode) || major(st.st_rdev) != d->major ||
	    minor(st.st_rdev) != d->minor || (fl & FLMASK) != d->flags) {
		fail("fd %d: not %s with flags %#x (rdev %u:%u flags %#x)", d->fd, d->path,
		     d->flags, major(st.st_rdev), minor(st.st_rdev), fl);
		return 1;
	}
	if (d->minor == 3) {
		if (write(d->fd, "x", 1) != 1 ||
		    ((d->flags & O_ACCMODE) == O_RDWR && read(d->fd, buf, 1) != 0)) {
			fail("fd %d: /dev/null does not behave", d->fd);
			return 1;
		}
		return 0;
	}
	buf[100] = 1;
	if (read(d->fd, buf, sizeof(buf)) != sizeof(buf) || buf[100]) {
		fail("fd %d: /dev/zero does not give zeros", d->fd);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char *zmap;
	int zfd;

	test_init(argc, argv);
	for (size_t i = 0; i < NDEVS; i++) {
		int fd = open(devs[i].path, devs[i].flags);

		devs[i].fd = dup2(fd, devs[i].want_fd);
		if (fd < 0 || devs[i].fd != devs[i].want_fd || close(fd)) {
			fail("open %s: %m", devs[i].path);
			return 1;
		}
	}
	zfd = open("/dev/zero", O_RDWR);
	zmap = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, zfd, 0);
	if (zfd < 0 || zmap == MAP_FAILED || close(zfd)) {
		fail("mmap /dev/zero: %m");
		return 1;
	}
	datagen(zmap, 8 * 4096, 5);
	test_daemon();
	test_waitsig();

	for (size_t i = 0; i < NDEVS; i++)
		if (check(&devs[i]))
			return 1;
	if (datachk(zmap, 8 * 4096, 5, NULL)) {
		fail("the /dev/zero mapping lost its data");
		return 1;
	}
	for (int i = 8 * 4096; i < 16 * 4096; i++)
		if (zmap[i]) {
			fail("the untouched half of the /dev/zero mapping is not zero");
			return 1;
		}
	pass();
	return 0;
}
