// SPDX-License-Identifier: GPL-2.0
/*
 * fd_seen_filter() (files/fd-seen.c): a child whose fd table is its
 * parent's keeps only the fds of the parent's listing; any other is a
 * parasite's of the moment (a pipe handed to it for the parent's pages).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "../../criu-like/files/files-int.h"
#include "dump.h"
#include "seize.h"

static void test_filter(void **state)
{
	struct seized_task pt = { .pid = 10, .nr_children = 1 };
	struct dump_task parent = { .t = &pt };
	struct fd_info fi[3];
	const struct fd_info *kept[3] = { &fi[0], &fi[1], &fi[2] };
	int listed[] = { 0, 3, 4, 5, 7, 9 }, want[] = { 3, 5, 7 };
	int fds[6];
	unsigned int n = 6;

	(void)state;
	memset(fi, 0, sizeof(fi));
	fi[0].fd = 3;
	fi[1].fd = 5;
	fi[2].fd = 7;
	fi[0].link = fi[1].link = fi[2].link = "pipe:[1]";
	assert_int_equal(fd_seen_keep(&parent, kept, 3), 0);
	memcpy(fds, listed, sizeof(fds));
	fd_seen_filter(&parent, 11, fds, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(fds, want, sizeof(want));
	/* nothing kept of the parent (none listed, or no parent): the listing as it was */
	n = 6;
	memcpy(fds, listed, sizeof(fds));
	fd_seen_filter(NULL, 11, fds, &n);
	assert_int_equal(n, 6);
	assert_memory_equal(fds, listed, sizeof(listed));
	/* a listing that is the parent's: unchanged */
	n = 3;
	memcpy(fds, want, sizeof(want));
	fd_seen_filter(&parent, 11, fds, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(fds, want, sizeof(want));
	fd_seen_free(parent.fds_seen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
