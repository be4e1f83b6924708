// SPDX-License-Identifier: GPL-2.0
/*
 * The pure part of dump --snapshot (criu-like/mem/snapshot-plan.c): where
 * each page of a task's runs lies in its pages image (snap_page_index()),
 * and the check of a chunk read while the tree ran (snap_chunk_check()):
 * every page not saved by the fault handler must still be reported present
 * and write-protected, else the image would not be one point in time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "snapshot.h"
#include "util.h"

#define A 0x7f0000000000UL
#define PG(n) ((unsigned long)(n)*PAGE_SIZE)

static struct mem_run runs3[] = {
	{ A, 4, MEM_SAVE_ANON },
	{ A + PG(10), 1, MEM_SAVE_COW },
	{ A + PG(12), 3, MEM_SAVE_ANON },
};

static void test_layout(void **state)
{
	struct mem_runs r = { 3, 3, runs3 };
	struct snap_layout l;
	unsigned int run = 99;

	(void)state;
	assert_int_equal(snap_layout_init(&l, &r), 0);
	assert_int_equal(l.first[0], 0);
	assert_int_equal(l.first[1], 4);
	assert_int_equal(l.first[2], 5);
	assert_int_equal(l.first[3], 8);
	/* below, inside, between and after the runs */
	assert_int_equal(snap_page_index(&l, A - PAGE_SIZE, &run), -ENOENT);
	assert_int_equal(snap_page_index(&l, A, &run), 0);
	assert_int_equal(run, 0);
	assert_int_equal(snap_page_index(&l, A + PG(3) + 17, &run), 3);
	assert_int_equal(snap_page_index(&l, A + PG(4), &run), -ENOENT);
	assert_int_equal(snap_page_index(&l, A + PG(10), &run), 4);
	assert_int_equal(run, 1);
	assert_int_equal(snap_page_index(&l, A + PG(11), &run), -ENOENT);
	assert_int_equal(snap_page_index(&l, A + PG(14), &run), 7);
	assert_int_equal(run, 2);
	assert_int_equal(snap_page_index(&l, A + PG(15), &run), -ENOENT);
	snap_layout_fini(&l);
}

static void test_layout_empty(void **state)
{
	struct mem_runs r = { 0 };
	struct snap_layout l;
	unsigned int run;

	(void)state;
	assert_int_equal(snap_layout_init(&l, &r), 0);
	assert_int_equal(l.first[0], 0);
	assert_int_equal(snap_page_index(&l, A, &run), -ENOENT);
	snap_layout_fini(&l);
}

static void test_chunk_intact(void **state)
{
	uint8_t st[8] = { 0 };
	struct page_region reg[] = { { A, A + PG(3), 0 }, { A + PG(3), A + PG(8), 0 } };

	(void)state;
	assert_int_equal(snap_chunk_check(st, A, 8, reg, 2), -ENOENT);
	/* one region covering more than the chunk */
	reg[0].end = A + PG(100);
	assert_int_equal(snap_chunk_check(st, A, 8, reg, 1), -ENOENT);
}

static void test_chunk_hole(void **state)
{
	uint8_t st[8] = { 0 };
	struct page_region reg[] = { { A, A + PG(3), 0 }, { A + PG(4), A + PG(8), 0 } };

	(void)state;
	/* page 3 lost its protection (or its page) without a fault */
	assert_int_equal(snap_chunk_check(st, A, 8, reg, 2), 3);
	/* ... unless the handler saved it first (it un-protected it itself) */
	st[3] = SNAP_FAULTED;
	assert_int_equal(snap_chunk_check(st, A, 8, reg, 2), -ENOENT);
	/* a page the copy had marked is not excused */
	st[3] = SNAP_COPIED;
	assert_int_equal(snap_chunk_check(st, A, 8, reg, 2), 3);
}

static void test_chunk_ends(void **state)
{
	uint8_t st[4] = { 0 };
	struct page_region reg[] = { { A + PG(1), A + PG(3), 0 } };

	(void)state;
	assert_int_equal(snap_chunk_check(st, A, 4, reg, 1), 0);
	st[0] = SNAP_FAULTED;
	assert_int_equal(snap_chunk_check(st, A, 4, reg, 1), 3);
	st[3] = SNAP_FAULTED;
	assert_int_equal(snap_chunk_check(st, A, 4, reg, 1), -ENOENT);
	/* nothing reported at all: the first page not saved by the handler */
	st[0] = SNAP_UNSAVED;
	assert_int_equal(snap_chunk_check(st, A, 4, NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),	     cmocka_unit_test(test_layout_empty),
		cmocka_unit_test(test_chunk_intact), cmocka_unit_test(test_chunk_hole),
		cmocka_unit_test(test_chunk_ends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
