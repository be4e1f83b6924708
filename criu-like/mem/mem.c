// SPDX-License-Identifier: GPL-2.0
/*
 * The pages of a dump (Documentation/memory.md): the memory plan of each
 * task (the scan, split against a parent image and against the parent
 * task's own pages), pagemap-PID.img and its pages image for the private
 * pages, and once per dump the shared anonymous objects
 * (pagemap-shmem-SHMID.img). mm-PID.img (the VMAs) is mm-img.c's. Everything
 * is read: nothing in the task changes.
 */
#define LOG_PREFIX "mem: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cow-share.h"
#include "hugetlb-shm.h"
#include "dump.h"
#include "image.h"
#include "lazy-dump.h"
#include "log.h"
#include "par.h"
#include "mem-int.h"
#include "ns.h"
#include "mem-xfer.h"
#include "page-server.h"
#include "snapshot.h"
#include "track.h"
#include "util.h"

#include "pagemap.pb-c.h"

/*
 * vmsplice cannot read a page of a VMA without PROT_READ (PROT_NONE data, a
 * guard page that was written), and adding PROT_READ for the drain would
 * change the task. Those pages are read through /proc/PID/mem instead
 * (FOLL_FORCE reads them). The runs are cut where readability changes, so
 * each piece goes one way or the other; *@noread says which (NULL: every
 * run is readable, and @ret is left empty: use the plan's runs).
 */
static bool vma_noread(const struct vma_list *vmas, const struct mem_plan *plan, unsigned int i)
{
	return (plan->policy[i] == MEM_SAVE_ANON || plan->policy[i] == MEM_SAVE_COW) &&
	       !(vmas->vmas[i].prot & PROT_READ);
}

static int split_noread(const struct vma_list *vmas, const struct mem_plan *plan,
			struct mem_runs *ret, bool **noread)
{
	unsigned int i, v = 0, n = 0;
	bool any = false;

	*noread = NULL;
	for (i = 0; i < vmas->nr && !any; i++)
		any = vma_noread(vmas, plan, i);
	if (!any)
		return 0;
	/* Each cut adds one run at most per VMA. */
	ret->cap = plan->runs.nr + vmas->nr;
	ret->runs = calloc(ret->cap, sizeof(*ret->runs));
	*noread = calloc(ret->cap, sizeof(**noread));
	if (!ret->runs || !*noread)
		return -ENOMEM;
	for (i = 0; i < plan->runs.nr; i++) {
		const struct mem_run *r = &plan->runs.runs[i];
		unsigned long start = r->start, end = r->start + r->nr_pages * PAGE_SIZE;

		while (start < end) {
			unsigned long stop = end;

			while (v < vmas->nr && vmas->vmas[v].end <= start)
				v++;
			if (v < vmas->nr && vmas->vmas[v].start <= start)
				stop = min(end, vmas->vmas[v].end);
			if (n == ret->cap)
				return -E2BIG;
			ret->runs[n] = (struct mem_run){ start, (stop - start) / PAGE_SIZE,
							 r->policy };
			(*noread)[n] = v < vmas->nr && vmas->vmas[v].start <= start &&
				       vma_noread(vmas, plan, v);
			/* Merge with the previous piece when it is the same kind and touches. */
			if (n && (*noread)[n - 1] == (*noread)[n] &&
			    ret->runs[n - 1].start + ret->runs[n - 1].nr_pages * PAGE_SIZE ==
				    start &&
			    ret->runs[n - 1].policy == r->policy)
				ret->runs[n - 1].nr_pages += ret->runs[n].nr_pages;
			else
				n++;
			start = stop;
		}
	}
	ret->nr = n;
	return 0;
}

/*
 * One entry, after the one before (*@prev_end): the restore refuses a pagemap
 * whose entries go back or overlap, so the dump refuses to write one.
 */
