// SPDX-License-Identifier: GPL-2.0
/*
 * rst_task_finish(): in a restored task whose pid, fds and fs are in place,
 * build the restorer's arguments (parasite/include/restorer.h) in an area
 * mapped where neither the current nor the saved layout has anything, and
 * jump into the restorer blob, which never comes back here.
 */
#define LOG_PREFIX "restore-task: "

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "asm/crc32c.h"
#include "asm/restorer-tool.h"
#include "asm/sigframe.h"
#include "image.h"
#include "log.h"
#include "fault.h"
#include "restore-files.h"
#include "restore-mem.h"
#include "restore-int.h"
#include "restore-task-int.h"
#include "aio-ring.h"
#include "util.h"
#include "vdso-gone.h"

#include "restorer-blob.h"

_Static_assert(offsetof(struct rst_shared, stage) == offsetof(struct rst_shared_view, stage) &&
		       offsetof(struct rst_shared, nr_pending) ==
			       offsetof(struct rst_shared_view, nr_pending) &&
		       offsetof(struct rst_shared, error) ==
			       offsetof(struct rst_shared_view, error) &&
		       offsetof(struct rst_shared, failed_pid) ==
			       offsetof(struct rst_shared_view, failed_pid) &&
		       offsetof(struct rst_shared, filled) ==
			       offsetof(struct rst_shared_view, filled),
	       "struct rst_shared_view follows struct rst_shared");
_Static_assert(RSTV_STAGE_RESUME == RST_STAGE_RESUME && RSTV_STAGE_ABORT == RST_STAGE_ABORT,
	       "stage values");

#define RANGES_MIN 64 /* a small task's maps and VMAs: one allocation */

/*
 * [@start, @end) appended to the ranges *@v[0..*@n), which only this builds:
 * room for RANGES_MIN, then doubled whenever *@n reaches a power of two. In a
 * forked task every realloc() writes into the heap it shares with its parent
 * (a copy-on-write fault each page), so growing by one costs a fault a call.
 */
static int range_append(struct rst_range **v, size_t *n, uint64_t start, uint64_t end)
{
	struct rst_range *r = *v;

	if (!*n || (*n >= RANGES_MIN && !(*n & (*n - 1)))) {
		r = reallocarray(*v, *n ? 2 * *n : RANGES_MIN, sizeof(*r));
		if (!r)
			return -ENOMEM;
		*v = r;
	}
	r[*n].start = start;
	r[(*n)++].end = end;
	return 0;
}

static int add_busy(struct finish *f, uint64_t start, uint64_t end)
{
	return range_append(&f->busy, &f->nr_busy, start, end);
}

int task_keep_fd(struct finish *f, int fd)
{
	if (f->nr_fds == MAX_FDS) {
		pr_err("pid %d: more than %d fds for the restorer\n", f->pid, MAX_FDS);
		return -E2BIG;
	}
	f->fds[f->nr_fds++] = fd;
	return 0;
}

static const VmaKind special_kinds[] = { VMA_KIND__VMA_VVAR, VMA_KIND__VMA_VVAR_VCLOCK,
					 VMA_KIND__VMA_VDSO };
static const char *const special_names[] = { "[vvar]", "[vvar_vclock]", "[vdso]" };

/* A layout: the busy ranges and where this kernel's vDSO areas are. */
struct rst_self_maps {
	size_t n;
	struct rst_range *busy;
	struct rst_range cur[3];
};

/* /proc/self/maps (criu-like's /proc, @proc_fd, if open) into @l; -errno. */
static int maps_read(int proc_fd, struct rst_self_maps *l)
{
	/* criu-like's /proc: the task may have chroot()ed already (rst_fs_restore()) */
	int fd = proc_fd >= 0 ? openat(proc_fd, "self/maps", O_RDONLY | O_CLOEXEC)
			      : open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	_cleanup_fclose_ FILE *m = fd >= 0 ? fdopen(fd, "re") : NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	unsigned int k;
	int err;

	if (!m && fd >= 0)
		close(fd);
	if (!m)
		return neg_errno();
	/* getline(): a long path must not leave a tail that reads as a new line. */
	while (getline(&line, &cap, m) > 0) {
		unsigned long s, e;
		char *name = strchr(line, '[');

		if (sscanf(line, "%lx-%lx", &s, &e) != 2)
			continue;
		err = range_append(&l->busy, &l->n, s, e);
		if (err)
			return err;
		for (k = 0; name && k < 3; k++)
			if (!strncmp(name, special_names[k], strlen(special_names[k]))) {
				l->cur[k].start = s;
				l->cur[k].end = e;
			}
	}
	return 0;
}

