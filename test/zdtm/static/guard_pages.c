// SPDX-License-Identifier: GPL-2.0
/*
 * Guard regions (MADV_GUARD_INSTALL, Linux 6.13): an anonymous private area
 * of 16 pages, each filled with its number, with guards on pages 4-5 and
 * 10; a private file mapping of 8 pages with a guard on page 2 (6.15: file
 * mappings); a forked child that inherited the first area and removed the
 * guard of page 10 (MADV_GUARD_REMOVE) and wrote there. After SIGTERM, in
 * both processes: pagemap (bit 58) shows guards on exactly those pages, and
 * every other page holds what it held.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#define MADV_GUARD_REMOVE 103
#endif
#define PM_GUARD (1ULL << 58)
#define NA 16
#define NF 8

static long psz;

static int is_guard(const char *p)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t e = 0;

	if (fd < 0 || pread(fd, &e, 8, (off_t)((uintptr_t)p / psz * 8)) != 8)
		e = 0;
	if (fd >= 0)
		close(fd);
	return !!(e & PM_GUARD);
}

/* The anonymous area: guards on @guards (a bitmap), page i filled with 'A' + i elsewhere. */
static int check_anon(const char *a, unsigned int guards, const char *who)
{
	for (int i = 0; i < NA; i++) {
		int g = is_guard(a + i * psz);

		if (g != !!(guards & (1u << i)) || (!g && a[i * psz] != 'A' + i)) {
			fail("%s: page %d: guard %d, expected %d; data %c", who, i, g,
			     !!(guards & (1u << i)), g ? '-' : a[i * psz]);
			return -EINVAL;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int p[2], q[2], st, fd, i;
	char *a, *f, c;
	pid_t child;

	test_init(argc, argv);
	psz = sysconf(_SC_PAGESIZE);
	a = mmap(NULL, NA * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = open("guard_file", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (a == MAP_FAILED || fd < 0 || ftruncate(fd, NF * psz) || pipe(p) || pipe(q))
		goto err;
	for (i = 0; i < NF; i++)
		if (pwrite(fd, "F", 1, i * psz) != 1)
			goto err;
	f = mmap(NULL, NF * psz, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f == MAP_FAILED)
		goto err;
	for (i = 0; i < NA; i++)
		memset(a + i * psz, 'A' + i, psz);
	if (madvise(a + 4 * psz, 2 * psz, MADV_GUARD_INSTALL) ||
	    madvise(a + 10 * psz, psz, MADV_GUARD_INSTALL) ||
	    madvise(f + 2 * psz, psz, MADV_GUARD_INSTALL))
		goto err;
	child = fork();
	if (child < 0)
		goto err;
	if (child == 0) {
		if (madvise(a + 10 * psz, psz, MADV_GUARD_REMOVE))
			_exit(1);
		memset(a + 10 * psz, 'A' + 10, psz);
		if (write(p[1], "r", 1) != 1 || read(q[0], &c, 1) != 1)
			_exit(1);
		_exit(check_anon(a, 3u << 4, "child") ? 2 : 0);
	}
	if (read(p[0], &c, 1) != 1)
		goto err;
	test_daemon();
	test_waitsig();

	if (check_anon(a, (3u << 4) | (1u << 10), "parent"))
		return 1;
	for (i = 0; i < NF; i++)
		if (is_guard(f + i * psz) != (i == 2) || (i != 2 && f[i * psz] != 'F')) {
			fail("file mapping: page %d guard %d", i, is_guard(f + i * psz));
			return 1;
		}
	if (write(q[1], "c", 1) != 1 || waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		fail("the child found its memory changed (status %x)", st);
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
