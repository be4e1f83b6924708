// SPDX-License-Identifier: GPL-2.0
/*
 * A frozen task made ready for its dump: what /proc shows of it read (stat,
 * status, limits, its VMAs from smaps), then the task infected. For a tree,
 * every task is read first and all are infected at once; the smaps of all
 * but the first are then read in the background while the first is dumped
 * (dump_vmas_wait()): a forked child's smaps walk is slow on the pages it
 * shares with its parent (about 10 ms per 256 MiB here).
 */
#define LOG_PREFIX "dump: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <linux/kcmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cr.h"
#include "dump.h"
#include "infect.h"
#include "log.h"
#include "par.h"
#include "smaps-reader.h"
#include "snapshot.h"
#include "stats.h"
#include "util.h"
#include "vmas-ahead.h"

/* /proc/@pid/limits, malloc'ed, before the parasite may raise RLIMIT_NOFILE (core.c). */
static int read_limits(pid_t pid, char **ret)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/limits", pid);
	free(*ret);
	*ret = read_file_at(AT_FDCWD, path, NULL);
	if (!*ret) {
		pr_perror("read %s", path);
		return neg_errno();
	}
	return 0;
}

/*
 * The parasite needs descriptors of the task (its socket, the pipes it is
 * given) below the RLIMIT_NOFILE hard limit (it raises the soft one itself):
 * refused by name when the task's open files fill even that (it lowered the
 * limit under them).
 */
#define PARASITE_FDS_NEEDED 3
static int check_fd_room(pid_t pid, const char *limits)
{
	const char *row = limits ? strstr(limits, "\nMax open files") : NULL;
	_cleanup_closedir_ DIR *d = NULL;
	unsigned long long hard = ~0ULL, free = 0, i;
	char soft[32], hardw[32], path[64];
	bool used[4096] = { false };
	struct dirent *e;

	if (!row || sscanf(row + 26, "%31s %31s", soft, hardw) != 2 || !strcmp(hardw, "unlimited"))
		return 0;
	hard = strtoull(hardw, NULL, 10);
	if (hard >= ARRAY_SIZE(used))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return 0; /* the dump's file pass says what is wrong */
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strtoull(e->d_name, NULL, 10) < ARRAY_SIZE(used))
			used[strtoull(e->d_name, NULL, 10)] = true;
	for (i = 0; i < hard; i++)
		free += !used[i];
	/* its socket, and the two ends of a pipe at once */
	if (free >= PARASITE_FDS_NEEDED)
		return 0;
	pr_err("pid %d: %llu descriptors free under its RLIMIT_NOFILE hard limit %llu, the "
	       "parasite needs %d (raising a hard limit needs CAP_SYS_RESOURCE)\n",
	       pid, free, hard, PARASITE_FDS_NEEDED);
	return -EMFILE;
}

/*
 * --allow-uprobes: the [uprobes] area (the kernel's out-of-line stepping page,
 * made on a task's first uprobe hit) is left out; the kernel makes it again on
 * the next hit after the restore. Without the option mem-policy.c refuses it.
 */
static void drop_uprobes_area(struct dump_task *dt)
{
	struct vma_list *l = &dt->vmas;
	unsigned int i;

	for (i = 0; i < l->nr; i++) {
		struct vma_entry *v = &l->vmas[i];

		if (v->kind != VMA_OTHER || !v->path || strcmp(v->path, "[uprobes]"))
			continue;
		pr_info("pid %d: [uprobes] %lx-%lx left out (--allow-uprobes)\n", dt->t->pid,
			v->start, v->end);
		vma_entry_fini(v);
		memmove(v, v + 1, (l->nr - i - 1) * sizeof(*v));
		l->nr--;
		i--;
	}
}

/*
 * Read what /proc shows of a frozen task, before its infection, but its
 * VMAs (prepare_vmas()); with @core, what its core image needs the leader
 * stopped for.
 */
/* What /proc shows of task @pid (@dt's): no ptrace, a worker of a parallel run may read it. */
static int proc_reads(struct dump_task *dt, pid_t pid)
{
	/* the task's own: the other worker reads its tasks meanwhile (par.h) */
	bool dropped = par_drop();
	int err;

	/* Read before the infection, which blocks every signal while the parasite runs. */
	err = proc_parse_stat(pid, 0, &dt->stat);
	if (!err)
		err = read_limits(pid, &dt->limits);
	if (!err)
		err = check_fd_room(pid, dt->limits);
	if (!err)
		err = proc_parse_status(pid, 0, &dt->status);
	par_take(dropped);
	if (err)
		pr_errno(err, "pid %d: cannot prepare the task for the dump", pid);
	return err;
}

