// SPDX-License-Identifier: GPL-2.0
/*
 * The task tree of a restore, built from pstree.img and checked before
 * anything is created: every refusal here costs nothing, while a mistake
 * found after the first clone3() means killing what was already restored.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOG_PREFIX "restore: "
#include "image.h"
#include "log.h"
#include "par.h"
#include "restore-int.h"
#include "util.h"

struct rst_task *rst_find_task(const struct restore_ctx *ctx, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < ctx->nr_tasks; i++)
		if ((pid_t)ctx->tasks[i].pe->pid == pid)
			return &ctx->tasks[i];
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Every pid and tid once: clone3(set_tid) could not create the second one. */
static int check_unique_ids(PstreeEntry **pes, size_t n)
{
	_cleanup_free_ uint32_t *ids = NULL;
	size_t i, j, nr = 0, total = 0;

	for (i = 0; i < n; i++)
		total += 1 + pes[i]->n_threads;
	ids = malloc(total * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ids[nr++] = pes[i]->pid;
		/* threads[0] is the leader itself (checked by check_task) */
		for (j = 1; j < pes[i]->n_threads; j++)
			ids[nr++] = pes[i]->threads[j];
	}
	qsort(ids, nr, sizeof(*ids), cmp_u32);
	for (i = 0; i < nr; i++) {
		if (ids[i] == 0) {
			pr_err("pstree.img: pid or tid 0\n");
			return -EINVAL;
		}
		if (i && ids[i] == ids[i - 1]) {
			pr_err("pstree.img: pid/tid %u appears twice\n", ids[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_task(const PstreeEntry *pe)
{
	switch (pe->state) {
	case TASK_STATE__TASK_ALIVE:
	case TASK_STATE__TASK_STOPPED:
		if (pe->n_threads == 0 || pe->threads[0] != pe->pid) {
			pr_err("pstree.img: task %u: its first thread is not its own pid\n",
			       pe->pid);
			return -EINVAL;
		}
		return 0;
	case TASK_STATE__TASK_ZOMBIE:
		if (pe->n_threads) {
			pr_err("pstree.img: zombie %u has threads\n", pe->pid);
			return -EINVAL;
		}
		return 0;
	default:
		pr_err("pstree.img: task %u: unknown state %d\n", pe->pid, pe->state);
		return -EINVAL;
	}
}

/* The parent of task @i, which must be listed before it. */
static int find_parent(struct restore_ctx *ctx, PstreeEntry **pes, size_t n, size_t i)
{
	const PstreeEntry *pe = pes[i];
	size_t j;

	if (pe->ppid == pe->pid) {
		pr_err("pstree.img: task %u is its own parent\n", pe->pid);
		return -EINVAL;
	}
	for (j = 0; j < i; j++) {
		if (pes[j]->pid != pe->ppid)
			continue;
		if (rst_task_zombie(&ctx->tasks[j])) {
			pr_err("pstree.img: task %u is a child of zombie %u\n", pe->pid, pe->ppid);
			return -EINVAL;
		}
		ctx->tasks[i].parent = &ctx->tasks[j];
		ctx->tasks[j].nr_children++;
		return 0;
	}
	for (j = i + 1; j < n; j++) {
		if (pes[j]->pid == pe->ppid) {
			pr_err("pstree.img: task %u is listed before its parent %u "
			       "(a cycle, or records out of order)\n",
			       pe->pid, pe->ppid);
			return -EINVAL;
		}
	}
	pr_err("pstree.img: task %u: its parent %u is not in the tree\n", pe->pid, pe->ppid);
	return -EINVAL;
}

static int link_children(struct restore_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ctx->nr_tasks; i++) {
		struct rst_task *t = &ctx->tasks[i];

		if (!t->nr_children)
			continue;
		t->children = calloc(t->nr_children, sizeof(*t->children));
		if (!t->children)
			return -ENOMEM;
		t->nr_children = 0;
	}
	for (i = 1; i < ctx->nr_tasks; i++) {
		struct rst_task *p = ctx->tasks[i].parent;

		p->children[p->nr_children++] = &ctx->tasks[i];
	}
	return 0;
}

int rst_tree_build(struct restore_ctx *ctx, PstreeEntry **pes, size_t n, uint32_t root_pid)
{
	size_t i;
	int err;

	if (n == 0) {
		pr_err("pstree.img holds no task\n");
		return -EINVAL;
	}
	if (pes[0]->pid != root_pid) {
		pr_err("pstree.img starts with task %u, the inventory's root is %u\n", pes[0]->pid,
		       root_pid);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		err = check_task(pes[i]);
		if (err)
			return err;
	}
	err = check_unique_ids(pes, n);
	if (err)
		return err;

	ctx->tasks = calloc(n, sizeof(*ctx->tasks));
	if (!ctx->tasks)
		return -ENOMEM;
	ctx->nr_tasks = (unsigned int)n;
	ctx->nr_threads = 0;
	for (i = 0; i < n; i++) {
		ctx->tasks[i].pe = pes[i];
		ctx->nr_threads += (unsigned int)pes[i]->n_threads;
	}
	for (i = 1; i < n; i++) {
		err = find_parent(ctx, pes, n, i);
		if (err)
			goto fail;
	}
	err = link_children(ctx);
	if (err)
		goto fail;
	return 0;
fail:
	rst_tree_free(ctx);
	return err;
}

void rst_tree_free(struct restore_ctx *ctx)
{
	unsigned int i;

	for (i = 0; ctx->tasks && i < ctx->nr_tasks; i++)
		free(ctx->tasks[i].children);
	free(ctx->tasks);
	ctx->tasks = NULL;
	ctx->nr_tasks = 0;
	ctx->nr_threads = 0;
}

/* ---- sessions and process groups ----------------------------------------------------------- */

/*
 * The order restore-fork.c follows, which these checks mirror: a session
 * leader calls setsid() right after its clone3() (its children that stay in
 * the old session are forked just before), a group leader setpgid(0, 0); a
 * task counts as created only then, and every other task joins its group with
 * setpgid() once all tasks exist. A task gets its session only by
 * inheritance at fork or by setsid(), so a non-leader must be in its parent's
 * session, or in the one its parent left with setsid().
 */

/* The session @t's children see before @t calls setsid(). */
static uint32_t sid_before_setsid(const struct rst_task *t, pid_t cur_sid)
{
	return t->parent ? t->parent->pe->sid : (uint32_t)cur_sid;
}

static int check_sid(const struct rst_task *t, pid_t cur_sid)
{
	const PstreeEntry *pe = t->pe;
	const struct rst_task *p = t->parent;

	if (pe->sid == pe->pid) {
		if (pe->pgid != pe->pid) {
			pr_err("task %u leads session %u but is in process group %u\n", pe->pid,
			       pe->sid, pe->pgid);
			return -EINVAL;
		}
		return 0;
	}
	if (!p) {
		if (pe->sid == (uint32_t)cur_sid)
			return 0;
		pr_err("root task %u is in session %u, whose leader is outside the dumped tree "
		       "(restore it with --shell-job to give it this terminal's session)\n",
		       pe->pid, pe->sid);
		return -EINVAL;
	}
	if (pe->sid == p->pe->sid)
		return 0;
	if (p->pe->sid == p->pe->pid && pe->sid == sid_before_setsid(p, cur_sid))
		return 0;
	pr_err("task %u is in session %u, which neither its parent %u (session %u) "
	       "nor the tree can give it\n",
	       pe->pid, pe->sid, p->pe->pid, p->pe->sid);
	return -EINVAL;
}

static int check_pgid(const struct restore_ctx *ctx, const struct rst_task *t, pid_t cur_sid,
		      pid_t cur_pgid)
{
	const PstreeEntry *pe = t->pe;
	const struct rst_task *l;

	if (pe->pgid == pe->pid)
		return 0;
	if (pe->pgid == (uint32_t)cur_pgid && pe->sid == (uint32_t)cur_sid)
		return 0;
	l = rst_find_task(ctx, (pid_t)pe->pgid);
	if (!l) {
		pr_err("task %u is in process group %u, whose leader is outside the dumped tree\n",
		       pe->pid, pe->pgid);
		return -EINVAL;
	}
	if (l->pe->pgid != l->pe->pid || l->pe->sid != pe->sid) {
		pr_err("task %u is in process group %u, but task %u is in group %u of session "
		       "%u and task %u in session %u\n",
		       pe->pid, pe->pgid, l->pe->pid, l->pe->pgid, l->pe->sid, pe->pid, pe->sid);
		return -EINVAL;
	}
	return 0;
}

/* --shell-job: the root's session and group, when outside the tree, become the controller's. */
static void shell_job_rewrite(struct restore_ctx *ctx, pid_t cur_sid, pid_t cur_pgid)
{
	const PstreeEntry *root = ctx->tasks[0].pe;
	uint32_t old_sid = root->sid, old_pgid = root->pgid;
	bool sid_out = !rst_find_task(ctx, (pid_t)old_sid);
	bool pgid_out = !rst_find_task(ctx, (pid_t)old_pgid);
	unsigned int i;

	for (i = 0; i < ctx->nr_tasks; i++) {
		PstreeEntry *pe = ctx->tasks[i].pe;

		if (sid_out && pe->sid == old_sid)
			pe->sid = (uint32_t)cur_sid;
		if (pgid_out && pe->pgid == old_pgid)
			pe->pgid = (uint32_t)cur_pgid;
	}
}

int rst_tree_check_sessions(struct restore_ctx *ctx, bool shell_job, pid_t cur_sid, pid_t cur_pgid)
{
	unsigned int i;
	int err;

	if (shell_job)
		shell_job_rewrite(ctx, cur_sid, cur_pgid);
	for (i = 0; i < ctx->nr_tasks; i++) {
		const struct rst_task *t = &ctx->tasks[i];

		err = check_sid(t, shell_job ? cur_sid : 0);
		if (!err)
			err = check_pgid(ctx, t, shell_job ? cur_sid : 0, shell_job ? cur_pgid : 0);
		if (err)
			return err;
	}
	return 0;
}

static int read_core_at(void *arg, unsigned int i)
{
	struct rst_task *t = &((struct restore_ctx *)arg)->tasks[i];
	size_t j;
	int err;

	if (rst_task_zombie(t))
		return 0;
	err = img_read_one(((struct restore_ctx *)arg)->dirfd, CR_IMG_CORE, t->pe->pid,
			   (ProtobufCMessage **)&t->core);
	if (err)
		return err;
	if (t->core->pid != t->pe->pid || t->core->n_threads != t->pe->n_threads) {
		pr_err("core-%u.img describes pid %u with %zu threads, pstree.img %zu\n",
		       t->pe->pid, t->core->pid, t->core->n_threads, t->pe->n_threads);
		return -EINVAL;
	}
	for (j = 0; j < t->core->n_threads; j++) {
		if (t->core->threads[j]->tid != t->pe->threads[j]) {
			pr_err("core-%u.img: thread %zu is %u, pstree.img says %u\n", t->pe->pid, j,
			       t->core->threads[j]->tid, t->pe->threads[j]);
			return -EINVAL;
		}
	}
	return 0;
}

int rst_tree_read_cores(struct restore_ctx *ctx)
{
	_cleanup_free_ int *errs = calloc(ctx->nr_tasks + 1, sizeof(*errs));

	if (!errs)
		return -ENOMEM;
	return par_for(ctx->nr_tasks, read_core_at, ctx, errs, NULL);
}
