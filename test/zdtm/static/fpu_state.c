// SPDX-License-Identifier: GPL-2.0
/*
 * Floating point control state per thread: the main thread rounds toward
 * zero with flush-to-zero and denormals-are-zero set in MXCSR and the x87
 * precision at 53 bits; a second thread rounds upward with the x87 precision
 * at 24 bits. After SIGTERM each thread's MXCSR and x87 control word must be
 * as set and still act: 1/3 rounds their way, a denormal product flushes to
 * zero only in the main thread.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "zdtmtst.h"

#define MXCSR_DAZ (1 << 6)
#define MXCSR_FTZ (1 << 15)
#define X87_PC_MASK 0x300
#define X87_PC_24 0x000
#define X87_PC_53 0x200
/* Rounding control, the same two bits in MXCSR (13-14) and the x87 CW (10-11); no libm. */
#define RC_UP 2
#define RC_ZERO 3

struct fpstate {
	uint32_t mxcsr;
	uint16_t cw;
};

static void get_fp(struct fpstate *s)
{
	__asm__ volatile("stmxcsr %0" : "=m"(s->mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(s->cw));
}

static void set_fp(int rc, uint32_t mxcsr_extra, uint16_t pc)
{
	struct fpstate s;

	get_fp(&s);
	s.mxcsr = (s.mxcsr & ~(3u << 13)) | rc << 13 | mxcsr_extra;
	s.cw = (s.cw & ~(X87_PC_MASK | 3u << 10)) | rc << 10 | pc;
	__asm__ volatile("ldmxcsr %0" ::"m"(s.mxcsr));
	__asm__ volatile("fldcw %0" ::"m"(s.cw));
}

/* 1/3 in float, the product of two small doubles: rounding and FTZ at work. */
static void compute(volatile float *third, volatile double *tiny)
{
	volatile float one = 1.0f, three = 3.0f;
	volatile double a = 1e-300, b = 1e-10;

	*third = one / three;
	*tiny = a * b;
}

struct thr {
	struct fpstate want, got;
	float third;
	double tiny;
	volatile int phase;
};

static struct thr second;

static void *thread_fn(void *arg)
{
	(void)arg;
	set_fp(RC_UP, 0, X87_PC_24);
	get_fp(&second.want);
	second.phase = 1;
	while (second.phase != 2)
		test_sleep_ms(2);
	get_fp(&second.got);
	compute(&second.third, &second.tiny);
	second.phase = 3;
	return NULL;
}

int main(int argc, char **argv)
{
	struct fpstate want, got;
	volatile float third, third_up, third_zero;
	volatile double tiny;
	uint64_t tiny_bits[2];
	pthread_t th;
	sigset_t term;

	test_init(argc, argv);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	if (pthread_create(&th, NULL, thread_fn, NULL)) {
		fail("pthread_create failed");
		return 1;
	}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	/* The references, computed under each mode here. */
	set_fp(RC_UP, 0, X87_PC_53);
	compute(&third_up, &tiny);
	set_fp(RC_ZERO, 0, X87_PC_53);
	compute(&third_zero, &tiny);
	set_fp(RC_ZERO, MXCSR_DAZ | MXCSR_FTZ, X87_PC_53);
	get_fp(&want);
	while (second.phase != 1)
		test_sleep_ms(1);
	test_daemon();
	test_waitsig();

	get_fp(&got);
	second.phase = 2;
	pthread_join(th, NULL);
	if (got.mxcsr != want.mxcsr || got.cw != want.cw) {
		fail("main thread: MXCSR %#x x87 CW %#x, expected %#x %#x", got.mxcsr, got.cw,
		     want.mxcsr, want.cw);
		return 1;
	}
	if (second.got.mxcsr != second.want.mxcsr || second.got.cw != second.want.cw) {
		fail("second thread: MXCSR %#x x87 CW %#x, expected %#x %#x", second.got.mxcsr,
		     second.got.cw, second.want.mxcsr, second.want.cw);
		return 1;
	}
	compute(&third, &tiny);
	/* Compared as bits: with DAZ on here, a denormal compares equal to 0.0. */
	memcpy(&tiny_bits[0], (const void *)&tiny, 8);
	memcpy(&tiny_bits[1], &second.tiny, 8);
	if (third != third_zero || tiny_bits[0] || second.third != third_up || !tiny_bits[1]) {
		fail("the modes do not act: 1/3 %a and %a (expected %a %a), tiny %a and %a", third,
		     second.third, third_zero, third_up, tiny, second.tiny);
		return 1;
	}
	pass();
	return 0;
}
