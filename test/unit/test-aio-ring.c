// SPDX-License-Identifier: GPL-2.0
/*
 * criu-like/mem/aio.c: the ring header checks, the count of unreaped events,
 * the io_setup() argument that gives a ring of the same size, and the image
 * entry the restore accepts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "aio-ring.h"
#include "log.h"

static struct aio_ring_hdr hdr(uint32_t nr, uint32_t head, uint32_t tail)
{
	struct aio_ring_hdr h = { .nr = nr,
				  .head = head,
				  .tail = tail,
				  .magic = AIO_RING_MAGIC,
				  .compat_features = 1,
				  .header_length = AIO_RING_HDR };
	return h;
}

static void test_check(void **state)
{
	struct aio_ring_hdr h = hdr(127, 2, 5);

	(void)state;
	assert_int_equal(aio_ring_check(&h, 4096), 0);
	/* nr must match the size: (len - 32) / 32 */
	assert_int_equal(aio_ring_check(&h, 8192), -EINVAL);
	h = hdr(255, 254, 0);
	assert_int_equal(aio_ring_check(&h, 8192), 0);
	h = hdr(127, 127, 0); /* head outside */
	assert_int_equal(aio_ring_check(&h, 4096), -EINVAL);
	h = hdr(127, 0, 200); /* tail outside */
	assert_int_equal(aio_ring_check(&h, 4096), -EINVAL);
	h = hdr(127, 0, 0);
	h.magic = 0;
	assert_int_equal(aio_ring_check(&h, 4096), -EINVAL);
	h = hdr(127, 0, 0);
	h.header_length = 64;
	assert_int_equal(aio_ring_check(&h, 4096), -EINVAL);
	h = hdr(127, 0, 0);
	h.incompat_features = 1;
	assert_int_equal(aio_ring_check(&h, 4096), -EINVAL);
	h = hdr(127, 0, 0);
	assert_int_equal(aio_ring_check(&h, 4000), -EINVAL);
}

static void test_unreaped(void **state)
{
	(void)state;
	assert_int_equal(aio_ring_unreaped(0, 0, 127), 0);
	assert_int_equal(aio_ring_unreaped(2, 5, 127), 3);
	assert_int_equal(aio_ring_unreaped(120, 3, 127), 10); /* wrapped */
	assert_int_equal(aio_ring_unreaped(1, 0, 127), 126); /* full */
}

/* What the kernel gives for io_setup(@want) on a machine with @cpus CPUs (fs/aio.c). */
static uint32_t kernel_nr(uint32_t want, uint32_t cpus)
{
	uint64_t n = want > cpus * 4 ? want : cpus * 4, size;

	n = n * 2 + 2;
	size = AIO_RING_HDR + n * AIO_EVENT_SIZE;
	size = (size + 4095) / 4096 * 4096;
	return (uint32_t)((size - AIO_RING_HDR) / AIO_EVENT_SIZE);
}

static void test_setup_nr(void **state)
{
	uint32_t want;

	(void)state;
	/* every ring a task can get back on a machine of 2 CPUs comes back the same size */
	for (want = 1; want < 20000; want++) {
		uint32_t nr = kernel_nr(want, 2), again = aio_setup_nr(nr);

		assert_int_not_equal(again, 0);
		assert_int_equal(kernel_nr(again, 2), nr);
	}
	assert_int_equal(aio_setup_nr(0), 0);
	assert_int_equal(aio_setup_nr(3), 0);
	/* not a whole number of pages */
	assert_int_equal(aio_setup_nr(100), 0);
}

static void test_find(void **state)
{
	uint8_t ev[3 * AIO_EVENT_SIZE] = { 0 };
	AioRingEntry e = AIO_RING_ENTRY__INIT, *ep = &e;
	VmaEntry v = VMA_ENTRY__INIT;
	MmEntry mm = MM_ENTRY__INIT;

	(void)state;
	log_set_level(-1);
	e.addr = 0x7f0000000000;
	e.len = 4096;
	e.nr_events = 127;
	e.head = 2;
	e.tail = 5;
	e.has_events = true;
	e.events.data = ev;
	e.events.len = sizeof(ev);
	mm.n_aios = 1;
	mm.aios = &ep;
	v.start = 0x7f0000000000;
	v.end = v.start + 4096;
	v.kind = VMA_KIND__VMA_AIO;
	assert_ptr_equal(rst_aio_find(&mm, &v), &e);
	/* not all the unreaped events there */
	e.events.len -= AIO_EVENT_SIZE;
	assert_null(rst_aio_find(&mm, &v));
	e.events.len += AIO_EVENT_SIZE;
	/* another size than the VMA's */
	v.end += 4096;
	assert_null(rst_aio_find(&mm, &v));
	v.end -= 4096;
	/* another address */
	v.start += 4096;
	v.end += 4096;
	assert_null(rst_aio_find(&mm, &v));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_unreaped),
		cmocka_unit_test(test_setup_nr),
		cmocka_unit_test(test_find),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
