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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "image.h"
#include "log.h"
#include "fault.h"
#include "restore-mem.h"
#include "util.h"

/* pagemap-PID.img into @p's runs; pages-ID.img must hold all their data. */
static int read_pagemap(struct restore_ctx *ctx, pid_t pid, struct rst_mem_plan *p)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_PAGEMAP, (uint32_t)pid, IMG_READ);
	ProtobufCMessage **recs = NULL;
	size_t n = 0;
	int err;

	if (!img)
		return -errno;
	err = img_read_all(img, &recs, &n);
	img_close(img);
	if (err)
		return err;
	if (!n) {
		pr_err("pid %d: pagemap image without its head\n", pid);
		err = -EINVAL;
	} else {
		p->pages_id = ((PagemapHead *)recs[0])->pages_id;
		err = rst_plan_runs(pid, p, (PagemapEntry *const *)recs + 1, n - 1);
	}
	img_free_records(recs, n);
	if (err || !p->pages_bytes)
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
		err = read_pagemap(ctx, pid, p);
	if (err) {
		pr_err("cannot prepare the memory of %d\n", pid);
		rst_plan_free(p);
		return err;
	}
	t->mem = p;
	ctx->stats.pages_restored += p->pages_bytes / PAGE_SIZE;
	pr_debug("pid %d: %zu VMAs, %zu page runs, %lu bytes of pages\n", pid, p->mm->n_vmas,
		 p->nr_runs, p->pages_bytes);
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
 * mapping of it reads "/dev/zero (deleted)" in maps as the original did.
 */
static int create_shmem(struct restore_ctx *ctx, struct rst_shmem_obj *o)
{
	char path[64];
	char *mem;
	int fd, err;

	mem = fault_err(-ENOMEM, "shmem %lu: mmap", o->shmid)
		      ? MAP_FAILED
		      : mmap(NULL, o->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
			     0);
	if (mem == MAP_FAILED) {
		pr_perror("shmem %lu: mmap of %lu bytes", o->shmid, o->size);
		return neg_errno();
	}
	err = fill_shmem(ctx, o, mem);
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)mem,
		 (unsigned long)mem + o->size);
	fd = err ? -1 : open(path, O_RDWR | O_CLOEXEC);
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
	_cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
	unsigned long s, e;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	unsigned int i;
	size_t j;
	int err = 0;

	if (!f)
		return neg_errno();
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

int rst_mem_prepare(struct restore_ctx *ctx)
{
	struct rst_shmem *s;
	unsigned int i;
	size_t j;
	int err = check_timers(ctx);

	for (i = 0; !err && i < ctx->nr_tasks; i++)
		if (ctx->tasks[i].core)
			err = prepare_task(ctx, &ctx->tasks[i]);
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