static int write_entry(struct cr_img *img, pid_t pid, unsigned long *prev_end, unsigned long vaddr,
		       unsigned long nr_pages, uint32_t flags, const uint32_t *crc)
{
	PagemapEntry pe = PAGEMAP_ENTRY__INIT;

	if (vaddr < *prev_end) {
		pr_err("pid %d: pagemap entry %lx +%lu pages (flags %#x) starts below the end of "
		       "the one before (%lx): the memory plan is out of order, not dumped\n",
		       pid, vaddr, nr_pages, flags, *prev_end);
		return -EINVAL;
	}
	*prev_end = vaddr + nr_pages * PAGE_SIZE;
	pe.vaddr = vaddr;
	pe.nr_pages = (uint32_t)nr_pages;
	pe.flags = flags;
	pe.has_crc32c = crc != NULL;
	pe.crc32c = crc ? *crc : 0;
	return img_write_record(img, &pe.base);
}

/* The next run of @a or @b by address (they are disjoint), and its flag; NULL at the end. */
static const struct mem_run *next_ref(const struct mem_runs *a, unsigned int *i,
				      const struct mem_runs *b, unsigned int *j, uint32_t *flag)
{
	const struct mem_run *x = a && *i < a->nr ? &a->runs[*i] : NULL;
	const struct mem_run *y = b && *j < b->nr ? &b->runs[*j] : NULL;

	if (x && (!y || x->start < y->start)) {
		*flag = PAGEMAP_FLAG__PE_PARENT;
		return &a->runs[(*i)++];
	}
	*flag = PAGEMAP_FLAG__PE_PARENT_SHARED;
	return y ? &b->runs[(*j)++] : NULL;
}

/*
 * pagemap-@id.img (or pagemap-shmem-@id.img): the head, then one entry per
 * run, by address: the runs of @runs (data in the pages image, in order),
 * those of @parent (unchanged since the parent image: PE_PARENT, no data)
 * and those of @shared (the parent task's pages: PE_PARENT_SHARED, no data;
 * @shared_pid names that task). @no_crc (or NULL): the runs whose data is
 * a hole, left in the task by a lazy dump (lazy-dump.c): no crc32c.
 */
static int write_pagemap(struct dump_ctx *ctx, enum cr_img_kind kind, uint32_t id, pid_t pid,
			 uint32_t pages_id, const struct mem_runs *runs, const uint32_t *crcs,
			 const bool *no_crc, bool runs_in_pages, const struct mem_runs *parent,
			 const struct mem_runs *shared, pid_t shared_pid)
{
	PagemapHead h = PAGEMAP_HEAD__INIT;
	struct cr_img *img = img_open(ctx->dirfd, kind, id, IMG_WRITE);
	const struct mem_run *ref;
	unsigned int i, j = 0, k = 0;
	unsigned long prev_end = 0;
	uint32_t flag = 0;
	char name[64] = "pagemap";
	bool held;
	int err, err2;

	if (!img)
		return -errno;
	/* CRIU's pages_skipped_parent, shpages_skipped_parent: kept in a parent image */
	held = par_hold();
	for (i = 0; parent && i < parent->nr; i++) {
		if (kind == CR_IMG_SHMEM_PAGEMAP)
			ctx->stats.shpages_skipped_parent += parent->runs[i].nr_pages;
		else
			ctx->stats.pages_skipped_parent += parent->runs[i].nr_pages;
	}
	par_unhold(held);
	h.pages_id = pages_id;
	h.has_shared_pid = shared && shared->nr;
	h.shared_pid = h.has_shared_pid ? (uint32_t)shared_pid : 0;
	err = img_write_record(img, &h.base);
	ref = next_ref(parent, &j, shared, &k, &flag);
	for (i = 0; !err && i < runs->nr; i++) {
		unsigned long vaddr = runs_in_pages ? runs->runs[i].start * PAGE_SIZE
						    : runs->runs[i].start;

		for (; !err && ref && ref->start < vaddr;
		     ref = next_ref(parent, &j, shared, &k, &flag))
			err = write_entry(img, pid, &prev_end, ref->start, ref->nr_pages, flag,
					  NULL);
		if (!err)
			err = write_entry(img, pid, &prev_end, vaddr, runs->runs[i].nr_pages,
					  PAGEMAP_FLAG__PE_PRESENT,
					  no_crc && no_crc[i] ? NULL : &crcs[i]);
	}
	for (; !err && ref; ref = next_ref(parent, &j, shared, &k, &flag))
		err = write_entry(img, pid, &prev_end, ref->start, ref->nr_pages, flag, NULL);
	err2 = img_close(img);
	img_file_name(kind, id, name, sizeof(name));
	if (err || err2)
		pr_err("pid %d: cannot write %s: %s\n", pid, name, strerror(-(err ? err : err2)));
	/* --page-server: the pagemap goes there too, listed in the inventory from here */
	if (!err && !err2 && ctx->ps) {
		err = ps_send_image(ctx->ps, ctx->dirfd, name);
		if (err)
			pr_err("pid %d: cannot send %s to the page server\n", pid, name);
		unlinkat(ctx->dirfd, name, 0);
	}
	return err ? err : err2;
}

