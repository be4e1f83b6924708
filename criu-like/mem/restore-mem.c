// SPDX-License-Identifier: GPL-2.0
/*
 * The controller's half of the memory restore: read and check mm-PID.img,
 * pagemap-PID.img and creds-PID.img of every live task before the first
 * fork (so the forked tasks inherit the plans), and create the shared
 * anonymous memory objects, filled from pagemap-shmem-SHMID.img, at service
 * fds every task inherits.
 */
#define LOG_PREFIX "restore-mem: "

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "crc32c.h"
#include "image.h"
#include "log.h"
#include "par.h"
#include "fault.h"
#include "restore-files.h"
#include "restore-mem.h"
#include "util.h"

/* pagemap-PID.img's head and entries. */
int rst_read_pagemap_recs(int dirfd, pid_t pid, ProtobufCMessage ***recs, size_t *n)
{
	struct cr_img *img = img_open(dirfd, CR_IMG_PAGEMAP, (uint32_t)pid, IMG_READ);
	int err;

	if (!img)
		return -errno;
	err = img_read_all(img, recs, n);
	img_close(img);
	if (!err && !*n) {
		pr_err("pid %d: pagemap image without its head\n", pid);
		img_free_records(*recs, *n);
		err = -EINVAL;
	}
	return err;
}

/* Entries whose data is in another image: a parent dump's, or the parent task's. */
static bool any_parent(PagemapEntry *const *pe, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pe[i]->flags & (PAGEMAP_FLAG__PE_PARENT | PAGEMAP_FLAG__PE_PARENT_SHARED))
			return true;
	return false;
}

/* The PE_PARENT_SHARED ranges of level 0, for mem/restore-cow.c. */
static int read_shared(const PagemapHead *h, PagemapEntry *const *pe, size_t n,
		       struct rst_mem_plan *p)
{
	p->shared_pid = h->has_shared_pid ? h->shared_pid : 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t start = pe[i]->vaddr, end = start + (uint64_t)pe[i]->nr_pages * PAGE_SIZE;
		struct rst_range *r;

		if (!(pe[i]->flags & PAGEMAP_FLAG__PE_PARENT_SHARED))
			continue;
		if (p->nr_shared && p->shared[p->nr_shared - 1].end == start) {
			p->shared[p->nr_shared - 1].end = end;
			continue;
		}
		r = reallocarray(p->shared, p->nr_shared + 1, sizeof(*r));
		if (!r)
			return -ENOMEM;
		p->shared = r;
		p->shared[p->nr_shared++] = (struct rst_range){ start, end };
	}
	return 0;
}

/* pagemap-PID.img into @p's runs; pages-ID.img must hold all their data. */
static int read_pagemap(struct restore_ctx *ctx, const CoreEntry *core, pid_t pid,
			struct rst_mem_plan *p)
{
	ProtobufCMessage **recs = NULL;
	struct cr_img *img;
	size_t n = 0;
	int err;

	err = rst_read_pagemap_recs(ctx->dirfd, pid, &recs, &n);
	if (err)
		return err;
	p->pages_id = ((PagemapHead *)recs[0])->pages_id;
	err = read_shared((PagemapHead *)recs[0], (PagemapEntry *const *)recs + 1, n - 1, p);
	if (err) {
		img_free_records(recs, n);
		return err;
	}
	if (ctx->opts->lazy_pages || any_parent((PagemapEntry *const *)recs + 1, n - 1))
		err = rst_read_chain(ctx, core, pid, p, (PagemapHead *)recs[0],
				     (PagemapEntry **)recs + 1, n - 1);
	else
		err = rst_plan_runs(pid, p, (PagemapEntry *const *)recs + 1, n - 1);
	img_free_records(recs, n);
	if (err || !p->pages_bytes || p->has_chain_fd)
		return err;
	img = img_open(ctx->dirfd, CR_IMG_PAGES, p->pages_id, IMG_READ);
	if (!img)
		return -errno;
	if (img_raw_size(img) < p->pages_bytes) {
		pr_err("pid %d: %s holds %lu bytes of pages, the pagemap needs %lu\n", pid,
		       img_name(img), img_raw_size(img), p->pages_bytes);
		err = -EINVAL;
	}
	img_close(img);
	return err;
}

