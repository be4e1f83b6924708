// SPDX-License-Identifier: GPL-2.0
/*
 * Pure planning for the memory restore: VMA checks, page runs and their
 * offsets in the pages image, the hole for the restorer area and the layout
 * of that area. No I/O: test/unit/test-restore-mem.c runs it on fixtures.
 */
#define LOG_PREFIX "restore-mem: "

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "image.h"
#include "aio-ring.h"
#include "log.h"
#include "restore-mem.h"
#include "util.h"

static bool vma_private_kind(VmaKind k)
{
	return k == VMA_KIND__VMA_ANON_PRIVATE || k == VMA_KIND__VMA_STACK ||
	       k == VMA_KIND__VMA_HEAP || k == VMA_KIND__VMA_FILE_PRIVATE;
}

static int check_one_vma(pid_t pid, const MmEntry *mm, const VmaEntry *v)
{
	if (v->start >= v->end || v->start % PAGE_SIZE || v->end % PAGE_SIZE) {
		pr_err("pid %d: VMA %lx-%lx: bad bounds\n", pid, v->start, v->end);
		return -EINVAL;
	}
	if (v->end > RST_TASK_SIZE && v->kind != VMA_KIND__VMA_VSYSCALL) {
		pr_err("pid %d: VMA %lx-%lx above %lx (5-level paging) is not supported\n", pid,
		       v->start, v->end, RST_TASK_SIZE);
		return -EOPNOTSUPP;
	}
	switch (v->kind) {
	case VMA_KIND__VMA_ANON_SHARED:
		if (!v->has_shmid) {
			pr_err("pid %d: shared anonymous VMA %lx-%lx without shmid\n", pid,
			       v->start, v->end);
			return -EINVAL;
		}
		return 0;
	case VMA_KIND__VMA_SYSV_SHM:
		if (!v->has_shmid || v->shmid > INT32_MAX || v->pgoff % PAGE_SIZE) {
			pr_err("pid %d: SysV shm VMA %lx-%lx without a segment id or with offset "
			       "%lx\n",
			       pid, v->start, v->end, v->pgoff);
			return -EINVAL;
		}
		return 0;
	case VMA_KIND__VMA_FILE_PRIVATE:
	case VMA_KIND__VMA_FILE_SHARED:
		if (!v->has_file_id || v->pgoff % PAGE_SIZE) {
			pr_err("pid %d: file VMA %lx-%lx without file id or with offset %lx\n", pid,
			       v->start, v->end, v->pgoff);
			return -EINVAL;
		}
		return 0;
	case VMA_KIND__VMA_ANON_PRIVATE:
	case VMA_KIND__VMA_STACK:
	case VMA_KIND__VMA_HEAP:
	case VMA_KIND__VMA_VDSO:
	case VMA_KIND__VMA_VVAR:
	case VMA_KIND__VMA_VVAR_VCLOCK:
	case VMA_KIND__VMA_VSYSCALL:
		return 0;
	case VMA_KIND__VMA_AIO: /* made again from MmEntry.aios */
		if (!rst_aio_find(mm, v)) {
			pr_err("pid %d: AIO ring %lx-%lx without its entry\n", pid, v->start,
			       v->end);
			return -EINVAL;
		}
		return 0;
	default:
		pr_err("pid %d: VMA %lx-%lx of unknown kind %d\n", pid, v->start, v->end, v->kind);
		return -EINVAL;
	}
}

int rst_plan_check_vmas(pid_t pid, const MmEntry *mm)
{
	size_t i;
	int err;

	for (i = 0; i < mm->n_vmas; i++) {
		err = check_one_vma(pid, mm, mm->vmas[i]);
		if (err)
			return err;
		if (i && mm->vmas[i]->start < mm->vmas[i - 1]->end) {
			pr_err("pid %d: VMA %lx-%lx overlaps or precedes %lx-%lx\n", pid,
			       mm->vmas[i]->start, mm->vmas[i]->end, mm->vmas[i - 1]->start,
			       mm->vmas[i - 1]->end);
			return -EINVAL;
		}
	}
	return 0;
}

