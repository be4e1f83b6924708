// SPDX-License-Identifier: GPL-2.0
/* Private to seize.c and unseize.c: the walk state shared by the seize and the release. */
#ifndef CRIU_LIKE_SEIZE_INT_H
#define CRIU_LIKE_SEIZE_INT_H

#include <stdbool.h>
#include <time.h>

#include "seize.h"

struct seize_ctx {
	struct pstree *t;
	struct timespec deadline;
	bool timed_out;
};

/*
 * Wait until @th of @task is in a ptrace stop (th->stopped), is gone, or
 * @ctx's deadline passes (-ETIMEDOUT). Defined in seize.c.
 */
int wait_thread(struct seize_ctx *ctx, struct seized_task *task, struct seized_thread *th);

/*
 * Detach the threads of @task that sit in a ptrace stop; in UNSEIZE_KILL
 * mode also the others. Defined in unseize.c.
 */
void release_task(struct seized_task *task, enum unseize_mode mode);

#endif
