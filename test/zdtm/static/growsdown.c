// SPDX-License-Identifier: GPL-2.0
/*
 * A MAP_GROWSDOWN area with 16 MiB of free space below it, grown once by
 * touching below its start. After SIGTERM it must start where it had grown
 * to, keep the "gd" VmFlag and its data, and grow again on a touch below its
 * start (new pages zero). A restore that maps it as a plain area fails the
 * flag check and faults on the touch.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PG 4096UL
#define RESERVE (16UL << 20)
#define INITIAL (16 * PG)

int main(int argc, char **argv)
{
	unsigned char *res, *top, *area, *grown;
	unsigned long s, e, s2, e2;
	char flags[256];

	test_init(argc, argv);
	/* Find 16 MiB of free address space, keep only its top for the area. */
	res = mmap(NULL, RESERVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED || munmap(res, RESERVE)) {
		fail("reserve: %m");
		return 1;
	}
	top = res + RESERVE;
	area = mmap(top - INITIAL, INITIAL, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN | MAP_FIXED_NOREPLACE, -1, 0);
	if (area != top - INITIAL) {
		fail("mmap MAP_GROWSDOWN: %m");
		return 1;
	}
	datagen(area, INITIAL, 61);
	grown = area - 4 * PG;
	/* The fault below the start extends the area (the guard gap is free). */
	if (test_faults(grown, true) || test_vma_find(area, &s, &e, NULL) ||
	    s != (unsigned long)grown) {
		fail("the area did not grow before the dump: starts at %#lx, expected %p", s,
		     grown);
		return 1;
	}
	datagen(grown, 4 * PG, 62);
	test_daemon();
	test_waitsig();

	if (test_vma_find(area, &s, &e, NULL) || s != (unsigned long)grown ||
	    e != (unsigned long)top) {
		fail("the area is %#lx-%#lx, expected %p-%p", s, e, grown, top);
		return 1;
	}
	if (test_vma_flags(area, flags, sizeof(flags)) || !test_vma_has_flag(flags, "gd")) {
		fail("VmFlags \"%s\" lack gd (grows down)", flags);
		return 1;
	}
	if (datachk(area, INITIAL, 61, NULL) || datachk(grown, 4 * PG, 62, NULL)) {
		fail("the area's data changed");
		return 1;
	}
	if (test_faults(grown - 8 * PG, false) || test_vma_find(area, &s2, &e2, NULL) ||
	    s2 != (unsigned long)(grown - 8 * PG)) {
		fail("a touch below the start did not grow the area (starts at %#lx)", s2);
		return 1;
	}
	for (unsigned long i = 0; i < 8 * PG; i++)
		if (grown[-(long)i - 1]) {
			fail("new stack pages are not zero");
			return 1;
		}
	pass();
	return 0;
}
