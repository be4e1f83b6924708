// SPDX-License-Identifier: GPL-2.0
/*
 * The program break grown by 1 MiB with sbrk(), filled, then shrunk by
 * 256 KiB. After SIGTERM the break and the start of the heap (/proc/self/stat
 * start_brk) must be the same, the heap must hold its data, the released part
 * must fault, and the break must still move: growing gives zeroed memory,
 * shrinking works. A restore that maps the heap as a plain area without
 * setting the mm's brk fails the last step or the values.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "zdtmtst.h"

#define GROW (1UL << 20)
#define SHRINK (256UL << 10)

/* Field 47 of /proc/self/stat, start_brk. */
static unsigned long start_brk(void)
{
	char stat[2048], *p;
	unsigned long v = 0;

	if (test_read_file("/proc/self/stat", stat, sizeof(stat)) < 0 || !(p = strrchr(stat, ')')))
		return 0;
	/* After ")": field 3 onwards; start_brk is field 47. */
	p += 2;
	for (int field = 3; field < 47 && p; field++)
		p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
	if (p)
		sscanf(p, "%lu", &v);
	return v;
}

int main(int argc, char **argv)
{
	unsigned long sbrk0, heap0;
	unsigned char *start, *end, *more;

	test_init(argc, argv);
	heap0 = start_brk();
	start = sbrk(0);
	/* Round the break up to a page first, so the released part is whole pages. */
	if (sbrk((4096 - (unsigned long)start % 4096) % 4096) == (void *)-1 ||
	    (start = sbrk(GROW)) == (void *)-1) {
		fail("sbrk grow: %m");
		return 1;
	}
	datagen(start, GROW, 17);
	if (sbrk(-(long)SHRINK) == (void *)-1) {
		fail("sbrk shrink: %m");
		return 1;
	}
	end = sbrk(0);
	sbrk0 = (unsigned long)end;
	if (!heap0 || end != start + GROW - SHRINK || !test_faults(end, false)) {
		fail("brk setup: start_brk %#lx, break %p, faulting %d", heap0, end,
		     test_faults(end, false));
		return 1;
	}
	test_daemon();
	test_waitsig();

	if ((unsigned long)sbrk(0) != sbrk0 || start_brk() != heap0) {
		fail("break %p start_brk %#lx, expected %#lx %#lx", sbrk(0), start_brk(), sbrk0,
		     heap0);
		return 1;
	}
	if (datachk(start, GROW - SHRINK, 17, NULL)) {
		fail("heap contents changed");
		return 1;
	}
	if (!test_faults(end, false)) {
		fail("the released part of the heap is mapped again");
		return 1;
	}
	more = sbrk(GROW);
	if (more != end || sbrk(0) != end + GROW) {
		fail("sbrk grow after restore gave %p, break %p, expected %p", more, sbrk(0), end);
		return 1;
	}
	for (size_t i = 0; i < GROW; i += 512)
		if (more[i]) {
			fail("new heap memory is not zero at %zu", i);
			return 1;
		}
	if (sbrk(-(long)GROW) != end + GROW || sbrk(0) != end || !test_faults(end, false)) {
		fail("sbrk shrink after restore did not release the memory");
		return 1;
	}
	pass();
	return 0;
}
