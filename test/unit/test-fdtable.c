// SPDX-License-Identifier: GPL-2.0
/*
 * fd tables shared between processes (files/fdtable.c): the groups of a
 * tree's tasks by table, and the order they take turns in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "restore-files.h"

#define N 7

/*
 * 0 root; 1 child of 0 sharing its table; 2 child of 1 sharing (the same
 * table); 3 forked child of 0; 4 child of 0 sharing; 5 child of 3 sharing
 * 3's; 6 child of 2, its own table.
 */
static void groups_in_tree_order(void **state)
{
	const int parent[N] = { -1, 0, 1, 0, 0, 3, 2 };
	const bool shared[N] = { false, true, true, false, true, true, false };
	const int want_owner[N] = { 0, 0, 0, 3, 0, 3, 6 };
	const int want_prev[N] = { -1, 0, 1, -1, 2, 3, -1 };
	const int want_next[N] = { 1, 2, 4, 5, -1, -1, -1 };
	int owner[N], prev[N], next[N];

	(void)state;
	rst_fdt_order(parent, shared, N, owner, prev, next);
	for (int i = 0; i < N; i++) {
		assert_int_equal(owner[i], want_owner[i]);
		assert_int_equal(prev[i], want_prev[i]);
		assert_int_equal(next[i], want_next[i]);
	}
}

/* No sharing: every task alone. A flag on the root (no parent) is ignored. */
static void no_groups(void **state)
{
	const int parent[3] = { -1, 0, 1 };
	const bool shared[3] = { true, false, false };
	int owner[3], prev[3], next[3];

	(void)state;
	rst_fdt_order(parent, shared, 3, owner, prev, next);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(owner[i], i);
		assert_int_equal(prev[i], -1);
		assert_int_equal(next[i], -1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(groups_in_tree_order),
		cmocka_unit_test(no_groups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
