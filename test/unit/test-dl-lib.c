// SPDX-License-Identifier: GPL-2.0
/*
 * Libraries loaded at their first use (util/dl-lib.c, include/dl-lib.h):
 * a DL_LIB() table filled once per process with the library's own
 * functions, and a library or a function that is missing refused with
 * -ENOENT, as the packet holder, conntrack and TLS see it; an optional one
 * (DL_LIB_OPTIONAL(): libnftables, without which the network lock runs the
 * nft tool) refused the same way but without an error logged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <string.h>
#include <sys/auxv.h>
#include <cmocka.h>

#include "dl-lib.h"
#include "log.h"

#define LIBC_FUNCS(X)           \
	X(gnu_get_libc_version) \
	X(getauxval)

DL_LIB("libc.so.6", "the test", LIBC_FUNCS);

/* The table holds libc's own functions, loaded once: a second call changes nothing. */
static void test_table(void **state)
{
	void *first;

	(void)state;
	assert_int_equal(dl_lib_load(), 0);
	assert_non_null(dl_fn.gnu_get_libc_version);
	assert_string_equal(dl_fn.gnu_get_libc_version(), gnu_get_libc_version());
	assert_int_equal(dl_fn.getauxval(AT_PAGESZ), getauxval(AT_PAGESZ));
	first = (void *)dl_fn.getauxval;
	assert_int_equal(dl_lib_load(), 0);
	assert_ptr_equal((void *)dl_fn.getauxval, first);
}

static void test_no_library(void **state)
{
	struct dl_lib l = DL_LIB_INIT("libcriu-like-none.so.0", "the test");

	(void)state;
	assert_int_equal(dl_lib_open(&l), -ENOENT);
	assert_int_equal(l.err, -ENOENT);
	assert_null(l.dl);
}

static void test_no_symbol(void **state)
{
	struct dl_lib l = DL_LIB_INIT("libc.so.6", "the test");

	(void)state;
	assert_int_equal(dl_lib_open(&l), 0);
	assert_non_null(dl_lib_sym(&l, "getauxval"));
	assert_int_equal(l.err, 0);
	assert_null(dl_lib_sym(&l, "criu_like_no_such_function"));
	assert_int_equal(l.err, -ENOENT);
}

/* An optional library missing, or a function of it: -ENOENT, and no error in the log. */
static void test_optional(void **state)
{
	struct dl_lib none = DL_LIB_INIT_AS("libcriu-like-none.so.0", "the test", true);
	struct dl_lib libc = DL_LIB_INIT_AS("libc.so.6", "the test", true);

	(void)state;
	log_error_reset();
	assert_int_equal(dl_lib_open(&none), -ENOENT);
	assert_string_equal(log_first_error(), "");
	assert_int_equal(dl_lib_open(&libc), 0);
	assert_null(dl_lib_sym(&libc, "criu_like_no_such_function"));
	assert_int_equal(libc.err, -ENOENT);
	assert_string_equal(log_first_error(), "");
	/* a required one says why */
	none.optional = false;
	none.err = 0;
	assert_int_equal(dl_lib_open(&none), -ENOENT);
	assert_non_null(strstr(log_first_error(), "the test needs libcriu-like-none.so.0"));
	log_error_reset();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_no_library),
		cmocka_unit_test(test_no_symbol),
		cmocka_unit_test(test_optional),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
