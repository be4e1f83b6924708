// SPDX-License-Identifier: GPL-2.0
/*
 * Release a seized process tree (Documentation/seize.md):
 * detach every thread and put each task back as it was found, or kill it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOG_PREFIX "seize: "
#include "compat.h"
#include "freezer.h"
#include "log.h"
#include "seize.h"
#include "seize-int.h"
#include "util.h"

/*
 * Until a thread of @tids[0..@n) (0: done) may have exited, 1 ms at most: on
 * their pidfds (@pfds[i], -1 where none could be opened), which the kernel
 * makes readable when the thread exits, so that an exit is collected at once
 * rather than on the next tick of a 1 ms poll (a killed leader takes a few
 * ms to tear its memory down, on the path of a dump's kill and the restore
 * that waits for it). Without pidfds, a plain 1 ms sleep as before.
 */
static void wait_exits(const pid_t *tids, const int *pfds, unsigned int n)
{
	struct pollfd p[64];
	unsigned int i, np = 0;

	for (i = 0; i < n && np < ARRAY_SIZE(p); i++)
		if (tids[i] && pfds[i] >= 0)
			p[np++] = (struct pollfd){ .fd = pfds[i], .events = POLLIN };
	if (!np || poll(p, np, 1) < 0)
		usleep(1000);
}

/* A pidfd of thread @tid (PIDFD_THREAD, Linux 6.9), or -1. */
static int thread_pidfd(pid_t tid)
{
	int fd = (int)syscall(__NR_pidfd_open, tid, PIDFD_THREAD);

	return fd >= 0 ? fd : -1;
}

/* Collect the exit of a traced thread that could not be detached (killed): reaped? */
static bool reap_traced(pid_t tid, bool block)
{
	int pfd = block ? thread_pidfd(tid) : -1;
	unsigned int i;
	bool reaped = false;

	for (i = 0; i < (block ? 5000u : 1u) && !reaped; i++) {
		int status;
		pid_t r = waitpid(tid, &status, __WALL | WNOHANG);

		reaped = r != 0 && !(r < 0 && errno == EINTR);
		if (block && !reaped)
			wait_exits(&tid, &pfd, 1);
	}
	if (pfd >= 0)
		close(pfd);
	return reaped;
}

/*
 * The killed threads @tids[0..@n) not reaped yet, collected together (5 s
 * at most). Not one after the other: when the init of a pid namespace dies,
 * its last thread waits in zap_pid_ns_processes() until every other pid of
 * the namespace is freed, so its own exit comes only after the tracer (us)
 * has reaped the others; waiting for it first cost 5 s per such thread.
 */
static void reap_traced_all(pid_t *tids, unsigned int n)
{
	_cleanup_free_ int *pfds = calloc(n ? n : 1, sizeof(*pfds));
	unsigned int left = 0, i, round;

	for (i = 0; i < n; i++) {
		left += tids[i] != 0;
		if (pfds)
			pfds[i] = tids[i] ? thread_pidfd(tids[i]) : -1;
	}
	for (round = 0; left && round < 5000; round++) {
		for (i = 0; i < n; i++)
			if (tids[i] && reap_traced(tids[i], false)) {
				tids[i] = 0;
				left--;
			}
		if (left && pfds)
			wait_exits(tids, pfds, n);
		else if (left)
			usleep(1000);
	}
	for (i = 0; pfds && i < n; i++)
		if (pfds[i] >= 0)
			close(pfds[i]);
}

/* Detach @th; in KILL mode with @late, a thread not reaped yet is left in *@late. */
static void detach_thread_late(struct seized_task *task, struct seized_thread *th,
			       enum unseize_mode mode, pid_t *late)
{
	if (th->pending_sig && mode != UNSEIZE_KILL)
		syscall(SYS_tgkill, task->pid, th->tid, th->pending_sig);
	/*
	 * A thread in a group-stop trap stays stopped after the detach:
	 * __ptrace_unlink() re-arms JOBCTL_STOP_PENDING while the group is
	 * stopped, so job-control stopped tasks are put back as found.
	 */
	/*
	 * KILL mode: SIGKILLed already, so out of its ptrace stop for good (a
	 * PTRACE_DETACH would fail with ESRCH: the kernel freezes no tracee with
	 * a fatal signal pending).
	 */
	if (mode == UNSEIZE_KILL || ptrace(PTRACE_DETACH, th->tid, NULL, NULL)) {
		if (mode != UNSEIZE_KILL && errno != ESRCH)
			pr_perror("cannot detach thread %d of pid %d", th->tid, task->pid);
		/* Not in a ptrace stop any more (killed): collect its exit as its tracer. */
		if (!reap_traced(th->tid, mode == UNSEIZE_KILL && !late) && late &&
		    mode == UNSEIZE_KILL)
			*late = th->tid;
	}
	th->seized = th->stopped = false;
	th->pending_sig = 0;
}

static void detach_thread(struct seized_task *task, struct seized_thread *th,
			  enum unseize_mode mode)
{
	detach_thread_late(task, th, mode, NULL);
}

/*
 * Detach the threads of @task that sit in a ptrace stop (all of them, after a
 * successful seize). In KILL mode also the others: SIGKILL ends any wait.
 * With @late (KILL mode, room for every thread of the task), a killed thread
 * whose exit has not come yet is left at its index there for the caller to
 * collect; without, it is waited for here.
 */