/*
 * PagemapEntry.nr_pages is 32 bits: a longer run (16 TiB) is refused; so
 * are runs out of address order, before any page is sent. @unit is a page's
 * size in the runs' units: PAGE_SIZE for addresses, 1 for shmem page offsets.
 */
static int runs_check(pid_t pid, const struct mem_runs *r, unsigned long unit, uint64_t *ret_pages)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < r->nr; i++) {
		const struct mem_run *m = &r->runs[i], *prev = i ? m - 1 : NULL;

		if (prev && m->start < prev->start + prev->nr_pages * unit) {
			pr_err("pid %d: run %lx +%lu pages starts below the end of the one before "
			       "(%lx +%lu): the memory plan is out of order, not dumped\n",
			       pid, m->start, m->nr_pages, prev->start, prev->nr_pages);
			return -EINVAL;
		}
		if (m->nr_pages > UINT32_MAX) {
			pr_err("pid %d: run of %lu pages at %lx: too long for a pagemap entry\n",
			       pid, m->nr_pages, m->start);
			return -E2BIG;
		}
		n += m->nr_pages;
	}
	*ret_pages = n;
	return 0;
}

/* Runs [i, j) of @runs all go the same way: vmspliced, or read from /proc/PID/mem. */
static int xfer_runs(struct page_xfer *x, struct dump_task *dt, const struct mem_runs *runs,
		     const bool *noread, uint32_t *crcs)
{
	unsigned int i = 0, j;
	int err = 0;

	if (!dt->ctl) /* pre-dump: the task runs again, its pages are read through /proc */
		return page_xfer_mem(x, dt->t->pid, runs, crcs);
	if (!noread)
		return page_xfer_task(x, dt->ctl, runs, crcs);
	while (!err && i < runs->nr) {
		struct mem_runs sub = { .runs = &runs->runs[i] };

		for (j = i; j < runs->nr && noread[j] == noread[i]; j++)
			;
		sub.nr = sub.cap = j - i;
		err = noread[i] ? page_xfer_mem(x, dt->t->pid, &sub, crcs + i)
				: page_xfer_task(x, dt->ctl, &sub, crcs + i);
		i = j;
	}
	return err;
}

static int dump_private_runs(struct dump_ctx *ctx, struct dump_task *dt,
			     const struct mem_runs *runs, const bool *noread, uint32_t pages_id)
{
	pid_t pid = dt->t->pid;
	_cleanup_free_ uint32_t *crcs = NULL;
	struct page_xfer x;
	uint64_t pages, t0;
	bool held;
	int err;

	err = runs_check(pid, runs, PAGE_SIZE, &pages);
	if (err)
		return err;
	crcs = calloc(runs->nr + 1, sizeof(*crcs));
	if (!crcs)
		return -ENOMEM;
	t0 = mem_now_ns();
	err = page_xfer_open(&x, ctx, pid, pages_id, runs, crcs, pages * PAGE_SIZE);
	if (!err)
		err = xfer_runs(&x, dt, runs, noread, crcs);
	err = page_xfer_close(&x, err);
	held = par_hold();
	ctx->stats.memwrite_ns += mem_now_ns() - t0;
	if (!err) {
		ctx->stats.pages_written += pages;
		ctx->stats.bytes_written += pages * PAGE_SIZE;
	}
	par_unhold(held);
	if (!err) {
		err = write_pagemap(ctx, CR_IMG_PAGEMAP, (uint32_t)pidns_vpid(pid), pid, pages_id,
				    runs, crcs, NULL, false, &dt->parent_runs, &dt->shared_runs,
				    dt->shared_pid);
	}
	return err;
}

