// SPDX-License-Identifier: GPL-2.0
/*
 * The memory of a dump (Documentation/memory.md):
 * mm-PID.img (the mm fields, auxv, exe and every VMA), pagemap-PID.img and
 * its pages image for the private pages, and once per dump the shared
 * anonymous objects (pagemap-shmem-SHMID.img). Everything is read: nothing
 * in the task changes.
 */
#define LOG_PREFIX "mem: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/shm.h>
#include <unistd.h>

#include "aio-ring.h"
#include "cow-share.h"
#include "hugetlb-shm.h"
#include "dump.h"
#include "image.h"
#include "log.h"
#include "ns.h"
#include "mem-xfer.h"
#include "page-server.h"
#include "snapshot.h"
#include "track.h"
#include "util.h"
#include "vdso-gone.h"

#include "mm.pb-c.h"
#include "pagemap.pb-c.h"

#define AUXV_MAX 128 /* pairs; the kernel has AT_VECTOR_SIZE_BASE + arch (about 25) */

static int read_auxv(pid_t pid, uint64_t **ret, size_t *ret_n)
{
	char path[64];
	_cleanup_free_ uint64_t *v = NULL;
	size_t len, n;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	v = (uint64_t *)read_file_at(AT_FDCWD, path, &len);
	if (!v) {
		pr_perror("pid %d: read %s", pid, path);
		return -errno;
	}
	/* Keep the pairs up to and including AT_NULL. */
	for (n = 0; n + 1 < len / sizeof(*v) && n < 2 * AUXV_MAX; n += 2)
		if (v[n] == 0) {
			n += 2;
			break;
		}
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

/* The FileEntry id of the file opened as /proc/PID/@link (exe, or map_files/A-B). */
static int dump_linked_file(struct dump_ctx *ctx, pid_t pid, const char *link, const char *path,
			    int flags, uint32_t *id)
{
	char p[96];
	_cleanup_close_ int fd = -1;
	int err;

	snprintf(p, sizeof(p), "/proc/%d/%s", pid, link);
	fd = open(p, flags | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("pid %d: open %s (%s)", pid, p, path);
		return neg_errno();
	}
	err = dump_file_by_fd(ctx, pid, fd, path, flags, id);
	if (err)
		pr_err("pid %d: cannot dump the file %s of %s\n", pid, path, link);
	return err;
}

static struct mapped_file_id *mapped_find(const struct mapped_file_ids *m,
					  const struct vma_entry *v)
{
	unsigned int i;

	for (i = 0; i < m->nr; i++) {
		struct mapped_file_id *f = &m->v[i];

		if (f->ino == v->ino && f->dev_minor == v->dev_minor &&
		    f->dev_major == v->dev_major && !strcmp(f->path, v->path))
			return f;
	}
	return NULL;
}

/* Best effort: a file not remembered is only opened again by the next task. */
static void mapped_add(struct mapped_file_ids *m, const struct vma_entry *v, uint32_t id)
{
	struct mapped_file_id *f;

	if (m->nr == m->cap) {
		unsigned int cap = m->cap ? m->cap * 2 : 32;

		f = reallocarray(m->v, cap, sizeof(*f));
		if (!f)
			return;
		m->v = f;
		m->cap = cap;
	}
	f = &m->v[m->nr];
	*f = (struct mapped_file_id){ v->dev_major, v->dev_minor, v->ino, strdup(v->path), id };
	m->nr += f->path != NULL;
}

void mapped_file_ids_fini(struct mapped_file_ids *m)
{
	unsigned int i;

	for (i = 0; i < m->nr; i++)
		free(m->v[i].path);
	free(m->v);
	*m = (struct mapped_file_ids){ 0 };
}

/*
 * The file of a mapping, by its map_files link. dump_file_by_fd() shares a
 * mapped file by inode: a mapping whose device, inode and path smaps shows
 * as an earlier one's (the libraries of every task of a tree) takes that
 * one's id without the open. Not for a deleted file (a new file may have
 * taken its name).
 */
static int dump_mapped_file(struct dump_ctx *ctx, pid_t pid, const struct vma_entry *v,
			    const char *link, int flags, uint32_t *id)
{
	const struct mapped_file_id *f = NULL;
	bool cache = v->path && !v->deleted && v->ino;
	int err;

	if (cache)
		f = mapped_find(&ctx->mapped, v);
	if (f) {
		*id = f->id;
		return 0;
	}
	err = dump_linked_file(ctx, pid, link, v->path, flags, id);
	if (!err && cache)
		mapped_add(&ctx->mapped, v, *id);
	return err;
}

static int dump_exe(struct dump_ctx *ctx, pid_t pid, MmEntry *mm)
{
	char link[64], path[PATH_MAX];
	ssize_t n;
	int err;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0) {
		pr_perror("pid %d: readlink %s", pid, link);
		return neg_errno();
	}
	path[n] = '\0';
	err = dump_linked_file(ctx, pid, "exe", path, O_RDONLY, &mm->exe_file_id);
	mm->has_exe_file_id = !err;
	return err;
}

