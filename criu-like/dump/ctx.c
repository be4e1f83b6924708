// SPDX-License-Identifier: GPL-2.0
/*
 * A dump's context from start to end: dump_prepare() opens the directory,
 * runs the pre-dump hook, seizes the tree and reads what the whole tree
 * needs (namespaces, cgroups); dump_ctx_fini() releases all of it.
 */
#define LOG_PREFIX "dump: "

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cow-share.h"
#include "dump-int.h"
#include "image.h"
#include "lazy-dump.h"
#include "log.h"
#include "notify.h"
#include "ns.h"
#include "page-server.h"
#include "snapshot.h"
#include "stats.h"
#include "track.h"
#include "util.h"

#include "inventory.pb-c.h"

void dump_ctx_fini(struct dump_ctx *ctx)
{
	unsigned int i;

	dump_early_reads_stop(ctx);
	ns_ipc_dump_done();
	dump_vmas_wait(ctx, true); /* joins what still reads, if anything */
	cure_tasks(ctx);
	for (i = 0; i < ctx->nr_tasks; i++) {
		struct dump_task *dt = &ctx->tasks[i];

		proc_status_fini(&dt->status);
		dump_leader_reads_free(dt->leader_pre);
		dt->leader_pre = NULL;
		vma_list_fini(&dt->vmas);
		vma_list_fini(&dt->maps);
		fd_seen_free(TAKE_PTR(dt->fds_seen));
		cow_pagemap_fini(&dt->cow_pm);
		mem_task_pagemap_close(dt);
		mem_plan_fini(&dt->plan);
		mem_runs_fini(&dt->parent_runs);
		mem_runs_fini(&dt->shared_runs);
		if (dt->cow)
			cow_parent_fini(dt->cow);
		free(dt->cow);
		dt->cow = NULL;
		free(dt->untracked);
		free(dt->limits);
		dt->limits = NULL;
	}
	/* a session not finished is discarded by the server */
	ps_conn_close(ctx->ps);
	ctx->ps = NULL;
	/* Not handed to a keeper: the tracking ends here, the tasks' memory unprotected. */
	track_set_fini(&ctx->track);
	/* a snapshot that failed releases the tree here (its uffds closed) */
	snapshot_fini(ctx->snap);
	ctx->snap = NULL;
	if (ctx->prev_dirfd >= 0)
		close(ctx->prev_dirfd);
	free(ctx->ns.tfc.early);
	ctx->ns.tfc.early = NULL;
	dump_threads_fini(ctx);
	lazy_dump_fini(ctx);
	free(ctx->tasks);
	pidns_dump_fini();
	shmem_set_fini(&ctx->shm);
	free(ctx->fs_owners.pids);
	mapped_file_ids_fini(&ctx->mapped);
	free(ctx->sysv.ids);
	free(ctx->sysv.pids);
	file_table_free(ctx->files);
	pages_spare_drop(ctx);
	vma_fast_end(ctx);
	img_track_stop();
	img_list_fini(&ctx->images);
	if (ctx->dirfd >= 0)
		close(ctx->dirfd);
}

/*
 * --prev-images-dir, relative to -D as in CRIU: a complete pre-dump or dump.
 * The "parent" link names it in the new directory (restore follows it); the
 * uffds its round kept are taken over (mem/track.c).
 */
static int open_parent(struct dump_ctx *ctx, const struct cr_options *o)
{
	InventoryEntry *inv = NULL;
	int err;

	ctx->prev_dirfd = openat(ctx->dirfd, o->prev_images_dir,
				 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ctx->prev_dirfd < 0) {
		err = neg_errno();
		pr_perror("parent image directory %s (relative to %s)", o->prev_images_dir,
			  o->images_dir);
		return err;
	}
	err = img_read_one(ctx->prev_dirfd, CR_IMG_INVENTORY, 0, (ProtobufCMessage **)&inv);
	if (!err && !inv->completed)
		err = -EINVAL;
	if (err)
		pr_err("parent image directory %s is not a complete (pre-)dump\n",
		       o->prev_images_dir);
	/* a lazy dump's pages are not in its images: the new one's PE_PARENT would be holes */
	if (!err)
		err = img_lazy_refuse(ctx->pre_dump ? "pre-dump" : "dump", o->prev_images_dir, inv,
				      "it cannot be a parent (--prev-images-dir)");
	if (inv)
		protobuf_c_message_free_unpacked(&inv->base, NULL);
	if (err)
		return err;
	if (unlinkat(ctx->dirfd, "parent", 0) && errno != ENOENT) {
		pr_perror("cannot replace %s/parent", o->images_dir);
		return neg_errno();
	}
	if (symlinkat(o->prev_images_dir, ctx->dirfd, "parent")) {
		pr_perror("cannot link %s/parent to %s", o->images_dir, o->prev_images_dir);
		return neg_errno();
	}
	return track_keeper_take(ctx->prev_dirfd, o->prev_images_dir, &ctx->track);
}

