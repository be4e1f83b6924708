/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_ASM_RESTORER_TOOL_H
#define CRIU_LIKE_ASM_RESTORER_TOOL_H

/* x86-64 helpers of rst_task_finish() (criu-like/restore-task.c). */
#include <stdint.h>
#include <sys/user.h>

#include "core.pb-c.h"

/*
 * The registers a restored thread resumes with: the saved ones, with the
 * syscall the thread was in made to restart (rip back over the syscall
 * instruction) as the kernel would have on its way out of the stop. A
 * restart_syscall() cannot survive (its restart block is gone): that
 * syscall returns -EINTR instead.
 */
void arch_rst_regs(const UserRegsEntry *e, struct user_regs_struct *r);

/* The thread pointer registers of @tc for struct rst_thread: fs base, gs base. */
void arch_rst_thread_tls(const ThreadCoreEntry *tc, uint64_t tls[2]);

/* Switch to @stack and jump to @entry with rdi = @args, rsi = 0, rdx = @frame. */
__attribute__((noreturn)) void arch_rst_jump(uint64_t entry, uint64_t stack, uint64_t args,
					     uint64_t frame);

#endif
