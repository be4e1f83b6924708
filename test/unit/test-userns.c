// SPDX-License-Identifier: GPL-2.0
/*
 * User namespaces, the pure half (criu-like/ns/user-map.c): uid_map and
 * gid_map parsed as the kernel shows them, refused as the kernel refuses
 * them, written back, and ids translated both ways.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../criu-like/ns/user-map.h"

static struct id_map m;

/* What /proc/PID/uid_map shows: columns padded to 10. */
static void test_parse(void **state)
{
	(void)state;
	assert_int_equal(id_map_parse("         0     100000      65536\n", &m), 0);
	assert_int_equal(m.nr, 1);
	assert_int_equal(m.e[0].inside, 0);
	assert_int_equal(m.e[0].outside, 100000);
	assert_int_equal(m.e[0].count, 65536);
	/* several lines, the last without its newline; the whole range */
	assert_int_equal(id_map_parse("0 1000 1\n1 100000 65536\n65537 200000 10", &m), 0);
	assert_int_equal(m.nr, 3);
	assert_int_equal(m.e[2].inside, 65537);
	assert_int_equal(id_map_parse("0 0 4294967295\n", &m), 0);
	assert_int_equal(m.e[0].count, 4294967295u);
	/* empty: a namespace whose map was never written */
	assert_int_equal(id_map_parse("", &m), 0);
	assert_int_equal(m.nr, 0);
}

static void test_parse_refused(void **state)
{
	static const char *const bad[] = {
		"0 1000\n", /* a column missing */
		"0 1000 1 4\n", /* one too many */
		"0 1000 0\n", /* count 0 */
		"-1 1000 1\n", /* negative */
		"0 x 1\n", /* not a number */
		"0 4294967296 1\n", /* past 32 bits */
		"4294967295 0 2\n", /* wraps inside */
		"0 4294967295 2\n", /* wraps outside */
		"0 1000 10\n5 2000 1\n", /* overlap inside */
		"0 1000 10\n20 1005 1\n", /* overlap outside */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(id_map_parse(bad[i], &m), -EINVAL);
}

static void test_too_many(void **state)
{
	char *text = malloc((ID_MAP_MAX + 1) * 32), *p = text;
	int i;

	(void)state;
	assert_non_null(text);
	for (i = 0; i <= ID_MAP_MAX; i++)
		p += sprintf(p, "%d %d 1\n", i, 1000 + i);
	assert_int_equal(id_map_parse(text, &m), -E2BIG);
	free(text);
}

static void test_format(void **state)
{
	char buf[64], small[8];

	(void)state;
	assert_int_equal(id_map_parse("  0   1000  1\n 1 100000 65536\n", &m), 0);
	assert_int_equal(id_map_format(&m, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0 1000 1\n1 100000 65536\n");
	assert_int_equal(id_map_format(&m, small, sizeof(small)), -ENOSPC);
}

static void test_translate(void **state)
{
	uint32_t id;

	(void)state;
	assert_int_equal(id_map_parse("0 1000 1\n1 100000 65536\n", &m), 0);
	assert_true(id_map_to_inside(&m, 1000, &id));
	assert_int_equal(id, 0);
	assert_true(id_map_to_inside(&m, 100000, &id));
	assert_int_equal(id, 1);
	assert_true(id_map_to_inside(&m, 165535, &id));
	assert_int_equal(id, 65536);
	assert_false(id_map_to_inside(&m, 165536, &id)); /* one past the end */
	assert_false(id_map_to_inside(&m, 0, &id)); /* host root: unmapped */
	assert_false(id_map_to_inside(&m, 999, &id));
	assert_true(id_map_to_outside(&m, 0, &id));
	assert_int_equal(id, 1000);
	assert_true(id_map_to_outside(&m, 1000, &id));
	assert_int_equal(id, 100999);
	assert_false(id_map_to_outside(&m, 65537, &id));
	/* an empty map maps nothing */
	assert_int_equal(id_map_parse("", &m), 0);
	assert_false(id_map_to_inside(&m, 0, &id));
	assert_false(id_map_to_outside(&m, 0, &id));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),	  cmocka_unit_test(test_parse_refused),
		cmocka_unit_test(test_too_many),  cmocka_unit_test(test_format),
		cmocka_unit_test(test_translate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