int dump_pagemap(struct dump_ctx *ctx, struct dump_task *dt, uint32_t pages_id,
		 const struct mem_runs *runs, const uint32_t *crcs)
{
	pid_t pid = dt->t->pid;
	uint64_t pages;
	int err = runs_check(pid, runs, PAGE_SIZE, &pages);

	if (err)
		return err;
	ctx->stats.pages_written += pages;
	ctx->stats.bytes_written += pages * PAGE_SIZE;
	return write_pagemap(ctx, CR_IMG_PAGEMAP, (uint32_t)pidns_vpid(pid), pid, pages_id, runs,
			     crcs, NULL, false, &dt->parent_runs, &dt->shared_runs, dt->shared_pid);
}

int dump_pagemap_lazy(struct dump_ctx *ctx, struct dump_task *dt, uint32_t pages_id,
		      const struct mem_runs *runs, const uint32_t *crcs, const bool *lazy)
{
	pid_t pid = dt->t->pid;
	uint64_t pages;
	int err = runs_check(pid, runs, PAGE_SIZE, &pages);

	return err
		       ?: write_pagemap(ctx, CR_IMG_PAGEMAP, (uint32_t)pidns_vpid(pid), pid,
					pages_id, runs, crcs, lazy, false, &dt->parent_runs,
					&dt->shared_runs, dt->shared_pid);
}

int dump_private_pages(struct dump_ctx *ctx, struct dump_task *dt)
{
	struct mem_runs split = { 0 };
	const struct mem_runs *runs = &dt->plan.runs;
	_cleanup_free_ bool *noread = NULL;
	uint32_t pages_id = ctx->next_pages_id++;
	bool dropped;
	int err, fd;

	/*
	 * A pre-dump copies while the tree runs: a task whose address space
	 * has ended since the freeze (it exited or exec'd) gets an empty
	 * pagemap. It is not tracked any more (its uffd answered ESRCH, or it
	 * is gone), so no later round points into this one for it.
	 */
	if (ctx->pre_dump && !dt->mm_gone) {
		fd = proc_mem_open_live(dt->t->pid);
		dt->mm_gone = fd == -ESRCH;
		if (fd >= 0)
			close(fd);
	}
	if (ctx->pre_dump && dt->mm_gone) {
		pr_info("pid %d: gone since the freeze: its pages are not saved\n", dt->t->pid);
		mem_runs_fini(&dt->plan.runs);
		mem_runs_fini(&dt->parent_runs);
	}
	err = split_noread(&dt->vmas, &dt->plan, &split, &noread);
	if (err) {
		mem_runs_fini(&split);
		return err;
	}
	if (noread)
		runs = &split;
	/* the task's own pages: other workers of a parallel dump go on (counters held, par.h) */
	dropped = par_drop();
	err = dump_private_runs(ctx, dt, runs, noread, pages_id);
	par_take(dropped);
	mem_runs_fini(&split);
	return err;
}

/*
 * A final dump on a tracked chain that keeps no tracking after it: its
 * private anonymous pages are found from the write bits alone
 * (mem_scan_since()), not by a walk of every present page.
 */
static bool since_parent(const struct dump_ctx *ctx)
{
	return ctx->prev_dirfd >= 0 && !ctx->pre_dump && !ctx->snap && !ctx->opts->track_mem &&
	       mem_scan_since_works();
}

/*
 * A round of a pre-dump chain (a parent image is given): keep in the plan
 * only the pages written since the parent's round, or in VMAs that were not
 * tracked (saved whole); the other pages present go to dt->parent_runs.
 * With @since, the VMAs of mem_vma_since_ok() are not in the plan yet:
 * mem_scan_since() adds them to both.
 */
