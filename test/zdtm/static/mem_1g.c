// SPDX-License-Identifier: GPL-2.0
/*
 * 1 GiB of anonymous memory (--size=MiB to change it) filled with datagen,
 * with its checksum, except one 64 MiB stretch in the middle that was never
 * touched. After SIGTERM every byte must be as written (the first bad offset
 * is reported), the checksum the same, and the untouched stretch zero and
 * still not resident: a restore must not write pages that were never there.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define HOLE (64UL << 20)
#define THP (2UL << 20)
#define SEED 0x1619

/* Resident pages of [@p, @p + @len). */
static long resident(unsigned char *p, size_t len)
{
	size_t pages = len / 4096;
	unsigned char *vec = malloc(pages);
	long n = 0;

	if (!vec || mincore(p, len, vec)) {
		int err = neg_errno();

		free(vec);
		return err;
	}
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

int main(int argc, char **argv)
{
	size_t size = strtoul(test_arg("size", "1024"), NULL, 0) << 20, half, off;
	uint64_t sum_lo, sum_hi;
	unsigned char *mem;
	int64_t t0;

	test_init(argc, argv);
	if (size < 2 * HOLE) {
		fail("--size must be at least %lu MiB", 2 * HOLE >> 20);
		return 1;
	}
	half = (size - HOLE) / 2;
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fail("mmap %zu: %m", size);
		return 1;
	}
	t0 = test_now_ms();
	datagen(mem, half, SEED);
	datagen(mem + half + HOLE, size - half - HOLE, SEED + 1);
	sum_lo = test_csum(mem, half);
	sum_hi = test_csum(mem + half + HOLE, size - half - HOLE);
	test_msg("%zu MiB filled in %ld ms\n", size >> 20, (long)(test_now_ms() - t0));
	test_daemon();
	test_waitsig();

	if (datachk(mem, half, SEED, &off) ||
	    datachk(mem + half + HOLE, size - half - HOLE, SEED + 1, &off)) {
		fail("memory differs at offset %zu of a half", off);
		return 1;
	}
	if (test_csum(mem, half) != sum_lo ||
	    test_csum(mem + half + HOLE, size - half - HOLE) != sum_hi) {
		fail("checksum differs");
		return 1;
	}
	/* Its 2 MiB ends may share a transparent huge page with the filled parts. */
	if (resident(mem + half + THP, HOLE - 2 * THP) != 0) {
		fail("%ld pages of the never touched stretch are resident",
		     resident(mem + half + THP, HOLE - 2 * THP));
		return 1;
	}
	for (size_t i = 0; i < HOLE; i += 4096) {
		if (mem[half + i]) {
			fail("the never touched stretch is not zero at %zu", i);
			return 1;
		}
	}
	pass();
	return 0;
}
