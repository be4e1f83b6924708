// SPDX-License-Identifier: GPL-2.0
/*
 * criu-like dump -t PID -D DIR: seize the tree (ctx.c), infect every live
 * task and run the per-object steps (tasks.c: dump/core.c, mem/mem.c,
 * files/files.c, task/fs.c), cure, write the tree (pstree.c), the stats
 * (stats-dump.c) and, last, the inventory marked complete (inventory.c);
 * then kill the tree (default) or let it run (-R).
 *
 * Until the inventory says completed, the directory is not a checkpoint: the
 * first thing a dump writes is an inventory with completed = false, so a dump
 * that fails (or is killed) half-way leaves a directory restore refuses. Any
 * failure before the inventory is complete cures every infected task and
 * resumes the tree exactly as it was found.
 */
#define LOG_PREFIX "dump: "

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "dedup.h"
#include "dump-int.h"
#include "lazy-dump.h"
#include "log.h"
#include "net-lock.h"
#include "nfq-hold.h"
#include "notify.h"
#include "ns.h"
#include "snapshot.h"
#include "stats.h"
#include "track.h"
#include "util.h"

/*
 * --auto-dedup: the dump is complete; punch what it supersedes out of its
 * parents. A failure fails the command, the images stay restorable.
 */
int auto_dedup(const struct cr_options *o)
{
	int err;

	if (!o->auto_dedup || !o->prev_images_dir)
		return 0;
	err = dedup_dir(o->images_dir);
	if (err)
		pr_err("%s is complete, but --auto-dedup of its parents failed\n", o->images_dir);
	return err;
}

/*
 * --snapshot is a -R dump whose private memory is copied after the tree runs
 * again (mem/snapshot.c). What it cannot be combined with, and why.
 */
static int check_snapshot_opts(const struct cr_options *o)
{
	const char *why = NULL;

	if (!o->snapshot)
		return 0;
	if (!o->leave_running)
		why = "--snapshot needs --leave-running (-R): the tree must run while its memory "
		      "is copied";
	else if (o->page_server)
		why = "--snapshot with --page-server: the pages are saved out of order (a page "
		      "written by the tree first), which the page server's stream does not carry";
	else if (o->track_mem)
		why = "--snapshot with --track-mem: a VMA takes one userfaultfd, and the "
		      "snapshot's synchronous one is closed when the copy ends";
	if (!why)
		return 0;
	pr_err("%s\n", why);
	return -EINVAL;
}

/*
 * --snapshot: every task is cured, its private memory write-protected; the
 * tree runs again (its frozen time ends here) and its pages are copied.
 */
static int snapshot_resume(struct dump_ctx *ctx, struct pstree *sh, struct seized_task **copies)
{
	struct exit_hold hold = { 0 };
	int err = shadow_tree(ctx, sh, copies);

	if (err)
		return err;
	dump_files_fini(ctx, true);
	/* a task that exits while its pages are copied is held at its exit (memory.md) */
	if (exit_hold_take(ctx->tree, &hold))
		pr_warn("the tasks are not held at their exit: no memory for the list\n");
	unseize_tree(ctx->tree, UNSEIZE_RESUME);
	ctx->tree = sh;
	ctx->resumed = true;
	ctx->stats.frozen_ns = stats_now_ns() - ctx->stats.frozen_start_ns;
	netlock_dump_fini(ctx, true);
	pr_info("the tree runs again after %llu us frozen; copying its memory\n",
		(unsigned long long)(ctx->stats.frozen_ns / 1000));
	err = snapshot_copy_holding(ctx, &hold);
	exit_hold_release(&hold);
	return err;
}

/*
 * Everything on disk before the inventory says so (and before a killed tree
 * dies), then the complete inventory, then the post-dump hook. A failure
 * leaves the directory marked incomplete.
 */
static int complete_images(struct dump_ctx *ctx)
{
	const struct cr_options *o = ctx->opts;
	int err = images_sync(ctx);

	if (!err && ctx->ps)
		err = ps_end(ctx);
	/*
	 * The tree will be killed: its connections stay locked until the restore,
	 * under a name that says so, recorded in the inventory written next.
	 */
	if (!err && !o->leave_running)
		err = netlock_dump_keep(ctx);
	if (err)
		return err;
	err = write_inventory(ctx, true);
	if (!err)
		err = images_sync(ctx);
	/*
	 * The images are complete and the tree still frozen (unless completed
	 * late: then no hook waits): the last word before it is killed (a client
	 * that went away, a script that failed) makes it go on, and the
	 * directory no checkpoint.
	 */
	if (!err)
		err = cr_notify(o, CR_ACT_POST_DUMP, o->tree, ctx->dirfd);
	/* --lazy-pages: frozen until the destination has every page (lazy-dump.c) */
	if (!err && o->lazy_pages)
		err = lazy_dump_serve(ctx);
	/* a failed hook, close or sync of the complete inventory: say so on disk */
	if (err)
		unmark_complete(ctx);
	return err;
}

/*
 * Can the images be completed after the tree runs again? With -R when no
 * post-dump hook waits for them frozen (a script, an RPC client, a
 * migration), no write tracking is handed to a keeper for the next round
 * (it needs a complete directory), and the memory was copied frozen.
 */
static bool complete_late(const struct dump_ctx *ctx)
{
	const struct cr_options *o = ctx->opts;

	return o->leave_running && !o->notifier && !o->action_script && !o->track_mem &&
	       !ctx->resumed;
}