void rst_snap_self_maps(struct restore_ctx *ctx)
{
	struct rst_self_maps *l = calloc(1, sizeof(*l));

	if (l && maps_read(ctx->proc_fd, l)) {
		free(l->busy);
		free(TAKE_PTR(l));
	}
	ctx->ctl_maps = l;
}

void rst_self_maps_free(struct restore_ctx *ctx)
{
	if (ctx->ctl_maps)
		free(ctx->ctl_maps->busy);
	free(TAKE_PTR(ctx->ctl_maps));
}

/*
 * The current layout (every mapping is busy) and where this kernel's vDSO
 * areas are: with @fresh, as /proc/self/maps says now, else as the
 * controller's were before the root's fork (the areas are where a fork
 * leaves them; a mapping made since that takes the hole map_area() finds
 * makes it look again, fresh).
 */
static int read_self_maps(struct finish *f, struct rst_range cur[3], bool fresh)
{
	struct rst_self_maps now = { 0 };
	const struct rst_self_maps *l = f->ctx->ctl_maps;
	int err = 0;

	if (fresh || !l) {
		err = maps_read(f->ctx->proc_fd, &now);
		if (err)
			pr_errno(err, "pid %d: cannot read /proc/self/maps", f->pid);
		l = &now;
	}
	for (size_t i = 0; !err && i < l->n; i++)
		err = add_busy(f, l->busy[i].start, l->busy[i].end);
	memcpy(cur, l->cur, 3 * sizeof(*cur));
	free(now.busy);
	return err;
}

static bool special_unmapped(const MmEntry *mm, VmaKind k)
{
	for (size_t i = 0; i < mm->n_unmapped_specials; i++)
		if (mm->unmapped_specials[i] == k)
			return true;
	return false;
}

/*
 * Same kernel, same areas: each saved [vdso]/[vvar]/[vvar_vclock] has a current
 * twin of its size, moved there; one the task had unmapped is left out of the
 * kept areas, so the blob's unmap_all() removes it (vdso-gone.c).
 */
static int plan_specials(struct finish *f)
{
	struct rst_range cur[3];
	uint64_t scratch = 0;
	unsigned int k;
	size_t i;
	int err = read_self_maps(f, cur, false);

	for (k = 0; !err && k < 3; k++) {
		const VmaEntry *saved = NULL;
		uint64_t cur_len = cur[k].end - cur[k].start;

		for (i = 0; i < f->p->mm->n_vmas; i++)
			if (f->p->mm->vmas[i]->kind == special_kinds[k])
				saved = f->p->mm->vmas[i];
		switch (vdso_special_act(saved ? saved->end - saved->start : 0, cur_len,
					 special_unmapped(f->p->mm, special_kinds[k]))) {
		case SPECIAL_NONE:
			continue;
		case SPECIAL_UNMAP:
			pr_debug("pid %d: it had unmapped its %s: unmapping %lx-%lx\n", f->pid,
				 special_names[k], cur[k].start, cur[k].end);
			continue;
		case SPECIAL_REFUSE:
			pr_err("pid %d: %s is %lx bytes here and %lx bytes in the image: "
			       "restore needs the kernel that dumped\n",
			       f->pid, special_names[k], cur_len,
			       saved ? saved->end - saved->start : 0);
			return -EOPNOTSUPP;
		case SPECIAL_MOVE:
			break;
		}
		f->specials[f->nr_specials].cur_start = cur[k].start;
		f->specials[f->nr_specials].cur_end = cur[k].end;
		f->specials[f->nr_specials].saved_start = saved->start;
		f->specials[f->nr_specials++].scratch_off = scratch;
		scratch += cur_len;
	}
	return err;
}

