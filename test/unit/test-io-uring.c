// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring (files/io_uring.c): the layout flags a ring is made again with,
 * from the sizes of its regions in pages and what fdinfo listed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <linux/io_uring.h>
#include <cmocka.h>

#include "compat.h"
#include "../../criu-like/files/files-int.h"

#define SQE128 IORING_SETUP_SQE128
#define CQE32 IORING_SETUP_CQE32
#define NOARR CR_IORING_SETUP_NO_SQARRAY

static uint32_t infer(uint32_t sq, uint32_t cq, size_t rp, size_t qp, int sqe128, int cqe32)
{
	uint32_t fl = 0xdead;

	if (iou_layout_infer(sq, cq, rp, qp, sqe128, cqe32, &fl))
		return 0xffffffff;
	return fl;
}

/* Small rings fit every layout in one page each: the default, unless fdinfo said otherwise. */
static void small_rings(void **state)
{
	(void)state;
	assert_int_equal(infer(8, 16, 1, 1, -1, -1), 0);
	assert_int_equal(infer(8, 16, 1, 1, 1, -1), SQE128);
	assert_int_equal(infer(8, 16, 1, 1, -1, 1), CQE32);
	assert_int_equal(infer(8, 16, 1, 1, 1, 1), SQE128 | CQE32);
	assert_int_equal(infer(8, 16, 1, 1, 0, 0), 0);
}

/*
 * 64 SQEs: 4096 bytes, 8192 with SQE128; 128 CQEs: 64 + 2048 + 256 of
 * array, 4160 + array with CQE32; 256 CQEs with no array: 64 + 4096.
 */
static void sizes_tell(void **state)
{
	(void)state;
	assert_int_equal(infer(64, 128, 1, 1, -1, -1), 0);
	assert_int_equal(infer(64, 128, 1, 2, -1, -1), SQE128);
	assert_int_equal(infer(64, 128, 2, 1, -1, -1), CQE32);
	assert_int_equal(infer(64, 128, 2, 2, -1, -1), SQE128 | CQE32);
	/* 128 SQEs, 240 CQEs (CQSIZE): 64 + 3840 = 3904, the array (512) crosses the page */
	assert_int_equal(infer(128, 240, 2, 2, -1, -1), 0);
	assert_int_equal(infer(128, 240, 1, 2, -1, -1), NOARR);
}

/* What fdinfo said against what the sizes say: no layout. */
static void contradictions(void **state)
{
	(void)state;
	assert_int_equal(infer(64, 128, 1, 1, 1, -1), 0xffffffff);
	assert_int_equal(infer(64, 128, 2, 1, -1, 0), 0xffffffff);
	assert_int_equal(infer(64, 128, 3, 1, -1, -1), 0xffffffff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(small_rings),
		cmocka_unit_test(sizes_tell),
		cmocka_unit_test(contradictions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