/* madvise() advice that smaps VmFlags show, as bit (1 << advice). */
static uint64_t vma_madv(unsigned long f)
{
	static const struct {
		unsigned long vmf;
		int advice;
	} map[] = {
		{ VMF_SR, MADV_SEQUENTIAL }, { VMF_RR, MADV_RANDOM },
		{ VMF_DC, MADV_DONTFORK },   { VMF_MG, MADV_MERGEABLE },
		{ VMF_HG, MADV_HUGEPAGE },   { VMF_NH, MADV_NOHUGEPAGE },
		{ VMF_DD, MADV_DONTDUMP },   { VMF_WF, MADV_WIPEONFORK },
	};
	uint64_t m = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(map); i++)
		if (f & map[i].vmf)
			m |= 1ULL << map[i].advice;
	return m;
}

static int vma_kind(pid_t pid, const struct vma_entry *v, VmaKind *ret)
{
	if (vma_is_hugetlb_anon(v)) {
		*ret = VMA_KIND__VMA_ANON_PRIVATE;
		return 0;
	}
	if (vma_is_aio(v)) {
		*ret = VMA_KIND__VMA_AIO;
		return 0;
	}
	if (vma_is_hugetlb_shared_anon(v)) {
		*ret = VMA_KIND__VMA_ANON_SHARED;
		return 0;
	}
	switch (v->kind) {
	case VMA_ANON:
	case VMA_ANON_NAMED:
		*ret = VMA_KIND__VMA_ANON_PRIVATE;
		return 0;
	case VMA_HEAP:
		*ret = VMA_KIND__VMA_HEAP;
		return 0;
	case VMA_STACK:
		*ret = VMA_KIND__VMA_STACK;
		return 0;
	case VMA_VDSO:
		*ret = VMA_KIND__VMA_VDSO;
		return 0;
	case VMA_VVAR:
		*ret = VMA_KIND__VMA_VVAR;
		return 0;
	case VMA_VVAR_VCLOCK:
		*ret = VMA_KIND__VMA_VVAR_VCLOCK;
		return 0;
	case VMA_VSYSCALL:
		*ret = VMA_KIND__VMA_VSYSCALL;
		return 0;
	case VMA_ANON_SHMEM:
		if (v->shared) {
			*ret = VMA_KIND__VMA_ANON_SHARED;
			return 0;
		}
		break;
	case VMA_FILE:
		if (v->path) {
			*ret = v->shared ? VMA_KIND__VMA_FILE_SHARED : VMA_KIND__VMA_FILE_PRIVATE;
			return 0;
		}
		break;
	case VMA_OTHER:
		break;
	}
	pr_err("pid %d: VMA %lx-%lx %s: mapping of this kind is not supported\n", pid, v->start,
	       v->end, v->path ? v->path : "(no name)");
	return -EOPNOTSUPP;
}

/*
 * The guard regions of @v into e->guards (malloc'ed): its part of @all (@nr
 * values, start, end pairs, by address), from *@k on, where a VMA can hold
 * them. A region reported across two VMAs is cut at their border.
 */
static int fill_guards(const uint64_t *all, size_t nr, size_t *k, const struct vma_entry *v,
		       enum mem_policy policy, VmaEntry *e)
{
	size_t i, n = 0;

