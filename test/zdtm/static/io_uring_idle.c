// SPDX-License-Identifier: GPL-2.0
/*
 * An idle io_uring (raw syscalls): 16 SQEs, 64 CQEs (IORING_SETUP_CQSIZE),
 * rings and SQEs mapped; 100 NOPs with completions reaped but the last
 * three, 37 NOPs that post none (IOSQE_CQE_SKIP_SUCCESS), one NOP written
 * and not submitted; two registered files (and an empty slot between) and
 * two registered buffers. After SIGTERM, through the same mappings: the
 * positions are the same, the three CQEs are there, the pending SQE is
 * submitted and completes, a new NOP completes with its user_data, the
 * first file is read with IORING_OP_READ and IOSQE_FIXED_FILE, the second
 * with IORING_OP_READ_FIXED into the second registered buffer.
 *
 * A second ring of 64 entries with 128-byte SQEs and 32-byte CQEs
 * (IORING_SETUP_SQE128 | IORING_SETUP_CQE32), two CQEs unreaped: after the
 * restore they are read at their 32-byte places, and a NOP written at its
 * 128-byte place completes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/io_uring.h>

#include "zdtmtst.h"

#define SQ 16
#define CQ 64
#define DATA_A "registered file number zero"
#define DATA_B "the second registered file, read into a fixed buffer"

static int ring;
static struct io_uring_params p;
static char *rings;
static struct io_uring_sqe *sqes;
static char bufs[2][4096] __attribute__((aligned(4096)));

static uint32_t *u32(uint32_t off)
{
	return (uint32_t *)(rings + off);
}

static struct io_uring_cqe *cqe_at(uint32_t i)
{
	return (struct io_uring_cqe *)(rings + p.cq_off.cqes) + (i & (CQ - 1));
}

/* An SQE at the tail, not submitted: the tail moves. */
static struct io_uring_sqe *sqe_next(void)
{
	uint32_t tail = *u32(p.sq_off.tail), idx = tail & (SQ - 1);
	struct io_uring_sqe *q = &sqes[idx];

	memset(q, 0, sizeof(*q));
	u32(p.sq_off.array)[idx] = idx;
	__atomic_store_n(u32(p.sq_off.tail), tail + 1, __ATOMIC_RELEASE);
	return q;
}

static long enter(unsigned int submit, unsigned int wait)
{
	return syscall(__NR_io_uring_enter, ring, submit, wait, wait ? IORING_ENTER_GETEVENTS : 0,
		       NULL, 0);
}

static int nops(unsigned int n, uint8_t flags, uint64_t data)
{
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_sqe *q = sqe_next();

		q->opcode = IORING_OP_NOP;
		q->flags = flags;
		q->user_data = data + i;
		if (enter(1, flags ? 0 : 1) != 1)
			return neg_errno();
	}
	return 0;
}

/* The CQE at the head, reaped; its user_data and res, or -1. */
static int reap(uint64_t *data, int *res)
{
	uint32_t head = *u32(p.cq_off.head);

	if (head == __atomic_load_n(u32(p.cq_off.tail), __ATOMIC_ACQUIRE))
		return -EAGAIN;
	*data = cqe_at(head)->user_data;
	*res = cqe_at(head)->res;
	__atomic_store_n(u32(p.cq_off.head), head + 1, __ATOMIC_RELEASE);
	return 0;
}

/* Submit what is at the tail and wait for one completion: its user_data and res. */
static int run_one(uint64_t *data, int *res)
{
	if (enter(1, 1) != 1)
		return neg_errno();
	return reap(data, res);
}

/* The second ring: wide entries. */
#define WSQ 64
static int wring;
static struct io_uring_params wp;
static char *wrings, *wsqes;

static int wide_nop(uint64_t data)
{
	uint32_t tail = *(uint32_t *)(wrings + wp.sq_off.tail), idx = tail & (WSQ - 1);
	struct io_uring_sqe *q = (struct io_uring_sqe *)(wsqes + idx * 128);

	memset(q, 0, 128);
	q->opcode = IORING_OP_NOP;
	q->user_data = data;
	((uint32_t *)(wrings + wp.sq_off.array))[idx] = idx;
	__atomic_store_n((uint32_t *)(wrings + wp.sq_off.tail), tail + 1, __ATOMIC_RELEASE);
	return syscall(__NR_io_uring_enter, wring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) == 1 ? 0
											       : -1;
}

/* The CQE at the head of the wide ring (32 bytes each), reaped: its user_data, or 0. */
static uint64_t wide_reap(void)
{
	uint32_t *head = (uint32_t *)(wrings + wp.cq_off.head);
	uint32_t tail = __atomic_load_n((uint32_t *)(wrings + wp.cq_off.tail), __ATOMIC_ACQUIRE);
	uint64_t d;

	if (*head == tail)
		return 0;
	d = ((struct io_uring_cqe *)(wrings + wp.cq_off.cqes + (*head & (2 * WSQ - 1)) * 32))
		    ->user_data;
	__atomic_store_n(head, *head + 1, __ATOMIC_RELEASE);
	return d;
}

static int setup_wide(void)
{
	wp.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	wring = (int)syscall(__NR_io_uring_setup, WSQ, &wp);
	if (wring < 0)
		return neg_errno();
	wrings = mmap(NULL, wp.sq_off.array + WSQ * sizeof(uint32_t), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_POPULATE, wring, IORING_OFF_SQ_RING);
	wsqes = mmap(NULL, WSQ * 128, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, wring,
		     IORING_OFF_SQES);
	if (wrings == MAP_FAILED || wsqes == MAP_FAILED)
		return neg_errno();
	return wide_nop(71) || wide_nop(72) || wide_nop(73) || wide_reap() != 71 ? -EIO : 0;
}

