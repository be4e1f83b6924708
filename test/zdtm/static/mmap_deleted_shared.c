// SPDX-License-Identifier: GPL-2.0
/*
 * Mappings of a file that was then unlinked: a shared mapping written
 * through, a private one with a modified page, and an fd still open on it
 * (the private case alone is mmap_deleted_file). After SIGTERM
 * /proc/self/maps must name it "(deleted)", both mappings keep their data,
 * the shared one is still the file (a pwrite() shows in it) and the fd, the
 * private one is not (the modified page stays).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PG 4096
#define PAGES 8
#define FNAME "mmap_deleted_shared.data"

int main(int argc, char **argv)
{
	static unsigned char data[PAGES * PG];
	unsigned char *shared, *priv;
	char perms[8], path[128], link[4096];
	ssize_t n;
	uint64_t token = 0x0dead0f11eULL;
	unsigned long s, e;
	struct stat st;
	int fd;

	test_init(argc, argv);
	datagen(data, sizeof(data), 41);
	fd = open(FNAME, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, sizeof(data)) != sizeof(data)) {
		fail("create: %m");
		return 1;
	}
	shared = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	priv = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (shared == MAP_FAILED || priv == MAP_FAILED || unlink(FNAME)) {
		fail("mmap/unlink: %m");
		return 1;
	}
	datagen(shared + PG, PG, 42); /* through the shared mapping: the file has it */
	datagen(priv + 2 * PG, PG, 43);
	test_daemon();
	test_waitsig();

	if (test_vma_find(shared, &s, &e, perms) || fstat(fd, &st) || st.st_nlink != 0) {
		fail("the file is linked again or the mapping is gone");
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", s, e);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	if (!strstr(link, "(deleted)")) {
		fail("the shared mapping is not of a deleted file");
		return 1;
	}
	if (memcmp(shared, data, PG) || datachk(shared + PG, PG, 42, NULL) ||
	    datachk(priv + 2 * PG, PG, 43, NULL) || memcmp(priv + 3 * PG, data + 3 * PG, PG)) {
		fail("the mappings lost their data");
		return 1;
	}
	if (pwrite(fd, &token, sizeof(token), 4 * PG) != sizeof(token) ||
	    memcmp(shared + 4 * PG, &token, sizeof(token))) {
		fail("the shared mapping is no longer the file of the fd");
		return 1;
	}
	if (pwrite(fd, &token, sizeof(token), 2 * PG) != sizeof(token) ||
	    datachk(priv + 2 * PG, PG, 43, NULL)) {
		fail("the modified private page follows the file");
		return 1;
	}
	pass();
	return 0;
}
