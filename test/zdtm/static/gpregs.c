// SPDX-License-Identifier: GPL-2.0
/*
 * General purpose registers: a thread loads known values into rbx, rbp, rdx,
 * r8, r9, r10, r12, r13, r14 and r15 and from then on only counts and sleeps
 * in assembly (nanosleep takes rdi and rsi; rax, rcx and r11 are the
 * syscall's), and the direction flag stays clear. After SIGTERM the counter
 * must still move and every register must hold its value: a restore that
 * loses or mixes up any of them fails.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>

#include "zdtmtst.h"

#define NREGS 10

struct gctx {
	volatile uint64_t counter; /* 0 */
	volatile int32_t stop; /* 8 */
	int32_t pad;
	int64_t nap[2]; /* 16 */
	uint64_t in[NREGS]; /* 32 */
	uint64_t out[NREGS]; /* 112 */
};

_Static_assert(offsetof(struct gctx, in) == 32, "asm offsets");
_Static_assert(offsetof(struct gctx, out) == 112, "asm offsets");

static const char *const names[NREGS] = { "rbx", "rbp", "rdx", "r8",  "r9",
					  "r10", "r12", "r13", "r14", "r15" };

/* gp_hold(ctx): in the order of names[]; callee-saved registers are saved first. */
void gp_hold(struct gctx *ctx);
__asm__(".text\n"
	".globl gp_hold\n"
	".type gp_hold, @function\n"
	"gp_hold:\n"
	"	push %rbx\n"
	"	push %rbp\n"
	"	push %r12\n"
	"	push %r13\n"
	"	push %r14\n"
	"	push %r15\n"
	"	push %rdi\n"
	"	mov %rdi, %rax\n"
	"	mov 32(%rax), %rbx\n"
	"	mov 40(%rax), %rbp\n"
	"	mov 48(%rax), %rdx\n"
	"	mov 56(%rax), %r8\n"
	"	mov 64(%rax), %r9\n"
	"	mov 72(%rax), %r10\n"
	"	mov 80(%rax), %r12\n"
	"	mov 88(%rax), %r13\n"
	"	mov 96(%rax), %r14\n"
	"	mov 104(%rax), %r15\n"
	"1:\n"
	"	mov (%rsp), %rdi\n"
	"	lock incq 0(%rdi)\n"
	"	cmpl $0, 8(%rdi)\n"
	"	jne 2f\n"
	"	lea 16(%rdi), %rdi\n"
	"	xor %esi, %esi\n"
	"	mov $35, %eax\n" /* SYS_nanosleep */
	"	syscall\n"
	"	jmp 1b\n"
	"2:\n"
	"	mov %rbx, 112(%rdi)\n"
	"	mov %rbp, 120(%rdi)\n"
	"	mov %rdx, 128(%rdi)\n"
	"	mov %r8, 136(%rdi)\n"
	"	mov %r9, 144(%rdi)\n"
	"	mov %r10, 152(%rdi)\n"
	"	mov %r12, 160(%rdi)\n"
	"	mov %r13, 168(%rdi)\n"
	"	mov %r14, 176(%rdi)\n"
	"	mov %r15, 184(%rdi)\n"
	"	pushf\n"
	"	pop %rax\n"
	"	and $0x400, %eax\n" /* DF */
	"	mov %eax, 12(%rdi)\n"
	"	pop %rdi\n"
	"	pop %r15\n"
	"	pop %r14\n"
	"	pop %r13\n"
	"	pop %r12\n"
	"	pop %rbp\n"
	"	pop %rbx\n"
	"	ret\n"
	".size gp_hold, .-gp_hold\n");

static struct gctx ctx[2];

static void *worker(void *arg)
{
	gp_hold(arg);
	return NULL;
}

static int advanced(void)
{
	uint64_t seen[2] = { ctx[0].counter, ctx[1].counter };

	for (int i = 0; i < 1000; i++) {
		if (ctx[0].counter > seen[0] && ctx[1].counter > seen[1])
			return 0;
		test_sleep_ms(10);
	}
	return -ETIMEDOUT;
}

int main(int argc, char **argv)
{
	pthread_t th[2];
	sigset_t term;

	test_init(argc, argv);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	for (int t = 0; t < 2; t++) {
		ctx[t].nap[1] = 300 * 1000;
		datagen(ctx[t].in, sizeof(ctx[t].in), 1200 + t);
		if (pthread_create(&th[t], NULL, worker, &ctx[t])) {
			fail("pthread_create failed");
			return 1;
		}
	}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	if (advanced()) {
		fail("the threads do not count");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (advanced()) {
		fail("a thread stopped counting");
		return 1;
	}
	for (int t = 0; t < 2; t++) {
		ctx[t].stop = 1;
		pthread_join(th[t], NULL);
		if (ctx[t].pad) {
			fail("thread %d: the direction flag is set", t);
			return 1;
		}
		for (int r = 0; r < NREGS; r++) {
			if (ctx[t].out[r] != ctx[t].in[r]) {
				fail("thread %d: %s is %#lx, expected %#lx", t, names[r],
				     (unsigned long)ctx[t].out[r], (unsigned long)ctx[t].in[r]);
				return 1;
			}
		}
	}
	pass();
	return 0;
}