static int check_wide(void)
{
	uint64_t a = wide_reap(), b = wide_reap(), c = 0;

	if (a != 72 || b != 73) {
		fail("the wide ring's unreaped CQEs: user_data %llu and %llu (72 and 73)",
		     (unsigned long long)a, (unsigned long long)b);
		return -EINVAL;
	}
	if (wide_nop(74) || (c = wide_reap()) != 74) {
		fail("a NOP on the wide ring: user_data %llu", (unsigned long long)c);
		return -EINVAL;
	}
	return 0;
}

static int setup(int fa, int fb)
{
	int files[3] = { fa, -1, fb };
	struct iovec iov[2] = { { bufs[0], sizeof(bufs[0]) }, { bufs[1], sizeof(bufs[1]) } };
	uint64_t d;
	int r;

	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = CQ;
	ring = (int)syscall(__NR_io_uring_setup, SQ, &p);
	if (ring < 0 || p.sq_entries != SQ || p.cq_entries != CQ)
		return neg_errno();
	rings = mmap(NULL, p.sq_off.array + SQ * sizeof(uint32_t), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
	sqes = mmap(NULL, SQ * sizeof(*sqes), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		    ring, IORING_OFF_SQES);
	if (rings == MAP_FAILED || sqes == MAP_FAILED ||
	    syscall(__NR_io_uring_register, ring, IORING_REGISTER_FILES, files, 3) ||
	    syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, iov, 2))
		return neg_errno();
	/* 100 completions, all reaped but the last three (100..199: 197, 198, 199 stay) */
	for (int i = 0; i < 97; i++)
		if (nops(1, 0, 100 + i) || reap(&d, &r) || d != (uint64_t)(100 + i))
			return neg_errno();
	if (nops(3, 0, 197))
		return neg_errno();
	/* consumed, nothing posted */
	if (nops(37, IOSQE_CQE_SKIP_SUCCESS, 500))
		return neg_errno();
	/* written, not submitted */
	sqe_next()->opcode = IORING_OP_NOP;
	sqes[(*u32(p.sq_off.tail) - 1) & (SQ - 1)].user_data = 3001;
	return 0;
}

static int check_positions(void)
{
	if (*u32(p.sq_off.head) != 137 || *u32(p.sq_off.tail) != 138 || *u32(p.cq_off.head) != 97 ||
	    *u32(p.cq_off.tail) != 100) {
		fail("positions: sq %u..%u (137..138), cq %u..%u (97..100)", *u32(p.sq_off.head),
		     *u32(p.sq_off.tail), *u32(p.cq_off.head), *u32(p.cq_off.tail));
		return -EINVAL;
	}
	return 0;
}

static int check_after(void)
{
	struct io_uring_sqe *q;
	uint64_t d;
	int r, i;
	char buf[64];

	if (check_positions())
		return neg_errno();
	for (i = 0; i < 3; i++)
		if (reap(&d, &r) || d != (uint64_t)(197 + i) || r != 0) {
			fail("unreaped CQE %d: user_data %llu res %d", i, (unsigned long long)d, r);
			return -EINVAL;
		}
	if (run_one(&d, &r) || d != 3001 || r != 0) {
		fail("the pending SQE: user_data %llu res %d", (unsigned long long)d, r);
		return -EINVAL;
	}
	q = sqe_next();
	q->opcode = IORING_OP_NOP;
	q->user_data = 4242;
	if (run_one(&d, &r) || d != 4242 || r != 0 || *u32(p.sq_off.head) != 139) {
		fail("a new NOP: user_data %llu res %d, sq head %u", (unsigned long long)d, r,
		     *u32(p.sq_off.head));
		return -EINVAL;
	}
	memset(buf, 0, sizeof(buf));
	q = sqe_next();
	q->opcode = IORING_OP_READ;
	q->flags = IOSQE_FIXED_FILE;
	q->fd = 0;
	q->addr = (uint64_t)(uintptr_t)buf;
	q->len = sizeof(DATA_A) - 1;
	q->user_data = 5;
	if (run_one(&d, &r) || d != 5 || r != (int)sizeof(DATA_A) - 1 || strcmp(buf, DATA_A)) {
		fail("IORING_OP_READ of fixed file 0: res %d (%s), \"%s\"", r,
		     strerror(r < 0 ? -r : 0), buf);
		return -EINVAL;
	}
	q = sqe_next();
	q->opcode = IORING_OP_READ_FIXED;
	q->flags = IOSQE_FIXED_FILE;
	q->fd = 2;
	q->addr = (uint64_t)(uintptr_t)bufs[1];
	q->len = sizeof(DATA_B) - 1;
	q->buf_index = 1;
	q->user_data = 6;
	if (run_one(&d, &r) || d != 6 || r != (int)sizeof(DATA_B) - 1 ||
	    memcmp(bufs[1], DATA_B, sizeof(DATA_B) - 1)) {
		fail("IORING_OP_READ_FIXED of fixed file 2 into buffer 1: res %d (%s)", r,
		     strerror(r < 0 ? -r : 0));
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int fa, fb;

	test_init(argc, argv);
	fa = open("iou_a", O_RDWR | O_CREAT | O_TRUNC, 0600);
	fb = open("iou_b", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fa < 0 || fb < 0 || write(fa, DATA_A, sizeof(DATA_A) - 1) < 0 ||
	    write(fb, DATA_B, sizeof(DATA_B) - 1) < 0 || setup(fa, fb) || setup_wide()) {
		fail("setup: %m");
		return 1;
	}
	if (check_positions())
		return 1;
	test_daemon();
	test_waitsig();
	if (check_after() || check_wide())
		return 1;
	pass();
	return 0;
}
