// SPDX-License-Identifier: GPL-2.0
/*
 * Collect and freeze a process tree (Documentation/seize.md).
 *
 * Every thread is attached with PTRACE_SEIZE (no SIGSTOP is sent, unlike
 * PTRACE_ATTACH, so the task cannot tell) and stopped with PTRACE_INTERRUPT.
 * New threads and children are not caught with PTRACE_O_TRACECLONE/TRACEFORK
 * (those would auto-attach tasks outside our bookkeeping and report extra
 * events); like CRIU, the walk is repeated until a pass finds nothing new: a
 * thread in a ptrace stop cannot create anything, so once every known thread
 * is stopped the next pass is the last.
 */
#define LOG_PREFIX "seize: "

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>

#include "compat.h"
#include "freezer.h"
#include "log.h"
#include "par.h"
#include "proc-parse.h"
#include "seize-int.h"
#include "util.h"

static struct seized_task *find_task(const struct pstree *t, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < t->nr_tasks; i++)
		if (t->tasks[i]->pid == pid)
			return t->tasks[i];
	return NULL;
}

struct seized_task *pstree_find(const struct pstree *t, pid_t pid)
{
	struct seized_task *task = t ? find_task(t, pid) : NULL;

	if (!task)
		errno = ESRCH;
	return task;
}

/*
 * Record @pid (a child of @parent, or the root). A zombie is recorded with its
 * wait status and not seized; a pid that is already gone is not recorded.
 */
static int add_task(struct pstree *t, pid_t pid, struct seized_task *parent)
{
	struct seized_task *task;
	struct proc_stat st;

	if (proc_parse_stat(pid, 0, &st))
		return 0;
	if (grow((void **)&t->tasks, t->nr_tasks, sizeof(*t->tasks)))
		return -ENOMEM;
	task = calloc(1, sizeof(*task));
	if (!task)
		return -ENOMEM;
	task->pid = pid;
	task->ppid = st.ppid;
	task->pgid = st.pgid;
	task->sid = st.sid;
	task->parent = parent;
	task->state = st.state == 'T' ? TASK_STOPPED : TASK_ALIVE;
	/* A leader that exited before its threads also shows Z: only 1 thread means dead. */
	if (st.state == 'Z' && st.num_threads <= 1) {
		task->state = TASK_ZOMBIE;
		task->exit_code = st.exit_code;
		if (add_thread(task, pid, false)) {
			free(task);
			return -ENOMEM;
		}
	}
	t->tasks[t->nr_tasks++] = task;
	pr_debug("pid %d (%s, parent %d) state %c\n", pid, st.comm, st.ppid, st.state);
	return 0;
}

/*
 * Record the children of every thread of @task not seen yet. A thread's
 * children file lists the tasks it forked (it forks none while stopped),
 * those its children made with CLONE_PARENT, and the orphans the kernel gave
 * it: those go to the first live thread of a process (kernel
 * find_alive_thread(): of the process whose thread exited, or of the
 * subreaper). So a thread that had no child when it was read stopped is not
 * read again in the next passes, but for the first seized thread of the task.
 */
/* The children files of many threads (a process of 64 or more to read) read side by side. */
#define KIDS_PAR_MIN 64

struct kids_read {
	pid_t pid;
	const unsigned int *idx; /* in task->threads */
	const struct seized_thread *threads;
	pid_t **kids;
	unsigned int *nr;
	int *err;
};

static int kids_read_one(void *arg, unsigned int i)
{
	struct kids_read *r = arg;

	r->err[i] = proc_parse_children(r->pid, r->threads[r->idx[i]].tid, &r->kids[i], &r->nr[i]);
	return 0;
}

static int collect_children(struct pstree *t, struct seized_task *task, bool *changed)
{
	_cleanup_free_ unsigned int *idx = calloc(task->nr_threads + 1, sizeof(*idx));
	_cleanup_free_ pid_t **kids = calloc(task->nr_threads + 1, sizeof(*kids));
	_cleanup_free_ unsigned int *nr = calloc(task->nr_threads + 1, sizeof(*nr));
	_cleanup_free_ int *errs = calloc(task->nr_threads + 1, sizeof(*errs));
	_cleanup_free_ int *par_errs = calloc(task->nr_threads + 1, sizeof(*par_errs));
	struct kids_read r = { task->pid, idx, task->threads, kids, nr, errs };
	unsigned int i, j, n = 0;
	bool first = true;
	int err = 0;

	if (!idx || !kids || !nr || !errs || !par_errs)
		return -ENOMEM;
	for (i = 0; i < task->nr_threads; i++) {
		const struct seized_thread *th = &task->threads[i];

		if (!th->seized || (th->children_read && !first))
			continue;
		first = false;
		idx[n++] = i;
	}
	if (n >= KIDS_PAR_MIN)
		par_for(n, kids_read_one, &r, par_errs, NULL);
	else
		for (i = 0; i < n; i++)
			kids_read_one(&r, i);
	for (i = 0; i < n && !err; i++) {
		struct seized_thread *th = &task->threads[idx[i]];

		th->children_read = !errs[i] && !nr[i] && th->stopped;
		if (errs[i] == -ENOENT || errs[i] == -ESRCH)
			continue;
		err = errs[i];
		if (err) {
			pr_errno(err, "cannot read the children of %d/%d", task->pid, th->tid);
			break;
		}
		for (j = 0; j < nr[i] && !err; j++) {
			if (find_task(t, kids[i][j]))
				continue;
			err = add_task(t, kids[i][j], task);
			*changed = true;
		}
	}
	for (i = 0; i < n; i++)
		free(kids[i]);
	return err;
}

