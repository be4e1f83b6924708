// SPDX-License-Identifier: GPL-2.0
/*
 * One 32-page anonymous area cut by mprotect() and munmap() into pieces:
 * read-write, read-only, PROT_NONE guard pages, an unmapped hole, read-exec.
 * After SIGTERM every piece must
 * have the same bounds and permissions in /proc/self/maps, its contents, and
 * the protections must still be enforced: the guard pages and the hole fault
 * on reads, the read-only pages on writes.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PG 4096

struct piece {
	int first, pages, prot;
	bool unmapped;
	const char *perms; /* as /proc/self/maps prints them, p for private */
};

static const struct piece pieces[] = {
	{ 0, 4, PROT_READ | PROT_WRITE, false, "rw-p" },
	{ 4, 2, PROT_NONE, false, "---p" },
	{ 6, 5, PROT_READ, false, "r--p" },
	{ 11, 3, 0, true, NULL },
	{ 14, 1, PROT_NONE, false, "---p" },
	{ 15, 6, PROT_READ | PROT_EXEC, false, "r-xp" },
	{ 21, 1, PROT_NONE, false, "---p" },
	{ 22, 10, PROT_READ | PROT_WRITE, false, "rw-p" },
};

#define NPIECES (sizeof(pieces) / sizeof(pieces[0]))

static int check_piece(unsigned char *base, const struct piece *p)
{
	unsigned char *start = base + p->first * PG, *end = start + p->pages * PG;
	unsigned long s, e;
	char perms[5];

	if (p->unmapped) {
		if (!test_vma_find(start, &s, &e, NULL) || !test_faults(start, false)) {
			fail("the hole at page %d is mapped", p->first);
			return 1;
		}
		return 0;
	}
	/* The outer ends may merge with a neighbour of the same kind. */
	if (test_vma_find(start, &s, &e, perms) ||
	    (p->first ? s != (unsigned long)start : s > (unsigned long)start) ||
	    (p->first + p->pages < 32 ? e != (unsigned long)end : e < (unsigned long)end) ||
	    strcmp(perms, p->perms)) {
		fail("piece at page %d: %lx-%lx %s, expected %p-%p %s", p->first, s, e, perms,
		     start, end, p->perms);
		return 1;
	}
	if (!(p->prot & PROT_READ)) {
		if (!test_faults(start, false) || !test_faults(end - 1, false)) {
			fail("guard page %d can be read", p->first);
			return 1;
		}
		return 0;
	}
	if (datachk(start, p->pages * PG, 200 + p->first, NULL)) {
		fail("piece at page %d has other contents", p->first);
		return 1;
	}
	if (!(p->prot & PROT_WRITE) && !test_faults(start, true)) {
		fail("read-only page %d can be written", p->first);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char *base;

	test_init(argc, argv);
	base = mmap(NULL, 32 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	for (size_t i = 0; i < NPIECES; i++) {
		const struct piece *p = &pieces[i];
		unsigned char *start = base + p->first * PG;

		if (p->prot & PROT_READ)
			datagen(start, p->pages * PG, 200 + p->first);
		if (p->unmapped ? munmap(start, p->pages * PG)
				: mprotect(start, p->pages * PG, p->prot)) {
			fail("mprotect/munmap piece %zu: %m", i);
			return 1;
		}
	}
	for (size_t i = 0; i < NPIECES; i++)
		if (check_piece(base, &pieces[i]))
			return 1;
	test_daemon();
	test_waitsig();

	for (size_t i = 0; i < NPIECES; i++)
		if (check_piece(base, &pieces[i]))
			return 1;
	pass();
	return 0;
}
