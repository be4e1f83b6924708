// SPDX-License-Identifier: GPL-2.0
/*
 * The pure planning of `dedup` (criu-like/mem/dedup.c) on hand-made pagemap
 * records: which parts of each parent a restore of the newest image never
 * reads (dedup_superseded()), and how a parent's entries are split at the
 * punched edges (dedup_split()), offsets and crc32c needs included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "dedup.h"
#include "log.h"
#include "util.h"

#define P PAGEMAP_FLAG__PE_PRESENT
#define PA PAGEMAP_FLAG__PE_PARENT
#define DD PAGEMAP_FLAG__PE_DEDUPED

struct lvl {
	PagemapEntry pe[8];
	PagemapEntry *pep[8];
	size_t n;
};

static void add(struct lvl *l, uint64_t vaddr, uint32_t nr, uint32_t flags)
{
	PagemapEntry *e = &l->pe[l->n];

	pagemap_entry__init(e);
	e->vaddr = vaddr;
	e->nr_pages = nr;
	e->flags = flags;
	l->pep[l->n++] = e;
}

static struct rst_chain_level level(struct lvl *l, const char *name)
{
	return (struct rst_chain_level){ .name = name, .pe = l->pep, .n = l->n };
}

static void expect_range(const struct dedup_ranges *r, size_t i, uint64_t start, uint64_t end)
{
	assert_true(i < r->n);
	assert_int_equal(r->r[i].start, start);
	assert_int_equal(r->r[i].end, end);
}

static void test_superseded(void **state)
{
	struct lvl l0 = { 0 }, l1 = { 0 }, l2 = { 0 };
	struct rst_chain_level lv[3];
	struct dedup_ranges out[3] = { 0 };

	(void)state;
	/* the newest: 4 pages in the parent, 2 of its own, 2 more in the parent */
	add(&l0, 0x10000, 4, PA);
	add(&l0, 0x14000, 2, P);
	add(&l0, 0x20000, 2, PA);
	/* its parent: the first 2 pages itself, the next 2 in its own parent */
	add(&l1, 0x10000, 2, P);
	add(&l1, 0x12000, 2, PA);
	add(&l1, 0x14000, 2, P);
	/* (0x20000: not populated here, the restore takes the mapping's contents) */
	add(&l2, 0x10000, 6, P);
	add(&l2, 0x20000, 2, P);
	add(&l2, 0x30000, 1, P); /* outside the newest image's entries: kept */
	lv[0] = level(&l0, "d0");
	lv[1] = level(&l1, "d1");
	lv[2] = level(&l2, "d2");
	assert_int_equal(dedup_superseded(1, lv, 3, out), 0);
	assert_int_equal(out[0].n, 0);
	assert_int_equal(out[1].n, 1);
	expect_range(&out[1], 0, 0x14000, 0x16000);
	/* d2's 0x12000-0x14000 is what the restore reads from it */
	assert_int_equal(out[2].n, 3);
	expect_range(&out[2], 0, 0x10000, 0x12000);
	expect_range(&out[2], 1, 0x14000, 0x16000);
	expect_range(&out[2], 2, 0x20000, 0x22000);
	for (int i = 0; i < 3; i++)
		free(out[i].r);
}

static void test_superseded_deduped(void **state)
{
	struct lvl l0 = { 0 }, l1 = { 0 }, l2 = { 0 };
	struct rst_chain_level lv[3];
	struct dedup_ranges out[3] = { 0 };

	(void)state;
	/* run again after a dedup: d1's punched part stays, d2 below it is punched */
	add(&l0, 0x10000, 2, P);
	add(&l0, 0x12000, 2, PA);
	add(&l1, 0x10000, 2, DD);
	add(&l1, 0x12000, 2, P);
	add(&l2, 0x10000, 4, P);
	lv[0] = level(&l0, "d0");
	lv[1] = level(&l1, "d1");
	lv[2] = level(&l2, "d2");
	assert_int_equal(dedup_superseded(1, lv, 3, out), 0);
	assert_int_equal(out[1].n, 0);
	/* both halves of d2: one under d0's data, one under d1's */
	assert_int_equal(out[2].n, 1);
	expect_range(&out[2], 0, 0x10000, 0x14000);
	for (int i = 0; i < 3; i++)
		free(out[i].r);
	/* a newest image that itself lost pages: nothing under them is touched */
	l0 = (struct lvl){ 0 };
	add(&l0, 0x10000, 2, DD);
	lv[0] = level(&l0, "d0");
	memset(out, 0, sizeof(out));
	assert_int_equal(dedup_superseded(1, lv, 3, out), 0);
	assert_int_equal(out[1].n + out[2].n, 0);
}