static int split_by_parent(struct dump_task *dt, bool since)
{
	pid_t pid = dt->t->pid;
	struct mem_runs written = { 0 }, data = { 0 }, parent = { 0 };
	struct mem_runs sdata = { 0 }, sparent = { 0 };
	uint64_t t0 = mem_now_ns();
	int err;

	dt->untracked = calloc(dt->vmas.nr + 1, sizeof(*dt->untracked));
	if (!dt->untracked)
		return -ENOMEM;
	err = mem_scan_tracked(pid, &dt->vmas, dt->plan.policy, since, &written, dt->untracked);
	pr_debug("pid %d: %u runs written since the parent's round, %llu us\n", pid, written.nr,
		 (unsigned long long)(mem_now_ns() - t0) / 1000);
	if (!err)
		err = mem_runs_split(&dt->plan.runs, &written, &data, &parent);
	mem_runs_fini(&written);
	if (!err && since)
		err = mem_scan_since(pid, dt->pagemap, &dt->vmas, dt->plan.policy, &sdata, &sparent,
				     dt->untracked, &dt->plan.stats);
	if (!err && since) {
		const struct mem_runs *d[2] = { &data, &sdata }, *p[2] = { &parent, &sparent };

		mem_runs_fini(&dt->plan.runs);
		mem_runs_fini(&dt->parent_runs);
		err = cow_runs_union(d, 2, &dt->plan.runs);
		if (!err)
			err = cow_runs_union(p, 2, &dt->parent_runs);
	} else if (!err) {
		mem_runs_fini(&dt->plan.runs);
		dt->plan.runs = data;
		dt->parent_runs = parent;
		data = (struct mem_runs){ 0 };
		parent = (struct mem_runs){ 0 };
	}
	mem_runs_fini(&data);
	mem_runs_fini(&parent);
	mem_runs_fini(&sdata);
	mem_runs_fini(&sparent);
	return err;
}

int mem_task_pagemap(struct dump_task *dt)
{
	char path[64];

	if (dt->pagemap_open)
		return dt->pagemap;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", dt->t->pid);
	dt->pagemap = open(path, O_RDONLY | O_CLOEXEC);
	if (dt->pagemap < 0) {
		pr_perror("pid %d: open %s", dt->t->pid, path);
		return neg_errno();
	}
	dt->pagemap_open = true;
	return dt->pagemap;
}

void mem_task_pagemap_close(struct dump_task *dt)
{
	if (dt->pagemap_open)
		close(dt->pagemap);
	dt->pagemap_open = false;
}

/* The dumped task of @dt's parent, when it has memory in this dump. */
static struct dump_task *parent_task(struct dump_ctx *ctx, const struct dump_task *dt)
{
	for (unsigned int i = 0; dt->t->parent && i < ctx->nr_tasks; i++)
		if (ctx->tasks[i].t == dt->t->parent)
			return ctx->tasks[i].ctl ? &ctx->tasks[i] : NULL;
	return NULL;
}

/*
 * The parent's pagemap over the pages its image holds (its data, its
 * PE_PARENT and its own shared pages, final: a child starts once its
 * parent's plan is made, dump_task_memory() in dump/tasks.c), read once for all
 * its children.
 */
static int load_parent(struct dump_task *pdt)
{
	const struct mem_runs *theirs[3] = { &pdt->plan.runs, &pdt->parent_runs,
					     &pdt->shared_runs };
	struct mem_runs saved = { 0 };
	int err;

	if (pdt->cow)
		return 0;
	pdt->cow = calloc(1, sizeof(*pdt->cow));
	if (!pdt->cow)
		return -ENOMEM;
	err = cow_runs_union(theirs, 3, &saved);
	if (!err)
		err = cow_parent_load(pdt->t->pid, &saved, pdt->cow);
	mem_runs_fini(&saved);
	if (err) {
		cow_parent_fini(pdt->cow);
		free(pdt->cow);
		pdt->cow = NULL;
	}
	return err;
}

/*
 * Move out of the plan (and out of dt->parent_runs) the pages that are the
 * parent's own physical page at the same address and that the parent's
 * image holds (its plan is made before the child starts: as data,
 * PE_PARENT or its own PE_PARENT_SHARED); they go to dt->shared_runs
 * (PE_PARENT_SHARED). Not for
 * a pre-dump or a --snapshot: their pages are copied once the tree runs
 * again, when the parent may have written the page the child kept.
 */