static int prepare_task(struct restore_ctx *ctx, struct rst_task *t)
{
	pid_t pid = (pid_t)t->pe->pid;
	struct rst_mem_plan *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	err = img_read_one(ctx->dirfd, CR_IMG_MM, (uint32_t)pid, (ProtobufCMessage **)&p->mm);
	if (!err)
		err = rst_plan_check_vmas(pid, p->mm);
	if (!err)
		err = img_read_one(ctx->dirfd, CR_IMG_CREDS, (uint32_t)pid,
				   (ProtobufCMessage **)&p->creds);
	if (!err)
		err = read_pagemap(ctx, t->core, pid, p);
	if (err) {
		pr_err("cannot prepare the memory of %d\n", pid);
		rst_plan_free(p);
		return err;
	}
	t->mem = p;
	pr_debug("pid %d: %zu VMAs, %zu page runs, %lu bytes of pages, %lu left lazy\n", pid,
		 p->mm->n_vmas, p->nr_runs, p->pages_bytes, p->lazy_bytes);
	return 0;
}

/* Every shmid mapped by some task, with the size the object needs. */
static int collect_shmem(struct restore_ctx *ctx, struct rst_shmem *s)
{
	unsigned int i;
	size_t j;

	for (i = 0; i < ctx->nr_tasks; i++) {
		struct rst_mem_plan *p = ctx->tasks[i].mem;

		for (j = 0; p && j < p->mm->n_vmas; j++) {
			const VmaEntry *v = p->mm->vmas[j];
			struct rst_shmem_obj *o;
			uint64_t end = v->pgoff + v->end - v->start;

			if (v->kind != VMA_KIND__VMA_ANON_SHARED)
				continue;
			o = (struct rst_shmem_obj *)rst_shmem_find(s, v->shmid);
			if (!o) {
				o = reallocarray(s->objs, s->n + 1, sizeof(*o));
				if (!o)
					return -ENOMEM;
				s->objs = o;
				o = &s->objs[s->n++];
				o->shmid = v->shmid;
				o->size = 0;
				o->fd = -1;
				o->huge_flags = v->flags &
						(MAP_HUGETLB | (MAP_HUGE_MASK << MAP_HUGE_SHIFT));
			}
			o->size = max(o->size, end);
		}
	}
	return 0;
}

/* Read pagemap-shmem-SHMID.img's runs into the object mapped at @mem. */
static int fill_shmem(struct restore_ctx *ctx, const struct rst_shmem_obj *o, char *mem)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_SHMEM_PAGEMAP, (uint32_t)o->shmid,
				      IMG_READ | IMG_OPTIONAL);
	struct cr_img *pages = NULL;
	ProtobufCMessage **recs = NULL;
	uint64_t off = 0;
	size_t n = 0, i;
	int err;

	if (!img)
		return errno == ENOENT ? 0 : -errno; /* never touched: all zeros */
	err = img_read_all(img, &recs, &n);
	img_close(img);
	if (!err && n > 1) {
		pages = img_open(ctx->dirfd, CR_IMG_PAGES, ((PagemapHead *)recs[0])->pages_id,
				 IMG_READ);
		err = pages ? 0 : -errno;
	}
	for (i = 1; !err && i < n; i++) {
		const PagemapEntry *e = (PagemapEntry *)recs[i];
		uint64_t len = (uint64_t)e->nr_pages * PAGE_SIZE;

		if (!(e->flags & PAGEMAP_FLAG__PE_PRESENT) || e->vaddr % PAGE_SIZE ||
		    e->vaddr > o->size || len > o->size - e->vaddr) {
			pr_err("shmem %lu: bad pagemap entry %lx +%u pages (object of %lu bytes)\n",
			       o->shmid, e->vaddr, e->nr_pages, o->size);
			err = -EINVAL;
			break;
		}
		err = img_read_run(pages, off, mem + e->vaddr, len, e->crc32c);
		off += len;
		ctx->stats.pages_restored += e->nr_pages;
	}
	img_close(pages);
	img_free_records(recs, n);
	return err;
}

/*
 * A MAP_SHARED|MAP_ANONYMOUS object, opened through map_files so every
 * mapping of it reads "/dev/zero (deleted)" in maps as the original did
 * ("/anon_hugepage (deleted)" with MAP_HUGETLB: the huge pages it holds are
 * taken from the pool here, the restore fails naming it when there are none).
 */