static int prepare_proc_reads(struct dump_ctx *ctx, struct dump_task *dt)
{
	(void)ctx;
	return proc_reads(dt, dt->t->pid);
}

/*
 * dump_early_reads_start(): the tasks' pids copied (a failed dump frees the
 * tree first). Its thread takes the tasks one after the other, and the
 * caller of early_reads_join() the rest beside it.
 */
struct early_reads {
	pthread_t th;
	unsigned int n;
	struct dump_task **dts;
	pid_t *pids;
	atomic_uint next; /* the next task to take */
	atomic_bool stop;
	atomic_int err; /* the first failure */
};

static void *early_reads_run(void *arg)
{
	struct early_reads *e = arg;
	unsigned int i;

	while (!atomic_load(&e->err) && !atomic_load(&e->stop) &&
	       (i = atomic_fetch_add(&e->next, 1)) < e->n) {
		int err = proc_reads(e->dts[i], e->pids[i]), none = 0;

		/* the maps too: prepare_traced() finds the stale areas in them */
		if (!err) {
			err = proc_parse_maps(e->pids[i], false, &e->dts[i]->maps);
			if (err)
				pr_errno(err, "pid %d: cannot read its maps", e->pids[i]);
		}
		if (err)
			atomic_compare_exchange_strong(&e->err, &none, err);
	}
	return NULL;
}

static void early_reads_free(struct early_reads *e)
{
	free(e->dts);
	free(e->pids);
	free(e);
}

void dump_early_reads_start(struct dump_ctx *ctx)
{
	struct early_reads *e = calloc(1, sizeof(*e));
	sigset_t all, old;
	int err;

	if (!e)
		return;
	e->dts = calloc(ctx->nr_tasks + 1, sizeof(*e->dts));
	e->pids = calloc(ctx->nr_tasks + 1, sizeof(*e->pids));
	for (unsigned int i = 0; e->dts && e->pids && i < ctx->nr_tasks; i++)
		if (dump_task_live(&ctx->tasks[i])) {
			e->dts[e->n] = &ctx->tasks[i];
			e->pids[e->n++] = ctx->tasks[i].t->pid;
		}
	atomic_init(&e->next, 0);
	atomic_init(&e->stop, false);
	atomic_init(&e->err, 0);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = e->dts && e->pids && e->n > 1 ? pthread_create(&e->th, NULL, early_reads_run, e) : -1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		early_reads_free(e); /* read by dump_prepare_tasks() as before */
		return;
	}
	ctx->early = e;
}

/* Joined: its first failure (logged), -EAGAIN when there was none started. */
static int early_reads_join(struct dump_ctx *ctx)
{
	struct early_reads *e = TAKE_PTR(ctx->early);
	int err;

	if (!e)
		return -EAGAIN;
	/* what is left is read here too, unless the dump failed */
	early_reads_run(e);
	pthread_join(e->th, NULL);
	err = atomic_load(&e->err);
	early_reads_free(e);
	return err;
}

void dump_early_reads_stop(struct dump_ctx *ctx)
{
	if (ctx->early)
		atomic_store(&ctx->early->stop, true);
	early_reads_join(ctx);
}

/* What needs ptrace, on the tracer thread. */
static int prepare_traced(struct dump_task *dt, bool core)
{
	struct seized_task *t = dt->t;
	pid_t tids[t->nr_threads];
	unsigned int i, removed;
	int err = 0;

	for (i = 0; i < t->nr_threads; i++)
		tids[i] = t->threads[i].tid;
	/* the leader's signal queues: the infection changes none (the parasite takes back its own) */
	if (core)
		err = dump_leader_prefetch(dt);
	/*
	 * Its maps read once, here: the stale areas are looked for in them, the
	 * infection finds the [vdso] in them and the smaps read after it is
	 * compared with them (bg_new()); read again when areas were removed.
	 */
	if (!err && !dt->maps.vmas)
		err = proc_parse_maps(t->pid, false, &dt->maps);
	if (!err)
		err = parasite_remove_stale_areas_in(t->pid, tids, t->nr_threads, &dt->maps,
						     &removed);
	if (!err && removed) {
		vma_list_fini(&dt->maps);
		err = proc_parse_maps(t->pid, false, &dt->maps);
	}
	if (err)
		pr_errno(err, "pid %d: cannot prepare the task for the dump", t->pid);
	return err;
}

