// SPDX-License-Identifier: GPL-2.0
/*
 * AIO contexts (io_setup()) with completed events not reaped yet, reading a
 * memfd. Context A: 5 reads completed, 2 reaped (head 2, tail 5). Context B:
 * its ring wrapped: 120 reads completed and reaped, then 10 more (head 120,
 * tail 3 in a ring of 127). Context C: nothing ever submitted. After SIGTERM:
 * every context id (the ring's address) still names its context, the rings'
 * head and tail are the saved ones, io_getevents() returns the unreaped events
 * in order (their tags, results and the data read), new reads complete on
 * each context (the kernel's own tail and free slots agree with the ring),
 * and io_destroy() works.
 */
#include <errno.h>
#include <linux/aio_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

struct ring {
	uint32_t id, nr, head, tail;
	uint32_t magic, compat, incompat, header_length;
};

static int fd;
static char bufs[256][16];

static long io_setup(unsigned n, aio_context_t *ctx)
{
	return syscall(SYS_io_setup, n, ctx);
}

static long io_getevents(aio_context_t ctx, long min, long max, struct io_event *ev)
{
	return syscall(SYS_io_getevents, ctx, min, max, ev, NULL);
}

/* @n reads of 8 bytes, tagged @tag, @tag + 1, ...: the tag picks the offset and the buffer. */
static int submit(aio_context_t ctx, unsigned tag, unsigned n)
{
	struct iocb cb[32], *p[32];
	unsigned i;

	for (i = 0; i < n; i++) {
		memset(&cb[i], 0, sizeof(cb[i]));
		cb[i].aio_data = tag + i;
		cb[i].aio_lio_opcode = IOCB_CMD_PREAD;
		cb[i].aio_fildes = fd;
		cb[i].aio_buf = (uint64_t)(uintptr_t)bufs[(tag + i) % 256];
		cb[i].aio_nbytes = 8;
		cb[i].aio_offset = ((tag + i) % 64) * 8;
		p[i] = &cb[i];
	}
	return syscall(SYS_io_submit, ctx, n, p) == n ? 0 : neg_errno();
}

/* Complete and reap @n reads, tags from @tag. */
static int churn(aio_context_t ctx, unsigned tag, unsigned n)
{
	struct io_event ev[32];

	while (n) {
		unsigned k = n < 32 ? n : 32;

		if (submit(ctx, tag, k) || io_getevents(ctx, k, k, ev) != k)
			return neg_errno();
		tag += k;
		n -= k;
	}
	return 0;
}

/* The next @n events of @ctx are tags @tag.. with 8 bytes read, the data of their offsets. */
static int expect(aio_context_t ctx, unsigned tag, unsigned n, const char *what)
{
	struct io_event ev[32];
	long got = io_getevents(ctx, 0, n, ev);
	unsigned i;

	if (got != n) {
		fail("%s: %ld events instead of %u: %m", what, got, n);
		return neg_errno();
	}
	for (i = 0; i < n; i++) {
		char want[9];

		snprintf(want, sizeof(want), "%08u", (tag + i) % 64);
		if (ev[i].data != tag + i || ev[i].res != 8 ||
		    memcmp(bufs[(tag + i) % 256], want, 8)) {
			fail("%s: event %u is tag %llu, res %lld, data %.8s; wanted tag %u", what,
			     i, (unsigned long long)ev[i].data, (long long)ev[i].res,
			     bufs[(tag + i) % 256], tag + i);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_ring(aio_context_t ctx, uint32_t head, uint32_t tail, const char *what)
{
	const struct ring *r = (const struct ring *)ctx;

	if (r->head != head || r->tail != tail) {
		fail("%s: ring head %u, tail %u; wanted %u, %u", what, r->head, r->tail, head,
		     tail);
		return -EINVAL;
	}
	return 0;
}

/* New reads complete on the restored context, and it goes away cleanly. */
static int still_works(aio_context_t ctx, unsigned tag, const char *what)
{
	if (submit(ctx, tag, 4) || expect(ctx, tag, 4, what))
		return neg_errno();
	if (syscall(SYS_io_destroy, ctx)) {
		fail("%s: io_destroy: %m", what);
		return neg_errno();
	}
	return 0;
}

int main(int argc, char **argv)
{
	aio_context_t a = 0, b = 0, c = 0;
	uint32_t bnr, bhead, btail;
	char data[64 * 8 + 1];
	int i;

	test_init(argc, argv);
	for (i = 0; i < 64; i++)
		snprintf(data + i * 8, 9, "%08d", i);
	fd = memfd_create("aio_ring", 0);
	if (fd < 0 || write(fd, data, 64 * 8) != 64 * 8) {
		fail("memfd: %m");
		return 1;
	}
	if (io_setup(16, &a) || io_setup(1, &b) || io_setup(64, &c)) {
		fail("io_setup: %m");
		return 1;
	}
	/* A: 5 done, 2 reaped */
	if (submit(a, 1000, 5) || expect(a, 1000, 2, "A before")) {
		fail("A: %m");
		return 1;
	}
	/* B: wrapped */
	bnr = ((struct ring *)b)->nr;
	if (bnr < 20 || churn(b, 2000, bnr - 7) || submit(b, 5000, 10)) {
		fail("B (%u events): %m", bnr);
		return 1;
	}
	bhead = bnr - 7;
	btail = 3;
	if (check_ring(a, 2, 5, "A before") || check_ring(b, bhead, btail, "B before") ||
	    check_ring(c, 0, 0, "C before"))
		return 1;
	test_daemon();
	test_waitsig();

	if (check_ring(a, 2, 5, "A after") || check_ring(b, bhead, btail, "B after") ||
	    check_ring(c, 0, 0, "C after"))
		return 1;
	if (expect(a, 1002, 3, "A after") || expect(b, 5000, 10, "B after") ||
	    expect(c, 0, 0, "C after"))
		return 1;
	if (still_works(a, 3000, "A, new reads") || still_works(b, 3100, "B, new reads") ||
	    still_works(c, 3200, "C, new reads"))
		return 1;
	pass();
	return 0;
}
