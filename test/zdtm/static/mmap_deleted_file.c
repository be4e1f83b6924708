// SPDX-License-Identifier: GPL-2.0
/*
 * A private mapping of a file that was then unlinked, like a library replaced
 * by an upgrade under a running program, with a modified page, and an fd
 * still open on the file. After SIGTERM the mapping must be of a deleted file
 * (map_files), keep the modified page and the file's other pages, and its
 * clean pages must still be the file's: a pwrite() through the fd shows in
 * them, not in the modified page. (mmap_deleted_shared adds a shared one.)
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
#define FNAME "mmap_deleted_file.data"

int main(int argc, char **argv)
{
	static unsigned char data[PAGES * PG];
	unsigned char *priv;
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
	priv = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (priv == MAP_FAILED || unlink(FNAME)) {
		fail("mmap/unlink: %m");
		return 1;
	}
	datagen(priv + 2 * PG, PG, 43);
	for (int p = 0; p < PAGES; p++)
		(void)*(volatile unsigned char *)(priv + p * PG);
	test_daemon();
	test_waitsig();

	if (test_vma_find(priv, &s, &e, perms) || fstat(fd, &st) || st.st_nlink != 0) {
		fail("the file is linked again or the mapping is gone");
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", s, e);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	if (!strstr(link, "(deleted)")) {
		fail("the mapping is not of a deleted file (\"%s\")", link);
		return 1;
	}
	if (memcmp(priv, data, 2 * PG) || datachk(priv + 2 * PG, PG, 43, NULL) ||
	    memcmp(priv + 3 * PG, data + 3 * PG, (PAGES - 3) * PG)) {
		fail("the mapping lost its data");
		return 1;
	}
	if (pwrite(fd, &token, sizeof(token), 4 * PG) != sizeof(token) ||
	    memcmp(priv + 4 * PG, &token, sizeof(token))) {
		fail("a clean page no longer follows the file of the fd (copied, not mapped)");
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