/* The index of the VMA holding @addr, or -ENOENT. */
static long vma_find(const MmEntry *mm, uint64_t addr)
{
	size_t lo = 0, hi = mm->n_vmas;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < mm->vmas[mid]->start)
			hi = mid;
		else if (addr >= mm->vmas[mid]->end)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -ENOENT;
}

/* Mark the private VMAs that [@start, @end) covers; they must touch each other. */
static int mark_fill(pid_t pid, struct rst_mem_plan *p, uint64_t start, uint64_t end)
{
	const MmEntry *mm = p->mm;
	long i = vma_find(mm, start);
	uint64_t pos = start;

	while (pos < end) {
		if (i < 0 || (size_t)i >= mm->n_vmas || mm->vmas[i]->start > pos ||
		    !vma_private_kind(mm->vmas[i]->kind)) {
			pr_err("pid %d: saved pages at %lx (run %lx-%lx) outside any private VMA\n",
			       pid, pos, start, end);
			return -EINVAL;
		}
		p->vma_fill[i] = true;
		pos = mm->vmas[i]->end;
		i++;
	}
	return 0;
}

static int check_entry(pid_t pid, const PagemapEntry *e, uint64_t prev_end)
{
	if (e->flags & PAGEMAP_FLAG__PE_DEDUPED) {
		pr_err("pid %d: pages at %lx were punched out by dedup (a newer image of the "
		       "chain holds them): restore that image\n",
		       pid, e->vaddr);
		return -ENODATA;
	}
	if (!(e->flags & PAGEMAP_FLAG__PE_PRESENT)) {
		pr_err("pid %d: pages at %lx are %s: not supported\n", pid, e->vaddr,
		       e->flags & PAGEMAP_FLAG__PE_PARENT ? "in a parent dump" : "lazy");
		return -EOPNOTSUPP;
	}
	if (e->vaddr % PAGE_SIZE || !e->nr_pages || e->vaddr < prev_end ||
	    e->vaddr + (uint64_t)e->nr_pages * PAGE_SIZE > RST_TASK_SIZE) {
		pr_err("pid %d: bad pagemap entry %lx +%u pages (previous end %lx)\n", pid,
		       e->vaddr, e->nr_pages, prev_end);
		return -EINVAL;
	}
	return 0;
}

int rst_plan_runs(pid_t pid, struct rst_mem_plan *p, PagemapEntry *const *pe, size_t n)
{
	uint64_t off = IMG_RAW_DATA_OFF, prev_end = 0;
	size_t i;
	int err;

	p->runs = calloc(n ? n : 1, sizeof(*p->runs));
	p->crcs = calloc(n ? n : 1, sizeof(*p->crcs));
	p->vma_fill = calloc(p->mm->n_vmas ? p->mm->n_vmas : 1, sizeof(*p->vma_fill));
	if (!p->runs || !p->crcs || !p->vma_fill)
		return -ENOMEM;
	p->nr_runs = 0;
	p->nr_crcs = 0;
	for (i = 0; i < n; i++) {
		uint64_t len = (uint64_t)pe[i]->nr_pages * PAGE_SIZE;
		struct rst_page_run *last = p->nr_runs ? &p->runs[p->nr_runs - 1] : NULL;

		err = check_entry(pid, pe[i], prev_end);
		if (!err)
			err = mark_fill(pid, p, pe[i]->vaddr, pe[i]->vaddr + len);
		if (err)
			return err;
		prev_end = pe[i]->vaddr + len;
		if (pe[i]->has_crc32c) {
			p->crcs[p->nr_crcs].off = off;
			p->crcs[p->nr_crcs].len = len;
			p->crcs[p->nr_crcs++].crc = pe[i]->crc32c;
		}
		if (last && last->vaddr + last->len == pe[i]->vaddr &&
		    last->off + last->len == off) {
			last->len += len;
		} else {
			p->runs[p->nr_runs].vaddr = pe[i]->vaddr;
			p->runs[p->nr_runs].len = len;
			p->runs[p->nr_runs].off = off;
			p->nr_runs++;
		}
		off += len;
	}
	p->pages_bytes = off - IMG_RAW_DATA_OFF;
	return 0;
}

