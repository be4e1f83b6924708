/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_ASM_CORE_REGS_H
#define CRIU_LIKE_ASM_CORE_REGS_H

#include "asm/infect-arch.h"
#include "core.pb-c.h"

/*
 * The register part of a thread's core entry: @regs (which @tc points to
 * afterwards), the xsave area (pointing into @ts, not copied) and the fs/gs
 * bases, from the state the thread was seized in. arch_rst_regs()
 * (asm/restorer-tool.h) reads @regs back.
 */
void arch_fill_thread_regs(ThreadCoreEntry *tc, UserRegsEntry *regs,
			   const struct arch_thread_state *ts);

#endif
