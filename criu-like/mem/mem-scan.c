// SPDX-License-Identifier: GPL-2.0
/*
 * Memory plan of a dump: where the pages of each VMA that must be saved are
 * (PAGEMAP_SCAN, or /proc/PID/pagemap read), by the policy of each VMA
 * (mem-policy.c). See include/mem-scan.h and Documentation/memory.md.
 */
#define LOG_PREFIX "mem: "
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "compat.h"
#include "log.h"
#include "par.h"
#include "mem-int.h"
#include "mem-scan.h"
#include "util.h"

#define VEC_MIN 256
#define VEC_MAX 65536
#define FB_ENTRIES 65536 /* pagemap entries per pread: 512 KiB */

struct scan_ctx {
	pid_t pid;
	int fd; /* /proc/PID/pagemap */
	bool own_fd; /* opened here, closed with the context */
	bool fallback; /* read entries instead of PAGEMAP_SCAN */
	bool written; /* only pages written since the last round; write-protect them again */
	struct mem_runs *unprotected; /* MEM_SCAN_UNPROTECTED: where those go, or NULL */
	bool no_since; /* MEM_SCAN_NO_SINCE: skip what mem_scan_since() finds */
	bool unprotected_only; /* mem_scan_range(): only the pages that read as written */
	uint64_t zero_pfn; /* the shared zero page, 0 when unknown */
	struct page_region *vec;
	size_t vec_len;
	uint64_t *ents;
	struct mem_stats *st;
};

static void scan_ctx_fini(struct scan_ctx *c)
{
	free(c->vec);
	free(c->ents);
	if (c->own_fd)
		closep(&c->fd);
}

/*
 * Private anonymous pages that were only read map the shared zero page: the
 * restore gets them for free, so they are not saved (PAGE_IS_PFNZERO, 6.7).
 * The fallback recognizes it by its PFN, learnt from pages of our own that
 * we only read. PFNs read as 0 without CAP_SYS_ADMIN (4.2); then zero pages
 * are saved like any other.
 *
 * A kernel may also never map the zero page: s390 KVM hosts
 * (mm_forbids_zeropage) or a PVM guest booted with pvm_no_zero_page=1 give a
 * read fault a fresh private page of its own. The PFN read then is an
 * ordinary page, freed again by the munmap; taking it for the zero page would
 * drop any written page of the victim that later lands in that frame
 * (compaction, khugepaged, or simply the next allocation). So two separate
 * mappings must show the same PFN, not exclusively mapped: only the zero page
 * does that. Otherwise the PFN is unknown, and pages are saved.
 */
static uint64_t zero_pfn_probe(void)
{
	_cleanup_close_ int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	volatile char *p[2] = { MAP_FAILED, MAP_FAILED };
	uint64_t e[2] = { 0, 0 }, pfn = 0;
	unsigned int i;

	if (fd < 0)
		return 0;
	/* A page each: too little for a THP, and so for the huge zero page. */
	for (i = 0; i < 2; i++) {
		p[i] = mmap(NULL, PAGE_SIZE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p[i] == MAP_FAILED)
			goto out;
		(void)p[i][0];
	}
	for (i = 0; i < 2; i++)
		if (pread(fd, &e[i], sizeof(e[i]),
			  ((uintptr_t)p[i] >> PAGE_SHIFT) * sizeof(e[i])) != sizeof(e[i]))
			goto out;
	if (!(e[0] & PM_PRESENT) || !(e[0] & PM_PFN_MASK)) {
		pr_debug("zero page PFN unknown: zero pages will be saved\n");
		goto out;
	}
	if ((e[0] & PM_PFN_MASK) != (e[1] & PM_PFN_MASK) || ((e[0] | e[1]) & PM_MMAP_EXCLUSIVE)) {
		pr_debug("read faults map no shared zero page here: such pages will be saved\n");
		goto out;
	}
	pfn = e[0] & PM_PFN_MASK;
out:
	for (i = 0; i < 2; i++)
		if (p[i] != MAP_FAILED)
			munmap((void *)p[i], PAGE_SIZE);
	return pfn;
}

/*
 * The zero page is set up at boot and never moves: probed once per process
 * (it was a pagemap open, two mappings and two reads for each task of a
 * tree). An unknown answer (0) is asked again next time.
 */