static int create_shmem(struct restore_ctx *ctx, struct rst_shmem_obj *o)
{
	char path[64];
	char *mem;
	int fd, err;

	mem = fault_err(-ENOMEM, "shmem %lu: mmap", o->shmid)
		      ? MAP_FAILED
		      : mmap(NULL, o->size, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS | (int)o->huge_flags, -1, 0);
	if (mem == MAP_FAILED) {
		pr_perror("shmem %lu: mmap of %lu bytes%s", o->shmid, o->size,
			  o->huge_flags ? " of hugetlb memory" : "");
		return neg_errno();
	}
	err = fill_shmem(ctx, o, mem);
	/* criu-like's own /proc: inside a container's mount namespace its /proc is not there yet */
	snprintf(path, sizeof(path), "%sself/map_files/%lx-%lx", ctx->proc_fd >= 0 ? "" : "/proc/",
		 (unsigned long)mem, (unsigned long)mem + o->size);
	fd = err ? -1
		 : openat(ctx->proc_fd >= 0 ? ctx->proc_fd : AT_FDCWD, path, O_RDWR | O_CLOEXEC);
	if (!err && fd < 0) {
		pr_perror("shmem %lu: open %s", o->shmid, path);
		err = neg_errno();
	}
	munmap(mem, o->size);
	if (err)
		return err;
	o->fd = fcntl(fd, F_DUPFD_CLOEXEC, ctx->service_fd_base);
	if (o->fd < 0) {
		pr_perror("shmem %lu: F_DUPFD above %d", o->shmid, ctx->service_fd_base);
		err = neg_errno();
	}
	close(fd);
	return err;
}

static int add_range(struct rst_range **r, size_t *n, uint64_t start, uint64_t end)
{
	struct rst_range *nr = reallocarray(*r, *n + 1, sizeof(**r));

	if (!nr)
		return -ENOMEM;
	nr[*n].start = start;
	nr[*n].end = end;
	*r = nr;
	(*n)++;
	return 0;
}

/* Every mapping of the controller and every saved VMA of every task. */
static int busy_ranges(struct restore_ctx *ctx, struct rst_range **r, size_t *n)
{
	/* as in create_shmem(): criu-like's own /proc, not the container's */
	int fd = ctx->proc_fd >= 0 ? openat(ctx->proc_fd, "self/maps", O_RDONLY | O_CLOEXEC)
				   : open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	_cleanup_fclose_ FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	unsigned long s, e;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	unsigned int i;
	size_t j;
	int err = 0;

	if (!f) {
		err = neg_errno();
		if (fd >= 0)
			close(fd);
		pr_errno(err, "cannot read criu-like's own /proc/self/maps");
		return err;
	}
	while (!err && getline(&line, &cap, f) > 0)
		if (sscanf(line, "%lx-%lx", &s, &e) == 2)
			err = add_range(r, n, s, e);
	for (i = 0; !err && i < ctx->nr_tasks; i++) {
		const struct rst_mem_plan *p = ctx->tasks[i].mem;

		for (j = 0; !err && p && j < p->mm->n_vmas; j++)
			err = add_range(r, n, p->mm->vmas[j]->start, p->mm->vmas[j]->end);
	}
	return err;
}

/*
 * The shared area stays mapped in every task while the blob maps the saved
 * VMAs: move it (before any fork) out of the way of every saved layout.
 */
static int place_shared(struct restore_ctx *ctx)
{
	uint64_t start = (uint64_t)ctx->shared, len = PAGE_ALIGN(ctx->shared_size), to;
	_cleanup_free_ struct rst_range *busy = NULL;
	size_t n = 0, i;
	void *moved;
	int err;

	err = busy_ranges(ctx, &busy, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		if (busy[i].start < start + len && start < busy[i].end &&
		    !(busy[i].start == start && busy[i].end == start + len))
			break;
	if (i == n)
		return 0;
	err = rst_find_hole(busy, n, len, 1UL << 20, RST_TASK_SIZE, &to);
	if (err) {
		pr_err("no room for the shared area of %lu bytes outside every saved layout\n",
		       len);
		return err;
	}
	moved = mremap(ctx->shared, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)to);
	if (moved == MAP_FAILED) {
		pr_perror("mremap of the shared area to %lx", to);
		return neg_errno();
	}
	pr_debug("shared area moved from %lx to %lx, out of a saved VMA\n", start, to);
	ctx->shared = moved;
	return 0;
}

#ifndef PR_TIMER_CREATE_RESTORE_IDS
#define PR_TIMER_CREATE_RESTORE_IDS 77 /* 6.17 */
#define PR_TIMER_CREATE_RESTORE_IDS_GET 2
#endif

/* POSIX timers keep their ids only with PR_TIMER_CREATE_RESTORE_IDS: refuse before any fork. */
static int check_timers(struct restore_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ctx->nr_tasks; i++) {
		const CoreEntry *c = ctx->tasks[i].core;

		if (!c || !c->tc->n_posix_timers)
			continue;
		if (prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) <
		    0) {
			pr_err("pid %u has POSIX timers: restoring their ids needs "
			       "prctl(PR_TIMER_CREATE_RESTORE_IDS) (Linux 6.17), which this kernel "
			       "lacks\n",
			       ctx->tasks[i].pe->pid);
			return -EOPNOTSUPP;
		}
		return 0;
	}
	return 0;
}