	while (*k + 1 < nr && all[*k + 1] <= v->start)
		*k += 2;
	for (i = *k; i + 1 < nr && all[i] < v->end; i += 2)
		n += 2;
	if (!n || policy == MEM_SKIP_RECREATED || policy == MEM_SKIP_IO || policy == MEM_SKIP_SYSV)
		return 0;
	e->guards = calloc(n, sizeof(*e->guards));
	if (!e->guards)
		return -ENOMEM;
	for (i = *k; i + 1 < nr && all[i] < v->end; i += 2) {
		e->guards[e->n_guards++] = max(all[i], (uint64_t)v->start);
		e->guards[e->n_guards++] = min(all[i + 1], (uint64_t)v->end);
	}
	return 0;
}

/* Every guard region of the task (one PAGEMAP_SCAN walk over its VMAs), when the kernel tells. */
static int task_guards(const struct dump_task *dt, uint64_t **all, size_t *nr)
{
	pid_t pid = dt->t->pid;
	_cleanup_close_ int fd = -1;
	unsigned int last;
	char path[64];
	int err;

	*all = NULL;
	*nr = 0;
	if (!dt->vmas.nr || !mem_scan_knows_guards())
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("pid %d: open %s", pid, path);
		return neg_errno();
	}
	/* not up to [vsyscall], above the user address space, which the scan refuses */
	last = dt->vmas.nr - 1;
	while (last && dt->plan.policy[last] == MEM_SKIP_RECREATED)
		last--;
	err = mem_scan_guards(fd, dt->vmas.vmas[0].start, dt->vmas.vmas[last].end, all, nr);
	if (err)
		pr_errno(err, "pid %d: cannot find its guard regions", pid);
	else if (*nr)
		pr_debug("pid %d: %zu guard regions\n", pid, *nr / 2);
	return err;
}

static int fill_vma(struct dump_ctx *ctx, pid_t pid, const struct vma_entry *v,
		    enum mem_policy policy, VmaEntry *e)
{
	char link[64];
	int err, flags;

	vma_entry__init(e);
	e->start = v->start;
	e->end = v->end;
	e->pgoff = v->pgoff;
	e->prot = v->prot;
	err = vma_kind(pid, v, &e->kind);
	if (err)
		return err;
	e->flags = v->shared ? MAP_SHARED : MAP_PRIVATE;
	if (e->kind != VMA_KIND__VMA_FILE_PRIVATE && e->kind != VMA_KIND__VMA_FILE_SHARED)
		e->flags |= MAP_ANONYMOUS;
	if (v->vm_flags & VMF_GD)
		e->flags |= MAP_GROWSDOWN;
	if (v->vm_flags & VMF_NR)
		e->flags |= MAP_NORESERVE;
	if (v->vm_flags & VMF_LO)
		e->flags |= MAP_LOCKED;
	/* the huge page size, as mmap() takes it: its log2 above MAP_HUGE_SHIFT */
	if (vma_is_hugetlb_anon(v) || vma_is_hugetlb_shared_anon(v))
		e->flags |= MAP_HUGETLB | (uint32_t)(__builtin_ctzl(v->kernel_page_size * 1024)
						     << MAP_HUGE_SHIFT);
	if ((v->vm_flags & VMF_LO) && (v->vm_flags & VMF_LF))
		e->has_lock_onfault = e->lock_onfault = true;
	e->madv = vma_madv(v->vm_flags);
	e->has_madv = e->madv != 0;
	if (v->vm_flags & VMF_SL)
		e->has_sealed = e->sealed = true;
	/* MADV_HUGEPAGE brings huge pages back by itself; MADV_NOHUGEPAGE refuses them. */
	if (v->anon_huge && !v->shared && !(v->vm_flags & (VMF_HG | VMF_NH)))
		e->has_thp = e->thp = true;
	/* A SysV attach: the segment id (its inode number) and how it was attached. */
	if (policy == MEM_SKIP_SYSV) {
		e->kind = VMA_KIND__VMA_SYSV_SHM;
		e->has_shmid = e->has_shmflg = true;
		e->shmid = v->ino;
		e->shmflg = (v->vm_flags & VMF_MW ? 0 : SHM_RDONLY) |
			    (v->prot & PROT_EXEC ? SHM_EXEC : 0);
	}
	/* The shmem object's inode, as shmem_set keys it: pagemap-shmem-SHMID.img. */
	if (policy == MEM_SAVE_SHMEM) {
		e->has_shmid = true;
		e->shmid = v->ino;
	}
	if (e->flags & MAP_ANONYMOUS)
		return 0;
	/* the rings of a packet socket: its description, mapped again (files/packet-ring.c) */
	if (v->dev_major == 0 && v->path && !strncmp(v->path, "socket:[", 8)) {
		err = packet_ring_mapping(ctx, pid, v, &e->file_id);
		e->has_file_id = !err;
		return err;
	}
	/* the file as the mapping has it: writable when it may be made writable (mw) */
	e->has_may_write = e->may_write = v->shared && !(v->prot & PROT_WRITE) &&
					  (v->vm_flags & VMF_MW);
	flags = v->shared && ((v->prot & PROT_WRITE) || e->may_write) ? O_RDWR : O_RDONLY;
	snprintf(link, sizeof(link), "map_files/%lx-%lx", v->start, v->end);
	/* an anonymous inode cannot be opened there: the description of a dumped fd (io_uring) */
	if (v->path && !strncmp(v->path, "anon_inode:", 11))
		err = dump_anon_mapping(ctx, pid, v->path, makedev(v->dev_major, v->dev_minor),
					v->ino, &e->file_id);
	else
		err = dump_mapped_file(ctx, pid, v, link, flags, &e->file_id);
	e->has_file_id = !err;
	return err;
}