void rst_plan_free(struct rst_mem_plan *p)
{
	if (!p)
		return;
	if (p->mm)
		protobuf_c_message_free_unpacked(&p->mm->base, NULL);
	if (p->creds)
		protobuf_c_message_free_unpacked(&p->creds->base, NULL);
	free(p->runs);
	free(p->crcs);
	free(p->crc_done);
	free(p->vma_fill);
	free(p->vma_lazy);
	free(p->shared);
	free(p->deferred);
	free(p->srcs);
	free(p->vma_keep);
	free(p->vma_kept);
	/* chain_fd is the memfd every plan shares: rst_chain_fini() */
	free(p);
}

static int range_cmp(const void *a, const void *b)
{
	const struct rst_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int rst_find_hole(const struct rst_range *busy, size_t n, uint64_t size, uint64_t lo, uint64_t hi,
		  uint64_t *ret)
{
	_cleanup_free_ struct rst_range *r = malloc((n ? n : 1) * sizeof(*r));
	uint64_t top = hi & PAGE_MASK;
	size_t i;

	if (!r)
		return -ENOMEM;
	size = PAGE_ALIGN(size);
	memcpy(r, busy, n * sizeof(*r));
	qsort(r, n, sizeof(*r), range_cmp);
	/* From here on r[i].end is the highest end among r[0..i]: ranges may overlap. */
	for (i = 1; i < n; i++)
		r[i].end = max(r[i].end, r[i - 1].end);
	/* Walk the gaps from the top down, like the kernel's mmap does. */
	for (i = n + 1; i-- > 0;) {
		uint64_t gap_lo = max(i ? PAGE_ALIGN(r[i - 1].end) : lo, lo);
		uint64_t gap_hi = min(i < n ? r[i].start & PAGE_MASK : top, top);

		if (gap_hi > gap_lo && gap_hi - gap_lo >= size + 2 * PAGE_SIZE) {
			*ret = gap_hi - PAGE_SIZE - size;
			return 0;
		}
	}
	return -ENOMEM;
}

/* Append @n items of @size bytes aligned to @align; false on overflow. */
static bool lay_add(uint64_t *pos, uint64_t n, uint64_t size, uint64_t align, uint64_t *ret)
{
	uint64_t p = (*pos + align - 1) & ~(align - 1);

	if (n && size > (UINT64_MAX / 4 - p) / n)
		return false;
	*ret = p;
	*pos = p + n * size;
	return true;
}

int rst_layout_compute(const struct rst_layout_in *in, struct rst_layout *out)
{
	uint64_t pos = 0, base, ign;
	bool ok = true;
	uint32_t i;

	base = out->args_off = PAGE_ALIGN(in->blob_size);
	ok &= lay_add(&pos, 1, sizeof(struct rst_args), 64, &ign);
	ok &= lay_add(&pos, in->nr_vmas, sizeof(struct rst_vma), 8, &out->vmas_off);
	ok &= lay_add(&pos, in->nr_runs, sizeof(struct rst_page_run), 8, &out->runs_off);
	ok &= lay_add(&pos, in->nr_crcs, sizeof(struct rst_page_crc), 8, &out->crcs_off);
	ok &= lay_add(&pos, in->nr_threads, sizeof(struct rst_thread), 8, &out->threads_off);
	ok &= lay_add(&pos, in->nr_timers, sizeof(struct rst_timer), 8, &out->timers_off);
	ok &= lay_add(&pos, in->nr_shared_pending, sizeof(struct rst_siginfo), 8,
		      &out->shared_pending_off);
	ok &= lay_add(&pos, in->nr_groups, sizeof(uint32_t), 8, &out->groups_off);
	ok &= lay_add(&pos, in->nr_close_fds, sizeof(int32_t), 8, &out->close_fds_off);
	ok &= lay_add(&pos, in->nr_guards, sizeof(struct rst_range), 8, &out->guards_off);
	ok &= lay_add(&pos, in->nr_tpidfds, sizeof(struct rst_tpidfd), 8, &out->tpidfds_off);
	ok &= lay_add(&pos, in->nr_aios, sizeof(struct rst_aio), 8, &out->aios_off);
	ok &= lay_add(&pos, in->aio_event_bytes, 1, 8, &out->aio_events_off);
	ok &= lay_add(&pos, in->nr_uring_regs, sizeof(struct rst_uring_reg), 8,
		      &out->uring_regs_off);
	ok &= lay_add(&pos, in->nr_uring_iovs, sizeof(struct rst_iovec), 8, &out->uring_iovs_off);
	for (i = 0; ok && i < in->nr_threads; i++)
		ok &= lay_add(&pos, in->thread_pending[i], sizeof(struct rst_siginfo), 8,
			      &out->threads[i].pending_off);
	out->args_size = pos;
	for (i = 0; ok && i < in->nr_threads; i++) {
		struct rst_thread_layout *t = &out->threads[i];

		ok &= lay_add(&pos, 1, 16 + RST_LOG_SIZE, 16, &t->log_off);
		/* The args start on a page: 64-byte alignment from them is real alignment. */
		ok &= lay_add(&pos, 1, RST_STACK_SIZE, 64, &ign);
		t->stack_top_off = pos;
		ok &= lay_add(&pos, 1, in->frame_size[i], 64, &t->frame_off);
	}
	ok &= lay_add(&pos, 1, in->scratch_size, PAGE_SIZE, &out->scratch_off);
	if (!ok || pos > (1ULL << 36)) /* 64 GiB of arguments: refused rather than tried */
		return -E2BIG;
	out->scratch_off += base;
	out->total = PAGE_ALIGN(base + pos);
	return 0;
}

const struct rst_shmem_obj *rst_shmem_find(const struct rst_shmem *s, uint64_t shmid)
{
	size_t i;

	for (i = 0; s && i < s->n; i++)
		if (s->objs[i].shmid == shmid)
			return &s->objs[i];
	return NULL;
}

/* ---- pre-dump chains ------------------------------------------------------ */

/* Data offsets (from the data start) of the PE_PRESENT entries of @l, in record order. */
int rst_chain_offsets(struct rst_chain_level *l)
{
	uint64_t off = 0;

	l->off = calloc(l->n ? l->n : 1, sizeof(*l->off));
	if (!l->off)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		l->off[i] = off;
		/* a part punched out by dedup keeps its place in the data */
		if (l->pe[i]->flags & (PAGEMAP_FLAG__PE_PRESENT | PAGEMAP_FLAG__PE_DEDUPED))
			off += (uint64_t)l->pe[i]->nr_pages * PAGE_SIZE;
	}
	return 0;
}