uint64_t mem_zero_pfn(void)
{
	static uint64_t pfn;
	uint64_t v = __atomic_load_n(&pfn, __ATOMIC_RELAXED);

	if (!v) {
		v = zero_pfn_probe();
		__atomic_store_n(&pfn, v, __ATOMIC_RELAXED);
	}
	return v;
}

static bool entry_wanted(const struct scan_ctx *c, uint64_t e, enum mem_policy policy)
{
	if (!(e & (PM_PRESENT | PM_SWAP)) || (e & PM_GUARD_REGION))
		return false;
	/* Bit 61: a page cache page (file or shmem), not a COWed anonymous copy. */
	if (policy == MEM_SAVE_COW && (e & PM_FILE))
		return false;
	if ((e & PM_PRESENT) && c->zero_pfn && (e & PM_PFN_MASK) == c->zero_pfn)
		return false;
	return true;
}

static int scan_fallback(struct scan_ctx *c, unsigned long start, unsigned long end,
			 enum mem_policy policy, struct mem_runs *out)
{
	unsigned long addr = start;

	if (!c->ents) {
		c->ents = malloc(FB_ENTRIES * sizeof(*c->ents));
		if (!c->ents)
			return -ENOMEM;
		c->zero_pfn = mem_zero_pfn();
	}
	while (addr < end) {
		size_t n = min((end - addr) >> PAGE_SHIFT, (unsigned long)FB_ENTRIES);
		ssize_t got = pread(c->fd, c->ents, n * sizeof(*c->ents),
				    (off_t)((addr >> PAGE_SHIFT) * sizeof(*c->ents)));

		if (got < 0)
			return neg_errno();
		if (got < (ssize_t)sizeof(*c->ents))
			return -EIO;
		n = got / sizeof(*c->ents);
		for (size_t i = 0; i < n; i++) {
			int err;

			if (!entry_wanted(c, c->ents[i], policy))
				continue;
			err = mem_runs_append(out, addr + i * PAGE_SIZE, 1, policy);
			if (err)
				return err;
		}
		addr += n * PAGE_SIZE;
	}
	return 0;
}

