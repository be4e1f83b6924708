// SPDX-License-Identifier: GPL-2.0
/*
 * The dump of the tasks of a frozen tree: each one infected, its steps run
 * (dump/core.c, files/files.c, task/fs.c, mem/mem.c), on worker threads where
 * allowed (dump-par.c), then the objects the tasks share, then the cure.
 */
#define LOG_PREFIX "dump: "

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "dump-int.h"
#include "infect.h"
#include "log.h"
#include "par.h"
#include "stats.h"
#include "util.h"

/*
 * The task's memory. Once its plan is made (which pages it saves, which it
 * shares with its parent: dt->plan, dt->parent_runs, dt->shared_runs, final
 * from here on), its children may start on the other workers: they compare
 * their pages with that plan while its pages are written, the largest part
 * of a pre-fork server's dump (memory.md 7).
 */
static int dump_task_memory(struct dump_ctx *ctx, struct dump_task *dt)
{
	uint64_t t0;
	int err;

	if (!dt->ctl) {
		/* A zombie has no memory left: pstree.img records its exit code. */
		pr_debug("%d is a zombie: no mm image\n", dt->t->pid);
		return 0;
	}
	t0 = stats_now_ns();
	err = dump_task_mm_plan(ctx, dt);
	ctx->stats.memdump_ns += stats_now_ns() - t0;
	if (err)
		return err;
	dump_par_release(ctx, dt);
	return dump_task_mm_pages(ctx, dt);
}

static int dump_one_task(struct dump_ctx *ctx, struct dump_task *dt)
{
	bool dropped;
	int err;

	pr_info("pid %d: dumping\n", dt->t->pid);
	/* the task's own state and images: no shared table, other workers may go on (par.h) */
	dropped = par_drop();
	err = dump_task_core(ctx, dt);
	par_take(dropped);
	/* Files before memory: an fd we cannot dump fails before gigabytes are written. */
	if (!err)
		err = dump_task_files(ctx, dt);
	if (!err)
		err = dump_task_fs(ctx, dt);
	if (!err)
		err = dump_task_memory(ctx, dt);
	return err;
}

/*
 * Whether the tasks after the first may be dumped on worker threads: not
 * where the pages go out in one stream (page server, lazy pages) or are
 * copied once the tree runs again (pre-dump, snapshot), nor with the write
 * tracking armed per task: those run one task after the other as before.
 */
static bool par_dump_ok(const struct dump_ctx *ctx)
{
	const struct cr_options *o = ctx->opts;

	return !ctx->pre_dump && !o->snapshot && !o->page_server && !o->lazy_pages &&
	       !o->track_mem && ctx->prev_dirfd < 0;
}

/* On a worker: the task once its smaps is in (the others' are read meanwhile), then dumped. */
static int dump_par_task(struct dump_ctx *ctx, struct dump_task *dt)
{
	int err = dump_vmas_take(ctx, dt);

	return err ?: dump_one_task(ctx, dt);
}

/*
 * Every live task, on worker threads when that is allowed (dump-par.c): the
 * first at once (its smaps is in), each other as soon as its smaps is in and
 * its parent's memory plan is made (dump_task_memory()), so that children
 * are dumped while their parent's pages are written. Else the first, then
 * the others one after the other once every smaps is in.
 */
static int dump_live_tasks(struct dump_ctx *ctx)
{
	static const struct par_job job = { .fn = dump_par_task, .after_parent = true };
	_cleanup_free_ struct dump_task **dts = calloc(ctx->nr_tasks + 1, sizeof(*dts));
	unsigned int i, n = 0;
	int err = 0;

	if (!dts)
		return -ENOMEM;
	for (i = 0; i < ctx->nr_tasks; i++)
		if (dump_task_live(&ctx->tasks[i]))
			dts[n++] = &ctx->tasks[i];
	if (n > 1 && par_dump_ok(ctx) && dump_vmas_by_task(ctx))
		return dump_tasks_par(ctx, dts, n, &job);
	if (n)
		err = dump_one_task(ctx, dts[0]);
	err = err ?: dump_vmas_wait(ctx, false);
	for (i = 1; i < n && !err; i++)
		err = dump_one_task(ctx, dts[i]);
	return err;
}

/*
 * The cure of every infected task, all at once (parasite_cure_all()); the
 * first failure is named. One task after the other when there is no memory
 * for that: no task may stay infected.
 */
int cure_tasks(struct dump_ctx *ctx)
{
	_cleanup_free_ struct parasite_ctl **ctls = calloc(ctx->nr_tasks + 1, sizeof(*ctls));
	_cleanup_free_ int *errs = calloc(ctx->nr_tasks + 1, sizeof(*errs));
	unsigned int i;
	int err = 0;

	if (!ctls || !errs) {
		for (i = 0; i < ctx->nr_tasks; i++)
			if (ctx->tasks[i].ctl)
				err = err ?: parasite_cure(TAKE_PTR(ctx->tasks[i].ctl));
		return err;
	}
	for (i = 0; i < ctx->nr_tasks; i++)
		ctls[i] = TAKE_PTR(ctx->tasks[i].ctl);
	parasite_cure_all(ctls, ctx->nr_tasks, errs);
	for (i = 0; i < ctx->nr_tasks && !err; i++)
		if (errs[i]) {
			pr_errno(errs[i], "pid %d: cure failed", ctx->tasks[i].t->pid);
			err = errs[i];
		}
	return err;
}

/*
 * A dump that kills the tree cures nothing once it succeeds: the tasks die
 * infected (kill_infected()). The cure, a quarter of a small tree's dump
 * after its infection, is left for a failure, which must give the tree back
 * as it was (cr_dump()).
 */
bool cure_deferred(const struct dump_ctx *ctx)
{
	return !ctx->opts->leave_running;
}

/* After the tree was killed infected: its parasites' controls freed, nothing of the tasks touched. */
void discard_parasites(struct dump_ctx *ctx)
{
	for (unsigned int i = 0; i < ctx->nr_tasks; i++)
		parasite_discard(TAKE_PTR(ctx->tasks[i].ctl));
}

/* Every step, from the infection of the first task to the cure of the last (or its deferral). */
int dump_tasks(struct dump_ctx *ctx)
{
	unsigned int i;
	int err, cerr, werr;

	/* what the file kinds can start now, while the tasks are infected */
	err = dump_files_start(ctx);
	if (!err)
		err = dump_prepare_tasks(ctx, true);
	/*
	 * Every parasite's first command sent at once: they wake up and answer
	 * side by side while the tasks before theirs are dumped.
	 */
	for (i = 0; i < ctx->nr_tasks && !err; i++)
		if (ctx->tasks[i].ctl)
			err = parasite_prefetch_task(ctx->tasks[i].ctl);
	/* the first task's smaps is in; the others' come while it is dumped */
	if (!err)
		err = dump_live_tasks(ctx);
	/* the background reads end before any cure (at once if the dump failed) */
	werr = dump_vmas_wait(ctx, err != 0);
	err = err ?: werr;
	if (!err)
		err = dump_shmem(ctx);
	if (!err)
		err = dump_sysv_shm(ctx);
	if (!err)
		pr_debug("every task dumped, its shared memory too\n");
	if (!err)
		err = dump_files_finish(ctx);
	cerr = err || !cure_deferred(ctx) ? cure_tasks(ctx) : 0;
	return err ?: cerr;
}
