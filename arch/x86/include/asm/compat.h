/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_ASM_COMPAT_H
#define CRIU_LIKE_ASM_COMPAT_H

/* x86-64 kernel ABI constants older libc headers lack (the generic ones are in compat.h). */
#include <elf.h>

/* ---- ELF core notes (PTRACE_GETREGSET) ---- */
#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202 /* 2.6.38 */
#endif
#ifndef NT_X86_SHSTK
#define NT_X86_SHSTK 0x204 /* 6.6: the shadow stack pointer */
#endif

/* ---- x86 shadow stack, arch_prctl (6.6) ---- */
#ifndef ARCH_SHSTK_ENABLE
#define ARCH_SHSTK_ENABLE 0x5001 /* 6.6 */
#define ARCH_SHSTK_DISABLE 0x5002
#define ARCH_SHSTK_LOCK 0x5003
#define ARCH_SHSTK_UNLOCK 0x5004
#define ARCH_SHSTK_STATUS 0x5005
#endif
#ifndef ARCH_SHSTK_SHSTK
#define ARCH_SHSTK_SHSTK (1ULL << 0) /* 6.6 */
#define ARCH_SHSTK_WRSS (1ULL << 1)
#endif

#endif