/* The brk: [heap] ends at PAGE_ALIGN(brk); without a heap, brk never moved from start_brk. */
static uint64_t task_brk(const struct dump_task *dt)
{
	uint64_t brk = dt->stat.start_brk;
	unsigned int i;

	for (i = 0; i < dt->vmas.nr; i++)
		if (dt->vmas.vmas[i].kind == VMA_HEAP)
			brk = max(brk, (uint64_t)dt->vmas.vmas[i].end);
	return brk;
}

static void fill_mm_fields(const struct dump_task *dt, MmEntry *mm)
{
	const struct proc_stat *s = &dt->stat;

	mm->start_code = s->start_code, mm->end_code = s->end_code;
	mm->start_data = s->start_data, mm->end_data = s->end_data;
	mm->start_brk = s->start_brk, mm->brk = task_brk(dt);
	mm->start_stack = s->start_stack;
	mm->arg_start = s->arg_start, mm->arg_end = s->arg_end;
	mm->env_start = s->env_start, mm->env_end = s->env_end;
}

/* The AIO rings of the task, with their unreaped events (mem/aio.c). */
static int dump_aios(pid_t pid, const struct vma_list *vmas, MmEntry *mm)
{
	unsigned int i, n = 0;
	int err;

	for (i = 0; i < vmas->nr; i++)
		n += vma_is_aio(&vmas->vmas[i]);
	if (!n)
		return 0;
	mm->aios = calloc(n, sizeof(*mm->aios));
	if (!mm->aios)
		return -ENOMEM;
	for (i = 0; i < vmas->nr; i++) {
		AioRingEntry *e;

		if (!vma_is_aio(&vmas->vmas[i]))
			continue;
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		mm->aios[mm->n_aios++] = e;
		err = aio_dump_ring(pid, &vmas->vmas[i], e);
		if (err)
			return err;
	}
	return 0;
}

static void free_aios(MmEntry *mm)
{
	for (size_t i = 0; i < mm->n_aios; i++) {
		if (mm->aios[i]->has_events)
			free(mm->aios[i]->events.data);
		free(mm->aios[i]);
	}
	free(mm->aios);
}

