// SPDX-License-Identifier: GPL-2.0
/*
 * Memory that keeps changing in scattered places, as a big allocator's does
 * between the rounds of a pre-dump chain or a migration, checked byte for
 * byte after the restore. In one reserved arena (the rest of it PROT_NONE):
 *
 *   - frag: every other page written, the others never touched: 3072
 *     one-page runs in one VMA, more than PAGEMAP_SCAN's 512-region bounce
 *     buffer, fewer than the vector the scan has grown to by then;
 *   - churn: pages of every other page rewritten or dropped (MADV_DONTNEED)
 *     at random, so the written ones since the last round are scattered;
 *   - huge: a MADV_HUGEPAGE area, rewritten one page at a time;
 *   - slots: adjacent areas, every other page written, mapped anew,
 *     moved (mremap) onto their free neighbour and back, or with that
 *     neighbour mapped and freed again (PROT_NONE): VMAs that are new,
 *     moved, merged and split between rounds, so not tracked; a slot's
 *     new data comes from a scratch area by mremap(MREMAP_DONTUNMAP).
 *
 * A loop changes all that until SIGTERM; every page's version is kept in a
 * table, and after SIGTERM each page must hold exactly what its version
 * says (zero when dropped or never written), each free slot be PROT_NONE.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "zdtmtst.h"

#define PG 4096UL
#define FRAG_PAGES 6144 /* 3072 runs */
#define CHURN_PAGES 2048
#define HUGE_PAGES 1024 /* 4 MiB, 2 MiB aligned in the arena */
#define SLOT_PAGES 1024 /* 512 runs each; merged neighbours have more */
#define NR_SLOTS 6
#define HUGE_ALIGN (2UL << 20)

#define FRAG_OFF 0UL
#define CHURN_OFF (FRAG_OFF + FRAG_PAGES * PG)
#define HUGE_OFF ((CHURN_OFF + CHURN_PAGES * PG + HUGE_ALIGN - 1) & ~(HUGE_ALIGN - 1))
#define SLOT_OFF (HUGE_OFF + HUGE_PAGES * PG)
#define SCRATCH_OFF (SLOT_OFF + NR_SLOTS * SLOT_PAGES * PG)
#define ARENA_SIZE (SCRATCH_OFF + SLOT_PAGES * PG)

enum {
	R_FRAG,
	R_CHURN,
	R_HUGE,
	R_NR
};

static const struct region {
	unsigned long off, pages;
	int advice;
} regions[R_NR] = {
	[R_FRAG] = { FRAG_OFF, FRAG_PAGES, MADV_NOHUGEPAGE },
	[R_CHURN] = { CHURN_OFF, CHURN_PAGES, MADV_NOHUGEPAGE },
	[R_HUGE] = { HUGE_OFF, HUGE_PAGES, MADV_HUGEPAGE },
};

static unsigned char *arena;
/* version of each page of a region: 0 = zero (never written or dropped) */
static uint32_t ver[R_NR][FRAG_PAGES];
/* what each slot holds: 0 = free (PROT_NONE), else the seed of its data */
static uint64_t slot_seed[NR_SLOTS];

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static void page_fill(void *p, uint64_t seed)
{
	uint64_t *w = p;

	for (unsigned long k = 0; k < PG / sizeof(*w); k++)
		w[k] = mix(seed ^ (k << 40));
}

/* 0 when the page holds page_fill(@seed), or zero for @seed 0; else the first bad word + 1. */
static unsigned long page_check(const void *p, uint64_t seed)
{
	const uint64_t *w = p;

	for (unsigned long k = 0; k < PG / sizeof(*w); k++)
		if (w[k] != (seed ? mix(seed ^ (k << 40)) : 0))
			return k + 1;
	return 0;
}

static uint64_t page_seed(int r, unsigned long i)
{
	return ver[r][i] ? ((uint64_t)r << 56 | (uint64_t)i << 32 | ver[r][i]) : 0;
}

static unsigned char *region_page(int r, unsigned long i)
{
	return arena + regions[r].off + i * PG;
}

static unsigned char *slot_at(int s)
{
	return arena + SLOT_OFF + (unsigned long)s * SLOT_PAGES * PG;
}

static void write_page(int r, unsigned long i, uint32_t v)
{
	ver[r][i] = v;
	page_fill(region_page(r, i), page_seed(r, i));
}

static int slot_free(int s)
{
	if (mmap(slot_at(s), SLOT_PAGES * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) == MAP_FAILED)
		return -errno;
	slot_seed[s] = 0;
	return 0;
}

/*
 * Slot @s mapped anew with data from @seed: filled in the scratch area (always
 * mapped, at the end of the arena) and moved into place with its pages in one
 * mremap() that leaves the scratch area mapped and empty. The runner samples
 * /proc/PID/maps while the test runs (twice, 50 ms apart, to compare with the
 * restored tree): a slot filled in place, or an area filled anywhere before
 * it is moved, showed a passing layout for the millisecond of the fill, and
 * two samples could both catch one; now only a syscall's microseconds.
 */
static int slot_map(int s, uint64_t seed)
{
	unsigned char *scratch = arena + SCRATCH_OFF;

	for (unsigned long i = 0; i < SLOT_PAGES; i += 2)
		page_fill(scratch + i * PG, mix(seed + i));
	if (mremap(scratch, SLOT_PAGES * PG, SLOT_PAGES * PG,
		   MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, slot_at(s)) == MAP_FAILED)
		return -errno;
	slot_seed[s] = seed;
	return 0;
}