int cr_dump(const struct cr_options *o)
{
	struct dump_ctx ctx = { .opts = o, .dirfd = -1, .prev_dirfd = -1 };
	struct pstree shadow = { 0 };
	_cleanup_free_ struct seized_task *copies = NULL;
	bool late;
	int err;

	err = ns_set_options(o);
	if (err)
		return err;
	if (o->tree <= 0) {
		pr_err("dump needs -t PID\n");
		return -EINVAL;
	}
	err = check_snapshot_opts(o);
	if (!err && o->lazy_pages)
		err = lazy_dump_check_opts(o);
	if (err)
		return err;
	if (o->lazy_pages)
		ctx.lazy_id = lazy_dump_new_id();
	ctx.progress = isatty(STDERR_FILENO);
	netlock_cleanup_stale(o);
	/* before the freeze: rules of a killed packet holder would drop for good */
	if (!o->no_packet_hold && o->tcp_established)
		nfq_hold_cleanup();
	/* the lock's and the holder's start out of the frozen time */
	err = netlock_dump_ahead(&ctx);
	if (!err)
		err = dump_prepare(&ctx, o);
	if (!err)
		err = dump_tasks(&ctx);
	/* the network namespace's sysctls, read beside the tasks' dump */
	if (!err)
		err = ns_net_dump_finish(true);
	if (!err)
		err = write_pstree(&ctx);
	if (!err && ctx.snap)
		err = snapshot_resume(&ctx, &shadow, &copies);
	/*
	 * A -R dump that nobody waits on while frozen (no post-dump hook, no
	 * write tracking handed over) completes its images after the tree runs:
	 * the syncs are not part of its frozen time.
	 */
	late = !err && complete_late(&ctx) && !shadow_tree(&ctx, &shadow, &copies);
	if (!err && !late)
		err = complete_images(&ctx);
	ctx.failed = err != 0;
	/* a failure after a deferred cure: the tree runs on as it was, cured first */
	if (err && cure_deferred(&ctx))
		cure_tasks(&ctx);
	if (!ctx.resumed)
		dump_files_fini(&ctx, err || o->leave_running);
	/* --track-mem -R: the next dump --prev-images-dir saves what is written from here on */
	if (!err && o->leave_running && o->track_mem)
		track_keeper_spawn(ctx.dirfd, o->images_dir, &ctx.track);
	if (ctx.tree && !ctx.resumed) {
		/* the parasites let go while the killed tasks tear their memory down */
		if (!err && !o->leave_running) {
			unseize_kill_send(ctx.tree);
			discard_parasites(&ctx);
		}
		unseize_tree(ctx.tree, err || o->leave_running ? UNSEIZE_RESUME : UNSEIZE_KILL);
		/* the inventory of a late completion counts the tasks copied before */
		ctx.tree = late ? &shadow : NULL;
		ctx.stats.frozen_ns = stats_now_ns() - ctx.stats.frozen_start_ns;
	}
	/* the tree runs on (-R or a failure): its connections flow again */
	if (!ctx.resumed)
		netlock_dump_fini(&ctx, err || o->leave_running);
	if (late) {
		err = complete_images(&ctx);
		ctx.failed = err != 0;
	}
	if (!err)
		write_stats(&ctx);
	if (!err && o->snapshot)
		pr_msg("snapshot of %d: frozen %llu us (and %llu us before, to arm it), memory "
		       "copied while it ran in %llu ms\n",
		       o->tree, (unsigned long long)(ctx.stats.frozen_ns / 1000),
		       (unsigned long long)(ctx.stats.prearm_frozen_ns / 1000),
		       (unsigned long long)(ctx.stats.memwrite_ns / 1000000));
	ctx.tree = NULL;
	free(shadow.tasks);
	dump_ctx_fini(&ctx);
	/*
	 * A killed container's network goes with it before the dump returns:
	 * after dump_ctx_fini(), whose drained sockets hold its namespace too.
	 */
	ns_net_dump_done(!err && !o->leave_running);
	if (err)
		pr_errno(err, "dump of %d failed; the tree continues, %s is not a checkpoint",
			 o->tree, o->images_dir);
	else if (!o->snapshot)
		report_frozen("dump", o, ctx.stats.frozen_ns);
	return err ?: auto_dedup(o);
}

/*
 * The tree runs again while a pre-dump copies its pages: unseize_tree() frees
 * the tree, so the few fields still needed (pids, states, thread counts) are
 * copied first into @sh, which then stands in for ctx->tree.
 */
int shadow_tree(struct dump_ctx *ctx, struct pstree *sh, struct seized_task **copies)
{
	unsigned int i;

	*copies = calloc(ctx->nr_tasks + 1, sizeof(**copies));
	sh->tasks = calloc(ctx->nr_tasks + 1, sizeof(*sh->tasks));
	if (!*copies || !sh->tasks)
		return -ENOMEM;
	for (i = 0; i < ctx->nr_tasks; i++) {
		(*copies)[i] = *ctx->tree->tasks[i];
		(*copies)[i].threads = NULL;
		(*copies)[i].children = NULL;
		(*copies)[i].parent = NULL;
		sh->tasks[i] = &(*copies)[i];
		if (ctx->tree->tasks[i] == ctx->tree->root)
			sh->root = sh->tasks[i];
		ctx->tasks[i].t = sh->tasks[i];
	}
	sh->nr_tasks = ctx->nr_tasks;
	return 0;
}
