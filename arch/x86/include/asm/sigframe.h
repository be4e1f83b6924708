/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_ASM_SIGFRAME_H
#define CRIU_LIKE_ASM_SIGFRAME_H

/*
 * The x86-64 rt_sigreturn frame, as the kernel reads it in
 * arch/x86/kernel/signal_64.c: rt_sigreturn() takes the frame at
 * rsp - 8 (the handler's "ret" already popped pretcode), restores the
 * general registers from uc_mcontext, the sigmask from uc_sigmask, the
 * sigaltstack from uc_stack and the whole xstate from the buffer that
 * uc_mcontext.fpstate points to (64-byte aligned, XSAVE standard format,
 * sw_reserved holding FP_XSTATE_MAGIC1 and FP_XSTATE_MAGIC2 right after
 * xstate_size bytes). Used at dump time (the safety net of every
 * injection and the parasite's way home) and at restore time (the last
 * step of every restored thread).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>
/* sys/user.h defines these too: keep util.h's spelling so both can be included. */
#undef PAGE_SIZE
#undef PAGE_MASK
#define PAGE_SIZE 4096UL
#define PAGE_MASK (~(PAGE_SIZE - 1))

#define RT_SIGRETURN_NR 15

#define UC_FP_XSTATE 0x1
#define UC_SIGCONTEXT_SS 0x2
#define UC_STRICT_RESTORE_SS 0x4

#define XSTATE_MAGIC1 0x46505853U
#define XSTATE_MAGIC2 0x46505845U
#define XSTATE_ALIGN 64
#define FXSAVE_SIZE 512
#define XSAVE_HDR_SIZE 64
#define FX_SW_BYTES_OFFSET 464

/* struct _fpx_sw_bytes in the fxsave area's software-reserved bytes. */
struct fpx_sw_bytes {
	uint32_t magic1;
	uint32_t extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size;
	uint32_t padding[7];
};

/* struct sigcontext (64-bit), field for field. */
struct rt_sigcontext64 {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate; /* user address of the xsave buffer, 0: reset FPU */
	uint64_t reserved1[8];
};

struct rt_stack64 {
	uint64_t ss_sp;
	int32_t ss_flags;
	int32_t pad;
	uint64_t ss_size;
};

struct rt_ucontext64 {
	uint64_t uc_flags;
	uint64_t uc_link;
	struct rt_stack64 uc_stack;
	struct rt_sigcontext64 uc_mcontext;
	uint64_t uc_sigmask;
};

struct rt_sigframe64 {
	uint64_t pretcode;
	struct rt_ucontext64 uc;
	uint8_t info[128]; /* siginfo, unused by rt_sigreturn */
};

_Static_assert(sizeof(struct rt_sigcontext64) == 256, "sigcontext layout");
_Static_assert(offsetof(struct rt_ucontext64, uc_mcontext) == 40, "ucontext layout");

/* Offset of the xstate buffer inside a frame built by arch_build_sigframe(). */
#define SIGFRAME_XSTATE_OFF \
	((sizeof(struct rt_sigframe64) + XSTATE_ALIGN - 1) & ~(size_t)(XSTATE_ALIGN - 1))

/* Bytes needed for a frame carrying @xsize bytes of xstate (plus MAGIC2). */
static inline size_t arch_sigframe_size(size_t xsize)
{
	return SIGFRAME_XSTATE_OFF + xsize + sizeof(uint32_t);
}

/*
 * Build in @buf a frame that, placed at the task address @addr (64-byte
 * aligned), makes rt_sigreturn restore @regs, @sigmask and the @xsize bytes
 * of @xstate (as read by PTRACE_GETREGSET NT_X86_XSTATE). @xfeatures is the
 * mask of user xfeatures the kernel may restore (XCR0). The task must enter
 * rt_sigreturn with rsp == arch_sigframe_rsp(addr). @buf must hold
 * arch_sigframe_size(xsize) bytes. Returns 0 or -EINVAL.
 */
int arch_build_sigframe(void *buf, uint64_t addr, const struct user_regs_struct *regs,
			uint64_t sigmask, const void *xstate, size_t xsize, uint64_t xfeatures);

static inline uint64_t arch_sigframe_rsp(uint64_t addr)
{
	return addr + sizeof(uint64_t);
}

/*
 * A thread stopped in a syscall has rax = -ERESTART* and orig_rax = nr:
 * rewind it to run the syscall again (inject.c). @frame: the registers go
 * into a sigreturn frame, which resets restart_block, so a sleep that needed
 * restart_syscall returns -EINTR instead (as with CRIU), except poll/ppoll
 * without a timeout, issued again.
 */
struct user_regs_struct;
void arch_restart_adjust(struct user_regs_struct *r, bool frame);

/* The user xfeatures the CPU and kernel enable (XCR0). */
uint64_t arch_xfeatures(void);

#endif