int task_file_fd(struct finish *f, uint32_t id, int flags, int *ret)
{
	unsigned int i;
	int fd, err;

	for (i = 0; i < f->nr_files; i++)
		if (f->files[i].id == id && f->files[i].flags == flags) {
			*ret = f->files[i].fd;
			return 0;
		}
	if (f->nr_files == MAX_FDS)
		return -E2BIG;
	fd = rst_file_open(f->ctx, id, flags | O_CLOEXEC);
	if (fd < 0)
		return fd;
	err = task_keep_fd(f, fd);
	if (err) {
		close(fd);
		return err;
	}
	f->files[f->nr_files].id = id;
	f->files[f->nr_files].flags = flags;
	f->files[f->nr_files++].fd = fd;
	*ret = fd;
	return 0;
}

/* One saved VMA as the blob maps it; specials and [vsyscall] are not mapped. */
static int plan_vma(struct finish *f, size_t i, struct rst_vma *rv)
{
	const VmaEntry *v = f->p->mm->vmas[i];
	const struct rst_shmem_obj *o;
	int flags, err;

	rv->start = v->start;
	rv->end = v->end;
	rv->prot = v->prot;
	rv->flags = v->flags & (MAP_SHARED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN |
				MAP_NORESERVE | MAP_HUGETLB | (MAP_HUGE_MASK << MAP_HUGE_SHIFT));
	/* locked by the blob at the end, after the pages are in (restorer.h) */
	rv->lock = !(v->flags & MAP_LOCKED)		    ? RST_LOCK_NONE
		   : v->has_lock_onfault && v->lock_onfault ? RST_LOCK_ONFAULT
							    : RST_LOCK_ALL;
	rv->madv = v->has_madv ? v->madv : 0;
	rv->collapse = v->has_thp && v->thp;
	rv->seal = v->has_sealed && v->sealed;
	rv->lazy = f->p->vma_lazy && f->p->vma_lazy[i];
	rv->how = f->p->vma_kept && f->p->vma_kept[i] ? RST_VMA_KEEP
		  : f->p->vma_fill[i]		      ? RST_VMA_FILL
						      : RST_VMA_MAP;
	rv->fd = -1;
	switch (v->kind) {
	case VMA_KIND__VMA_ANON_SHARED:
		o = rst_shmem_find(f->ctx->shmem, v->shmid);
		if (!o) {
			pr_err("pid %d: no shared memory object %lu\n", f->pid, v->shmid);
			return -ENOENT;
		}
		rv->fd = o->fd;
		rv->pgoff = v->pgoff;
		rv->flags = (rv->flags & ~(MAP_ANONYMOUS | MAP_PRIVATE)) | MAP_SHARED;
		return 0;
	case VMA_KIND__VMA_SYSV_SHM:
		/* restore-mem.c made sure the segment exists (mem/sysv-shm.c) */
		rv->how = RST_VMA_SYSV;
		rv->shmid = (int32_t)v->shmid;
		rv->flags = v->has_shmflg ? v->shmflg & (SHM_RDONLY | SHM_EXEC) : 0;
		rv->pgoff = v->pgoff;
		return 0;
	case VMA_KIND__VMA_FILE_PRIVATE:
	case VMA_KIND__VMA_FILE_SHARED:
		flags = v->kind == VMA_KIND__VMA_FILE_SHARED && ((v->prot & PROT_WRITE) ||
								 (v->has_may_write && v->may_write))
				? O_RDWR
				: O_RDONLY;
		err = task_file_fd(f, v->file_id, flags, &rv->fd);
		if (err) {
			pr_err("pid %d: no file %s for the mapping %lx-%lx\n", f->pid,
			       rst_file_path(f->ctx, v->file_id) ?: "?", v->start, v->end);
			return err;
		}
		rv->pgoff = v->pgoff;
		rv->flags &= ~MAP_ANONYMOUS;
		rv->unfixed = rst_file_map_unfixed(f->ctx, v->file_id);
		return 0;
	default:
		rv->flags |= MAP_ANONYMOUS;
		rv->pgoff = 0;
		return 0;
	}
}

