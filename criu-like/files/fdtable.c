// SPDX-License-Identifier: GPL-2.0
/*
 * fd tables shared between processes (clone(CLONE_FILES) without
 * CLONE_THREAD). kcmp(KCMP_FILES) says at dump which process shares its
 * parent's table: fs-PID.img records it (files_shared_with_parent), and its
 * fdinfo-PID.img repeats the table, found to hold the same descriptions.
 *
 * The restore clones such a process with CLONE_FILES, so the processes of
 * one table (a group: the first process, its owner, and the descendants that
 * share it through their parents) are one table again from their birth, and
 * only the owner installs it (rst_files_install()). Numbers of a table are
 * then everyone's: the members take turns, in the order of the tree, from
 * the install to their restorer's last fd (its threads' pidfds), each
 * waiting for the previous one's restorer to say it is done (a word of the
 * shared area, rst_fdt_word()). The service fds stay until the last member,
 * which closes them; the others hand their restorer no log fd, so that none
 * closes a number the tree uses again.
 *
 * Refused by name: a process sharing its table with one that is not its
 * parent (siblings), with its parent outside the tree, and a thread with a
 * table of its own (unshare(CLONE_FILES)).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <linux/kcmp.h>

#include "files-int.h"
#include "log.h"
#include "restore-files.h"
#include "../restore/restore-int.h"
#include "util.h"

int fdt_check_shared(struct kcmp_set *tables, const struct seized_task *t,
		     const struct proc_threads *thr, bool *with_parent)
{
	pid_t other, apart = thread_apart(thr, t, THR_FILES, KCMP_FILES);
	int r;

	*with_parent = false;
	if (apart) {
		pr_err("pid %d: thread %d has an fd table of its own (unshare(CLONE_FILES)): not "
		       "supported\n",
		       t->pid, apart);
		return -EOPNOTSUPP;
	}
	if (t->parent) {
		r = kcmp_pids(t->pid, t->parent->pid, KCMP_FILES);
		if (r < 0) {
			pr_errno(r, "pid %d: kcmp(KCMP_FILES) with its parent %d", t->pid,
				 t->parent->pid);
			return r;
		}
		/* its parent's table is dumped (or is its own parent's): the same again */
		*with_parent = r == 0;
		if (*with_parent)
			return 0;
	} else if (t->ppid > 0 && kcmp_pids(t->pid, t->ppid, KCMP_FILES) == 0) {
		pr_err("pid %d shares its fd table with its parent %d, outside the tree "
		       "(CLONE_FILES without CLONE_THREAD): not supported\n",
		       t->pid, t->ppid);
		return -EOPNOTSUPP;
	}
	r = kcmp_set_add(tables, t->pid, &other);
	if (r) {
		pr_errno(r, "kcmp(KCMP_FILES) of %d", t->pid);
		return r;
	}
	if (other) {
		pr_err("pid %d shares its fd table with pid %d, which is not its parent "
		       "(CLONE_FILES without CLONE_THREAD): not supported\n",
		       t->pid, other);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* ---- restore ------------------------------------------------------------------------------ */

void rst_fdt_order(const int *parent, const bool *shared, unsigned int n, int *owner, int *prev,
		   int *next)
{
	unsigned int i;
	int j;

	for (i = 0; i < n; i++) {
		owner[i] = (int)i;
		prev[i] = next[i] = -1;
		if (shared[i] && parent[i] >= 0 && parent[i] < (int)i)
			owner[i] = owner[parent[i]];
		if (owner[i] == (int)i)
			continue;
		/* the last member so far of the owner's group: the one before this one */
		for (j = (int)i - 1; j >= 0 && owner[j] != owner[i]; j--)
			;
		prev[i] = j;
		next[j] = (int)i;
	}
}

static struct rst_task_files *fdt_of(const struct rst_task *t)
{
	return t->files;
}

bool rst_fdt_shared_with_parent(const struct rst_task *t)
{
	const struct rst_task_files *tf = fdt_of(t);

	return t->parent && tf && tf->fs && tf->fs->files_shared_with_parent;
}

int rst_fdt_plan(struct restore_ctx *ctx)
{
	unsigned int i, n = ctx->nr_tasks;
	_cleanup_free_ int *parent = calloc(n + 1, sizeof(int));
	_cleanup_free_ int *owner = calloc(n + 1, sizeof(int));
	_cleanup_free_ int *prev = calloc(n + 1, sizeof(int));
	_cleanup_free_ int *next = calloc(n + 1, sizeof(int));
	_cleanup_free_ bool *shared = calloc(n + 1, sizeof(bool));

	if (!parent || !owner || !prev || !next || !shared)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct rst_task *t = &ctx->tasks[i];

		parent[i] = t->parent ? (int)(t->parent - ctx->tasks) : -1;
		shared[i] = rst_fdt_shared_with_parent(t);
		if (shared[i] && (rst_task_zombie(t->parent) || parent[i] >= (int)i)) {
			pr_err("pid %u shares the fd table of its parent %u, which is a zombie or "
			       "comes after it in pstree.img\n",
			       t->pe->pid, t->parent->pe->pid);
			return -EINVAL;
		}
	}
	rst_fdt_order(parent, shared, n, owner, prev, next);
	for (i = 0; i < n; i++) {
		struct rst_task_files *tf = fdt_of(&ctx->tasks[i]);

		tf->fdt_prev = prev[i];
		tf->fdt_next = next[i];
		/* the owner installs the table: the others leave it be */
		if (shared[i])
			tf->nr_fds = 0;
		if (next[i] >= 0 || prev[i] >= 0)
			pr_debug("pid %u: fd table of pid %u, after task #%d, before #%d\n",
				 ctx->tasks[i].pe->pid, ctx->tasks[owner[i]].pe->pid, prev[i],
				 next[i]);
	}
	return 0;
}

