// SPDX-License-Identifier: GPL-2.0
/*
 * Attributes of core-PID.img that need neither the restorer nor any order
 * among tasks (restore-task-state.c sets the others before the jump, the
 * restorer the per-thread ones):
 *
 * - in each restored task, before it jumps into the restorer: THP-disable;
 * - from the controller, once every thread waits at the barrier: each
 *   thread's CPU affinity (sched_setaffinity works on any tid for root).
 */
#define LOG_PREFIX "restore: "

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>

#include "log.h"
#include "restore.h"
#include "util.h"

/* THP-disable is a flag of the mm: set here, it survives the restorer's remapping. */
int rst_task_misc(struct restore_ctx *ctx __unused, struct rst_task *t)
{
	const TaskCoreEntry *tc = t->core ? t->core->tc : NULL;

	if (tc && tc->has_thp_disabled && prctl(PR_SET_THP_DISABLE, tc->thp_disabled, 0, 0, 0)) {
		pr_perror("pid %u: PR_SET_THP_DISABLE", t->pe->pid);
		return neg_errno();
	}
	return 0;
}

int rst_threads_affinity(struct restore_ctx *ctx)
{
	unsigned int i;
	size_t j;

	for (i = 0; i < ctx->nr_tasks; i++) {
		const CoreEntry *ce = ctx->tasks[i].core;

		for (j = 0; ce && j < ce->n_threads; j++) {
			const ThreadCoreEntry *th = ce->threads[j];
			cpu_set_t set;

			if (!th->n_cpu_mask)
				continue; /* an image from before the field: leave the inherited mask */
			CPU_ZERO(&set);
			memcpy(&set, th->cpu_mask,
			       min(sizeof(set), th->n_cpu_mask * sizeof(th->cpu_mask[0])));
			if (!sched_setaffinity(rst_host_tid(ctx, &ctx->tasks[i], (pid_t)th->tid),
					       sizeof(set), &set))
				continue;
			if (errno != EINVAL) {
				int err = neg_errno();

				pr_errno(err, "thread %u: cannot set its CPU affinity", th->tid);
				return err;
			}
			/* None of its CPUs exists here (another machine): keep running anywhere. */
			pr_warn("thread %u: none of its CPUs is online here, affinity not "
				"restored\n",
				th->tid);
		}
	}
	return 0;
}