static int split_cow_shared(struct dump_ctx *ctx, struct dump_task *dt)
{
	struct dump_task *pdt = parent_task(ctx, dt);
	const struct mem_runs *mine[2] = { &dt->plan.runs, &dt->parent_runs };
	struct mem_runs all = { 0 }, same = { 0 }, shared = { 0 };
	struct mem_runs own = { 0 }, in = { 0 }, pown = { 0 }, pin = { 0 };
	pid_t pid = dt->t->pid;
	uint64_t t0 = mem_now_ns();
	int err;

	/* nor for a lazy dump: its pages stay in the tasks, read from each one's own memory */
	if (ctx->pre_dump || ctx->snap || ctx->opts->no_cow_share || ctx->opts->lazy_pages ||
	    !pdt) {
		cow_pagemap_fini(&dt->cow_pm); /* read ahead for nothing */
		return 0;
	}
	err = cow_runs_union(mine, 2, &all);
	if (!err && all.nr)
		err = load_parent(pdt);
	if (!err && all.nr) {
		/* the parent's pagemap, loaded above, is only read: other workers may go on */
		bool dropped = par_drop();

		int fd = mem_task_pagemap(dt);

		err = fd < 0 ? fd
			     : cow_scan_same_cached(pid, fd, pdt->cow, &dt->cow_pm, &all, &same);
		par_take(dropped);
	}
	cow_pagemap_fini(&dt->cow_pm);
	if (!err && same.nr)
		err = cow_shared_runs(&same, &pdt->cow->saved, &shared);
	if (!err && shared.nr)
		err = mem_runs_split(&dt->plan.runs, &shared, &in, &own);
	if (!err && shared.nr)
		err = mem_runs_split(&dt->parent_runs, &shared, &pin, &pown);
	mem_runs_fini(&all);
	mem_runs_fini(&same);
	mem_runs_fini(&in);
	mem_runs_fini(&pin);
	if (err || !shared.nr) {
		mem_runs_fini(&shared);
		mem_runs_fini(&own);
		mem_runs_fini(&pown);
		if (err)
			pr_err("pid %d: cannot compare its pages with its parent %d's\n", pid,
			       pdt->t->pid);
		return err;
	}
	pr_debug("pid %d: %u runs shared with its parent %d, %llu us\n", pid, shared.nr,
		 pdt->t->pid, (unsigned long long)(mem_now_ns() - t0) / 1000);
	mem_runs_fini(&dt->plan.runs);
	mem_runs_fini(&dt->parent_runs);
	dt->plan.runs = own;
	dt->parent_runs = pown;
	dt->shared_runs = shared;
	dt->shared_pid = pidns_vpid(pdt->t->pid);
	return 0;
}

int dump_task_mm_plan(struct dump_ctx *ctx, struct dump_task *dt)
{
	pid_t pid = dt->t->pid;
	/* its own pagemap: other workers of a parallel dump go on (shmem is added held, par.h) */
	bool dropped = par_drop();
	bool since = since_parent(ctx);
	int err = mem_task_pagemap(dt);

	/* armed before the snapshot's freeze: what lost its protection since, in the same walk */
	if (err >= 0)
		err = mem_scan_task(pid, dt->pagemap, &dt->vmas,
				    (snapshot_task_prearmed(ctx, dt) ? MEM_SCAN_UNPROTECTED : 0) |
					    (since ? MEM_SCAN_NO_SINCE : 0),
				    &ctx->shm, &dt->plan);
	par_take(dropped);
	if (err) {
		pr_err("pid %d: cannot find the pages to save\n", pid);
		return err;
	}
	err = sysv_shm_dump_task(ctx, pid, &dt->vmas, &dt->plan);
	if (err)
		return err;
	if (ctx->prev_dirfd >= 0)
		err = split_by_parent(dt, since);
	ctx->stats.pages_scanned += dt->plan.stats.pages_scanned;
	if (!err)
		err = split_cow_shared(ctx, dt);
	/* Arm the tracking of what is not tracked yet, for the next round. */
	if (!err && (ctx->opts->track_mem || ctx->pre_dump))
		err = track_arm(dt, ctx->prev_dirfd >= 0 ? dt->untracked : NULL, &ctx->track,
				ctx->pre_dump);
	/* a pre-dump writes no mm image: its pagemap is not held while the tree runs */
	if (ctx->pre_dump)
		mem_task_pagemap_close(dt);
	return err;
}