static int write_mm(struct dump_ctx *ctx, struct dump_task *dt)
{
	pid_t pid = dt->t->pid;
	MmEntry mm = MM_ENTRY__INIT;
	_cleanup_free_ uint64_t *auxv = NULL;
	_cleanup_free_ VmaEntry *e = calloc(dt->vmas.nr + 1, sizeof(*e));
	_cleanup_free_ VmaEntry **ep = calloc(dt->vmas.nr + 1, sizeof(*ep));
	_cleanup_free_ uint64_t *guards = NULL;
	size_t nr_guards = 0, k = 0;
	uint32_t unmapped[3];
	VmaKind unmapped_kinds[3];
	unsigned int i;
	int err;

	if (!e || !ep)
		return -ENOMEM;
	fill_mm_fields(dt, &mm);
	/* [vdso], [vvar] the task unmapped: the restore unmaps them too (vdso-gone.c) */
	mm.n_unmapped_specials = vdso_unmapped_kinds(&ctx->kd.vdso, &dt->vmas, unmapped);
	for (i = 0; i < mm.n_unmapped_specials; i++)
		unmapped_kinds[i] = (VmaKind)unmapped[i];
	mm.unmapped_specials = unmapped_kinds;
	err = read_auxv(pid, &auxv, &mm.n_auxv);
	if (!err)
		err = dump_exe(ctx, pid, &mm);
	if (!err)
		err = task_guards(dt, &guards, &nr_guards);
	for (i = 0; !err && i < dt->vmas.nr; i++) {
		err = fill_vma(ctx, pid, &dt->vmas.vmas[i], dt->plan.policy[i], &e[i]);
		if (!err)
			err = fill_guards(guards, nr_guards, &k, &dt->vmas.vmas[i],
					  dt->plan.policy[i], &e[i]);
		ep[i] = &e[i];
	}
	if (!err)
		err = dump_aios(pid, &dt->vmas, &mm);
	if (!err) {
		mm.auxv = auxv;
		mm.n_vmas = dt->vmas.nr;
		mm.vmas = ep;
		err = img_write_one(ctx->dirfd, CR_IMG_MM, (uint32_t)pidns_vpid(pid), &mm.base);
		if (err)
			pr_err("pid %d: cannot write mm-%d.img: %s\n", pid, pid, strerror(-err));
	}
	for (i = 0; i < dt->vmas.nr; i++)
		free(e[i].guards);
	free_aios(&mm);
	return err;
}

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
 * @shared_pid names that task).
 */
static int write_pagemap(struct dump_ctx *ctx, enum cr_img_kind kind, uint32_t id, pid_t pid,
			 uint32_t pages_id, const struct mem_runs *runs, const uint32_t *crcs,
			 bool runs_in_pages, const struct mem_runs *parent,
			 const struct mem_runs *shared, pid_t shared_pid)
{
	PagemapHead h = PAGEMAP_HEAD__INIT;
	struct cr_img *img = img_open(ctx->dirfd, kind, id, IMG_WRITE);
	const struct mem_run *ref;
	unsigned int i, j = 0, k = 0;
	unsigned long prev_end = 0;
	uint32_t flag = 0;
	char name[64] = "pagemap";
	int err, err2;

	if (!img)
		return -errno;
	/* CRIU's pages_skipped_parent, shpages_skipped_parent: kept in a parent image */
	for (i = 0; parent && i < parent->nr; i++) {
		if (kind == CR_IMG_SHMEM_PAGEMAP)
			ctx->stats.shpages_skipped_parent += parent->runs[i].nr_pages;
		else
			ctx->stats.pages_skipped_parent += parent->runs[i].nr_pages;
	}
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
					  PAGEMAP_FLAG__PE_PRESENT, &crcs[i]);
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
	ctx->stats.memwrite_ns += mem_now_ns() - t0;
	if (!err) {
		ctx->stats.pages_written += pages;
		ctx->stats.bytes_written += pages * PAGE_SIZE;
		err = write_pagemap(ctx, CR_IMG_PAGEMAP, (uint32_t)pidns_vpid(pid), pid, pages_id,
				    runs, crcs, false, &dt->parent_runs, &dt->shared_runs,
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
			     crcs, false, &dt->parent_runs, &dt->shared_runs, dt->shared_pid);
}

