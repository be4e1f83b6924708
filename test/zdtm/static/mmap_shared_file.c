// SPDX-License-Identifier: GPL-2.0
/*
 * A MAP_SHARED file mapping written through before the dump (dirty pages
 * that may not have reached the disk yet). After SIGTERM the mapping and the
 * file must agree and hold those writes, and it must still be the file:
 * a store through the mapping shows in pread(), a pwrite() shows in the
 * mapping. A restore that maps anonymous memory, or the file without the
 * dirty data, fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PG 4096
#define PAGES 8
#define FNAME "mmap_shared_file.data"

int main(int argc, char **argv)
{
	static unsigned char buf[PAGES * PG];
	unsigned char *map;
	uint64_t token = 0x5eed5eed5eedULL, got;
	int fd;

	test_init(argc, argv);
	fd = open(FNAME, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, PAGES * PG)) {
		fail("cannot create %s: %m", FNAME);
		return 1;
	}
	map = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	datagen(map, PAGES * PG, 31);
	test_daemon();
	test_waitsig();

	if (datachk(map, PAGES * PG, 31, NULL)) {
		fail("the mapping lost the writes made before the dump");
		return 1;
	}
	if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf) || datachk(buf, sizeof(buf), 31, NULL)) {
		fail("the file does not hold the writes made through the mapping");
		return 1;
	}
	memcpy(map + 3 * PG + 8, &token, sizeof(token));
	if (pread(fd, &got, sizeof(got), 3 * PG + 8) != sizeof(got) || got != token) {
		fail("a store through the mapping is not in the file: not shared with it");
		return 1;
	}
	token = ~token;
	if (pwrite(fd, &token, sizeof(token), 5 * PG) != sizeof(token) ||
	    memcmp(map + 5 * PG, &token, sizeof(token))) {
		fail("a pwrite() to the file does not show in the mapping");
		return 1;
	}
	pass();
	return 0;
}
