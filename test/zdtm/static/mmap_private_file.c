// SPDX-License-Identifier: GPL-2.0
/*
 * A private file mapping with some pages modified, and a second read-only
 * private mapping of the same file at an offset. After SIGTERM both must map
 * the same file at the same offsets (/proc/self/maps), the modified pages hold
 * what was written, the others equal the file; and the unmodified pages still
 * come from the page cache: a later pwrite() to the file shows through them,
 * not through the modified ones. A restore that copies every page into
 * anonymous memory fails the last check.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PG 4096
#define PAGES 16
#define FNAME "mmap_private_file.data"

static bool modified(int page)
{
	return page == 1 || page == 3 || page == 5 || page == 8;
}

/* The maps line of @addr names FNAME at @off; 0 or 1 after fail(). */
static int check_maps(const void *addr, unsigned long off)
{
	char maps[65536], want[32], *l;

	if (test_read_file("/proc/self/maps", maps, sizeof(maps)) < 0) {
		fail("cannot read /proc/self/maps");
		return 1;
	}
	snprintf(want, sizeof(want), "%lx-", (unsigned long)addr);
	for (l = maps; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long o;
		char *nl = strchr(l, '\n');

		if (strncmp(l, want, strlen(want)))
			continue;
		if (nl)
			*nl = '\0';
		if (sscanf(l, "%*s %*s %lx", &o) != 1 || o != off || !strstr(l, "/" FNAME)) {
			fail("mapping at %p: \"%s\", expected %s at offset %#lx", addr, l, FNAME,
			     off);
			return 1;
		}
		return 0;
	}
	fail("no mapping starts at %p", addr);
	return 1;
}

static int check_pages(const unsigned char *map, int fd)
{
	unsigned char file[PG];

	for (int p = 0; p < PAGES; p++) {
		if (pread(fd, file, PG, p * PG) != PG) {
			fail("pread: %m");
			return 1;
		}
		if (modified(p) ? datachk(map + p * PG, PG, 100 + p, NULL)
				: memcmp(map + p * PG, file, PG)) {
			fail("page %d (%s) has other contents", p,
			     modified(p) ? "modified" : "clean");
			return 1;
		}
	}
	return 0;
}

/* pwrite() to the file shows in clean pages only. */
static int check_page_cache(const unsigned char *map, const unsigned char *ro, int fd)
{
	unsigned char buf[PG];

	datagen(buf, PG, 999);
	if (pwrite(fd, buf, PG, 2 * PG) != PG || pwrite(fd, buf, PG, 3 * PG) != PG ||
	    pwrite(fd, buf, PG, 6 * PG) != PG) {
		fail("pwrite: %m");
		return 1;
	}
	if (memcmp(map + 2 * PG, buf, PG) || memcmp(ro + 2 * PG, buf, PG)) {
		fail("a clean private page no longer follows the file (copied, not mapped)");
		return 1;
	}
	if (!datachk(map + 3 * PG, PG, 999, NULL) || datachk(map + 3 * PG, PG, 103, NULL)) {
		fail("a modified private page changed with the file");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static unsigned char data[PAGES * PG];
	unsigned char *map, *ro;
	int fd;

	test_init(argc, argv);
	datagen(data, sizeof(data), 1);
	fd = open(FNAME, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, sizeof(data)) != sizeof(data)) {
		fail("cannot write %s: %m", FNAME);
		return 1;
	}
	map = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ro = mmap(NULL, 8 * PG, PROT_READ, MAP_PRIVATE, fd, 4 * PG);
	if (map == MAP_FAILED || ro == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	for (int p = 0; p < PAGES; p++)
		if (modified(p))
			datagen(map + p * PG, PG, 100 + p);
		else
			(void)*(volatile unsigned char *)(map + p * PG);
	for (int p = 0; p < 8; p++)
		(void)*(volatile unsigned char *)(ro + p * PG);
	test_daemon();
	test_waitsig();

	if (check_maps(map, 0) || check_maps(ro, 4 * PG) || check_pages(map, fd))
		return 1;
	if (memcmp(ro, data + 4 * PG, 8 * PG)) {
		fail("the read-only mapping at offset 4 pages differs from the file");
		return 1;
	}
	if (check_page_cache(map, ro, fd))
		return 1;
	pass();
	return 0;
}
