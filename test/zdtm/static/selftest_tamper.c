// SPDX-License-Identifier: GPL-2.0
/*
 * The runner's own check: a checksummed buffer that the runner corrupts
 * (flags "tamper", "expect-fail"). The runner reports this test as passed only
 * when its verdict is FAIL, which proves a verdict can be FAIL at all.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "zdtmtst.h"

#define AREA_SIZE (64 << 10)
#define SEED 0x7a6d7464ULL

int main(int argc, char **argv)
{
	unsigned char *area;
	uint64_t csum;
	size_t off = 0;

	test_init(argc, argv);
	area = mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	datagen(area, AREA_SIZE, SEED);
	csum = test_csum(area, AREA_SIZE);
	test_publish_area(area, AREA_SIZE);
	test_daemon();
	test_waitsig();

	if (test_csum(area, AREA_SIZE) != csum) {
		datachk(area, AREA_SIZE, SEED, &off);
		fail("checksum of the %d-byte area changed; first bad byte at offset %zu",
		     AREA_SIZE, off);
		return 1;
	}
	pass();
	return 0;
}