static int prepare_traced_all(struct dump_ctx *ctx, struct dump_task **dts, unsigned int n)
{
	int err = 0;

	for (unsigned int i = 0; i < n && !err; i++)
		err = prepare_traced(dts[i], !ctx->pre_dump);
	return err;
}

/*
 * Every task's /proc reads, on worker threads when there are several
 * (dump-par.c), while the tracer thread does what needs ptrace.
 */
static int prepare_read_all(struct dump_ctx *ctx, struct dump_task **dts, unsigned int n)
{
	static const struct par_job job = { .fn = prepare_proc_reads,
					    .tracer = prepare_traced_all };
	uint64_t t0 = stats_now_ns(), t1;
	int err = early_reads_join(ctx);

	/* read since the seize: what needs ptrace is left */
	if (err != -EAGAIN) {
		t1 = stats_now_ns();
		err = err ?: prepare_traced_all(ctx, dts, n);
		pr_debug("%u tasks: the early reads joined in %llu us, the tracer's part %llu us\n",
			 n, (unsigned long long)(t1 - t0) / 1000,
			 (unsigned long long)(stats_now_ns() - t1) / 1000);
		return err;
	}
	err = 0;
	if (n > 1)
		return dump_tasks_par(ctx, dts, n, &job);
	for (unsigned int i = 0; i < n && !err; i++)
		err = prepare_proc_reads(ctx, dts[i]);
	return err ?: prepare_traced_all(ctx, dts, n);
}

/* smaps read before the infection (@err, in @us) into dt->vmas: what is left to do with it. */
static int prepare_smaps_read(const struct cr_options *o, struct dump_task *dt, int err,
			      uint64_t us)
{
	if (err) {
		pr_errno(err, "pid %d: cannot read its smaps", dt->t->pid);
		return err;
	}
	pr_debug("pid %d: smaps read, %u VMAs, %llu us\n", dt->t->pid, dt->vmas.nr,
		 (unsigned long long)us);
	if (o && o->allow_uprobes)
		drop_uprobes_area(dt);
	return 0;
}

/*
 * smaps read after the infection (@err, in @us) into dt->vmas, the
 * parasite's area dropped: the layout must be the one of /proc/PID/maps
 * before the infection (@maps). Not seen otherwise; if it differs (the
 * infection merged two VMAs?), smaps is read again: the task as it is now.
 */
static int infected_smaps_read(const struct cr_options *o, struct dump_task *dt,
			       const struct vma_list *maps, int err, uint64_t us)
{
	pid_t pid = dt->t->pid;
	unsigned long area[2] = { 0, 0 };

	if (err) {
		pr_errno(err, "pid %d: cannot read its smaps", pid);
		return err;
	}
	pr_debug("pid %d: smaps read, %u VMAs, %llu us\n", pid, dt->vmas.nr,
		 (unsigned long long)us);
	if (!vma_layout_same(maps, &dt->vmas)) {
		pr_warn("pid %d: its smaps differ from its maps (%u and %u VMAs): reading smaps "
			"again\n",
			pid, dt->vmas.nr, maps->nr);
		vma_list_fini(&dt->vmas);
		parasite_area(dt->ctl, &area[0], &area[1]);
		err = smaps_read(pid, area, 1, &dt->vmas);
	}
	/* [uprobes] is not in maps as the infection left it: dropped after the check */
	if (!err && o && o->allow_uprobes)
		drop_uprobes_area(dt);
	return err;
}

/*
 * The VMAs of @n tasks prepare_read_all() made ready (@dts), after their stale
 * areas are gone, before our own area appears: smaps itself, read side by
 * side, without --snapshot, as nothing runs beside its read. With
 * --snapshot, smaps, whose read walks every page table entry, is read after
 * the infection (prepare_infected()); their maps are read here into @maps.
 */
