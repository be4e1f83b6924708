// SPDX-License-Identifier: GPL-2.0
/*
 * Transparent huge pages come back as huge pages. Two 2 MiB-aligned regions
 * of 16 MiB filled with datagen: one marked MADV_HUGEPAGE before it is
 * written (VmFlags "hg"), one without it made huge by MADV_COLLAPSE (the
 * THP mode here is "madvise": no "hg", no huge page at fault time). Both
 * must hold huge pages before the dump (smaps AnonHugePages of the region;
 * if the kernel cannot give any the test fails, it cannot tell), and after
 * SIGTERM: their data as written, "hg" still on the first only, and
 * AnonHugePages above zero in each (also after a lazy restore: the
 * lazy-pages daemon collapses them once the pages are in).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define HPAGE (2UL << 20)
#define REGION (16UL << 20)
#define SEED 0x7419

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

/* AnonHugePages (kB) of the VMA starting at @p, and whether its VmFlags hold "hg"; -1: not found. */
static long huge_kb(const void *p, int *hg)
{
	char line[512], want[32];
	long kb = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return neg_errno();
	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, want, strlen(want))) {
			in = 1;
			continue;
		}
		if (!in)
			continue;
		if (!strncmp(line, "AnonHugePages:", 14))
			kb = strtol(line + 14, NULL, 10);
		if (!strncmp(line, "VmFlags:", 8)) {
			*hg = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return kb;
}

/*
 * A REGION at a 2 MiB boundary, with one page below and above it left as
 * PROT_NONE so that it is a VMA of its own.
 */
static unsigned char *region(void)
{
	size_t span = REGION + 2 * HPAGE;
	unsigned char *p = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (unsigned char *)(((unsigned long)p + HPAGE) & ~(HPAGE - 1));
	if (mprotect(a, REGION, PROT_READ | PROT_WRITE))
		return NULL;
	return a;
}

/*
 * After a lazy restore the lazy-pages daemon collapses a region's stretches
 * once every page of the task is in (Documentation/lazy-pages.md), which may
 * come a moment after SIGTERM: up to 2 s (40 x 50 ms) for it, well below
 * khugepaged's 10 s between scans, so an eager restore that made no huge
 * page still fails.
 */
#define HUGE_TRIES 40

static int check(const char *name, unsigned char *p, uint64_t seed, int want_hg, long before)
{
	size_t off;
	int hg = -1;
	long kb;

	if (datachk(p, REGION, seed, &off)) {
		fail("%s: memory differs at offset %zu", name, off);
		return 1;
	}
	kb = huge_kb(p, &hg);
	for (int i = 0; kb == 0 && i < HUGE_TRIES; i++) {
		test_sleep_ms(50);
		kb = huge_kb(p, &hg);
	}
	test_msg("%s: AnonHugePages %ld kB (before the dump %ld kB), hg %d\n", name, kb, before,
		 hg);
	if (hg != want_hg) {
		fail("%s: VmFlags hg is %d, was %d", name, hg, want_hg);
		return 1;
	}
	if (kb <= 0) {
		fail("%s: no huge page after the restore (AnonHugePages %ld kB, %ld kB before)",
		     name, kb, before);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char *adv, *col;
	long adv_kb, col_kb;
	int hg;

	test_init(argc, argv);
	adv = region();
	col = region();
	if (!adv || !col) {
		fail("mmap: %m");
		return 1;
	}
	if (madvise(adv, REGION, MADV_HUGEPAGE)) {
		fail("MADV_HUGEPAGE: %m");
		return 1;
	}
	datagen(adv, REGION, SEED);
	datagen(col, REGION, SEED + 1);
	if (madvise(col, REGION, MADV_COLLAPSE))
		test_msg("MADV_COLLAPSE: %m\n");
	adv_kb = huge_kb(adv, &hg);
	col_kb = huge_kb(col, &hg);
	if (adv_kb <= 0 || col_kb <= 0) {
		fail("no huge pages to start with (AnonHugePages %ld and %ld kB): cannot tell",
		     adv_kb, col_kb);
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (check("MADV_HUGEPAGE region", adv, SEED, 1, adv_kb) ||
	    check("MADV_COLLAPSE region", col, SEED + 1, 0, col_kb))
		return 1;
	pass();
	return 0;
}
