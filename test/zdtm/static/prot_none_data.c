// SPDX-License-Identifier: GPL-2.0
/*
 * Data under PROT_NONE: pages written and then made inaccessible (what a
 * garbage collector or a JIT does with memory it parks), next to a PROT_NONE
 * page never written. After SIGTERM the pages must still fault, and once
 * made readable again must hold their data (the never written one zeros).
 */
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PG 4096UL
#define PAGES 8

int main(int argc, char **argv)
{
	unsigned char *a;

	test_init(argc, argv);
	a = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	datagen(a, (PAGES - 1) * PG, 71);
	if (mprotect(a, PAGES * PG, PROT_NONE)) {
		fail("mprotect: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (!test_faults(a, false) || !test_faults(a + (PAGES - 1) * PG, false)) {
		fail("the PROT_NONE pages can be read");
		return 1;
	}
	if (mprotect(a, PAGES * PG, PROT_READ)) {
		fail("mprotect back: %m");
		return 1;
	}
	if (datachk(a, (PAGES - 1) * PG, 71, NULL)) {
		fail("the data under PROT_NONE is lost");
		return 1;
	}
	for (unsigned long i = 0; i < PG; i++)
		if (a[(PAGES - 1) * PG + i]) {
			fail("the never written page is not zero");
			return 1;
		}
	pass();
	return 0;
}