static int prepare_vmas(const struct cr_options *o, bool snap, struct dump_task **dts,
			unsigned int n, struct vma_list *maps)
{
	_cleanup_free_ pid_t *pids = calloc(n + 1, sizeof(*pids));
	_cleanup_free_ struct vma_list *vl = calloc(n + 1, sizeof(*vl));
	_cleanup_free_ int *errs = calloc(n + 1, sizeof(*errs));
	_cleanup_free_ uint64_t *us = calloc(n + 1, sizeof(*us));
	unsigned int i, k;
	int err = 0;

	for (i = 0; snap && i < n && !err; i++)
		err = proc_parse_maps(dts[i]->t->pid, false, &maps[i]);
	if (snap)
		return err;
	if (!pids || !vl || !errs || !us)
		return -ENOMEM;
	/* read before the freeze (a migration's rounds) and unchanged: not walked again */
	for (i = k = 0; i < n; i++) {
		pid_t pid = dts[i]->t->pid;

		if (o && o->vmas_ahead && !vmas_ahead_take(o->vmas_ahead, pid, &dts[i]->vmas))
			pr_debug("pid %d: smaps as read before the freeze, unchanged\n", pid);
		else
			pids[k++] = pid;
	}
	smaps_read_many(pids, k, vl, errs, us);
	/* pids[k] past those read is 0 (calloc'ed): the rest were taken */
	for (i = k = 0; i < n; i++) {
		if (dts[i]->t->pid != pids[k]) {
			err = err ?: prepare_smaps_read(o, dts[i], 0, 0);
			continue;
		}
		dts[i]->vmas = vl[k];
		err = err ?: prepare_smaps_read(o, dts[i], errs[k], us[k]);
		k++;
	}
	return err;
}

/*
 * --snapshot, once the task is infected: smaps is read while the write
 * protection armed early runs in background threads
 * (snapshot_task_early_arm()). Not during the infection and the arming:
 * both take the mmap_lock for writing, which would wait for the read's walk
 * of a VMA.
 */
static int prepare_infected(const struct cr_options *o, struct dump_ctx *ctx, struct dump_task *dt,
			    struct vma_list *maps)
{
	unsigned long area[2] = { 0, 0 };
	uint64_t t0;
	int err;

	if (!ctx || !ctx->snap)
		return 0;
	err = snapshot_task_early_arm(ctx, dt, maps);
	if (err)
		return err;
	parasite_area(dt->ctl, &area[0], &area[1]);
	t0 = stats_now_ns();
	/* read before the freeze, unchanged since (armed before: snapshot-prearm.c)? */
	if (snapshot_task_vmas(ctx, dt, maps, area, &dt->vmas))
		err = smaps_read(dt->t->pid, area, 1, &dt->vmas);
	else
		pr_debug("pid %d: smaps as read before the freeze, unchanged\n", dt->t->pid);
	return infected_smaps_read(o, dt, maps, err, (stats_now_ns() - t0) / 1000);
}

/* Read what /proc shows of a frozen task and infect it. @ctx: NULL (no --snapshot). */
static int prepare_task(const struct cr_options *o, struct dump_ctx *ctx, struct dump_task *dt)
{
	struct seized_task *t = dt->t;
	pid_t tids[t->nr_threads];
	struct vma_list maps = { 0 };
	unsigned int i;
	int err;

	for (i = 0; i < t->nr_threads; i++)
		tids[i] = t->threads[i].tid;
	err = prepare_proc_reads(NULL, dt);
	if (!err)
		err = prepare_traced(dt, true);
	if (!err)
		err = prepare_vmas(o, ctx && ctx->snap, &dt, 1, &maps);
	if (!err)
		err = parasite_infect(t->pid, tids, t->nr_threads, &dt->ctl);
	if (!err)
		err = prepare_infected(o, ctx, dt, &maps);
	vma_list_fini(&maps);
	if (err)
		pr_errno(err, "pid %d: cannot prepare the task for the dump", t->pid);
	return err;
}

int dump_task_prepare(const struct cr_options *o, struct dump_task *dt)
{
	return prepare_task(o, NULL, dt);
}

bool dump_task_live(const struct dump_task *dt)
{
	return dt->t->state == TASK_ALIVE || dt->t->state == TASK_STOPPED;
}

/* The tasks whose smaps is read in the background, after their infection. */
struct smaps_bg {
	struct smaps_job *job;
	unsigned int n;
	struct dump_task **dts;
	struct vma_list *maps; /* before the infection */
	struct vma_list *vl; /* smaps, as read */
	pid_t *pids;
	unsigned long *skip; /* the parasite's area of each: start, end */
	int *errs;
	uint64_t *us;
	bool prefetch; /* their pagemaps too, for the comparison with their parents */
	pthread_mutex_t lock; /* in[], and cv: a list is in */
	pthread_cond_t cv;
	bool *in; /* list i read (or failed): dump_vmas_take() may take it */
	bool *taken; /* list i taken by dump_vmas_take(): dump_vmas_wait() skips it */
	atomic_size_t prefetch_left; /* entries the tree's read-ahead pagemaps may still hold */
};