/* ---- the walk -------------------------------------------------------------------- */

/* One pass over every task, including those added during the pass. */
static int walk_pass(struct seize_ctx *ctx, bool wait, bool *changed)
{
	struct pstree *t = ctx->t;
	unsigned int i;

	for (i = 0; i < t->nr_tasks; i++) {
		struct seized_task *task = t->tasks[i];
		int err;

		if (task->state == TASK_ZOMBIE || task->state == TASK_DEAD)
			continue;
		if (task->parent && task->parent->state == TASK_DEAD) {
			/* Reparented out of the tree when its parent exited: not ours. */
			pr_warn("pid %d left the tree: its parent %d exited during the seize\n",
				task->pid, task->parent->pid);
			release_task(task, UNSEIZE_RESUME);
			task->state = TASK_DEAD;
			continue;
		}
		err = seize_threads(ctx, task, wait, changed);
		if (!err && wait)
			settle_task(task);
		if (!err && task->state != TASK_DEAD)
			err = collect_children(t, task, changed);
		if (err)
			return err;
	}
	return 0;
}

/* With a frozen cgroup: seize and interrupt everything while frozen, thaw, collect the stops. */
static int walk_frozen(struct seize_ctx *ctx)
{
	struct pstree *t = ctx->t;
	bool changed = true;
	unsigned int i;
	int err;

	while (changed) {
		changed = false;
		err = walk_pass(ctx, false, &changed);
		if (err)
			return err;
	}
	/* Frozen (v1) tasks reach the pending PTRACE_INTERRUPT trap only once thawed. */
	err = freezer_thaw(t->freezer, t->freezer_v2);
	if (err)
		return err;
	free(t->freezer);
	t->freezer = NULL;
	for (i = 0; i < t->nr_tasks; i++) {
		err = wait_task(ctx, t->tasks[i]);
		if (err)
			return err;
		settle_task(t->tasks[i]);
	}
	return 0;
}

static int freeze_cgroup(struct seize_ctx *ctx, const char *path)
{
	struct pstree *t = ctx->t;
	bool was_frozen = false;
	int err;

	t->freezer = strdup(path);
	if (!t->freezer)
		return -ENOMEM;
	err = freezer_take(path, &t->freezer_v2, &ctx->deadline, &was_frozen);
	if (!err && was_frozen) {
		t->refreeze = strdup(path);
		if (!t->refreeze)
			err = -ENOMEM;
	}
	if (err) {
		free(t->freezer);
		t->freezer = NULL;
	}
	return err;
}

/* Keep threads[0] (the leader, seized or not) and the seized threads. */
static void drop_dead_threads(struct seized_task *task)
{
	unsigned int i, n = min(task->nr_threads, 1u);

	for (i = 1; i < task->nr_threads; i++)
		if (task->threads[i].seized)
			task->threads[n++] = task->threads[i];
	task->nr_threads = n;
}

/* Drop dead tasks and threads, link parents to children; tasks[] keeps parents first. */
static int finish_tree(struct pstree *t)
{
	unsigned int i, n = 0;

	for (i = 0; i < t->nr_tasks; i++) {
		struct seized_task *task = t->tasks[i];

		if (task->state == TASK_DEAD) {
			free(task->threads);
			free(task);
			continue;
		}
		drop_dead_threads(task);
		t->tasks[n++] = task;
	}
	t->nr_tasks = n;
	for (i = 0; i < n; i++) {
		struct seized_task *task = t->tasks[i], *p = task->parent;

		if (!p)
			continue;
		if (grow((void **)&p->children, p->nr_children, sizeof(*p->children)))
			return -ENOMEM;
		p->children[p->nr_children++] = task;
	}
	return 0;
}

static bool seizable(const struct seized_task *task)
{
	return task->state != TASK_ZOMBIE && task->state != TASK_DEAD;
}

