// SPDX-License-Identifier: GPL-2.0
/*
 * criu-like dump -t PID -D DIR: seize the tree, infect every live task, run
 * the per-object steps (dump/core.c, mem/mem.c, files/files.c, task/fs.c), cure, write the tree, the stats and, last, the inventory marked
 * complete; then kill the tree (default) or let it run (-R).
 *
 * Until the inventory says completed, the directory is not a checkpoint: the
 * first thing a dump writes is an inventory with completed = false, so a dump
 * that fails (or is killed) half-way leaves a directory restore refuses. Any
 * failure before the inventory is complete cures every infected task and
 * resumes the tree exactly as it was found.
 */
#define LOG_PREFIX "dump: "

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <asm/sigframe.h>

#include "cgroup.h"
#include "cr.h"
#include "dedup.h"
#include "cow-share.h"
#include "dump.h"
#include "image.h"
#include "infect.h"
#include "log.h"
#include "net-lock.h"
#include "nfq-hold.h"
#include "notify.h"
#include "par.h"
#include "page-server.h"
#include "snapshot.h"
#include "ns.h"
#include "stats.h"
#include "track.h"
#include "util.h"

#include "inventory.pb-c.h"
#include "pstree.pb-c.h"

static bool in_tree(const struct pstree *tree, pid_t pid)
{
	return pstree_find(tree, pid) != NULL;
}

/*
 * Sessions and process groups must be rebuilt at restore with setsid() and
 * setpgid(): every sid and pgid must be a task of the tree, except the root's
 * own session and group with --shell-job (they are inherited at restore).
 */
static int check_sessions(const struct dump_ctx *ctx)
{
	const struct seized_task *root = ctx->tree->root;
	unsigned int i;

	for (i = 0; i < ctx->tree->nr_tasks; i++) {
		const struct seized_task *t = ctx->tree->tasks[i];
		bool sid_ok = in_tree(ctx->tree, t->sid), pgid_ok = in_tree(ctx->tree, t->pgid);

		if (ctx->opts->shell_job) {
			sid_ok = sid_ok || t->sid == root->sid;
			pgid_ok = pgid_ok || t->pgid == root->pgid;
		}
		if (!sid_ok || !pgid_ok) {
			pr_err("pid %d: its %s leader %d is outside the dumped tree: "
			       "dump with --shell-job to inherit it at restore\n",
			       t->pid, sid_ok ? "process group" : "session",
			       sid_ok ? t->pgid : t->sid);
			return -EPERM;
		}
	}
	return 0;
}

static int write_inventory(const struct dump_ctx *ctx, bool completed)
{
	static const DumpedPart parts[] = { DUMPED_PART__PART_TASKS, DUMPED_PART__PART_MEMORY,
					    DUMPED_PART__PART_FILES };
	static const DumpedPart pre_parts[] = { DUMPED_PART__PART_MEMORY,
						DUMPED_PART__PART_PRE_DUMP };
	InventoryEntry ie = INVENTORY_ENTRY__INIT;
	struct ns_inventory ns;
	struct timespec ts;
	struct utsname u;
	unsigned int i, nr_threads = 0;
	int ret;

	uname(&u);
	clock_gettime(CLOCK_REALTIME, &ts);
	for (i = 0; i < ctx->tree->nr_tasks; i++)
		if (ctx->tree->tasks[i]->state != TASK_ZOMBIE)
			nr_threads += ctx->tree->tasks[i]->nr_threads;
	ie.img_version = IMG_FORMAT_VERSION;
	ie.root_pid = (uint32_t)pidns_vpid(ctx->tree->root->pid);
	ie.tool_version = (char *)CRIU_LIKE_VERSION;
	ie.kernel_release = u.release;
	ie.completed = completed;
	ie.n_dumped = completed ? ARRAY_SIZE(parts) : 0;
	ie.dumped = (DumpedPart *)parts;
	if (ctx->pre_dump) {
		ie.n_dumped = completed ? ARRAY_SIZE(pre_parts) : 0;
		ie.dumped = (DumpedPart *)pre_parts;
	}
	if (ctx->opts->prev_images_dir) {
		ie.has_parent_dir = true;
		ie.parent_dir.data = (uint8_t *)ctx->opts->prev_images_dir;
		ie.parent_dir.len = strlen(ctx->opts->prev_images_dir);
	}
	ie.xfeatures_mask = arch_xfeatures();
	ie.has_dump_time_ns = true;
	ie.dump_time_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	ie.has_nr_tasks = ie.has_nr_threads = true;
	ie.nr_tasks = ctx->tree->nr_tasks;
	ie.nr_threads = nr_threads;
	/* the restore of these images removes the lock; later runs leave it alone */
	ie.network_lock = completed ? (char *)netlock_dump_kept_name(ctx) : NULL;
	ret = ns_inventory_fill(&ie, &ctx->ns, &ns);
	/* every image written since dump_prepare(): restore checks each one against it */
	if (!ret && completed)
		ret = img_list_to_inventory(&ctx->images, &ie);
	if (!ret)
		ret = img_write_one(ctx->dirfd, CR_IMG_INVENTORY, 0, &ie.base);
	img_list_inventory_free(&ie);
	return ret;
}