static bool vma_mapped(const VmaEntry *v)
{
	switch (v->kind) {
	case VMA_KIND__VMA_VDSO:
	case VMA_KIND__VMA_VVAR:
	case VMA_KIND__VMA_VVAR_VCLOCK:
	case VMA_KIND__VMA_VSYSCALL:
	case VMA_KIND__VMA_AIO: /* made again by the blob (restore_aios()) */
		return false;
	default:
		return true;
	}
}

static bool vma_anon_private(const VmaEntry *v)
{
	return v->kind == VMA_KIND__VMA_ANON_PRIVATE || v->kind == VMA_KIND__VMA_HEAP ||
	       v->kind == VMA_KIND__VMA_STACK;
}

/* The guard regions of every VMA, checked to lie in it. */
static int plan_guards(struct finish *f)
{
	struct rst_range *g = (struct rst_range *)((char *)f->a + f->lay.guards_off);
	size_t i, k;

	f->a->guards_off = f->lay.guards_off;
	for (i = 0; i < f->p->mm->n_vmas; i++) {
		const VmaEntry *v = f->p->mm->vmas[i];

		for (k = 0; k + 1 < v->n_guards; k += 2) {
			uint64_t s = v->guards[k], e = v->guards[k + 1];

			if (s >= e || s < v->start || e > v->end || (s | e) & (PAGE_SIZE - 1)) {
				pr_err("mm-%d.img: guard region %" PRIx64 "-%" PRIx64
				       " is not in its VMA %" PRIx64 "-%" PRIx64 "\n",
				       f->pid, s, e, v->start, v->end);
				return -EINVAL;
			}
			g->start = s;
			g->end = e;
			g++;
			f->a->nr_guards++;
		}
	}
	return 0;
}

/* The AIO contexts (MmEntry.aios, checked by rst_plan_check_vmas()) and their unreaped events. */
static int plan_aios(struct finish *f)
{
	struct rst_aio *r = (struct rst_aio *)((char *)f->a + f->lay.aios_off);
	uint64_t ev = f->lay.aio_events_off;
	size_t i;

	f->a->aios_off = f->lay.aios_off;
	f->a->nr_aios = (uint32_t)f->p->mm->n_aios;
	for (i = 0; i < f->p->mm->n_aios; i++, r++) {
		const AioRingEntry *e = f->p->mm->aios[i];

		r->addr = e->addr;
		r->len = e->len;
		r->nr_req = aio_setup_nr(e->nr_events);
		r->nr_events = e->nr_events;
		r->head = e->head;
		r->tail = e->tail;
		r->nr_unreaped = aio_ring_unreaped(e->head, e->tail, e->nr_events);
		r->events_off = ev;
		if (e->has_events) {
			memcpy((char *)f->a + ev, e->events.data, e->events.len);
			ev += e->events.len;
		}
		pr_debug("pid %d: AIO context %" PRIx64 ": %u events, %u unreaped\n", f->pid,
			 r->addr, r->nr_events, r->nr_unreaped);
	}
	return 0;
}

static int plan_vmas(struct finish *f)
{
	struct rst_vma *out = (struct rst_vma *)((char *)f->a + f->lay.vmas_off);
	const VmaEntry *prev = NULL;
	size_t i;
	int err;

	for (i = 0; i < f->p->mm->n_vmas; i++) {
		const VmaEntry *v = f->p->mm->vmas[i];

		if (!vma_mapped(v))
			continue;
		err = plan_vma(f, i, out);
		if (err)
			return err;
		out->nomerge = v->kind == VMA_KIND__VMA_ANON_PRIVATE && prev &&
			       prev->end == v->start && vma_anon_private(prev);
		out++;
		prev = v;
		f->a->nr_vmas++;
	}
	return 0;
}