int dump_private_pages(struct dump_ctx *ctx, struct dump_task *dt)
{
	struct mem_runs split = { 0 };
	const struct mem_runs *runs = &dt->plan.runs;
	_cleanup_free_ bool *noread = NULL;
	uint32_t pages_id = ctx->next_pages_id++;
	int err;

	err = split_noread(&dt->vmas, &dt->plan, &split, &noread);
	if (err) {
		mem_runs_fini(&split);
		return err;
	}
	if (noread)
		runs = &split;
	err = dump_private_runs(ctx, dt, runs, noread, pages_id);
	mem_runs_fini(&split);
	return err;
}

/*
 * A round of a pre-dump chain (a parent image is given): keep in the plan
 * only the pages written since the parent's round, or in VMAs that were not
 * tracked (saved whole); the other pages present go to dt->parent_runs.
 */
static int split_by_parent(struct dump_task *dt)
{
	pid_t pid = dt->t->pid;
	struct mem_runs written = { 0 }, data = { 0 };
	uint64_t t0 = mem_now_ns();
	int err;

	dt->untracked = calloc(dt->vmas.nr + 1, sizeof(*dt->untracked));
	if (!dt->untracked)
		return -ENOMEM;
	err = mem_scan_tracked(pid, &dt->vmas, dt->plan.policy, &written, dt->untracked);
	pr_debug("pid %d: %u runs written since the parent's round, %llu us\n", pid, written.nr,
		 (unsigned long long)(mem_now_ns() - t0) / 1000);
	if (!err)
		err = mem_runs_split(&dt->plan.runs, &written, &data, &dt->parent_runs);
	mem_runs_fini(&written);
	if (err) {
		mem_runs_fini(&data);
		return err;
	}
	mem_runs_fini(&dt->plan.runs);
	dt->plan.runs = data;
	return 0;
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
 * PE_PARENT and its own shared pages, final: parents are dumped first),
 * read once for all its children.
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
 * image holds (parents are dumped first: as data, PE_PARENT or its own
 * PE_PARENT_SHARED); they go to dt->shared_runs (PE_PARENT_SHARED). Not for
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

	if (ctx->pre_dump || ctx->snap || ctx->opts->no_cow_share || !pdt)
		return 0;
	err = cow_runs_union(mine, 2, &all);
	if (!err && all.nr)
		err = load_parent(pdt);
	if (!err && all.nr)
		err = cow_scan_same_cached(pid, pdt->cow, &dt->cow_pm, &all, &same);
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
	int err = mem_scan_task(pid, &dt->vmas, 0, &ctx->shm, &dt->plan);
	if (err) {
		pr_err("pid %d: cannot find the pages to save\n", pid);
		return err;
	}
	err = sysv_shm_dump_task(ctx, pid, &dt->vmas, &dt->plan);
	if (err)
		return err;
	ctx->stats.pages_scanned += dt->plan.stats.pages_scanned;
	if (ctx->prev_dirfd >= 0)
		err = split_by_parent(dt);
	if (!err)
		err = split_cow_shared(ctx, dt);
	/* Arm the tracking of what is not tracked yet, for the next round. */
	if (!err && (ctx->opts->track_mem || ctx->pre_dump))
		err = track_arm(dt, ctx->prev_dirfd >= 0 ? dt->untracked : NULL, &ctx->track,
				ctx->pre_dump);
	return err;
}

int dump_task_mm(struct dump_ctx *ctx, struct dump_task *dt)
{
	pid_t pid = dt->t->pid;
	uint64_t t0 = mem_now_ns();
	int err;

	if (!dt->ctl) {
		/* A zombie has no memory left: pstree.img records its exit code. */
		pr_debug("%d is a zombie: no mm image\n", pid);
		return 0;
	}
	err = dump_task_mm_plan(ctx, dt);
	if (!err)
		err = write_mm(ctx, dt);
	/* --snapshot: the pages are copied once the tree runs again (mem/snapshot.c) */
	if (!err)
		err = ctx->snap ? snapshot_task_arm(ctx, dt) : dump_private_pages(ctx, dt);
	ctx->stats.memdump_ns += mem_now_ns() - t0;
	return err;
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
				    runs, crcs, true, NULL, NULL, 0);
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
