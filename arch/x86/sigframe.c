// SPDX-License-Identifier: GPL-2.0
#define LOG_PREFIX "sigframe: "
#include <errno.h>
#include <string.h>
#include <cpuid.h>

#include "asm/sigframe.h"
#include "log.h"

uint64_t arch_xfeatures(void)
{
	static uint64_t xcr0; /* asked once: CPUID exits to the hypervisor in a VM */
	unsigned int eax, ebx, ecx, edx, lo, hi;

	if (xcr0)
		return xcr0;
	/* CPUID.1:ECX.OSXSAVE[bit 27]: the OS enabled XSAVE, so XGETBV works in user mode. */
	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) {
		xcr0 = 0x3; /* x87 and SSE: the fxsave-only layout */
		return xcr0;
	}
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	xcr0 = ((uint64_t)hi << 32) | lo;
	return xcr0;
}

static void fill_sigcontext(struct rt_sigcontext64 *sc, const struct user_regs_struct *r)
{
	sc->r8 = r->r8;
	sc->r9 = r->r9;
	sc->r10 = r->r10;
	sc->r11 = r->r11;
	sc->r12 = r->r12;
	sc->r13 = r->r13;
	sc->r14 = r->r14;
	sc->r15 = r->r15;
	sc->rdi = r->rdi;
	sc->rsi = r->rsi;
	sc->rbp = r->rbp;
	sc->rbx = r->rbx;
	sc->rdx = r->rdx;
	sc->rax = r->rax;
	sc->rcx = r->rcx;
	sc->rsp = r->rsp;
	sc->rip = r->rip;
	sc->eflags = r->eflags;
	sc->cs = (uint16_t)r->cs;
	sc->ss = (uint16_t)r->ss;
	/* fs/gs selectors and bases are not part of a 64-bit sigcontext: left as they are. */
}

int arch_build_sigframe(void *buf, uint64_t addr, const struct user_regs_struct *regs,
			uint64_t sigmask, const void *xstate, size_t xsize, uint64_t xfeatures)
{
	struct rt_sigframe64 *f = buf;
	uint8_t *fx = (uint8_t *)buf + SIGFRAME_XSTATE_OFF;
	struct fpx_sw_bytes sw = { 0 };
	uint64_t xstate_bv;
	uint32_t magic2 = XSTATE_MAGIC2;

	if (addr % XSTATE_ALIGN || xsize < FXSAVE_SIZE + XSAVE_HDR_SIZE) {
		pr_err("bad frame address %#lx or xstate size %zu\n", (unsigned long)addr, xsize);
		return -EINVAL;
	}
	memset(f, 0, SIGFRAME_XSTATE_OFF);
	/*
	 * UC_SIGCONTEXT_SS|UC_STRICT_RESTORE_SS: take ss from the frame as is.
	 * uc_stack stays {0, 0, 0}: restore_altstack() then fails with -ENOMEM
	 * (size below MINSIGSTKSZ) or sees it unchanged, and the kernel ignores
	 * its error, so the thread's sigaltstack is never touched.
	 */
	f->uc.uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	fill_sigcontext(&f->uc.uc_mcontext, regs);
	f->uc.uc_mcontext.fpstate = addr + SIGFRAME_XSTATE_OFF;
	f->uc.uc_sigmask = sigmask;

	memcpy(fx, xstate, xsize);
	/*
	 * XRSTOR with RFBM = the components present (XSTATE_BV) plus x87/SSE:
	 * a component not in XSTATE_BV is in its init state, and the kernel
	 * puts every component outside RFBM in its init state too.
	 */
	memcpy(&xstate_bv, fx + FXSAVE_SIZE, sizeof(xstate_bv));
	sw.magic1 = XSTATE_MAGIC1;
	sw.xstate_size = (uint32_t)xsize;
	sw.extended_size = (uint32_t)(xsize + sizeof(magic2));
	sw.xfeatures = (xstate_bv | 0x3) & (xfeatures | 0x3);
	memcpy(fx + FX_SW_BYTES_OFFSET, &sw, sizeof(sw));
	memcpy(fx + xsize, &magic2, sizeof(magic2));
	return 0;
}
