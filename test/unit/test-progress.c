// SPDX-License-Identifier: GPL-2.0
/* The progress line of a long dump or restore: its figures, rate and time left. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "progress.h"

#define MIB (1ULL << 20)
#define SEC 1000000000ULL

static void test_midway(void **state)
{
	char buf[160];
	int n;

	(void)state;
	/* 512 of 2048 MiB in 2 s: 256 MiB/s, 1536 MiB more take 6 s */
	n = progress_format(buf, sizeof(buf), "memory", 512 * MIB, 2048 * MIB, 2 * SEC);
	assert_string_equal(buf, "memory: 512/2048 MiB, 256 MiB/s, 6 s left");
	assert_int_equal(n, (int)strlen(buf));
}

static void test_done(void **state)
{
	char buf[160];

	(void)state;
	progress_format(buf, sizeof(buf), "restore memory", 1024 * MIB, 1024 * MIB, 1500000000ULL);
	assert_string_equal(buf, "restore memory: 1024/1024 MiB, 683 MiB/s, done in 1.5 s");
}

static void test_nothing_yet(void **state)
{
	char buf[160];

	(void)state;
	/* no rate to tell the time left from: none is made up */
	progress_format(buf, sizeof(buf), "memory", 0, 64 * MIB, SEC);
	assert_string_equal(buf, "memory: 0/64 MiB, 0 MiB/s");
	progress_format(buf, sizeof(buf), "memory", 0, 64 * MIB, 0);
	assert_string_equal(buf, "memory: 0/64 MiB, 0 MiB/s");
}

static void test_short_buffer(void **state)
{
	char buf[8];
	int n;

	(void)state;
	n = progress_format(buf, sizeof(buf), "memory", MIB, 2 * MIB, SEC);
	assert_true(n >= (int)sizeof(buf));
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_midway),
		cmocka_unit_test(test_done),
		cmocka_unit_test(test_nothing_yet),
		cmocka_unit_test(test_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