static int grow_vec(struct scan_ctx *c)
{
	size_t len = c->vec_len ? c->vec_len * 2 : VEC_MIN;
	struct page_region *n;

	if (c->vec_len >= VEC_MAX)
		return 0;
	n = reallocarray(c->vec, len, sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->vec = n;
	c->vec_len = len;
	return 0;
}

/*
 * Whether PAGEMAP_SCAN knows PAGE_IS_GUARD (6.14), probed once on our own
 * pagemap: a page of a guard region (MADV_GUARD_INSTALL) is a page table
 * marker that the scan would report as swapped, and reading it faults.
 */
bool mem_scan_knows_guards(void)
{
	static int known = -1; /* set once probed: the workers of a parallel dump ask too */
	struct pm_scan_arg a = { .size = sizeof(a) };
	struct page_region r[2] = { 0 };
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED), fd;
	char *p;

	if (k >= 0)
		return k;
	k = 0;
	p = mmap(NULL, 2 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (p != MAP_FAILED && fd >= 0 && !madvise(p + PAGE_SIZE, PAGE_SIZE, MADV_GUARD_INSTALL)) {
		a.start = (uintptr_t)p;
		a.end = (uintptr_t)p + 2 * PAGE_SIZE;
		a.vec = (uintptr_t)r;
		a.vec_len = 2;
		a.category_mask = a.return_mask = PAGE_IS_GUARD;
		k = ioctl(fd, PAGEMAP_SCAN, &a) == 1 && r[0].start == a.start + PAGE_SIZE;
	}
	if (fd >= 0)
		close(fd);
	if (p != MAP_FAILED)
		munmap(p, 2 * PAGE_SIZE);
	pr_debug("PAGEMAP_SCAN %s guard regions\n", k ? "finds" : "does not find");
	__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	return k;
}

int mem_scan_guards(int pagemap_fd, unsigned long start, unsigned long end, uint64_t **ret,
		    size_t *nr)
{
	struct pm_scan_arg a = { .size = sizeof(a), .start = start, .end = end };
	struct page_region r[64];
	unsigned long next;
	size_t cap = 0;

	*ret = NULL;
	*nr = 0;
	if (!mem_scan_knows_guards())
		return 0;
	a.vec = (uintptr_t)r;
	a.vec_len = ARRAY_SIZE(r);
	a.category_mask = a.return_mask = PAGE_IS_GUARD;
	while (a.start < end) {
		long n = ioctl(pagemap_fd, PAGEMAP_SCAN, &a);

		if (n < 0)
			return neg_errno();
		for (long i = 0; i < n; i++) {
			if (*nr + 2 > cap) {
				uint64_t *g = reallocarray(*ret, cap ? cap * 2 : 8, sizeof(*g));

				if (!g)
					return -ENOMEM;
				*ret = g;
				cap = cap ? cap * 2 : 8;
			}
			(*ret)[(*nr)++] = r[i].start;
			(*ret)[(*nr)++] = r[i].end;
		}
		if (mem_scan_resume(a.start, end, a.walk_end, r, (size_t)n, ARRAY_SIZE(r), &next))
			return -EIO;
		a.start = next;
	}
	return 0;
}

static void scan_arg_init(struct pm_scan_arg *a, unsigned long start, unsigned long end,
			  enum mem_policy policy, bool written)
{
	*a = (struct pm_scan_arg){
		.size = sizeof(*a),
		.start = start,
		.end = end,
		/* present or swapped, and never the shared zero page */
		.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
		.category_inverted = PAGE_IS_PFNZERO,
		.category_mask = PAGE_IS_PFNZERO,
		.return_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
	};
	/* never a page of a guard region: a marker, no data, and reading it faults */
	if (mem_scan_knows_guards()) {
		a->category_inverted |= PAGE_IS_GUARD;
		a->category_mask |= PAGE_IS_GUARD;
	}
	/* Private file mapping: only pages that are not page cache, i.e. COWed copies. */
	if (policy == MEM_SAVE_COW) {
		a->category_inverted |= PAGE_IS_FILE;
		a->category_mask |= PAGE_IS_FILE;
	}
	/*
	 * Dirty tracking without soft-dirty: a page is WRITTEN when its PTE lost
	 * the uffd-wp bit. WP_MATCHING sets it again on what we report, in the
	 * same walk, so no write between two rounds is lost; CHECK_WPASYNC makes
	 * the kernel refuse a range that is not registered with WP_ASYNC, which
	 * would otherwise report every page as written forever.
	 */
	if (written) {
		a->category_mask |= PAGE_IS_WRITTEN;
		a->flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC;
	}
}

/*
 * PAGEMAP_SCAN fills the caller's vector through a bounce buffer of 512
 * regions inside the kernel, and sets walk_end only when that buffer is
 * full. A call whose walk fills it, flushes it and then reaches @end with
 * fewer regions than the vector holds returns every region but leaves
 * walk_end where the buffer filled, below the last region reported (seen
 * on 6.18; the kernel rereads walk_end as 0 at each call, so only calls
 * that return more than 512 regions are hit). Resuming from that walk_end
 * walks the end of the range again: its regions come twice, out of address
 * order (and a written-page walk finds them protected by then). So: a call
 * that did not fill the vector has walked to @end; one that did goes on
 * from walk_end or the end of its last region, whichever is higher. The
 * regions of a call must be in order, after @start, below @end: -EIO for
 * anything else, rather than a plan out of order.
 */
int mem_scan_resume(unsigned long start, unsigned long end, unsigned long walk_end,
		    const struct page_region *vec, size_t n, size_t vec_len, unsigned long *next)
{
	unsigned long prev = start;

	for (size_t i = 0; i < n; i++) {
		if (vec[i].start < prev || vec[i].end <= vec[i].start || vec[i].end > end)
			return -EIO;
		prev = vec[i].end;
	}
	if (n > vec_len)
		return -EIO;
	if (n < vec_len) {
		*next = end;
		return 0;
	}
	*next = max(walk_end, prev);
	/* no progress: never loop forever on a kernel surprise */
	return *next <= start || *next > end ? -EIO : 0;
}

/* Scan [@start, @end) with a vector that grows (up to VEC_MAX) while calls fill it. */
static int scan_ioctl(struct scan_ctx *c, unsigned long start, unsigned long end,
		      enum mem_policy policy, struct mem_runs *out)
{
	struct pm_scan_arg a;
	unsigned long next;
	int err;

	if (!c->vec && (err = grow_vec(c)))
		return err;
	scan_arg_init(&a, start, end, policy, c->written);
	/* regions split where the protection changes: the runs append joins them again */
	if ((c->unprotected && policy == MEM_SAVE_ANON) || c->unprotected_only)
		a.return_mask |= PAGE_IS_WRITTEN;
	while (a.start < end) {
		long n;

		a.vec = (uintptr_t)c->vec;
		a.vec_len = c->vec_len;
		n = ioctl(c->fd, PAGEMAP_SCAN, &a);
		if (n < 0)
			return neg_errno();
		c->st->nr_ioctls++;
		for (long i = 0; i < n; i++) {
			const struct page_region *r = &c->vec[i];

			if (c->unprotected_only && !(r->categories & PAGE_IS_WRITTEN))
				continue;
			err = mem_runs_append(out, r->start, (r->end - r->start) >> PAGE_SHIFT,
					      policy);
			if (!err && (a.return_mask & r->categories & PAGE_IS_WRITTEN) &&
			    c->unprotected)
				err = mem_runs_append(c->unprotected, r->start,
						      (r->end - r->start) >> PAGE_SHIFT, policy);
			if (err)
				return err;
		}
		if (mem_scan_resume(a.start, end, a.walk_end, c->vec, (size_t)n, c->vec_len,
				    &next)) {
			pr_err("pid %d: PAGEMAP_SCAN %llx-%lx: %ld regions out of order or out of "
			       "the range (walk_end %llx)\n",
			       c->pid, (unsigned long long)a.start, end, n,
			       (unsigned long long)a.walk_end);
			return -EIO;
		}
		if ((size_t)n == c->vec_len && (err = grow_vec(c)))
			return err;
		a.start = next;
	}
	return 0;
}

static int scan_range(struct scan_ctx *c, unsigned long start, unsigned long end,
		      enum mem_policy policy, struct mem_runs *out)
{
	unsigned int mark = out->nr;
	unsigned long last_pages = mark ? out->runs[mark - 1].nr_pages : 0;
	int err;

	c->st->pages_scanned += (end - start) >> PAGE_SHIFT;
	if (!c->fallback) {
		err = scan_ioctl(c, start, end, policy, out);
		/* EINVAL/ENOTTY: a kernel before 6.7 (or one without these categories). */
		if (err != -EINVAL && err != -ENOTTY)
			return err;
		/* The pagemap has no written bit without CONFIG_MEM_SOFT_DIRTY. */
		if (c->written || c->unprotected || c->unprotected_only)
			return -EOPNOTSUPP;
		pr_debug("pid %d: PAGEMAP_SCAN: %s, reading /proc/%d/pagemap instead\n", c->pid,
			 strerror(-err), c->pid);
		c->fallback = true;
		c->st->fallback = true;
		/* drop a partial result before rescanning */
		out->nr = mark;
		if (mark)
			out->runs[mark - 1].nr_pages = last_pages;
	}
	return scan_fallback(c, start, end, policy, out);
}

static uint64_t runs_pages(const struct mem_runs *r, unsigned int from)
{
	uint64_t n = 0;

	for (unsigned int i = from; i < r->nr; i++)
		n += r->runs[i].nr_pages;
	return n;
}

static int scan_shmem_vma(struct scan_ctx *c, const struct vma_entry *v, struct shmem_set *shm)
{
	struct mem_runs found = { 0 };
	int err;

	err = scan_range(c, v->start, v->end, MEM_SAVE_SHMEM, &found);
	if (!err) {
		bool held = par_hold(); /* the tree's set: the big lock of a parallel dump */

		err = shmem_set_add(shm, c->pid, v, &found);
		par_unhold(held);
	}
	if (!err)
		c->st->pages_to_save += runs_pages(&found, 0);
	mem_runs_fini(&found);
	return err;
}

/* Read-only code: its written pages but those holding only breakpoints (mem-breakpoints.c). */
static int scan_code_vma(struct scan_ctx *c, const struct vma_entry *v, struct mem_runs *runs)
{
	struct mem_runs found = { 0 };
	uint64_t dropped = 0;
	int err;

	err = scan_range(c, v->start, v->end, MEM_SAVE_COW, &found);
	if (!err && found.nr)
		err = mem_drop_breakpoint_pages(c->pid, v, &found, runs, &dropped);
	if (!err)
		c->st->pages_to_save += runs_pages(&found, 0) - dropped;
	mem_runs_fini(&found);
	return err;
}

/* Whether VMA @i is scanned by the plain walk of scan_vmas() (not shmem, not breakpoint code). */
static bool plain_scan(const struct vma_list *vmas, const struct mem_plan *p, unsigned int i)
{
	return mem_policy_saves(p->policy[i]) && p->policy[i] != MEM_SAVE_SHMEM &&
	       !(p->policy[i] == MEM_SAVE_COW && mem_vma_may_hold_breakpoints(&vmas->vmas[i]));
}

/*
 * The last VMA from @i on that one PAGEMAP_SCAN takes with it: the next ones
 * while they start where the one before ends (no VMA outside the list, such
 * as the parasite's area, between them) with the same policy. The runs of
 * adjacent VMAs are joined anyway (mem_runs_append()), so the plan is the
 * same with one call in place of one per VMA (a library's read-only and
 * data parts). Not for the written pages, whose range must be registered
 * whole (-EPERM per VMA, mem_scan_tracked()).
 */
static unsigned int plain_scan_last(const struct scan_ctx *c, const struct vma_list *vmas,
				    const struct mem_plan *p, unsigned int i)
{
	unsigned int j = i;

	while (!c->written && j + 1 < vmas->nr && vmas->vmas[j + 1].start == vmas->vmas[j].end &&
	       p->policy[j + 1] == p->policy[i] && plain_scan(vmas, p, j + 1))
		j++;
	return j;
}

static int scan_vmas(struct scan_ctx *c, const struct vma_list *vmas, struct shmem_set *shm,
		     struct mem_plan *p)
{
	for (unsigned int i = 0; i < vmas->nr; i++) {
		const struct vma_entry *v = &vmas->vmas[i];
		unsigned int mark = p->runs.nr, last = i;
		int err;

		if (!mem_policy_saves(p->policy[i]))
			continue;
		/* MEM_SCAN_NO_SINCE: found from the write bits instead (scan-since.c) */
		if (c->no_since && mem_vma_since_ok(v, p->policy[i]))
			continue;
		/* Written tracking covers private memory; shmem is saved whole by the last dump. */
		if (c->written && p->policy[i] == MEM_SAVE_SHMEM)
			continue;
		if (p->policy[i] == MEM_SAVE_SHMEM) {
			err = scan_shmem_vma(c, v, shm);
		} else if (p->policy[i] == MEM_SAVE_COW && mem_vma_may_hold_breakpoints(v)) {
			err = scan_code_vma(c, v, &p->runs);
		} else {
			/* The last run may grow into this VMA: count only what is new. */
			uint64_t before = runs_pages(&p->runs, mark ? mark - 1 : 0);

			last = plain_scan_last(c, vmas, p, i);
			err = scan_range(c, v->start, vmas->vmas[last].end, p->policy[i], &p->runs);
			if (!err)
				c->st->pages_to_save += runs_pages(&p->runs, mark ? mark - 1 : 0) -
							before;
		}
		if (err) {
			pr_errno(err, "pid %d: scanning %lx-%lx (%s)", c->pid, v->start,
				 vmas->vmas[last].end, mem_policy_name(p->policy[i]));
			return err;
		}
		i = last;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int open_pagemap(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = neg_errno();

		pr_perror("pid %d: open %s", pid, path);
		return err;
	}
	return fd;
}

static int scan_task(pid_t pid, int pagemap_fd, const struct vma_list *vmas, unsigned int flags,
		     struct shmem_set *shm, bool written, struct mem_plan *ret)
{
	struct mem_plan p = { .pid = pid, .nr_vmas = vmas->nr };
	struct scan_ctx c = { .pid = pid, .fd = -1, .st = &p.stats };
	uint64_t t0 = now_ns();
	int err;

	p.policy = calloc(vmas->nr ?: 1, sizeof(*p.policy));
	if (!p.policy)
		return -ENOMEM;
	/* Classify everything first: a refusal must come before any work. */
	for (unsigned int i = 0; i < vmas->nr; i++) {
		err = mem_vma_policy(pid, &vmas->vmas[i], &p.policy[i]);
		if (err)
			goto fail;
	}
	c.own_fd = pagemap_fd < 0;
	c.fd = c.own_fd ? open_pagemap(pid) : pagemap_fd;
	if (c.fd < 0) {
		err = c.fd;
		goto fail;
	}
	c.fallback = flags & MEM_SCAN_FALLBACK;
	c.written = written;
	c.unprotected = flags & MEM_SCAN_UNPROTECTED ? &p.unprotected : NULL;
	c.no_since = flags & MEM_SCAN_NO_SINCE;
	p.stats.fallback = c.fallback;
	err = scan_vmas(&c, vmas, shm, &p);
	scan_ctx_fini(&c);
	if (err)
		goto fail;
	p.stats.scan_ns = now_ns() - t0;
	pr_info("pid %d: %" PRIu64 " pages scanned, %" PRIu64 " %s, %u runs, %" PRIu64 " us%s\n",
		pid, p.stats.pages_scanned, p.stats.pages_to_save,
		written ? "written since the last round" : "to save", p.runs.nr,
		p.stats.scan_ns / 1000, p.stats.fallback ? " (pagemap read)" : "");
	*ret = p;
	return 0;
fail:
	mem_plan_fini(&p);
	return err;
}

int mem_scan_task(pid_t pid, int pagemap_fd, const struct vma_list *vmas, unsigned int flags,
		  struct shmem_set *shm, struct mem_plan *ret)
{
	return scan_task(pid, pagemap_fd, vmas, flags, shm, false, ret);
}

int mem_scan_range(pid_t pid, int pagemap_fd, unsigned long start, unsigned long end,
		   enum mem_policy policy, bool unprotected, struct mem_runs *out)
{
	struct mem_stats st = { 0 };
	struct scan_ctx c = {
		.pid = pid, .fd = pagemap_fd, .st = &st, .unprotected_only = unprotected
	};
	int err = scan_range(&c, start, end, policy, out);

	scan_ctx_fini(&c);
	return err;
}

int mem_scan_tracked(pid_t pid, const struct vma_list *vmas, const enum mem_policy *policy,
		     bool skip_since, struct mem_runs *written, bool *untracked)
{
	struct mem_stats st = { 0 };
	struct scan_ctx c = { .pid = pid, .fd = -1, .own_fd = true, .st = &st };
	int err = 0;

	c.fd = open_pagemap(pid);
	if (c.fd < 0)
		return c.fd;
	for (unsigned int i = 0; i < vmas->nr && !err; i++) {
		const struct vma_entry *v = &vmas->vmas[i];
		unsigned int mark = written->nr;
		unsigned long last_pages = mark ? written->runs[mark - 1].nr_pages : 0;

		untracked[i] = false;
		if (policy[i] != MEM_SAVE_ANON && policy[i] != MEM_SAVE_COW)
			continue;
		if (skip_since && mem_vma_since_ok(v, policy[i]))
			continue;
		c.written = true;
		err = scan_range(&c, v->start, v->end, policy[i], written);
		if (err != -EPERM)
			continue;
		/* Not registered (new, moved, or the keeper lost): every page of it is new. */
		pr_debug("pid %d: %lx-%lx is not tracked: saved whole\n", pid, v->start, v->end);
		written->nr = mark;
		if (mark)
			written->runs[mark - 1].nr_pages = last_pages;
		untracked[i] = true;
		c.written = false;
		err = scan_range(&c, v->start, v->end, policy[i], written);
	}
	scan_ctx_fini(&c);
	if (err == -EOPNOTSUPP)
		pr_err("pid %d: written-page tracking needs PAGEMAP_SCAN (Linux 6.7)\n", pid);
	else if (err)
		pr_errno(err, "pid %d: scanning the pages written since the last round", pid);
	return err;
}

int mem_scan_written(pid_t pid, const struct vma_list *vmas, struct mem_plan *ret)
{
	struct shmem_set unused = { 0 };
	int err = scan_task(pid, -1, vmas, 0, &unused, true, ret);

	if (err == -EOPNOTSUPP)
		pr_err("pid %d: written-page tracking needs PAGEMAP_SCAN (Linux 6.7)\n", pid);
	else if (err == -EPERM)
		pr_err("pid %d: a private VMA is not registered with userfaultfd WP_ASYNC\n", pid);
	return err;
}