/* 256 MiB of read-ahead pagemap entries for a whole tree (128 GiB of its memory) */
#define PREFETCH_TREE_MAX (32UL << 20)

static void bg_free(struct smaps_bg *bg)
{
	if (!bg)
		return;
	for (unsigned int i = 0; i < bg->n; i++) {
		if (bg->maps)
			vma_list_fini(&bg->maps[i]);
		if (bg->vl)
			vma_list_fini(&bg->vl[i]);
	}
	pthread_mutex_destroy(&bg->lock);
	pthread_cond_destroy(&bg->cv);
	free(bg->in);
	free(bg->taken);
	free(bg->dts);
	free(bg->maps);
	free(bg->vl);
	free(bg->pids);
	free(bg->skip);
	free(bg->errs);
	free(bg->us);
	free(bg);
}

/* For @dts[0..@n): their maps read now, before their infection. */
static struct smaps_bg *bg_new(struct dump_task **dts, unsigned int n)
{
	struct smaps_bg *bg = calloc(1, sizeof(*bg));
	int err = 0;

	if (!bg)
		return NULL;
	pthread_mutex_init(&bg->lock, NULL);
	pthread_cond_init(&bg->cv, NULL);
	bg->n = n;
	bg->in = calloc(n, sizeof(*bg->in));
	bg->taken = calloc(n, sizeof(*bg->taken));
	bg->dts = calloc(n, sizeof(*bg->dts));
	bg->maps = calloc(n, sizeof(*bg->maps));
	bg->vl = calloc(n, sizeof(*bg->vl));
	bg->pids = calloc(n, sizeof(*bg->pids));
	bg->errs = calloc(n, sizeof(*bg->errs));
	bg->us = calloc(n, sizeof(*bg->us));
	bg->skip = calloc(2 * n, sizeof(*bg->skip));
	if (!bg->dts || !bg->maps || !bg->vl || !bg->pids || !bg->errs || !bg->us || !bg->skip ||
	    !bg->in || !bg->taken)
		err = -ENOMEM;
	for (unsigned int i = 0; i < n && !err; i++) {
		bg->dts[i] = dts[i];
		bg->pids[i] = dts[i]->t->pid;
		/* as prepare_traced() read them, or read now */
		if (dts[i]->maps.vmas) {
			bg->maps[i] = dts[i]->maps;
			dts[i]->maps = (struct vma_list){ 0 };
		} else {
			err = proc_parse_maps(bg->pids[i], false, &bg->maps[i]);
		}
	}
	if (err) {
		bg_free(bg);
		errno = -err;
		return NULL;
	}
	return bg;
}

/* Task @i's smaps read: its pagemap read ahead (a failure: read later). */
static void bg_prefetch(struct smaps_bg *bg, unsigned int i)
{
	size_t need = bg->prefetch ? cow_pagemap_need(&bg->vl[i]) : 0;
	size_t left = atomic_load(&bg->prefetch_left);

	if (!need)
		return;
	/* past the tree's budget: read when compared */
	do {
		if (left < need)
			return;
	} while (!atomic_compare_exchange_weak(&bg->prefetch_left, &left, left - need));
	if (cow_pagemap_prefetch(bg->pids[i], &bg->vl[i], &bg->dts[i]->cow_pm))
		cow_pagemap_fini(&bg->dts[i]->cow_pm);
}

/* In a background thread, task @i's smaps read (or failed): its pagemap read ahead, then it is in. */
static void bg_read_one(unsigned int i, void *arg)
{
	struct smaps_bg *bg = arg;

	if (!bg->errs[i])
		bg_prefetch(bg, i);
	pthread_mutex_lock(&bg->lock);
	bg->in[i] = true;
	pthread_cond_broadcast(&bg->cv);
	pthread_mutex_unlock(&bg->lock);
}

/*
 * Once their areas are mapped (@ctls[i]: bg->dts[i]'s control block): their
 * smaps read in the background, the parasites' areas dropped.
 */