bool rst_fdt_in_group(const struct rst_task *t)
{
	const struct rst_task_files *tf = fdt_of(t);

	return tf && (tf->fdt_prev >= 0 || tf->fdt_next >= 0);
}

const struct rst_task *rst_fdt_prev(const struct restore_ctx *ctx, const struct rst_task *t)
{
	const struct rst_task_files *tf = fdt_of(t);

	return tf && tf->fdt_prev >= 0 ? &ctx->tasks[tf->fdt_prev] : NULL;
}

bool rst_fdt_last(const struct rst_task *t)
{
	const struct rst_task_files *tf = fdt_of(t);

	return !tf || tf->fdt_next < 0;
}

uint32_t *rst_fdt_word(const struct restore_ctx *ctx, const struct rst_task *t)
{
	return (uint32_t *)&ctx->shared->pids[2 * ctx->nr_tasks + (unsigned int)(t - ctx->tasks)];
}

int rst_fdt_wait_turn(struct restore_ctx *ctx, const struct rst_task *t)
{
	const struct rst_task_files *tf = fdt_of(t);
	uint32_t *w;

	if (!tf || tf->fdt_prev < 0)
		return 0;
	w = rst_fdt_word(ctx, &ctx->tasks[tf->fdt_prev]);
	while (!__atomic_load_n(w, __ATOMIC_ACQUIRE)) {
		if (rst_load(&ctx->shared->stage) == RST_STAGE_ABORT)
			return -EINTR;
		rst_futex_wait(w, 0, 200);
	}
	return 0;
}

unsigned int rst_fdt_kept(const struct restore_ctx *ctx, const struct rst_task *t, int *out,
			  unsigned int max)
{
	const struct rst_task_files *tf = fdt_of(t);
	unsigned int n = 0;
	int i;

	/* the uffds of the members before, which their restorers close after the barrier */
	for (i = tf ? tf->fdt_prev : -1; i >= 0 && n < max; i = fdt_of(&ctx->tasks[i])->fdt_prev) {
		int32_t fd = __atomic_load_n(rst_lazy_slot(ctx, (unsigned int)i), __ATOMIC_ACQUIRE);

		if (fd > 0)
			out[n++] = fd;
	}
	return n;
}
