/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_ASM_RESTORER_ARCH_H
#define CRIU_LIKE_ASM_RESTORER_ARCH_H

/*
 * x86-64 pieces of the restorer blob (parasite/restorer.c): thread creation
 * and TLS bases. Included by the blob only.
 */
#include <asm/unistd_64.h>

#include "asm/parasite-syscall.h"

#define RST_ARCH_SET_GS 0x1001
#define RST_ARCH_SET_FS 0x1002

/*
 * clone3(@ca, @size) for a thread of the restored process. The child comes
 * back from the syscall on the stack named in @ca with every register but
 * rax, rcx and r11 as the parent had them, so the arguments of the entry
 * trampoline travel in callee-saved registers and the child jumps to
 * __export_entry (arch/x86/parasite/entry.S) as the first thread does:
 * rdi = args, rsi = thread index, rdx = its sigreturn frame. The parent
 * gets the new tid or -errno.
 */
static inline long rst_clone3_thread(void *ca, unsigned long size, void *args, long idx,
				     void *frame)
{
	register long r12 __asm__("r12") = (long)frame;
	register long r13 __asm__("r13") = (long)args;
	register long r14 __asm__("r14") = idx;
	long ret;

	__asm__ volatile("syscall\n\t"
			 "testq %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "movq %%r13, %%rdi\n\t"
			 "movq %%r14, %%rsi\n\t"
			 "movq %%r12, %%rdx\n\t"
			 "jmp __export_entry\n\t"
			 "1:\n\t"
			 : "=a"(ret)
			 : "a"(__NR_clone3), "D"(ca), "S"(size), "r"(r12), "r"(r13), "r"(r14)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long rst_set_tls(unsigned long fs_base, unsigned long gs_base)
{
	long ret = sys_call2(__NR_arch_prctl, RST_ARCH_SET_FS, fs_base);

	if (!ret)
		ret = sys_call2(__NR_arch_prctl, RST_ARCH_SET_GS, gs_base);
	return ret;
}

#endif
