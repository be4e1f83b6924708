// SPDX-License-Identifier: GPL-2.0
/*
 * mem_runs_within() (criu-like/mem/mem-runs.c): the parts of a task's runs
 * inside the VMAs a pre-dump round arms, which it write-protects once the
 * tree runs again (mem/track.c): exactly the pages it copies there, no more
 * (a page protected and not copied would be lost from the chain).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <cmocka.h>

#include "mem-scan.h"
#include "util.h"

#define A 0x7f0000000000UL
#define PG(n) ((unsigned long)(n)*PAGE_SIZE)

static void expect(const struct iovec *got, unsigned int i, unsigned long start, unsigned long len)
{
	assert_int_equal((unsigned long)got[i].iov_base, start);
	assert_int_equal(got[i].iov_len, len);
}

static void test_within(void **state)
{
	/* runs: [0,4) [6,10) [12,13) [20,30): the second spans two VMAs */
	struct mem_run rr[] = { { A, 4, MEM_SAVE_ANON },
				{ A + PG(6), 4, MEM_SAVE_ANON },
				{ A + PG(12), 1, MEM_SAVE_ANON },
				{ A + PG(20), 10, MEM_SAVE_ANON } };
	struct mem_runs runs = { 4, 4, rr };
	/* VMAs armed: [2,8) [8,12) [25,40); [12,13) and [20,25) are in VMAs not armed */
	struct iovec vmas[] = { { (void *)(A + PG(2)), PG(6) },
				{ (void *)(A + PG(8)), PG(4) },
				{ (void *)(A + PG(25)), PG(15) } };
	struct iovec *got = NULL;
	unsigned int n = 99;

	(void)state;
	assert_int_equal(mem_runs_within(&runs, vmas, 3, &got, &n), 0);
	assert_int_equal(n, 4);
	expect(got, 0, A + PG(2), PG(2));
	expect(got, 1, A + PG(6), PG(2));
	expect(got, 2, A + PG(8), PG(2));
	expect(got, 3, A + PG(25), PG(5));
	free(got);
}

static void test_empty(void **state)
{
	struct mem_run rr[] = { { A + PG(10), 2, MEM_SAVE_ANON } };
	struct mem_runs runs = { 1, 1, rr }, none = { 0 };
	struct iovec vma = { (void *)A, PG(10) }; /* ends where the run starts */
	struct iovec *got = NULL;
	unsigned int n = 99;

	(void)state;
	assert_int_equal(mem_runs_within(&runs, &vma, 1, &got, &n), 0);
	assert_int_equal(n, 0);
	free(got);
	assert_int_equal(mem_runs_within(&none, &vma, 1, &got, &n), 0);
	assert_int_equal(n, 0);
	free(got);
	assert_int_equal(mem_runs_within(&runs, NULL, 0, &got, &n), 0);
	assert_int_equal(n, 0);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_within),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