static void release_task_late(struct seized_task *task, enum unseize_mode mode, pid_t *late)
{
	unsigned int i;

	if (task->state != TASK_ALIVE && task->state != TASK_STOPPED)
		return;
	if (mode == UNSEIZE_STOPPED && task->state == TASK_ALIVE)
		/* Queued now, taken as soon as the task runs after the detach. */
		kill(task->pid, SIGSTOP);
	/* Leader last: a killed leader is reported only once its other threads are reaped. */
	for (i = task->nr_threads; i-- > 0;) {
		struct seized_thread *th = &task->threads[i];

		if (th->seized && (th->stopped || mode == UNSEIZE_KILL))
			detach_thread_late(task, th, mode, late ? &late[i] : NULL);
	}
}

void release_task(struct seized_task *task, enum unseize_mode mode)
{
	pid_t *late = mode == UNSEIZE_KILL ? calloc(task->nr_threads + 1, sizeof(*late)) : NULL;

	release_task_late(task, mode, late);
	if (late)
		reap_traced_all(late, task->nr_threads);
	free(late);
}

/*
 * KILL mode, every task SIGKILLed already: all detached, children before
 * parents, then the exits not collected yet waited for together across the
 * tree (a killed task tears its memory down for a while: waiting for each
 * in turn serialized those waits). Without memory for the list, task by task.
 */
static void release_killed(struct pstree *t)
{
	unsigned int i, n = 0, at = 0;
	_cleanup_free_ pid_t *late = NULL;

	for (i = 0; i < t->nr_tasks; i++)
		n += t->tasks[i]->nr_threads;
	late = calloc(n + 1, sizeof(*late));
	for (i = t->nr_tasks; i-- > 0;) {
		struct seized_task *task = t->tasks[i];

		if (!late) {
			release_task(task, UNSEIZE_KILL);
			continue;
		}
		release_task_late(task, UNSEIZE_KILL, late + at);
		at += task->nr_threads;
	}
	if (late)
		reap_traced_all(late, n);
}

/*
 * A thread seized but not stopped yet (the seize failed or timed out while
 * it was, say, in a vfork() wait or a frozen v1 cgroup) cannot be detached:
 * PTRACE_DETACH needs a ptrace stop. Give such threads a short grace period
 * to reach the pending interrupt trap, then detach; the ones that never stop
 * stay attached to this thread until they stop or this process exits (the
 * kernel then detaches them, see Documentation/seize.md).
 */
#define RELEASE_GRACE_SEC 2

/*
 * @grace: wait for each until the grace period ends, and warn about those
 * that never stop; else only the stops already there are taken. Children
 * first: a parent in vfork() stops only once its child, which may sit in a
 * stop of its own, has run on.
 */
static void release_pass(struct pstree *t, enum unseize_mode mode, bool grace)
{
	struct seize_ctx ctx = { .t = t };
	unsigned int i, j;

	clock_gettime(CLOCK_MONOTONIC, &ctx.deadline);
	ctx.deadline.tv_sec += grace ? RELEASE_GRACE_SEC : 0;
	for (i = t->nr_tasks; i-- > 0;) {
		struct seized_task *task = t->tasks[i];

		for (j = 0; j < task->nr_threads; j++) {
			struct seized_thread *th = &task->threads[j];

			if (!th->seized)
				continue;
			ctx.timed_out = false;
			if (!wait_thread(&ctx, task, th) && th->stopped) {
				detach_thread(task, th, mode);
				continue;
			}
			if (th->seized && grace)
				pr_warn("thread %d of pid %d never stopped: it stays traced until "
					"it stops or this process exits\n",
					th->tid, task->pid);
		}
	}
}

static void release_late(struct pstree *t, enum unseize_mode mode)
{
	/* the stops there already first (a seize that swept the tree before waiting) */
	release_pass(t, mode, false);
	release_pass(t, mode, true);
}

void pstree_free(struct pstree *t)
{
	unsigned int i;

	if (!t)
		return;
	for (i = 0; i < t->nr_tasks; i++) {
		free(t->tasks[i]->threads);
		free(t->tasks[i]->children);
		free(t->tasks[i]);
	}
	free(t->tasks);
	free(t->freezer);
	free(t->refreeze);
	free(t);
}

void unseize_kill_send(struct pstree *t)
{
	unsigned int i;

	for (i = 0; i < t->nr_tasks; i++)
		if (t->tasks[i]->state == TASK_ALIVE || t->tasks[i]->state == TASK_STOPPED)
			kill(t->tasks[i]->pid, SIGKILL);
	t->killed = true;
}

void unseize_tree(struct pstree *t, enum unseize_mode mode)
{
	bool refreeze = t && t->refreeze && mode != UNSEIZE_KILL;
	unsigned int i;

	if (!t)
		return;
	/*
	 * A cgroup found frozen is frozen again before the tasks are detached, so
	 * none runs in between (as CRIU does); a killed tree is left thawed.
	 */
	if (refreeze)
		freezer_request(t->refreeze, t->freezer_v2);
	/* SIGKILL every task first, so none runs between its detach and its death. */
	if (mode == UNSEIZE_KILL && !t->killed)
		unseize_kill_send(t);
	/*
	 * Every stopped thread first: a thread may wait for another (vfork). When
	 * killing, children before parents: the init of a pid namespace finishes
	 * dying only once every other task of it is reaped, here by us, its tracer.
	 */
	if (mode == UNSEIZE_KILL)
		release_killed(t);
	else
		for (i = 0; i < t->nr_tasks; i++)
			release_task(t->tasks[i], mode);
	release_late(t, mode);
	/* Thaw last: a thawed task still in a ptrace stop would not run anyway. */
	if (t->freezer && !refreeze)
		freezer_thaw(t->freezer, t->freezer_v2);
	if (refreeze) {
		struct timespec deadline;

		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += SEIZE_DEFAULT_TIMEOUT;
		if (!freezer_freeze(t->refreeze, t->freezer_v2, &deadline))
			pr_info("cgroup %s frozen again, as it was found\n", t->refreeze);
	}
	pstree_free(t);
}
