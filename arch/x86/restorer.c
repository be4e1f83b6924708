// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "asm/restorer-tool.h"
#include "asm/sigframe.h"

void arch_rst_regs(const UserRegsEntry *e, struct user_regs_struct *r)
{
	memset(r, 0, sizeof(*r));
	r->r15 = e->r15, r->r14 = e->r14, r->r13 = e->r13, r->r12 = e->r12;
	r->rbp = e->bp, r->rbx = e->bx, r->r11 = e->r11, r->r10 = e->r10;
	r->r9 = e->r9, r->r8 = e->r8, r->rax = e->ax, r->rcx = e->cx;
	r->rdx = e->dx, r->rsi = e->si, r->rdi = e->di, r->orig_rax = e->orig_ax;
	r->rip = e->ip, r->cs = e->cs, r->eflags = e->flags, r->rsp = e->sp;
	r->ss = e->ss, r->fs_base = e->fs_base, r->gs_base = e->gs_base;
	r->ds = e->ds, r->es = e->es, r->fs = e->fs, r->gs = e->gs;
	arch_restart_adjust(r, true);
}

void arch_rst_jump(uint64_t entry, uint64_t stack, uint64_t args, uint64_t frame)
{
	__asm__ volatile("movq %0, %%rsp\n\t"
			 "movq %1, %%rdi\n\t"
			 "xorl %%esi, %%esi\n\t"
			 "movq %2, %%rdx\n\t"
			 "jmp *%3\n\t"
			 :
			 : "r"(stack), "r"(args), "r"(frame), "r"(entry)
			 : "rdi", "rsi", "rdx", "memory");
	__builtin_unreachable();
}

void arch_rst_thread_tls(const ThreadCoreEntry *tc, uint64_t tls[2])
{
	tls[0] = tc->fs_base;
	tls[1] = tc->gs_base;
}