/* The sweep's first step in @task: its leader seized and interrupted, not waited for. */
static int seize_leader(struct seized_task *task)
{
	int ret, err;

	if (!seizable(task) || task->nr_threads)
		return 0;
	ret = seize_thread(task, task->pid);
	if (ret < 0)
		return ret;
	/* 0: gone or exiting; kept as threads[0] unseized, its threads found by the listing */
	err = add_thread(task, task->pid, ret > 0);
	if (err && ret > 0)
		ptrace(PTRACE_DETACH, task->pid, NULL, NULL);
	return err;
}

/*
 * Without a freezer, a first sweep, a generation at a time: every leader of
 * the generation seized and interrupted without waiting for its stop, then
 * their stops taken; then every task's threads listed, the others seized and
 * interrupted, and their stops taken; then the children of all of them read,
 * which make the next generation. The tasks reach their stops side by side,
 * rather than one after the other with a scheduler round trip each. The
 * threads are listed with the leader stopped: a process of one thread then
 * shows it alone, stopped, and is listed no more (threads_final), where a
 * listing before the stop had to be made again by the walk. A child is
 * seized only once its parent is stopped: a parent in vfork() stops only
 * once its child has run on (to its exec or exit), and a running parent
 * could reap a child seized before it. The passes after find what they
 * forked meanwhile.
 */
static int seize_sweep(struct seize_ctx *ctx)
{
	struct pstree *t = ctx->t;
	unsigned int from = 0, to, i;
	bool changed = false;
	int err = 0;

	while (!err && from < t->nr_tasks) {
		to = t->nr_tasks;
		for (i = from; i < to && !err; i++)
			err = seize_leader(t->tasks[i]);
		for (i = from; i < to && !err; i++)
			err = wait_task(ctx, t->tasks[i]);
		for (i = from; i < to && !err; i++)
			if (seizable(t->tasks[i]))
				err = seize_threads(ctx, t->tasks[i], false, &changed);
		for (i = from; i < to && !err; i++) {
			err = wait_task(ctx, t->tasks[i]);
			if (!err)
				settle_task(t->tasks[i]);
		}
		for (i = from; i < to && !err; i++)
			if (seizable(t->tasks[i]))
				err = collect_children(t, t->tasks[i], &changed);
		from = to;
	}
	return err;
}

static int seize_walk(struct seize_ctx *ctx, const struct seize_opts *opts)
{
	struct pstree *t = ctx->t;
	bool changed = true;
	int err;

	if (opts && opts->freeze_cgroup) {
		err = freeze_cgroup(ctx, opts->freeze_cgroup);
		if (!err)
			err = walk_frozen(ctx);
		if (err)
			return err;
	} else {
		err = seize_sweep(ctx);
		if (err)
			return err;
	}
	while (changed) {
		changed = false;
		err = walk_pass(ctx, true, &changed);
		if (err)
			return err;
		if (t->root->state == TASK_DEAD) {
			pr_err("pid %d exited during the seize\n", t->root->pid);
			return -ESRCH;
		}
	}
	return finish_tree(t);
}

int seize_tree(pid_t root, const struct seize_opts *opts, struct pstree **ret)
{
	unsigned int timeout = opts && opts->timeout ? opts->timeout : SEIZE_DEFAULT_TIMEOUT;
	struct seize_ctx ctx = { 0 };
	int err;

	err = check_root(root);
	if (err)
		return err;
	clock_gettime(CLOCK_MONOTONIC, &ctx.deadline);
	ctx.deadline.tv_sec += timeout;
	ctx.t = calloc(1, sizeof(*ctx.t));
	if (!ctx.t)
		return -ENOMEM;
	err = add_task(ctx.t, root, NULL);
	if (!err && !ctx.t->nr_tasks)
		err = -ESRCH;
	if (err) {
		pr_err("pid %d vanished before it could be seized\n", root);
		pstree_free(ctx.t);
		return err;
	}
	ctx.t->root = ctx.t->tasks[0];
	if (ctx.t->root->state == TASK_ZOMBIE) {
		pr_err("pid %d is a zombie: nothing to seize\n", root);
		pstree_free(ctx.t);
		return -ESRCH;
	}
	err = seize_walk(&ctx, opts);
	if (err) {
		if (err == -ETIMEDOUT)
			pr_err("seizing the tree of pid %d took more than %u s: released it\n",
			       root, timeout);
		else if (err == -ENOMEM)
			pr_err("out of memory while seizing the tree of pid %d\n", root);
		unseize_tree(ctx.t, UNSEIZE_RESUME);
		return err;
	}
	pr_info("seized %u tasks of the tree of pid %d\n", ctx.t->nr_tasks, root);
	*ret = ctx.t;
	return 0;
}
