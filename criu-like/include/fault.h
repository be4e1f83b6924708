/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FAULT_H
#define CRIU_LIKE_FAULT_H

#include <stdbool.h>

/*
 * Fault injection (Documentation/fault-injection.md). With CRIU_LIKE_FAULT=N
 * in the environment the N-th failure point passed (1-based) fails: the code
 * at that point behaves as if its syscall, image write or parasite command had
 * failed, so the real error path runs. CRIU_LIKE_FAULT=list fails nothing and
 * prints each point passed and, at exit, their number.
 *
 * The points are counted in a page shared by the controller and every task it
 * forks (a restore's tasks are forks of it), so a run has one numbering; call
 * fault_init() before the first fork. Without the variable a point costs a
 * load and a branch.
 */
void fault_init(void);

/* true when this point must fail (it is logged, with @fmt naming the point) */
bool fault_hit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same for a point that fails like a libc call: @err (< 0) with errno set, or 0. */
int fault_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The other kind of fault, for the tests of a killed criu-like: with
 * CRIU_LIKE_FAULT_STEP=N in the environment, criu-like SIGKILLs itself at
 * the N-th call (each call sits between two steps that change a task: the
 * infection, the cure, the restore's stages and its resume). Counted per
 * process: the controller's own steps. Does nothing otherwise.
 */
void fault_kill_point(void);

#endif