static int bg_start(struct smaps_bg *bg, struct parasite_ctl *const *ctls)
{
	for (unsigned int i = 0; i < bg->n; i++)
		parasite_area(ctls[i], &bg->skip[2 * i], &bg->skip[2 * i + 1]);
	bg->job = smaps_read_start(bg->pids, bg->n, bg->skip, bg->vl, bg->errs, bg->us, bg_read_one,
				   bg);
	return bg->job ? 0 : neg_errno();
}

/*
 * parasite_infect_all_hook()'s call once every area is in: the smaps reads
 * start while the parasites are started (the tasks of @bg are those of the
 * requests from 1 on).
 */
static void bg_mapped(void *arg, struct parasite_ctl *const *ctls)
{
	struct smaps_bg *bg = arg;

	if (bg_start(bg, ctls + 1))
		bg->job = NULL; /* started after the infection, or the failure is told then */
}

/* The dump failed: what is still to read is not, what is being read is waited for. */
static void bg_drop(struct smaps_bg *bg)
{
	atomic_store(&bg->prefetch_left, 0);
	smaps_read_cancel(bg->job);
	smaps_read_wait(TAKE_PTR(bg->job));
	bg_free(bg);
}

int dump_vmas_wait(struct dump_ctx *ctx, bool failed)
{
	struct smaps_bg *bg = TAKE_PTR(ctx->smaps_bg);
	int err = 0;

	if (!bg)
		return 0;
	if (failed) {
		bg_drop(bg);
		return 0;
	}
	smaps_read_wait(TAKE_PTR(bg->job));
	for (unsigned int i = 0; i < bg->n; i++) {
		struct dump_task *dt = bg->dts[i];
		int e;

		if (bg->taken[i])
			continue;
		dt->vmas = bg->vl[i];
		bg->vl[i] = (struct vma_list){ 0 };
		e = infected_smaps_read(ctx->opts, dt, &bg->maps[i], bg->errs[i], bg->us[i]);
		err = err ?: e;
	}
	bg_free(bg);
	return err;
}

bool dump_vmas_by_task(const struct dump_ctx *ctx)
{
	return ctx->smaps_bg && smaps_read_threads(ctx->smaps_bg->job);
}

int dump_vmas_take(struct dump_ctx *ctx, struct dump_task *dt)
{
	struct smaps_bg *bg = ctx->smaps_bg;
	unsigned int i = 0;
	bool dropped;

	while (bg && i < bg->n && bg->dts[i] != dt)
		i++;
	if (!bg || i == bg->n)
		return 0;
	/* the other workers of a parallel dump go on meanwhile (par.h) */
	dropped = par_drop();
	pthread_mutex_lock(&bg->lock);
	while (!bg->in[i])
		pthread_cond_wait(&bg->cv, &bg->lock);
	pthread_mutex_unlock(&bg->lock);
	par_take(dropped);
	bg->taken[i] = true;
	dt->vmas = bg->vl[i];
	bg->vl[i] = (struct vma_list){ 0 };
	return infected_smaps_read(ctx->opts, dt, &bg->maps[i], bg->errs[i], bg->us[i]);
}

/*
 * Two processes of the tree with one address space (CLONE_VM without
 * CLONE_THREAD: a vfork child before its exec, posix_spawn): restored as
 * two, each would have its own, and what one writes the other would no
 * longer see. Refused by name, before anything is done to them.
 */
static int refuse_shared_mm(struct dump_task *const *dts, unsigned int n)
{
	struct kcmp_set vm = { .type = KCMP_VM };
	pid_t same = 0;
	int err = 0;

	for (unsigned int i = 0; i < n && !err && !same; i++) {
		err = kcmp_set_add(&vm, dts[i]->t->pid, &same);
		if (err)
			pr_errno(err, "pid %d: cannot compare its address space with the tree's",
				 dts[i]->t->pid);
		else if (same)
			pr_err("pid %d shares its address space with pid %d (CLONE_VM without "
			       "CLONE_THREAD: a vfork child before its exec?): not supported, the "
			       "restore would give each its own\n",
			       dts[i]->t->pid, same);
	}
	free(vm.pids);
	return err ?: same ? -EOPNOTSUPP : 0;
}

/* The start of the [vdso] in @maps (0: none), ARCH_VDSO_LOOKUP when they were not read. */
static long maps_vdso(const struct vma_list *maps)
{
	return maps->vmas ? (long)vma_list_find(maps, "[vdso]") : ARCH_VDSO_LOOKUP;
}