/* Move slot @from (in use) onto slot @to (free); @from is reserved again. */
static int slot_move(int from, int to)
{
	if (mremap(slot_at(from), SLOT_PAGES * PG, SLOT_PAGES * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
		   slot_at(to)) == MAP_FAILED)
		return -errno;
	slot_seed[to] = slot_seed[from];
	return slot_free(from);
}

static int setup(void)
{
	arena = mmap(NULL, ARENA_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
		     0);
	if (arena == MAP_FAILED)
		return -errno;
	for (int r = 0; r < R_NR; r++) {
		unsigned char *p = arena + regions[r].off;

		if (mprotect(p, regions[r].pages * PG, PROT_READ | PROT_WRITE) ||
		    madvise(p, regions[r].pages * PG, regions[r].advice))
			return -errno;
	}
	if (mprotect(arena + SCRATCH_OFF, SLOT_PAGES * PG, PROT_READ | PROT_WRITE) ||
	    madvise(arena + SCRATCH_OFF, SLOT_PAGES * PG, MADV_NOHUGEPAGE))
		return -errno;
	for (unsigned long i = 0; i < FRAG_PAGES; i += 2)
		write_page(R_FRAG, i, 1);
	for (unsigned long i = 0; i < CHURN_PAGES; i += 2)
		write_page(R_CHURN, i, 1);
	for (unsigned long i = 0; i < HUGE_PAGES; i++)
		write_page(R_HUGE, i, 1);
	for (int s = 0; s < NR_SLOTS; s += 2) {
		int err = slot_map(s, mix(s));

		if (err)
			return err;
	}
	return 0;
}

/*
 * One burst of layout changes that ends in the layout it started from (the
 * runner compares /proc/PID/maps before the dump and after the restore): a
 * slot in use mapped anew with new data, moved onto its free neighbour and
 * back, or its free neighbour mapped (next to slots in use) and freed again.
 */
static int slot_burst(uint64_t h)
{
	int s = (int)(h % (NR_SLOTS / 2)) * 2, f = s + 1, err;

	switch ((h >> 8) % 3) {
	case 0:
		return slot_map(s, h | 1);
	case 1:
		err = slot_move(s, f);
		return err ? err : slot_move(f, s);
	default:
		err = slot_map(f, h | 1);
		return err ? err : slot_free(f);
	}
}

/* Round @g of changes: a scattered eighth of the even pages rewritten, some dropped. */
static int step(uint32_t g)
{
	for (unsigned long i = 0; i < FRAG_PAGES; i += 2)
		if (mix((uint64_t)g << 32 | i) % 8 == 0)
			write_page(R_FRAG, i, g);
	for (unsigned long i = 0; i < CHURN_PAGES; i += 2) {
		uint64_t h = mix((uint64_t)g << 32 | i | 1ULL << 31) % 16;

		if (h < 2) {
			write_page(R_CHURN, i, g);
		} else if (h == 2 && ver[R_CHURN][i]) {
			if (madvise(region_page(R_CHURN, i), PG, MADV_DONTNEED))
				return -errno;
			ver[R_CHURN][i] = 0;
		}
	}
	for (int k = 0; k < 16; k++)
		write_page(R_HUGE, mix((uint64_t)g * 16 + k) % HUGE_PAGES, g);
	return g % 2 ? 0 : slot_burst(mix(g));
}

static int check_regions(void)
{
	for (int r = 0; r < R_NR; r++)
		for (unsigned long i = 0; i < regions[r].pages; i++) {
			unsigned long bad = page_check(region_page(r, i), page_seed(r, i));

			if (bad) {
				fail("region %d page %lu (%p) version %u: word %lu differs", r, i,
				     region_page(r, i), ver[r][i], bad - 1);
				return -EILSEQ;
			}
		}
	return 0;
}

static int check_slots(void)
{
	for (int s = 0; s < NR_SLOTS; s++) {
		unsigned long start, end;
		char perms[5];

		if (test_vma_find(slot_at(s), &start, &end, perms) ||
		    end < (unsigned long)slot_at(s) + SLOT_PAGES * PG ||
		    !strncmp(perms, "---", 3) != !slot_seed[s]) {
			fail("slot %d (%p) %s: not mapped as it should", s, slot_at(s),
			     slot_seed[s] ? "in use" : "free");
			return -EINVAL;
		}
		for (unsigned long i = 0; slot_seed[s] && i < SLOT_PAGES; i++) {
			uint64_t seed = i % 2 ? 0 : mix(slot_seed[s] + i);
			unsigned long bad = page_check(slot_at(s) + i * PG, seed);

			if (bad) {
				fail("slot %d page %lu: word %lu differs", s, i, bad - 1);
				return -EILSEQ;
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t g = 1;
	int err;

	test_init(argc, argv);
	err = setup();
	if (err) {
		fail("setup: %s", strerror(-err));
		return 1;
	}
	test_daemon();
	while (test_go()) {
		err = step(++g);
		if (err) {
			fail("round %u: %s", g, strerror(-err));
			return 1;
		}
		test_sleep_ms(5);
	}
	test_msg("%u rounds of changes\n", g - 1);
	if (check_regions() || check_slots())
		return 1;
	pass();
	return 0;
}