static int seg_push(struct rst_chain_segs *s, uint64_t vaddr, uint64_t len, unsigned int level,
		    size_t entry, uint64_t off)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct rst_chain_seg *n = reallocarray(s->seg, cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->seg = n;
		s->cap = cap;
	}
	s->seg[s->n++] = (struct rst_chain_seg){ vaddr, len, level, entry, off };
	return 0;
}

static uint64_t entry_end(const PagemapEntry *e)
{
	return e->vaddr + (uint64_t)e->nr_pages * PAGE_SIZE;
}

/* [@a, @b) from level @k on: each part from the first level whose entry holds its data. */
static int resolve_range(pid_t pid, const struct rst_chain_level *lv, unsigned int nlv,
			 unsigned int k, uint64_t a, uint64_t b, struct rst_chain_segs *out)
{
	const struct rst_chain_level *l;
	size_t lo = 0, hi;
	uint64_t pos = a;
	int err = 0;

	if (k >= nlv) {
		pr_err("pid %d: pages %lx-%lx are in no parent image (chain of %u)\n", pid, a, b,
		       nlv);
		return -EINVAL;
	}
	l = &lv[k];
	/* the first entry that ends after @a */
	for (hi = l->n; lo < hi;) {
		size_t mid = (lo + hi) / 2;

		if (entry_end(l->pe[mid]) <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; pos < b && !err; i++) {
		const PagemapEntry *e = i < l->n ? l->pe[i] : NULL;
		uint64_t stop;

		if (!e || e->vaddr > pos) {
			/*
			 * Not populated when level k was taken (the write-protection
			 * left a uffd-wp marker, which PAGEMAP_SCAN reports as swapped),
			 * and not written since: the mapping's own contents (the file,
			 * or zeros) are right. Documentation/memory.md, section 3.
			 */
			pos = e ? min(b, e->vaddr) : b;
			i--;
			continue;
		}
		stop = min(b, entry_end(e));
		if (e->flags & PAGEMAP_FLAG__PE_PRESENT)
			err = seg_push(out, pos, stop - pos, k, i, l->off[i] + (pos - e->vaddr));
		else if (e->flags & PAGEMAP_FLAG__PE_PARENT)
			err = resolve_range(pid, lv, nlv, l->next > k ? l->next : k + 1, pos, stop,
					    out);
		else if (e->flags & PAGEMAP_FLAG__PE_PARENT_SHARED) {
			if (l->shared <= k) {
				pr_err("pid %d: pages %lx-%lx in %s are its parent task's, whose "
				       "pagemap is not there\n",
				       pid, pos, stop, l->name);
				err = -EINVAL;
			} else {
				err = resolve_range(pid, lv, nlv, l->shared, pos, stop, out);
			}
		} else if (e->flags & PAGEMAP_FLAG__PE_DEDUPED) {
			pr_err("pid %d: pages %lx-%lx in %s were punched out by dedup (a newer "
			       "image of its chain holds them): restore that image\n",
			       pid, pos, stop, l->name);
			err = -ENODATA;
		} else {
			pr_err("pid %d: pages at %lx in %s are lazy: not supported\n", pid, pos,
			       l->name);
			err = -EOPNOTSUPP;
		}
		pos = stop;
	}
	return err;
}

/*
 * Every level's entries in address order, none overlapping: resolve_range()
 * searches a parent level by halves, and an entry out of order there would
 * make pages of the chain look never populated (zeros) instead of failing.
 */
static int level_check(pid_t pid, const struct rst_chain_level *l)
{
	uint64_t prev_end = 0;

	for (size_t i = 0; i < l->n; i++) {
		const PagemapEntry *e = l->pe[i];

		if (e->vaddr % PAGE_SIZE || !e->nr_pages || e->vaddr < prev_end ||
		    entry_end(e) > RST_TASK_SIZE) {
			pr_err("pid %d: bad pagemap entry %lx +%u pages in %s (previous end %lx)\n",
			       pid, e->vaddr, e->nr_pages, l->name ?: "the image", prev_end);
			return -EINVAL;
		}
		prev_end = entry_end(e);
	}
	return 0;
}

int rst_chain_resolve(pid_t pid, const struct rst_chain_level *lv, unsigned int nlv,
		      struct rst_chain_segs *out)
{
	const struct rst_chain_level *top = &lv[0];
	int err = 0;

	for (unsigned int k = 0; k < nlv && !err; k++)
		err = level_check(pid, &lv[k]);
	for (size_t i = 0; i < top->n && !err; i++) {
		const PagemapEntry *e = top->pe[i];

		err = resolve_range(pid, lv, nlv, 0, e->vaddr, entry_end(e), out);
	}
	return err;
}

int rst_chain_resolve_ranges(pid_t pid, const struct rst_chain_level *lv, unsigned int nlv,
			     const struct rst_chain_segs *ranges, struct rst_chain_segs *out)
{
	int err = 0;

	for (unsigned int k = 0; k < nlv && !err; k++)
		err = level_check(pid, &lv[k]);
	for (size_t i = 0; i < ranges->n && !err; i++)
		err = resolve_range(pid, lv, nlv, 0, ranges->seg[i].vaddr,
				    ranges->seg[i].vaddr + ranges->seg[i].len, out);
	return err;
}

int rst_chain_top(const struct rst_chain_level *top, struct rst_chain_segs *out)
{
	int err = 0;

	for (size_t i = 0; i < top->n && !err; i++)
		err = seg_push(out, top->pe[i]->vaddr, (uint64_t)top->pe[i]->nr_pages * PAGE_SIZE,
			       0, i, 0);
	return err;
}

bool rst_lazy_vma(const VmaEntry *v)
{
	/*
	 * uffd MISSING mode takes anonymous private memory only (not private
	 * file mappings, whose pages come from the file); MAP_LOCKED populates
	 * the area at mmap() with zeros a UFFDIO_COPY could not replace, and a
	 * PROT_NONE area that holds pages is filled as before.
	 */
	if (v->kind != VMA_KIND__VMA_ANON_PRIVATE && v->kind != VMA_KIND__VMA_STACK &&
	    v->kind != VMA_KIND__VMA_HEAP)
		return false;
	/* hugetlb: UFFDIO_COPY takes whole huge pages, the daemon serves 4 KiB ones */
	if (v->flags & MAP_HUGETLB)
		return false;
	return !(v->flags & MAP_LOCKED) && v->prot != PROT_NONE;
}

/* The pages [@a, @b) lies on (none for an empty range). */
static size_t span_pages(uint64_t a, uint64_t b)
{
	return b > a ? ((b + PAGE_SIZE - 1) >> PAGE_SHIFT) - (a >> PAGE_SHIFT) : 0;
}

/* Append the pages of [@a, @b) to @out[*@n...] while they fit in @max. */
static void push_span(uint64_t a, uint64_t b, uint64_t *out, size_t *n, size_t max)
{
	for (uint64_t p = a & ~(PAGE_SIZE - 1); b > a && p < b && *n < max; p += PAGE_SIZE)
		out[(*n)++] = p;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

size_t rst_eager_pages_max(const MmEntry *mm, const CoreEntry *core)
{
	/* an rseq area (32 bytes, aligned) lies on one page, at most two */
	size_t n = 2 * (core ? core->n_threads : 0);

	if (mm)
		n += span_pages(mm->arg_start, mm->arg_end) +
		     span_pages(mm->env_start, mm->env_end);
	return n;
}

size_t rst_eager_pages(const MmEntry *mm, const CoreEntry *core, uint64_t *out, size_t n,
		       size_t max)
{
	size_t k = 0;

	for (size_t i = 0; core && i < core->n_threads; i++) {
		const RseqEntry *r = core->threads[i]->rseq;

		if (r && r->len)
			push_span(r->ptr, r->ptr + r->len, out, &n, max);
	}
	if (mm) {
		push_span(mm->arg_start, mm->arg_end, out, &n, max);
		push_span(mm->env_start, mm->env_end, out, &n, max);
	}
	qsort(out, n, sizeof(*out), u64_cmp);
	for (size_t i = 0; i < n; i++)
		if (!k || out[k - 1] != out[i])
			out[k++] = out[i];
	return k;
}

/* Push [@a, @b) of @s, lazy but for the eager pages in it. */
static int lazy_piece(const struct rst_chain_seg *s, uint64_t a, uint64_t b, const uint64_t *eager,
		      size_t nr_eager, struct rst_chain_segs *out, uint64_t *lazy_bytes)
{
	uint64_t left = b - a;
	int err = 0;

	for (size_t k = 0; k < nr_eager && !err; k++) {
		if (eager[k] < a || eager[k] >= b)
			continue;
		err = seg_push(out, eager[k], PAGE_SIZE, s->level, s->entry,
			       s->off + (eager[k] - s->vaddr));
		left -= PAGE_SIZE;
	}
	*lazy_bytes += left;
	return err;
}

int rst_lazy_filter(const MmEntry *mm, const uint64_t *eager, size_t nr_eager, bool *vma_lazy,
		    const struct rst_chain_segs *in, struct rst_chain_segs *out,
		    uint64_t *lazy_bytes)
{
	int err = 0;

	for (size_t i = 0; i < in->n && !err; i++) {
		const struct rst_chain_seg *s = &in->seg[i];
		uint64_t pos = s->vaddr, end = s->vaddr + s->len;

		while (pos < end && !err) {
			long v = vma_find(mm, pos);
			uint64_t stop = v < 0 ? end : min(end, mm->vmas[v]->end);

			if (v >= 0 && rst_lazy_vma(mm->vmas[v])) {
				vma_lazy[v] = true;
				err = lazy_piece(s, pos, stop, eager, nr_eager, out, lazy_bytes);
			} else {
				/* rst_plan_runs() refuses what lies outside every VMA */
				err = seg_push(out, pos, stop - pos, s->level, s->entry,
					       s->off + (pos - s->vaddr));
			}
			pos = stop;
		}
	}
	return err;
}
