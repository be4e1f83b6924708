// SPDX-License-Identifier: GPL-2.0
/*
 * criu-like pre-dump -t PID -D DIR: the memory of the tree, copied while it
 * runs again, its write tracking armed for the next round (memory.md).
 */
#define LOG_PREFIX "dump: "

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "dump-int.h"
#include "log.h"
#include "ns.h"
#include "stats.h"
#include "track.h"
#include "util.h"

/* track_protect_pending(): the address space of @pid has ended since the freeze. */
static void mark_mm_gone(void *arg, pid_t pid)
{
	struct dump_ctx *ctx = arg;

	for (unsigned int i = 0; i < ctx->nr_tasks; i++)
		if (ctx->tasks[i].t->pid == pid)
			ctx->tasks[i].mm_gone = true;
}

/*
 * pre-dump: freeze; scan every task and arm its write tracking (mem.c,
 * mem/track.c) through the parasite; cure and let the tree run; then copy
 * the pages found through /proc/PID/mem, hand the uffds to a keeper, and
 * mark the directory complete. On any failure the uffds are closed (the
 * tasks' memory is unprotected again) and the tree runs on.
 */
int cr_pre_dump(const struct cr_options *o)
{
	struct dump_ctx ctx = { .opts = o, .dirfd = -1, .prev_dirfd = -1, .pre_dump = true };
	struct pstree shadow = { 0 };
	_cleanup_free_ struct seized_task *copies = NULL;
	uint64_t frozen_start = 0, frozen_end = 0, t0;
	unsigned int i;
	int err, cerr;

	if (o->tree <= 0) {
		pr_err("pre-dump needs -t PID\n");
		return -EINVAL;
	}
	if (o->snapshot) {
		pr_err("--snapshot is an option of dump -R: a pre-dump already copies the pages "
		       "while the tree runs\n");
		return -EINVAL;
	}
	ctx.progress = isatty(STDERR_FILENO);
	ns_net_lock_skip(true);
	err = dump_prepare(&ctx, o);
	ns_net_lock_skip(false);
	if (!err)
		err = dump_prepare_tasks(&ctx, false);
	/* memdump_time: the scans while frozen, and the copy after (as a dump's) */
	t0 = stats_now_ns();
	for (i = 0; i < ctx.nr_tasks && !err; i++)
		if (dump_task_live(&ctx.tasks[i]))
			err = dump_task_mm_plan(&ctx, &ctx.tasks[i]);
	ctx.stats.memdump_ns += stats_now_ns() - t0;
	cerr = cure_tasks(&ctx);
	err = err ?: cerr;
	if (!err)
		err = shadow_tree(&ctx, &shadow, &copies);
	if (ctx.tree) {
		unseize_tree(ctx.tree, UNSEIZE_RESUME);
		ctx.tree = err ? NULL : &shadow;
	}
	frozen_end = stats_now_ns();
	frozen_start = ctx.stats.frozen_start_ns;
	ctx.stats.frozen_ns = frozen_end - frozen_start;
	/*
	 * The tree runs: the pages of the VMAs armed in this round are protected
	 * first (track_arm()), then read while it writes; the next round saves
	 * those written after their protection again.
	 */
	t0 = stats_now_ns();
	if (!err)
		err = track_protect_pending(&ctx.track, mark_mm_gone, &ctx);
	for (i = 0; i < ctx.nr_tasks && !err; i++)
		if (dump_task_live(&ctx.tasks[i]))
			err = dump_private_pages(&ctx, &ctx.tasks[i]);
	ctx.stats.memdump_ns += stats_now_ns() - t0;
	if (!err && ctx.ps)
		err = ps_end(&ctx);
	if (!err)
		err = images_sync(&ctx);
	if (!err)
		err = write_inventory(&ctx, true);
	if (!err)
		err = images_sync(&ctx);
	if (!err)
		err = track_keeper_spawn(ctx.dirfd, o->images_dir, &ctx.track);
	if (err && ctx.tree)
		unmark_complete(&ctx);
	if (!err)
		write_stats(&ctx);
	ctx.tree = NULL;
	free(shadow.tasks);
	dump_ctx_fini(&ctx);
	if (err)
		pr_errno(err,
			 "pre-dump of %d failed; the tree continues untracked, %s is not an image",
			 o->tree, o->images_dir);
	else
		report_frozen("pre-dump", o, frozen_end - frozen_start);
	return err ?: auto_dedup(o);
}