/* The requests of parasite_infect_all() for the live tasks, @tids holding all their threads. */
static unsigned int infect_reqs(struct dump_ctx *ctx, struct infect_req *reqs, unsigned int *idx,
				pid_t *tids)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < ctx->nr_tasks; i++) {
		const struct seized_task *t = ctx->tasks[i].t;

		if (!dump_task_live(&ctx->tasks[i]))
			continue;
		for (j = 0; j < t->nr_threads; j++)
			tids[j] = t->threads[j].tid;
		reqs[n] = (struct infect_req){ t->pid, tids, t->nr_threads, ARCH_VDSO_LOOKUP };
		tids += t->nr_threads;
		idx[n++] = i;
	}
	return n;
}

/*
 * Every live task: what /proc shows of it read first, then all of them
 * infected at once (parasite_infect_all(): the parasites start side by
 * side), then --snapshot's part. With @background and no --snapshot, the
 * smaps of every task but the first is read once they are infected, in the
 * background (ctx->smaps_bg, dump_vmas_wait()). A failure leaves the tasks
 * infected so far to the cure of every task (cure_tasks()).
 */
int dump_prepare_tasks(struct dump_ctx *ctx, bool background)
{
	unsigned int n = ctx->nr_tasks + 1, nr_threads = 1, m, i, later;
	_cleanup_free_ struct infect_req *reqs = calloc(n, sizeof(*reqs));
	_cleanup_free_ struct parasite_ctl **ctls = calloc(n, sizeof(*ctls));
	_cleanup_free_ struct vma_list *maps = calloc(n, sizeof(*maps));
	_cleanup_free_ unsigned int *idx = calloc(n, sizeof(*idx));
	_cleanup_free_ int *errs = calloc(n, sizeof(*errs));
	_cleanup_free_ struct dump_task **dts = calloc(n, sizeof(*dts));
	_cleanup_free_ pid_t *tids = NULL;
	struct smaps_bg *bg = NULL;
	int err = 0;

	for (i = 0; i < ctx->nr_tasks; i++)
		nr_threads += ctx->tasks[i].t->nr_threads;
	tids = calloc(nr_threads, sizeof(*tids));
	if (!reqs || !ctls || !maps || !idx || !errs || !dts || !tids)
		return -ENOMEM;
	m = infect_reqs(ctx, reqs, idx, tids);
	later = background && !ctx->snap && m > 1 ? m - 1 : 0;
	for (i = 0; i < m; i++)
		dts[i] = &ctx->tasks[idx[i]];
	err = refuse_shared_mm(dts, m);
	if (!err)
		err = prepare_read_all(ctx, dts, m);
	for (i = 0; i < m && !err; i++)
		reqs[i].vdso = maps_vdso(&dts[i]->maps);
	if (!err && m)
		err = prepare_vmas(ctx->opts, ctx->snap, dts, m - later, maps);
	if (!err && later) {
		bg = bg_new(dts + 1, later);
		if (!bg)
			err = neg_errno();
		else
			bg->prefetch = !ctx->opts->no_cow_share;
		if (bg)
			atomic_init(&bg->prefetch_left, PREFETCH_TREE_MAX);
	}
	if (!err)
		err = parasite_infect_all_hook(reqs, m, ctls, errs, bg ? bg_mapped : NULL, bg);
	for (i = 0; i < m; i++)
		ctx->tasks[idx[i]].ctl = ctls[i];
	for (i = 0; i < m && err; i++)
		if (errs[i]) {
			pr_errno(err, "pid %d: cannot prepare the task for the dump", reqs[i].pid);
			break;
		}
	for (i = 0; i < m && !err; i++) {
		err = prepare_infected(ctx->opts, ctx, &ctx->tasks[idx[i]], &maps[i]);
		if (err)
			pr_errno(err, "pid %d: cannot prepare the task for the dump", reqs[i].pid);
	}
	if (!err && bg && !bg->job)
		err = bg_start(bg, ctls + 1);
	if (!err && bg)
		ctx->smaps_bg = TAKE_PTR(bg);
	if (bg && bg->job)
		bg_drop(bg); /* the dump failed: what it reads is waited for */
	else
		bg_free(bg);
	for (i = 0; i < m; i++)
		vma_list_fini(&maps[i]);
	return err;
}
