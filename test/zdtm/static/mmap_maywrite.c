// SPDX-License-Identifier: GPL-2.0
/*
 * Shared file mappings made read-only: A from a file opened read-write, B
 * from the same file opened read-only, both fds closed since. After SIGTERM:
 * mprotect(PROT_READ | PROT_WRITE) works on A (its file may be written) and
 * a write through it reaches the file; on B it fails with EACCES, as before
 * the dump.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE);
	int rw, ro;
	char *a, *b, buf[8] = { 0 };

	test_init(argc, argv);
	rw = open("maywrite.file", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (rw < 0 || ftruncate(rw, psz) || pwrite(rw, "initial", 7, 0) != 7)
		goto err;
	ro = open("maywrite.file", O_RDONLY);
	if (ro < 0)
		goto err;
	a = mmap(NULL, psz, PROT_READ, MAP_SHARED, rw, 0);
	b = mmap(NULL, psz, PROT_READ, MAP_SHARED, ro, 0);
	if (a == MAP_FAILED || b == MAP_FAILED || close(rw) || close(ro))
		goto err;
	test_daemon();
	test_waitsig();

	if (memcmp(a, "initial", 7) || memcmp(b, "initial", 7)) {
		fail("the mappings do not show the file");
		return 1;
	}
	if (mprotect(a, psz, PROT_READ | PROT_WRITE)) {
		fail("mprotect(PROT_WRITE) of the mapping of a file opened read-write: %m");
		return 1;
	}
	memcpy(a, "written", 7);
	rw = open("maywrite.file", O_RDONLY);
	if (rw < 0 || pread(rw, buf, 7, 0) != 7 || memcmp(buf, "written", 7)) {
		fail("the write through the mapping did not reach the file: '%s'", buf);
		return 1;
	}
	if (!mprotect(b, psz, PROT_READ | PROT_WRITE) || errno != EACCES) {
		fail("mprotect(PROT_WRITE) of the mapping of a file opened read-only worked");
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