static int prepare_task_at(void *arg, unsigned int i)
{
	struct restore_ctx *ctx = arg;

	return ctx->tasks[i].core ? prepare_task(ctx, &ctx->tasks[i]) : 0;
}

/*
 * Every task's mm, creds and pagemap images read and planned: side by side
 * on one thread per CPU (par_for(): each task's own images and plan; the
 * images opened are noted under the image layer's lock), but for lazy pages,
 * whose plan asks the daemon. The threads end before any fork.
 */
static int prepare_tasks(struct restore_ctx *ctx)
{
	_cleanup_free_ int *errs = calloc(ctx->nr_tasks + 1, sizeof(*errs));
	unsigned int i;
	int err = 0;

	if (ctx->opts->lazy_pages || !errs || ctx->nr_tasks < 3) {
		for (i = 0; !err && i < ctx->nr_tasks; i++)
			err = prepare_task_at(ctx, i);
	} else {
		/*
		 * The plans go to the main heap, which is collapsed into huge
		 * pages for the forks (restore-fork.c), not to an arena of each
		 * thread that every task would copy and unmap page by page.
		 */
		mallopt(M_ARENA_MAX, 1);
		err = par_for(ctx->nr_tasks, prepare_task_at, ctx, errs, NULL);
	}
	for (i = 0; !err && i < ctx->nr_tasks; i++) {
		const struct rst_mem_plan *p = ctx->tasks[i].mem;

		if (p)
			ctx->stats.pages_restored += p->pages_bytes / PAGE_SIZE;
	}
	return err;
}

int rst_mem_prepare(struct restore_ctx *ctx)
{
	struct rst_shmem *s;
	size_t j;
	int err = check_timers(ctx);

	if (!err)
		err = prepare_tasks(ctx);
	if (!err)
		err = rst_chain_done();
	s = err ? NULL : calloc(1, sizeof(*s));
	if (!err && !s)
		err = -ENOMEM;
	if (err)
		return err;
	ctx->shmem = s;
	err = place_shared(ctx);
	if (!err)
		err = collect_shmem(ctx, s);
	for (j = 0; !err && j < s->n; j++) {
		err = create_shmem(ctx, &s->objs[j]);
		if (err)
			pr_err("cannot restore shared memory object %lu\n", s->objs[j].shmid);
	}
	if (!err)
		err = rst_sysv_shm_prepare(ctx, s);
	if (!err)
		err = rst_cow_plan(ctx);
	return err;
}

int rst_mem_report_bad_pages(struct restore_ctx *ctx, pid_t pid)
{
	const struct rst_mem_plan *p = NULL;
	struct cr_img *img;
	unsigned int i;
	size_t j;
	int err = 0;

	for (i = 0; i < ctx->nr_tasks && !p; i++)
		if ((pid_t)ctx->tasks[i].pe->pid == pid)
			p = ctx->tasks[i].mem;
	if (!p || !p->nr_crcs)
		return 0;
	img = img_open(ctx->dirfd, CR_IMG_PAGES, p->pages_id, IMG_READ);
	if (!img)
		return -errno;
	/* crcs[] offsets are file offsets; img_verify_run() takes data offsets */
	for (j = 0; j < p->nr_crcs && err != -EBADMSG; j++)
		err = img_verify_run(img, p->crcs[j].off - IMG_RAW_DATA_OFF, p->crcs[j].len,
				     p->crcs[j].crc);
	if (!err)
		pr_info("pid %d: every page run of %s matches its crc32c\n", pid, img_name(img));
	img_close(img);
	return err;
}

void rst_mem_fini(struct restore_ctx *ctx)
{
	unsigned int i;
	size_t j;

	for (i = 0; i < ctx->nr_tasks; i++) {
		rst_plan_free(ctx->tasks[i].mem);
		ctx->tasks[i].mem = NULL;
	}
	rst_chain_fini();
	if (!ctx->shmem)
		return;
	for (j = 0; j < ctx->shmem->n; j++)
		if (ctx->shmem->objs[j].fd >= 0)
			close(ctx->shmem->objs[j].fd);
	rst_sysv_shm_fini(ctx->shmem);
	free(ctx->shmem->objs);
	free(ctx->shmem);
	ctx->shmem = NULL;
}