/* The page server has every pagemap and pages image, flushed: the session ends. */
static int ps_end(struct dump_ctx *ctx)
{
	int err = ps_finish(ctx->ps);

	ps_conn_close(ctx->ps);
	ctx->ps = NULL;
	return err;
}

/*
 * The images on disk: syncfs of their file system, unless they are read once
 * right away and removed (a migration's rounds: no_sync).
 */
static int images_sync(const struct dump_ctx *ctx)
{
	return ctx->opts->no_sync ? 0 : img_dir_sync(ctx->dirfd);
}

/* Best effort: the incomplete inventory again, or none (restore refuses both). */
static void unmark_complete(const struct dump_ctx *ctx)
{
	char name[64];

	if (!write_inventory(ctx, false) && !img_dir_sync(ctx->dirfd))
		return;
	if (img_file_name(CR_IMG_INVENTORY, 0, name, sizeof(name)) ||
	    (unlinkat(ctx->dirfd, name, 0) && errno != ENOENT))
		pr_perror("cannot unmark the image directory: remove its inventory.img by hand");
}

static int write_pstree(const struct dump_ctx *ctx)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_PSTREE, 0, IMG_WRITE);
	unsigned int i, j;
	int err = 0;

	if (!img)
		return neg_errno();
	for (i = 0; i < ctx->tree->nr_tasks && !err; i++) {
		const struct seized_task *t = ctx->tree->tasks[i];
		PstreeEntry pe = PSTREE_ENTRY__INIT;
		uint32_t tids[t->nr_threads ? t->nr_threads : 1], nested[32];
		uint32_t ns_tids[(t->nr_threads ? t->nr_threads : 1) * 32];
		uint32_t zuids[4], zgids[4];
		uint64_t zcaps[3];
		struct proc_status zst;
		struct proc_stat zst_stat;

		/* pids as the tree sees them (ns/pid.c); the host's without a pid namespace */
		pe.pid = (uint32_t)pidns_vpid(t->pid);
		pe.ppid = t->parent ? (uint32_t)pidns_vpid(t->parent->pid) : 0;
		pe.pgid = (uint32_t)pidns_vpid(t->pgid);
		pe.sid = (uint32_t)pidns_vpid(t->sid);
		pe.state = t->state == TASK_ZOMBIE    ? TASK_STATE__TASK_ZOMBIE
			   : t->state == TASK_STOPPED ? TASK_STATE__TASK_STOPPED
						      : TASK_STATE__TASK_ALIVE;
		if (t->state == TASK_ZOMBIE) {
			pe.has_exit_code = true;
			pe.exit_code = t->exit_code;
			/* the ids it died with: what its parent's waitid() and /proc show */
			if (!proc_parse_status(t->pid, 0, &zst)) {
				for (j = 0; j < 4; j++) {
					zuids[j] = zst.uid[j];
					zgids[j] = zst.gid[j];
				}
				pe.n_zombie_uids = pe.n_zombie_gids = 4;
				pe.zombie_uids = zuids;
				pe.zombie_gids = zgids;
				zcaps[0] = zst.cap_inh;
				zcaps[1] = zst.cap_prm;
				zcaps[2] = zst.cap_eff;
				pe.n_zombie_caps = 3;
				pe.zombie_caps = zcaps;
				proc_status_fini(&zst);
			}
		} else {
			for (j = 0; j < t->nr_threads; j++)
				tids[j] = (uint32_t)pidns_vpid(t->threads[j].tid);
			pe.n_threads = t->nr_threads;
			pe.threads = tids;
		}
		pe.n_ns_pid = pidns_nested(t->pid, nested, ARRAY_SIZE(nested));
		pe.ns_pid = nested;
		/* each thread's tids in the nested pid namespaces, thread by thread */
		for (j = 0; pe.n_ns_pid && j < pe.n_threads; j++)
			pidns_nested(t->threads[j].tid, ns_tids + j * pe.n_ns_pid,
				     (unsigned int)pe.n_ns_pid);
		pe.n_ns_tids = pe.n_ns_pid * pe.n_threads;
		pe.ns_tids = ns_tids;
		pe.timens_children = ns_time_children_img(&ctx->ns, t->pid);
		pe.has_timens_children = pe.timens_children != 0;
		pe.timens_early = ns_time_early(&ctx->ns, i);
		pe.has_timens_early = pe.timens_early;
		pe.utsns_own = ns_uts_nested_img(&ctx->ns, t->pid);
		pe.has_utsns_own = pe.utsns_own != 0;
		pe.ipcns_own = ns_ipc_nested_img(&ctx->ns, t->pid);
		pe.has_ipcns_own = pe.ipcns_own != 0;
		pe.has_exit_signal = true;
		/* a live task's as its stat read while frozen showed it (prepare.c) */
		if (!ctx->tasks || ctx->tasks[i].t != t || ctx->tasks[i].stat.pid != t->pid)
			err = proc_parse_stat(t->pid, 0, &zst_stat);
		else
			zst_stat = ctx->tasks[i].stat;
		if (err)
			pr_errno(err, "pid %d: no exit_signal in its stat", t->pid);
		pe.exit_signal = (uint32_t)zst_stat.exit_signal;
		if (!err)
			err = img_write_record(img, &pe.base);
	}
	i = img_close(img);
	return err ? err : (int)i;
}

