// SPDX-License-Identifier: GPL-2.0
/*
 * Private to seize/: the walk state shared by the seize (seize.c and the
 * files of its steps, seize-*.c) and the release (unseize.c).
 */
#ifndef CRIU_LIKE_SEIZE_INT_H
#define CRIU_LIKE_SEIZE_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>

#include "seize.h"

struct seize_ctx {
	struct pstree *t;
	struct timespec deadline;
	bool timed_out;
};

/*
 * Wait until @th of @task is in a ptrace stop (th->stopped), is gone, or
 * @ctx's deadline passes (-ETIMEDOUT). Defined in seize-thread.c.
 */
int wait_thread(struct seize_ctx *ctx, struct seized_task *task, struct seized_thread *th);

/* seize-thread.c: attach to @tid and ask it to stop; 1 when attached, 0 when it is gone. */
int seize_thread(struct seized_task *task, pid_t tid);

/* seize-task.c: @tid added to @task's threads (the leader first), @seized or not. */
int add_thread(struct seized_task *task, pid_t tid, bool seized);
/* seize-task.c: the threads of @task not seen yet seized (and with @wait, waited for). */
int seize_threads(struct seize_ctx *ctx, struct seized_task *task, bool wait, bool *changed);
/* seize-task.c: every seized thread of @task waited for until stopped or gone. */
int wait_task(struct seize_ctx *ctx, struct seized_task *task);
/* seize-task.c: the task's state from its threads' stops once all of them are stopped. */
void settle_task(struct seized_task *task);

/* seize-refuse.c: a thread that refused PTRACE_SEIZE: who traces it named, or 0. */
int check_tracer(pid_t pid, pid_t tid);
/*
 * seize-refuse.c: @root exists, is a process (not pid 1, a kernel thread, a
 * thread, criu-like or its ancestor) and nobody else traces it.
 */
int check_root(pid_t root);

/*
 * Detach the threads of @task that sit in a ptrace stop; in UNSEIZE_KILL
 * mode also the others. Defined in unseize.c.
 */
void release_task(struct seized_task *task, enum unseize_mode mode);

/* Grow @*arr (of @nr elements of @size) when @nr reaches a power of two. */
static inline int grow(void **arr, unsigned int nr, size_t size)
{
	void *n;

	if (nr && (nr & (nr - 1)))
		return 0;
	n = realloc(*arr, (nr ? nr * 2 : 4) * size);
	if (!n)
		return -ENOMEM;
	*arr = n;
	return 0;
}

#endif
