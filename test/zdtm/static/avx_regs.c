// SPDX-License-Identifier: GPL-2.0
/*
 * 8 threads, each with its own counter and its own known values in the vector
 * registers: zmm0-31 and the mask registers k1-k7 when the CPU and the kernel
 * have AVX-512, else ymm0-15. Each thread loads the values once and then only
 * counts and sleeps in assembly, never touching the vector registers again.
 * After SIGTERM every counter must still advance and every register must hold
 * what was loaded: a restore that loses the xstate (or only its upper halves)
 * gives zeros or another thread's values.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NTHREADS 8

struct vctx {
	volatile uint64_t counter; /* 0 */
	volatile int32_t stop; /* 8 */
	int32_t avx512; /* 12 */
	int64_t nap[2]; /* 16: struct timespec for nanosleep */
	uint64_t kin[8]; /* 32 */
	uint64_t kout[8]; /* 96 */
	uint8_t pad[32];
	uint8_t in[32][64]; /* 192 */
	uint8_t out[32][64]; /* 2240 */
	pthread_t thread;
	pid_t tid;
} __attribute__((aligned(64)));

_Static_assert(offsetof(struct vctx, kin) == 32, "asm offsets");
_Static_assert(offsetof(struct vctx, kout) == 96, "asm offsets");
_Static_assert(offsetof(struct vctx, in) == 192, "asm offsets");
_Static_assert(offsetof(struct vctx, out) == 2240, "asm offsets");

/*
 * vec_hold(ctx): load the registers from ctx->in, count and nanosleep until
 * ctx->stop, store them to ctx->out. All vector registers are caller-saved in
 * the x86-64 ABI, so a plain function may clobber them.
 */
void vec_hold(struct vctx *ctx);
__asm__(".text\n"
	".globl vec_hold\n"
	".type vec_hold, @function\n"
	"vec_hold:\n"
	"	push %r12\n"
	"	mov %rdi, %r12\n"
	"	cmpl $0, 12(%r12)\n"
	"	je 10f\n"
	"	.irp "
	"i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
	"	vmovdqu64 192+\\i*64(%r12), %zmm\\i\n"
	"	.endr\n"
	"	.irp i,1,2,3,4,5,6,7\n"
	"	kmovq 32+\\i*8(%r12), %k\\i\n"
	"	.endr\n"
	"	jmp 1f\n"
	"10:\n"
	"	.irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	vmovdqu 192+\\i*64(%r12), %ymm\\i\n"
	"	.endr\n"
	"1:\n"
	"	lock incq 0(%r12)\n"
	"	cmpl $0, 8(%r12)\n"
	"	jne 2f\n"
	"	mov $35, %eax\n" /* SYS_nanosleep */
	"	lea 16(%r12), %rdi\n"
	"	xor %esi, %esi\n"
	"	syscall\n"
	"	jmp 1b\n"
	"2:\n"
	"	cmpl $0, 12(%r12)\n"
	"	je 20f\n"
	"	.irp "
	"i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
	"	vmovdqu64 %zmm\\i, 2240+\\i*64(%r12)\n"
	"	.endr\n"
	"	.irp i,1,2,3,4,5,6,7\n"
	"	kmovq %k\\i, 96+\\i*8(%r12)\n"
	"	.endr\n"
	"	jmp 3f\n"
	"20:\n"
	"	.irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	vmovdqu %ymm\\i, 2240+\\i*64(%r12)\n"
	"	.endr\n"
	"3:\n"
	"	vzeroupper\n"
	"	pop %r12\n"
	"	ret\n"
	".size vec_hold, .-vec_hold\n");

static struct vctx ctx[NTHREADS];

static void *worker(void *arg)
{
	struct vctx *c = arg;

	c->tid = syscall(SYS_gettid);
	vec_hold(c);
	return NULL;
}

/* Every counter moved past @seen within 10 s. */
static int all_advanced(const uint64_t *seen)
{
	for (int round = 0; round < 1000; round++) {
		int i = 0;

		while (i < NTHREADS && ctx[i].counter > seen[i])
			i++;
		if (i == NTHREADS)
			return 0;
		test_sleep_ms(10);
	}
	return -ETIMEDOUT;
}

static int check_regs(const struct vctx *c, int idx)
{
	int nregs = c->avx512 ? 32 : 16, width = c->avx512 ? 64 : 32;

	for (int r = 0; r < nregs; r++) {
		for (int b = 0; b < width; b++) {
			if (c->in[r][b] == c->out[r][b])
				continue;
			fail("thread %d (tid %d): %s%d byte %d is %#x, expected %#x", idx, c->tid,
			     c->avx512 ? "zmm" : "ymm", r, b, c->out[r][b], c->in[r][b]);
			return 1;
		}
	}
	for (int k = 1; c->avx512 && k < 8; k++) {
		if (c->kin[k] != c->kout[k]) {
			fail("thread %d: k%d is %#lx, expected %#lx", idx, k,
			     (unsigned long)c->kout[k], (unsigned long)c->kin[k]);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t seen[NTHREADS] = { 0 };
	int avx512, ret = 0;
	sigset_t term, old;

	test_init(argc, argv);
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx")) {
		fail("the CPU has no AVX: this test needs at least ymm registers");
		return 1;
	}
	avx512 = __builtin_cpu_supports("avx512f");
	test_msg("checking %s registers\n", avx512 ? "zmm0-31 and k1-k7" : "ymm0-15");
	/* SIGTERM goes to the main thread only: the workers' registers stay untouched. */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, &old);
	for (int i = 0; i < NTHREADS; i++) {
		ctx[i].avx512 = avx512;
		ctx[i].nap[1] = 200 * 1000;
		datagen(ctx[i].in, sizeof(ctx[i].in), 7000 + i);
		datagen(ctx[i].kin, sizeof(ctx[i].kin), 8000 + i);
		if (pthread_create(&ctx[i].thread, NULL, worker, &ctx[i])) {
			fail("pthread_create %d failed", i);
			return 1;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (all_advanced(seen)) {
		fail("threads did not start counting");
		return 1;
	}
	test_daemon();
	test_waitsig();

	for (int i = 0; i < NTHREADS; i++)
		seen[i] = ctx[i].counter;
	if (all_advanced(seen)) {
		fail("some thread stopped counting after SIGTERM");
		ret = 1;
	}
	for (int i = 0; i < NTHREADS; i++) {
		ctx[i].stop = 1;
		pthread_join(ctx[i].thread, NULL);
		ret |= check_regs(&ctx[i], i);
	}
	if (!ret)
		pass();
	return ret;
}