/*
 * The last line of a dump, for the user on stderr (without the log's time
 * stamp) and in the log: how long the application could not run.
 */
static void report_frozen(const char *what, const struct cr_options *o, uint64_t frozen_ns)
{
	fprintf(stderr, "%s of %d complete in %s: the tree was frozen %.1f ms\n", what, o->tree,
		o->images_dir, (double)frozen_ns / 1e6);
	pr_info("%s of %d complete in %s (frozen %llu us)\n", what, o->tree, o->images_dir,
		(unsigned long long)(frozen_ns / 1000));
}

/* stats-dump: once the tree is resumed or killed, as CRIU (image/stats.c). */
static void write_stats(struct dump_ctx *ctx)
{
	const struct dump_stats *s = &ctx->stats;
	DumpStatsEntry ds = DUMP_STATS_ENTRY__INIT;
	StatsEntry se = STATS_ENTRY__INIT;

	ds.freezing_time = stats_us(s->freezing_ns);
	ds.frozen_time = stats_us(s->frozen_ns);
	ds.memdump_time = stats_us(s->memdump_ns);
	ds.memwrite_time = stats_us(s->memwrite_ns);
	ds.pages_scanned = s->pages_scanned;
	ds.pages_written = s->pages_written - s->shpages_written;
	ds.pages_skipped_parent = s->pages_skipped_parent;
	ds.shpages_skipped_parent = s->shpages_skipped_parent;
	ds.has_page_pipes = ds.has_page_pipe_bufs = true;
	ds.page_pipes = s->page_pipes;
	ds.page_pipe_bufs = s->page_pipe_bufs;
	ds.has_shpages_scanned = ds.has_shpages_skipped_parent = ds.has_shpages_written = true;
	ds.shpages_scanned = s->shpages_scanned;
	ds.shpages_written = s->shpages_written;
	se.dump = &ds;
	pr_info("frozen %u us, memory %u us (writing %u us), %llu pages scanned, %llu written, "
		"%llu bytes\n",
		ds.frozen_time, ds.memdump_time, ds.memwrite_time,
		(unsigned long long)ds.pages_scanned, (unsigned long long)s->pages_written,
		(unsigned long long)s->bytes_written);
	stats_write(ctx->opts, ctx->dirfd, &se);
}

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
static int cure_tasks(struct dump_ctx *ctx)
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
static bool cure_deferred(const struct dump_ctx *ctx)
{
	return !ctx->opts->leave_running;
}

/* After the tree was killed infected: its parasites' controls freed, nothing of the tasks touched. */
static void discard_parasites(struct dump_ctx *ctx)
{
	for (unsigned int i = 0; i < ctx->nr_tasks; i++)
		parasite_discard(TAKE_PTR(ctx->tasks[i].ctl));
}

/* Every step, from the infection of the first task to the cure of the last (or its deferral). */
static int dump_tasks(struct dump_ctx *ctx)
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
		err = dump_files_finish(ctx);
	cerr = err || !cure_deferred(ctx) ? cure_tasks(ctx) : 0;
	return err ?: cerr;
}

static void dump_ctx_fini(struct dump_ctx *ctx)
{
	unsigned int i;

	dump_early_reads_stop(ctx);
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
	if (inv)
		protobuf_c_message_free_unpacked(&inv->base, NULL);
	if (err) {
		pr_err("parent image directory %s is not a complete (pre-)dump\n",
		       o->prev_images_dir);
		return err;
	}
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

static int dump_prepare(struct dump_ctx *ctx, const struct cr_options *o)
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
	if (!ctx->pre_dump)
		ns_net_dump_prefetch(o->tree);
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

/*
 * --auto-dedup: the dump is complete; punch what it supersedes out of its
 * parents. A failure fails the command, the images stay restorable.
 */
static int auto_dedup(const struct cr_options *o)
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

static int shadow_tree(struct dump_ctx *ctx, struct pstree *sh, struct seized_task **copies);

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
	if (err)
		return err;
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
static int shadow_tree(struct dump_ctx *ctx, struct pstree *sh, struct seized_task **copies)
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
