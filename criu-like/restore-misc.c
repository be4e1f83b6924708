// SPDX-License-Identifier: GPL-2.0
/*
 * Small per-task and per-thread attributes of core-PID.img that need
 * neither the restorer nor any order among tasks:
 *
 * - in each restored task, before it jumps into the restorer (its creds are
 *   still root's): the audit login uid (only the task itself may write its
 *   /proc/self/loginuid), the child-subreaper flag, oom_score_adj, THP-disable,
 *   and the leader thread's timer slack and parent-death signal;
 * - from the controller, once every thread waits at the barrier: each
 *   thread's CPU affinity (sched_setaffinity works on any tid for root).
 */
#define LOG_PREFIX "restore: "

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "log.h"
#include "restore.h"
#include "util.h"

static int write_self(pid_t pid, const char *name, long v)
{
	char path[64], buf[32];
	int fd, n, err = 0;

	snprintf(path, sizeof(path), "/proc/self/%s", name);
	n = snprintf(buf, sizeof(buf), "%ld", v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, (size_t)n) != n)
		err = neg_errno();
	if (fd >= 0)
		close(fd);
	if (err)
		pr_errno(err, "pid %d: cannot set %s to %ld", pid, name, v);
	return err;
}

/*
 * The leader thread is this very thread: its timer slack and parent-death
 * signal are set here and survive the restorer (the other threads are
 * created there). The root's parent-death signal is not restored: its
 * parent is now criu-like, which exits after a detached restore.
 */
static int leader_prctls(const struct rst_task *t)
{
	const ThreadCoreEntry *th = t->core->n_threads ? t->core->threads[0] : NULL;
	pid_t pid = (pid_t)t->pe->pid;

	if (!th || th->tid != t->pe->pid)
		return 0;
	if (th->has_timer_slack_ns && prctl(PR_SET_TIMERSLACK, th->timer_slack_ns, 0, 0, 0)) {
		pr_perror("pid %d: PR_SET_TIMERSLACK %llu", pid,
			  (unsigned long long)th->timer_slack_ns);
		return neg_errno();
	}
	if (th->has_pdeath_sig && th->pdeath_sig && t->parent &&
	    prctl(PR_SET_PDEATHSIG, th->pdeath_sig, 0, 0, 0)) {
		pr_perror("pid %d: PR_SET_PDEATHSIG %u", pid, th->pdeath_sig);
		return neg_errno();
	}
	return 0;
}

int rst_task_misc(struct restore_ctx *ctx __unused, struct rst_task *t)
{
	const TaskCoreEntry *tc = t->core ? t->core->tc : NULL;
	pid_t pid = (pid_t)t->pe->pid;
	int err = 0;

	if (!tc)
		return 0;
	if (tc->has_loginuid && access("/proc/self/loginuid", F_OK) == 0) {
		/* 4294967295 ((uid_t)-1) is "never set": the same as a fresh task's. */
		char buf[16] = "";
		int fd = open("/proc/self/loginuid", O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf) - 1) < 0)
				buf[0] = '\0';
			close(fd);
		}
		if (strtoul(buf, NULL, 10) != tc->loginuid)
			err = write_self(pid, "loginuid", (long)tc->loginuid);
	}
	if (!err && tc->has_oom_score_adj)
		err = write_self(pid, "oom_score_adj", tc->oom_score_adj);
	if (!err && tc->has_child_subreaper &&
	    prctl(PR_SET_CHILD_SUBREAPER, tc->child_subreaper ? 1 : 0, 0, 0, 0)) {
		err = neg_errno();
		pr_errno(err, "pid %d: PR_SET_CHILD_SUBREAPER", pid);
	}
	if (!err && tc->has_thp_disabled && prctl(PR_SET_THP_DISABLE, tc->thp_disabled, 0, 0, 0)) {
		err = neg_errno();
		pr_errno(err, "pid %d: PR_SET_THP_DISABLE", pid);
	}
	return err ? err : leader_prctls(t);
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
			if (!sched_setaffinity((pid_t)th->tid, sizeof(set), &set))
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