int dump_prepare(struct dump_ctx *ctx, const struct cr_options *o)
{
	struct seize_opts so = { .timeout = o->timeout, .freeze_cgroup = o->freeze_cgroup };
	unsigned int i;
	int err;

	/* the pagemaps are in the server's directory: dedup runs there */
	if (o->auto_dedup && o->page_server) {
		pr_err("--auto-dedup with --page-server: the pages are in the page server's "
		       "directory; run criu-like dedup -D there\n");
		return -EOPNOTSUPP;
	}
	ctx->dirfd = img_dir_open(o->images_dir, true);
	if (ctx->dirfd < 0)
		return ctx->dirfd;
	/* Fail before touching the tree when the directory cannot take images. */
	if (faccessat(ctx->dirfd, ".", W_OK, AT_EACCESS)) {
		pr_perror("image directory %s is not writable", o->images_dir);
		return neg_errno();
	}
	err = img_track_writes(ctx->dirfd, &ctx->images);
	if (err)
		return err;
	/* CRIU's first hook, before the tree is touched: a failure leaves it alone */
	err = cr_notify(o, CR_ACT_PRE_DUMP, o->tree, ctx->dirfd);
	if (err)
		return err;
	/*
	 * Only what the dump reads of it: the vDSO layout of this kernel. The
	 * whole table (37 probes, forks and unshares among them) took 10-20 ms
	 * of every dump and nothing consulted it; `check` probes it all.
	 */
	memset(&ctx->kd, 0, sizeof(ctx->kd));
	err = kerndat_probe_one(&ctx->kd, KD_VDSO);
	if (!err && o->prev_images_dir)
		err = open_parent(ctx, o);
	/* the page server is reached before the tree is touched */
	if (!err && o->page_server) {
		ctx->ps = ps_connect(o);
		if (!ctx->ps)
			err = errno ? -errno : -ECONNREFUSED;
	}
	if (err)
		return err;
	if (!ctx->pre_dump) {
		ns_net_dump_prefetch(o->tree);
		ns_ipc_dump_prefetch(o->tree);
	}
	/* smaps' walk out of the freeze (a thread), the pages image's room allocated now */
	vma_fast_begin(ctx);
	/* the task iterator for a root of many threads loaded beside them (thread-facts.c) */
	dump_threads_prefetch(ctx);
	pages_spare_make(ctx);
	vma_fast_ready(ctx);
	/* --snapshot: its write protection armed before the freeze, the tree running */
	if (o->snapshot) {
		err = snapshot_start(ctx);
		if (!err)
			err = snapshot_prearm(ctx);
		if (err)
			return err;
	}
	ctx->stats.frozen_start_ns = stats_now_ns();
	err = seize_tree(o->tree, &so, &ctx->tree);
	if (err)
		return err;
	ctx->stats.freezing_ns = stats_now_ns() - ctx->stats.frozen_start_ns;
	ctx->stats.frozen_start_ns += ctx->stats.freezing_ns;
	ctx->nr_tasks = ctx->tree->nr_tasks;
	ctx->tasks = calloc(ctx->nr_tasks, sizeof(*ctx->tasks));
	if (!ctx->tasks)
		return -ENOMEM;
	for (i = 0; i < ctx->nr_tasks; i++)
		ctx->tasks[i].t = ctx->tree->tasks[i];
	if (o->snapshot) {
		err = snapshot_open(ctx);
		if (err)
			return err;
	}
	for (i = 0; i < ctx->nr_tasks; i++)
		if (ctx->tree->tasks[i]->state == TASK_DEAD) {
			pr_err("pid %d exited while the tree was being seized\n",
			       ctx->tree->tasks[i]->pid);
			return -ESRCH;
		}
	dump_early_reads_start(ctx);
	/*
	 * A tree in namespaces of its own that are not dumped would come back in
	 * criu-like's: refused first. The ones that are dumped are read now.
	 */
	dump_threads_read(ctx);
	err = ns_check_tree(ctx->tree, ctx->thr, &ctx->ns);
	/* a container's images name its tasks by their pids inside it */
	if (!err)
		err = pidns_dump_prepare(ctx->tree, ctx->ns.own[NS_PID]);
	/*
	 * A pre-dump saves memory only, as CRIU's: the namespaces (their mounts,
	 * the network's lock) are the dump's. runc sends no external mounts to a
	 * pre-dump, and its tree runs on.
	 */
	if (!err && !ctx->pre_dump)
		err = ns_dump_tree(&ctx->ns, ctx->tree->root->pid, ctx->dirfd);
	/* the cgroups of every task and thread, and the tree's cgroup namespaces */
	if (!err && !ctx->pre_dump)
		err = cgroup_dump(ctx);
	if (!err)
		err = check_sessions(ctx);
	if (!err)
		err = write_inventory(ctx, false);
	return err;
}
