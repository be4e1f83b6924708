// SPDX-License-Identifier: GPL-2.0
/*
 * mm-PID.img of a dumped task (Documentation/memory.md): the mm fields, the
 * auxv, the exe link and every VMA, with the file of each file mapping (each
 * file opened once per dump: ctx->mapped), its guard regions and the AIO
 * rings. Everything is read: nothing in the task changes.
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
#include "dump.h"
#include "image.h"
#include "log.h"
#include "par.h"
#include "mem-int.h"
#include "ns.h"
#include "util.h"
#include "vdso-gone.h"

#include "mm.pb-c.h"

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
static int task_guards(struct dump_task *dt, uint64_t **all, size_t *nr)
{
	pid_t pid = dt->t->pid;
	unsigned int last;
	int err, fd;

	*all = NULL;
	*nr = 0;
	if (!dt->vmas.nr || !mem_scan_knows_guards())
		return 0;
	fd = mem_task_pagemap(dt);
	if (fd < 0)
		return fd;
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

int mm_img_write(struct dump_ctx *ctx, struct dump_task *dt)
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
	bool dropped, held;
	int err;

	if (!e || !ep)
		return -ENOMEM;
	fill_mm_fields(dt, &mm);
	/* [vdso], [vvar] the task unmapped: the restore unmaps them too (vdso-gone.c) */
	mm.n_unmapped_specials = vdso_unmapped_kinds(&ctx->kd.vdso, &dt->vmas, unmapped);
	for (i = 0; i < mm.n_unmapped_specials; i++)
		unmapped_kinds[i] = (VmaKind)unmapped[i];
	mm.unmapped_specials = unmapped_kinds;
	/*
	 * What is the task's own is read with the other workers of a parallel
	 * dump going on; its files (the exe, the mapped ones) go into the tree's
	 * tables held (par.h).
	 */
	dropped = par_drop();
	err = read_auxv(pid, &auxv, &mm.n_auxv);
	if (!err) {
		held = par_hold();
		err = dump_exe(ctx, pid, &mm);
		par_unhold(held);
	}
	if (!err)
		err = task_guards(dt, &guards, &nr_guards);
	held = par_hold();
	for (i = 0; !err && i < dt->vmas.nr; i++) {
		err = fill_vma(ctx, pid, &dt->vmas.vmas[i], dt->plan.policy[i], &e[i]);
		if (!err)
			err = fill_guards(guards, nr_guards, &k, &dt->vmas.vmas[i],
					  dt->plan.policy[i], &e[i]);
		ep[i] = &e[i];
	}
	par_unhold(held);
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
	par_take(dropped);
	for (i = 0; i < dt->vmas.nr; i++)
		free(e[i].guards);
	free_aios(&mm);
	return err;
}