static int open_pages(struct finish *f)
{
	struct cr_img *img;
	int fd;

	f->a->pages_fd = -1;
	if (!f->p->nr_runs)
		return 0;
	if (f->p->has_chain_fd) {
		fd = fcntl(f->p->chain_fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return neg_errno();
		f->a->pages_fd = fd;
		return task_keep_fd(f, fd);
	}
	img = img_open(f->ctx->dirfd, CR_IMG_PAGES, f->p->pages_id, IMG_READ);
	if (!img)
		return -errno;
	fd = fcntl(img_raw_fd(img), F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		pr_perror("pid %d: dup of the pages image %u", f->pid, f->p->pages_id);
	img_close(img);
	if (fd < 0)
		return neg_errno();
	f->a->pages_fd = fd;
	return task_keep_fd(f, fd);
}

static int layout(struct finish *f)
{
	const CoreEntry *c = f->core;
	_cleanup_free_ uint32_t *pending = calloc(c->n_threads, sizeof(*pending));
	_cleanup_free_ uint64_t *frames = calloc(c->n_threads, sizeof(*frames));
	struct rst_layout_in in = {
		.blob_size = sizeof(restorer_blob),
		.nr_runs = (uint32_t)f->p->nr_runs,
		.nr_crcs = (uint32_t)f->p->nr_crcs,
		.nr_threads = (uint32_t)c->n_threads,
		.nr_timers = (uint32_t)c->tc->n_posix_timers,
		.nr_shared_pending = (uint32_t)c->tc->n_shared_pending,
		.nr_groups = (uint32_t)f->p->creds->n_groups,
		.nr_close_fds = MAX_FDS,
	};
	size_t i;
	int err;

	f->lay.threads = calloc(c->n_threads, sizeof(*f->lay.threads));
	if (!pending || !frames || !f->lay.threads)
		return -ENOMEM;
	for (i = 0; i < f->p->mm->n_vmas; i++) {
		in.nr_vmas += vma_mapped(f->p->mm->vmas[i]);
		in.nr_guards += (uint32_t)(f->p->mm->vmas[i]->n_guards / 2);
	}
	in.nr_aios = (uint32_t)f->p->mm->n_aios;
	for (i = 0; i < f->p->mm->n_aios; i++)
		if (f->p->mm->aios[i]->has_events)
			in.aio_event_bytes += f->p->mm->aios[i]->events.len;
	err = rst_pidfd_threads(f->ctx, f->t, NULL, &in.nr_tpidfds);
	if (!err)
		err = rst_io_uring_bufs(f->ctx, f->t, NULL, NULL, &in.nr_uring_regs,
					&in.nr_uring_iovs);
	if (err)
		return err;
	for (i = 0; i < c->n_threads; i++) {
		pending[i] = (uint32_t)c->threads[i]->n_pending;
		frames[i] = arch_sigframe_size(c->threads[i]->xsave.len);
	}
	for (i = 0; i < f->nr_specials; i++)
		in.scratch_size += f->specials[i].cur_end - f->specials[i].cur_start;
	/*
	 * The seccomp filters (restore-seccomp.c) take the room of extra
	 * siginfos after the last thread's queue: within the args, so within
	 * the mapping the controller unmaps (the scratch part, last, is split
	 * off it once the special mappings leave).
	 */
	err = task_seccomp_size(f, &f->seccomp_size);
	if (err)
		return err;
	i = c->n_threads - 1;
	pending[i] += (uint32_t)((f->seccomp_size + sizeof(struct rst_siginfo) - 1) /
				 sizeof(struct rst_siginfo));
	in.thread_pending = pending;
	in.frame_size = frames;
	err = rst_layout_compute(&in, &f->lay);
	if (err)
		return err;
	f->seccomp_off = f->lay.threads[i].pending_off +
			 c->threads[i]->n_pending * sizeof(struct rst_siginfo);
	return 0;
}

/* The restorer area, where the current layout, the saved one and the shared area leave room. */
static int map_area(struct finish *f)
{
	unsigned int tries;
	uint64_t addr, *slot;
	size_t i;
	int err;

	for (i = 0; i < f->p->mm->n_vmas; i++) {
		err = add_busy(f, f->p->mm->vmas[i]->start, f->p->mm->vmas[i]->end);
		if (err)
			return err;
	}
	err = add_busy(f, (uint64_t)f->ctx->shared, (uint64_t)f->ctx->shared + f->ctx->shared_size);
	/* Our own allocations since the maps were read may have taken the hole: look again. */
	for (tries = 0; !err && tries < 4; tries++) {
		struct rst_range cur[3];
		void *m;

		if (tries)
			err = read_self_maps(f, cur, true);
		if (!err)
			err = rst_find_hole(f->busy, f->nr_busy, f->lay.total, 1UL << 20,
					    RST_TASK_SIZE, &addr);
		if (err)
			break;
		m = fault_err(-ENOMEM, "pid %d: mmap of the restorer area", getpid())
			    ? MAP_FAILED
			    : mmap((void *)addr, f->lay.total, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (m != MAP_FAILED && (uint64_t)m == addr) {
			f->area = m;
			break;
		}
		if (m != MAP_FAILED)
			munmap(m, f->lay.total); /* before 4.17: NOREPLACE is only a hint */
		else if (errno != EEXIST)
			err = neg_errno();
	}
	if (!err && !f->area)
		err = -EEXIST;
	if (err) {
		pr_errno(err, "pid %d: no room for the restorer (%lu bytes)", f->pid, f->lay.total);
		return err;
	}
	memcpy(f->area, restorer_blob, sizeof(restorer_blob));
	f->a = (struct rst_args *)(f->area + f->lay.args_off);
	/* for the resume, which unmaps it (restore-task-resume.c) */
	slot = rst_area_slot(f->ctx, rst_task_idx(f->ctx, f->t));
	slot[0] = (uint64_t)(uintptr_t)f->area;
	slot[1] = (uint64_t)(uintptr_t)f->area + f->lay.total;
	return 0;
}

/* CRIU_LIKE_TEST_CREDS_PAUSE_MS (tests only): rst_args.creds_pause_ms; 0 without it. */
static uint32_t creds_pause_ms(void)
{
	const char *e = getenv("CRIU_LIKE_TEST_CREDS_PAUSE_MS");
	unsigned long ms = e ? strtoul(e, NULL, 10) : 0;

	return ms > 60000 ? 60000 : (uint32_t)ms;
}

static void fill_header(struct finish *f)
{
	struct rst_args *a = f->a;
	size_t i;

	a->magic = RST_ARGS_MAGIC;
	a->size = (uint32_t)f->lay.args_size;
	a->area_start = (uint64_t)f->area;
	a->area_len = f->lay.total;
	a->shared = (uint64_t)f->ctx->shared;
	a->shared_len = PAGE_ALIGN(f->ctx->shared_size);
	a->task_size = RST_TASK_SIZE;
	a->pid = f->pid;
	a->ppid = getppid();
	a->creds_pause_ms = creds_pause_ms();
	a->uffd_dev = -1;
	if (f->p->vma_lazy && f->p->lazy_bytes) {
		a->uffd_slot = (uint64_t)rst_lazy_slot(f->ctx,
						       (unsigned int)(f->t - f->ctx->tasks));
		a->uffd_dev = f->ctx->uffd_dev;
	}
	a->log_level = log_get_level();
	a->nr_specials = f->nr_specials;
	for (i = 0; i < f->nr_specials; i++) {
		a->specials[i] = f->specials[i];
		/* scratch_off counted from the scratch part: make it from the area start. */
		a->specials[i].scratch_off += f->lay.scratch_off;
	}
	a->vmas_off = f->lay.vmas_off;
	a->threads_off = f->lay.threads_off;
	a->nr_threads = (uint32_t)f->core->n_threads;
	a->runs_off = f->lay.runs_off;
	a->nr_runs = (uint32_t)f->p->nr_runs;
	memcpy((char *)a + a->runs_off, f->p->runs, f->p->nr_runs * sizeof(struct rst_page_run));
	/* The blob checks with the CPU's crc32c instruction; without it the pages go unchecked. */
	a->crcs_off = f->lay.crcs_off;
	if (arch_crc32c_have()) {
		a->nr_crcs = (uint32_t)f->p->nr_crcs;
		memcpy((char *)a + a->crcs_off, f->p->crcs,
		       f->p->nr_crcs * sizeof(struct rst_page_crc));
	}
	a->close_fds_off = f->lay.close_fds_off;
	/* an fd table shared with other tasks: the next one waits for this word */
	if (rst_fdt_in_group(f->t))
		a->fdt_done = (uint64_t)(uintptr_t)rst_fdt_word(f->ctx, f->t);
}

static int fd_cmp(const void *x, const void *y)
{
	return *(const int *)x - *(const int *)y;
}

/* A member of @f's fd table restored before it is the init of a new pid namespace. */
static bool fdt_init_before(const struct finish *f)
{
	const struct rst_task *m;

	for (m = rst_fdt_prev(f->ctx, f->t); m; m = rst_fdt_prev(f->ctx, m))
		if (rst_task_pidns_init(f->ctx, m))
			return true;
	return false;
}

/*
 * Hand the kept fds to the blob (which closes them once mapped) and close
 * every other service fd now. The log fd stays until the barrier.
 */
static int close_service_fds(struct finish *f)
{
	int32_t *out = (int32_t *)((char *)f->a + f->a->close_fds_off);
	int keep[2 * MAX_FDS + 1], base = f->ctx->service_fd_base, lo;
	unsigned int i, n = 0;
	size_t j;

	for (j = 0; j < f->a->nr_vmas; j++) {
		const struct rst_vma *v = (struct rst_vma *)((char *)f->a + f->a->vmas_off) + j;

		for (i = 0; v->fd >= 0 && i < f->nr_fds && f->fds[i] != v->fd; i++)
			;
		if (v->fd >= 0 && i == f->nr_fds && task_keep_fd(f, v->fd))
			return -E2BIG;
	}
	for (i = 0; i < f->nr_fds; i++)
		out[i] = keep[n++] = f->fds[i];
	f->a->nr_close_fds = f->nr_fds;
	/*
	 * An fd table shared with tasks still to come (files/fdtable.c): the
	 * service fds stay for them, and this restorer gets no log fd, which it
	 * would close after the barrier while another task may use the number.
	 */
	f->a->log_fd = -1;
	f->a->ctl_pidfd = -1;
	/*
	 * The init of a new pid namespace watches the controller to its barrier
	 * (restore.md). In a shared table the number stays open for it: the
	 * last member keeps it (below), this init closes it after its barrier;
	 * only the first init of a table, so that one close is made.
	 */
	if (!f->a->ppid && f->ctx->ctl_pidfd >= base && !fdt_init_before(f))
		f->a->ctl_pidfd = f->ctx->ctl_pidfd;
	if (!rst_fdt_last(f->t))
		return 0;
	/* the copy of stderr where errors were repeated goes with the service fds */
	log_no_echo();
	f->a->log_fd = log_get_fd() >= base ? log_get_fd() : -1;
	if (f->a->log_fd >= 0)
		keep[n++] = f->a->log_fd;
	if (f->a->ctl_pidfd >= 0 || (f->ctx->ctl_pidfd >= base && fdt_init_before(f)))
		keep[n++] = f->ctx->ctl_pidfd;
	/* /dev/userfaultfd: the blob makes its uffd through it, then closes it */
	if (f->a->uffd_dev >= base) {
		keep[n++] = f->a->uffd_dev;
		f->a->uffd_dev_close = 1;
	}
	/* the last of a shared table: what the restorers before it still hold */
	n += rst_fdt_kept(f->ctx, f->t, keep + n, 2 * MAX_FDS + 1 - n);
	qsort(keep, n, sizeof(int), fd_cmp);
	lo = base;
	for (i = 0; i <= n; i++) {
		int hi = i < n ? keep[i] : -1;

		if (hi >= 0 && hi < lo)
			continue;
		if ((hi < 0 || hi > lo) &&
		    syscall(SYS_close_range, lo, hi < 0 ? ~0U : (unsigned int)hi - 1, 0)) {
			pr_perror("pid %d: close_range(%d, %d)", f->pid, lo, hi - 1);
			return neg_errno();
		}
		if (hi >= 0)
			lo = hi + 1;
		else
			break;
	}
	return 0;
}

/* glibc registered rseq for this thread in memory about to vanish: unregister it first. */
static int unregister_rseq(pid_t pid)
{
	void *area = (char *)__builtin_thread_pointer() + __rseq_offset;

	if (!__rseq_size)
		return 0;
	if (syscall(SYS_rseq, area, __rseq_size, RSEQ_FLAG_UNREGISTER, RSEQ_SIG) &&
	    syscall(SYS_rseq, area, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG)) {
		pr_perror("pid %d: rseq unregistration", pid);
		return neg_errno();
	}
	return 0;
}

static int build_args(struct finish *f)
{
	uint64_t xfeatures = arch_xfeatures();
	uint32_t i;
	int err;

	fill_header(f);
	err = plan_vmas(f);
	if (!err)
		err = plan_guards(f);
	if (!err)
		err = plan_aios(f);
	if (!err) {
		f->a->tpidfds_off = f->lay.tpidfds_off;
		err = rst_pidfd_threads(f->ctx, f->t,
					(struct rst_tpidfd *)((char *)f->a + f->lay.tpidfds_off),
					&f->a->nr_tpidfds);
	}
	if (!err) {
		f->a->uring_regs_off = f->lay.uring_regs_off;
		f->a->uring_iovs_off = f->lay.uring_iovs_off;
		err = rst_io_uring_bufs(f->ctx, f->t,
					(struct rst_uring_reg *)((char *)f->a +
								 f->lay.uring_regs_off),
					(struct rst_iovec *)((char *)f->a + f->lay.uring_iovs_off),
					&f->a->nr_uring_regs, &f->a->nr_uring_iovs);
	}
	if (!err)
		err = open_pages(f);
	if (!err)
		err = task_plan_mm(f);
	for (i = 0; !err && i < f->core->n_threads; i++)
		err = task_plan_thread(f, i, xfeatures);
	if (!err)
		err = task_plan_process(f);
	if (!err)
		err = task_plan_seccomp(f);
	if (!err)
		err = task_plan_creds(f);
	if (!err)
		err = task_restore_misc(f);
	return err;
}

static void finish_cleanup(struct finish *f)
{
	unsigned int i;

	for (i = 0; i < f->nr_files; i++)
		close(f->files[i].fd);
	if (f->a && f->a->pages_fd >= 0)
		close(f->a->pages_fd);
	if (f->area)
		munmap(f->area, f->lay.total);
	free(f->busy);
	free(f->lay.threads);
}

int rst_task_finish(struct restore_ctx *ctx, struct rst_task *t)
{
	struct finish *f = calloc(1, sizeof(*f));
	const struct rst_thread *th0;
	sigset_t all;
	int err;

	if (!f)
		return -ENOMEM;
	f->ctx = ctx;
	f->t = t;
	f->p = t->mem;
	f->core = t->core;
	f->pid = (pid_t)t->pe->pid;
	if (!f->p || !f->core || !f->core->n_threads || f->core->threads[0]->tid != t->pe->pid) {
		pr_err("pid %d: no memory plan or core, or the leader is not the first thread\n",
		       f->pid);
		free(f);
		return -EINVAL;
	}
	/* the pages of the VMAs mapped before the forks are in already */
	err = rst_cow_finish(ctx, t);
	if (!err)
		err = plan_specials(f);
	if (!err)
		err = layout(f);
	if (!err)
		err = map_area(f);
	if (!err)
		err = build_args(f);
	if (!err)
		err = close_service_fds(f);
	/* the root last: every path above is the dumper's view, a chroot hides them */
	if (!err)
		err = rst_fs_chroot(f->t);
	sigfillset(&all);
	if (!err && sigprocmask(SIG_SETMASK, &all, NULL))
		err = neg_errno();
	if (!err)
		err = unregister_rseq(f->pid);
	if (err) {
		pr_err("pid %d: cannot start the restorer\n", f->pid);
		finish_cleanup(f);
		free(f);
		return err;
	}
	pr_debug("pid %d: restorer at %p (%lu bytes), %u VMAs, %u runs, %u threads\n", f->pid,
		 f->area, f->lay.total, f->a->nr_vmas, f->a->nr_runs, f->a->nr_threads);
	th0 = (const struct rst_thread *)((char *)f->a + f->a->threads_off);
	arch_rst_jump((uint64_t)f->area + restorer_blob_offset__entry,
		      (uint64_t)f->a + th0->stack_top_off, (uint64_t)f->a,
		      (uint64_t)f->a + th0->frame_off);
}
