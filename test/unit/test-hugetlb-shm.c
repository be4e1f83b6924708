// SPDX-License-Identifier: GPL-2.0
/*
 * criu-like/mem/hugetlb-shm.c: the huge pages of an object that are not all
 * zeros become runs (4 KiB page offsets, merged) and are copied at their
 * offsets into a memfd. Run on a plain memfd: pread() reads it as it reads
 * hugetlbfs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "hugetlb-shm.h"
#include "log.h"

#define HUGE (2UL << 20)

static void test_read(void **state)
{
	int fd = memfd_create("test-hugetlb", MFD_CLOEXEC), copy = -1;
	struct mem_runs runs;
	static char buf[HUGE];
	char c;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 5 * HUGE), 0);
	/* pages 0 and 1 (one run), 3 (one byte at its end), 2 and 4 zeros */
	memset(buf, 'a', HUGE);
	assert_int_equal(pwrite(fd, buf, HUGE, 0), HUGE);
	assert_int_equal(pwrite(fd, buf, 17, HUGE + 5), 17);
	assert_int_equal(pwrite(fd, "z", 1, 4 * HUGE - 1), 1);
	assert_int_equal(hugetlb_shm_read(fd, 5 * HUGE, HUGE, &runs, &copy), 0);
	assert_true(copy >= 0);
	assert_int_equal(runs.nr, 2);
	assert_int_equal(runs.runs[0].start, 0);
	assert_int_equal(runs.runs[0].nr_pages, 2 * HUGE / 4096);
	assert_int_equal(runs.runs[1].start, 3 * HUGE / 4096);
	assert_int_equal(runs.runs[1].nr_pages, HUGE / 4096);
	/* the copy holds them at the same offsets */
	assert_int_equal(pread(copy, &c, 1, HUGE + 21), 1);
	assert_int_equal(c, 'a');
	assert_int_equal(pread(copy, &c, 1, 4 * HUGE - 1), 1);
	assert_int_equal(c, 'z');
	mem_runs_fini(&runs);
	close(copy);
	/* an object of no whole number of huge pages is refused */
	log_set_level(-1);
	assert_int_equal(hugetlb_shm_read(fd, 5 * HUGE + 4096, HUGE, &runs, &copy), -EINVAL);
	assert_int_equal(copy, -1);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
