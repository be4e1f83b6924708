// SPDX-License-Identifier: GPL-2.0
/*
 * Attributes of core-PID.img that need neither the restorer nor any order
 * among tasks (restore-task-state.c sets the others before the jump, the
 * restorer the per-thread ones):
 *
 * - in each restored task, before it jumps into the restorer: THP-disable;
 * - from the controller, once every thread waits at the barrier: each
 *   thread's CPU affinity (sched_setaffinity works on any tid for root).
 *
 * And two small things of the restore's tasks: the cwd lock, and how a task
 * that died during the restore died.
 */
#define LOG_PREFIX "restore: "

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "restore.h"
#include "restore-files.h"
#include "restore-int.h"
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

/* &ctx->shared, not the word itself: place_shared() (restore-mem.c) may move the area */
static struct rst_shared *const *fs_shared;

void rst_fs_lock_init(struct restore_ctx *ctx)
{
	fs_shared = ctx && rst_fs_any_shared(ctx) ? &ctx->shared : NULL;
}

void rst_fs_lock(void)
{
	uint32_t zero = 0, *w = fs_shared && *fs_shared ? &(*fs_shared)->fs_lock : NULL;

	while (w && !__atomic_compare_exchange_n(w, &zero, 1, false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED)) {
		rst_futex_wait(w, 1, 10);
		zero = 0;
	}
}

void rst_fs_unlock(void)
{
	if (!fs_shared || !*fs_shared)
		return;
	__atomic_store_n(&(*fs_shared)->fs_lock, 0, __ATOMIC_RELEASE);
	rst_futex_wake(&(*fs_shared)->fs_lock);
}

const char *rst_death_how(int proc_fd, pid_t pid, char *buf, size_t size)
{
	char path[32], stat[1024], *state, *last;
	int fd, status;
	ssize_t n;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%d/stat", pid);
	fd = proc_fd >= 0 ? openat(proc_fd, path, O_RDONLY | O_CLOEXEC) : -1;
	n = fd >= 0 ? read(fd, stat, sizeof(stat) - 1) : -1;
	if (fd >= 0)
		close(fd);
	/* a zombie's: its last field is its exit code, as waitpid() reports it (3.5) */
	if (n <= 0)
		return buf;
	stat[n] = '\0';
	state = strrchr(stat, ')');
	last = strrchr(stat, ' ');
	if (!state || strncmp(state, ") Z ", 4) || !last || sscanf(last, "%d", &status) != 1)
		return buf;
	if (WIFSIGNALED(status))
		snprintf(buf, size, ": killed by signal %d (%s)%s", WTERMSIG(status),
			 strsignal(WTERMSIG(status)), WCOREDUMP(status) ? ", core dumped" : "");
	else if (WIFEXITED(status))
		snprintf(buf, size, ": exited with status %d", WEXITSTATUS(status));
	return buf;
}