int dump_task_mm_pages(struct dump_ctx *ctx, struct dump_task *dt)
{
	uint64_t t0 = mem_now_ns(), t1;
	int err = mm_img_write(ctx, dt);

	t1 = mem_now_ns();
	/* the scan, the comparison with the parent's and the guard regions are done */
	mem_task_pagemap_close(dt);
	/* --snapshot: the pages are copied once the tree runs again (mem/snapshot.c) */
	if (!err)
		err = ctx->snap		      ? snapshot_task_arm(ctx, dt)
		      : ctx->opts->lazy_pages ? lazy_dump_task_pages(ctx, dt)
					      : dump_private_pages(ctx, dt);
	ctx->stats.memdump_ns += mem_now_ns() - t0;
	if (!err)
		pr_debug("pid %d: mm image written in %llu us, its pages in %llu us\n", dt->t->pid,
			 (unsigned long long)(t1 - t0) / 1000,
			 (unsigned long long)(mem_now_ns() - t1) / 1000);
	return err;
}

int dump_task_mm(struct dump_ctx *ctx, struct dump_task *dt)
{
	uint64_t t0 = mem_now_ns();
	int err;

	if (!dt->ctl) {
		/* A zombie has no memory left: pstree.img records its exit code. */
		pr_debug("%d is a zombie: no mm image\n", dt->t->pid);
		return 0;
	}
	err = dump_task_mm_plan(ctx, dt);
	ctx->stats.memdump_ns += mem_now_ns() - t0;
	return err ?: dump_task_mm_pages(ctx, dt);
}

static int dump_one_shmem(struct dump_ctx *ctx, const struct shmem_obj *o)
{
	char path[96];
	const struct mem_runs *runs = &o->runs;
	struct mem_runs huge_runs = { 0 };
	_cleanup_free_ uint32_t *crcs = NULL;
	_cleanup_close_ int fd = -1;
	struct page_xfer x;
	uint32_t pages_id;
	uint64_t pages, t0;
	int err;

	if (o->ino > UINT32_MAX) {
		pr_err("shmem object %lu (mapped by %d at %lx): inode number too large for an "
		       "image name\n",
		       o->ino, o->pid, o->vma_start);
		return -EOVERFLOW;
	}
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", o->pid, o->vma_start,
		 o->vma_end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("shmem object %lu: open %s", o->ino, path);
		return neg_errno();
	}
	/* hugetlb: read whole, into a memfd that splices (mem/hugetlb-shm.c) */
	if (o->huge) {
		int copy;

		err = hugetlb_shm_read(fd, o->size, o->huge, &huge_runs, &copy);
		if (err) {
			pr_err("hugetlb object %lu (mapped by %d at %lx): cannot read it\n", o->ino,
			       o->pid, o->vma_start);
			return err;
		}
		close(fd);
		fd = copy;
		runs = &huge_runs;
	}
	err = runs_check(o->pid, runs, 1, &pages);
	crcs = err ? NULL : calloc(runs->nr + 1, sizeof(*crcs));
	if (!err && !crcs)
		err = -ENOMEM;
	if (err) {
		mem_runs_fini(&huge_runs);
		return err;
	}
	pages_id = ctx->next_pages_id++;
	t0 = mem_now_ns();
	err = page_xfer_open(&x, ctx, o->pid, pages_id, runs, crcs, pages * PAGE_SIZE);
	if (!err)
		err = page_xfer_file(&x, fd, runs, crcs);
	err = page_xfer_close(&x, err);
	ctx->stats.memwrite_ns += mem_now_ns() - t0;
	ctx->stats.shpages_scanned += o->size / PAGE_SIZE;
	if (!err) {
		ctx->stats.pages_written += pages;
		ctx->stats.shpages_written += pages;
		ctx->stats.bytes_written += pages * PAGE_SIZE;
		err = write_pagemap(ctx, CR_IMG_SHMEM_PAGEMAP, (uint32_t)o->ino, o->pid, pages_id,
				    runs, crcs, NULL, true, NULL, NULL, 0);
	}
	mem_runs_fini(&huge_runs);
	if (err)
		pr_err("cannot dump shmem object %lu (mapped by %d at %lx-%lx)\n", o->ino, o->pid,
		       o->vma_start, o->vma_end);
	return err;
}

int dump_shmem(struct dump_ctx *ctx)
{
	uint64_t t0 = mem_now_ns();
	unsigned int i;
	int err;

	err = shmem_set_add_unmapped(&ctx->shm);
	for (i = 0; !err && i < ctx->shm.nr; i++)
		err = dump_one_shmem(ctx, &ctx->shm.objs[i]);
	ctx->stats.memdump_ns += mem_now_ns() - t0;
	return err;
}
