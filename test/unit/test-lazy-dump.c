// SPDX-License-Identifier: GPL-2.0
/*
 * The pure logic of `dump --lazy-pages` (mem/lazy-dump-runs.c): which pieces
 * of a task's saved runs stay in the task (ld_split(): by the VMAs the
 * restore leaves lazy and the rseq pages it reads itself), and where a READ
 * of a pages image finds the bytes of its holes (the index).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "lazy-dump.h"

#define PG 4096UL

static void expect(const struct ld_piece *p, uint64_t vaddr, uint64_t nr, bool lazy)
{
	assert_int_equal(p->vaddr, vaddr);
	assert_int_equal(p->nr_pages, nr);
	assert_int_equal(p->lazy, lazy);
}

/* A run over a file mapping and a lazy area, an eager page inside, a run outside every VMA. */
static void test_split(void **state)
{
	const struct ld_vma v[] = {
		{ 0x10000, 0x14000, false }, /* a private file mapping's written pages */
		{ 0x14000, 0x20000, true }, /* anonymous: lazy */
		{ 0x30000, 0x32000, true },
	};
	const uint64_t start[] = { 0x12000, 0x30000, 0x40000 };
	const uint64_t nr[] = { 10, 2, 1 };
	const uint64_t eager[] = { 0x16000, 0x31000 };
	struct ld_piece *p = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(ld_split(start, nr, 3, v, 3, eager, 2, &p, &n), 0);
	assert_int_equal(n, 7);
	expect(&p[0], 0x12000, 2, false); /* the file mapping's part */
	expect(&p[1], 0x14000, 2, true);
	expect(&p[2], 0x16000, 1, false); /* an rseq page: read by the restore */
	expect(&p[3], 0x17000, 5, true);
	expect(&p[4], 0x30000, 1, true);
	expect(&p[5], 0x31000, 1, false);
	/* outside every VMA (the restore refuses it): data, never a hole */
	expect(&p[6], 0x40000, 1, false);
	free(p);
}

/* Adjacent pieces of one kind merge, also across runs and VMAs. */
static void test_split_merge(void **state)
{
	const struct ld_vma v[] = { { 0x10000, 0x12000, true }, { 0x12000, 0x20000, true } };
	const uint64_t start[] = { 0x10000, 0x11000 };
	const uint64_t nr[] = { 1, 3 };
	struct ld_piece *p = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(ld_split(start, nr, 2, v, 2, NULL, 0, &p, &n), 0);
	assert_int_equal(n, 1);
	expect(&p[0], 0x10000, 4, true);
	free(p);
	assert_int_equal(ld_split(NULL, NULL, 0, v, 2, NULL, 0, &p, &n), 0);
	assert_int_equal(n, 0);
	free(p);
}

static void test_index(void **state)
{
	struct ld_index ix = { 0 };
	const struct ld_span s[] = {
		{ 0, 100, 0, 2 * PG, 0x1000 },
		{ 0, 100, 3 * PG, PG, 0x9000 },
		{ 2, 101, PG, PG, 0x5000 },
	};
	const struct ld_span *f;

	(void)state;
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(ld_index_add(&ix, &s[i]), 0);
	f = ld_index_find(&ix, 0, 0);
	assert_ptr_equal(f, &ix.s[0]);
	f = ld_index_find(&ix, 0, PG + 5);
	assert_ptr_equal(f, &ix.s[0]);
	/* in the data between two holes: the next hole */
	f = ld_index_find(&ix, 0, 2 * PG);
	assert_ptr_equal(f, &ix.s[1]);
	/* past the last hole of image 0: none of its own */
	assert_null(ld_index_find(&ix, 0, 4 * PG));
	assert_null(ld_index_find(&ix, 1, 0));
	f = ld_index_find(&ix, 2, 0);
	assert_ptr_equal(f, &ix.s[2]);
	assert_null(ld_index_find(&ix, 3, 0));
	ld_index_fini(&ix);
	assert_null(ld_index_find(&ix, 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_split_merge),
		cmocka_unit_test(test_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