static void expect_piece(const struct dedup_piece *p, uint64_t vaddr, uint32_t nr, uint32_t flags,
			 size_t entry, uint64_t off, bool punch, bool split)
{
	assert_int_equal(p->vaddr, vaddr);
	assert_int_equal(p->nr_pages, nr);
	assert_int_equal(p->flags, flags);
	assert_int_equal(p->entry, entry);
	assert_int_equal(p->off, off);
	assert_int_equal(p->punch, punch);
	assert_int_equal(p->split, split);
}

static void test_split(void **state)
{
	struct dedup_range r[] = { { 0x11000, 0x12000 },
				   { 0x13000, 0x14000 },
				   { 0x30000, 0x32000 },
				   { 0x51000, 0x53000 } };
	struct dedup_ranges punch = { .n = 4, .r = r };
	struct dedup_piece *pc = NULL;
	struct lvl l = { 0 };
	size_t n = 0;

	(void)state;
	add(&l, 0x10000, 4, P); /* holes at its 2nd and 4th page */
	add(&l, 0x20000, 2, PA); /* no data, not counted */
	add(&l, 0x30000, 2, P); /* punched whole */
	add(&l, 0x40000, 3, P); /* untouched */
	add(&l, 0x50000, 2, P); /* a hole across this entry and the next */
	add(&l, 0x52000, 2, P);
	assert_int_equal(dedup_split(l.pep, l.n, &punch, &pc, &n), 0);
	assert_int_equal(n, 11);
	expect_piece(&pc[0], 0x10000, 1, P, 0, 0x0000, false, true);
	expect_piece(&pc[1], 0x11000, 1, DD, 0, 0x1000, true, false);
	expect_piece(&pc[2], 0x12000, 1, P, 0, 0x2000, false, true);
	expect_piece(&pc[3], 0x13000, 1, DD, 0, 0x3000, true, false);
	expect_piece(&pc[4], 0x20000, 2, PA, 1, 0x4000, false, false);
	expect_piece(&pc[5], 0x30000, 2, DD, 2, 0x4000, true, false);
	expect_piece(&pc[6], 0x40000, 3, P, 3, 0x6000, false, false);
	expect_piece(&pc[7], 0x50000, 1, P, 4, 0x9000, false, true);
	expect_piece(&pc[8], 0x51000, 1, DD, 4, 0xa000, true, false);
	expect_piece(&pc[9], 0x52000, 1, DD, 5, 0xb000, true, false);
	expect_piece(&pc[10], 0x53000, 1, P, 5, 0xc000, false, true);
	free(pc);
}

static void test_split_again(void **state)
{
	struct dedup_range r[] = { { 0x12000, 0x13000 } };
	struct dedup_ranges punch = { .n = 1, .r = r }, none = { 0 };
	struct dedup_piece *pc = NULL;
	struct lvl l = { 0 };
	size_t n = 0;

	(void)state;
	/* a punched part keeps its place in the data */
	add(&l, 0x10000, 1, DD);
	add(&l, 0x11000, 2, P);
	assert_int_equal(dedup_split(l.pep, l.n, &punch, &pc, &n), 0);
	assert_int_equal(n, 3);
	expect_piece(&pc[0], 0x10000, 1, DD, 0, 0x0000, false, false);
	expect_piece(&pc[1], 0x11000, 1, P, 1, 0x1000, false, true);
	expect_piece(&pc[2], 0x12000, 1, DD, 1, 0x2000, true, false);
	free(pc);
	/* nothing to punch: the pagemap as it was */
	assert_int_equal(dedup_split(l.pep, l.n, &none, &pc, &n), 0);
	assert_int_equal(n, 2);
	expect_piece(&pc[1], 0x11000, 2, P, 1, 0x1000, false, false);
	free(pc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_superseded),
		cmocka_unit_test(test_superseded_deduped),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_split_again),
	};

	log_set_level(LOG_MSG);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
