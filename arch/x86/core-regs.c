// SPDX-License-Identifier: GPL-2.0
#include "asm/core-regs.h"

void arch_fill_thread_regs(ThreadCoreEntry *tc, UserRegsEntry *r,
			   const struct arch_thread_state *ts)
{
	const struct user_regs_struct *u = &ts->regs;

	user_regs_entry__init(r);
	r->r15 = u->r15, r->r14 = u->r14, r->r13 = u->r13, r->r12 = u->r12;
	r->bp = u->rbp, r->bx = u->rbx, r->r11 = u->r11, r->r10 = u->r10;
	r->r9 = u->r9, r->r8 = u->r8, r->ax = u->rax, r->cx = u->rcx;
	r->dx = u->rdx, r->si = u->rsi, r->di = u->rdi, r->orig_ax = u->orig_rax;
	r->ip = u->rip, r->cs = u->cs, r->flags = u->eflags, r->sp = u->rsp;
	r->ss = u->ss, r->fs_base = u->fs_base, r->gs_base = u->gs_base;
	r->ds = u->ds, r->es = u->es, r->fs = u->fs, r->gs = u->gs;
	tc->gpregs = r;
	tc->xsave.data = ts->xstate;
	tc->xsave.len = ts->xsize;
	tc->fs_base = u->fs_base;
	tc->gs_base = u->gs_base;
}
