// SPDX-License-Identifier: GPL-2.0
/*
 * The private anonymous pages of a final dump on a tracked pre-dump chain,
 * found from the write tracking's bits alone (Documentation/memory.md, "The
 * final dump's scan"): the present pages are not walked again, so the freeze
 * does not grow with the memory.
 *
 * A page whose PTE still holds the uffd-wp bit was protected by a round and
 * has neither been written nor dropped since (a write clears the bit, a
 * dropped page leaves an empty PTE without it, a page faulted in again has
 * none): its content is the one the chain holds, PE_PARENT. Everything else
 * of the VMA (written, dropped, never faulted, the shared zero page, which no
 * round protects) is what PAGEMAP_SCAN reports as PAGE_IS_WRITTEN with
 * PAGE_IS_WRITTEN alone in both masks: the kernel's fast walk, a bit test a
 * PTE, where the scan of present pages looks at each page (4 ms a GiB here,
 * against 0.6). Only those ranges are scanned for present pages, as data.
 */
#define LOG_PREFIX "mem: "

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "compat.h"
#include "log.h"
#include "mem-int.h"
#include "mem-scan.h"
#include "util.h"

#define SINCE_VEC 1024 /* regions a call; the walk goes on from where it stopped */

bool mem_vma_since_ok(const struct vma_entry *v, enum mem_policy policy)
{
	/* hugetlb pages are walked by another path of the kernel: not taken here */
	return policy == MEM_SAVE_ANON && !(v->vm_flags & VMF_HT);
}

/* [@start, @end) of @fd's task: the ranges whose PTEs lack the uffd-wp bit, appended to @out. */
static int written_bits(int fd, unsigned long start, unsigned long end, struct page_region *vec,
			size_t vec_len, struct mem_runs *out)
{
	struct pm_scan_arg a = {
		.size = sizeof(a),
		.start = start,
		.end = end,
		.vec = (uintptr_t)vec,
		.vec_len = vec_len,
		/* the fast walk: nothing but PAGE_IS_WRITTEN asked, nothing inverted */
		.category_mask = PAGE_IS_WRITTEN,
		.return_mask = PAGE_IS_WRITTEN,
		/* a VMA not registered would read as written whole: -EPERM instead */
		.flags = PM_SCAN_CHECK_WPASYNC,
	};
	unsigned long next;

	while (a.start < end) {
		long n = ioctl(fd, PAGEMAP_SCAN, &a);
		int err = 0;

		if (n < 0)
			return neg_errno();
		for (long i = 0; i < n && !err; i++)
			err = mem_runs_append(out, vec[i].start,
					      (vec[i].end - vec[i].start) >> PAGE_SHIFT,
					      MEM_SAVE_ANON);
		if (err)
			return err;
		if (mem_scan_resume(a.start, end, a.walk_end, vec, (size_t)n, vec_len, &next))
			return -EIO;
		a.start = next;
	}
	return 0;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

/*
 * Written ranges closer than this many pages are scanned for present pages
 * in one call, which then leaves out the protected pages between them: a
 * call costs more than the walk of a few dozen PTEs.
 */
#define SINCE_GAP 64

struct since_count {
	uint64_t candidates; /* pages reported written (or never protected) */
	unsigned int regions, calls;
	uint64_t walk_us; /* the fast walks */
};

/*
 * One VMA: the written ranges scanned for present pages (@data), the rest
 * (PE_PARENT) to @parent. -EPERM: not registered (new, moved, or its uffd
 * lost), nothing appended.
 */
static int since_vma(pid_t pid, int fd, const struct vma_entry *v, struct page_region *vec,
		     struct mem_runs *data, struct mem_runs *parent, struct since_count *n)
{
	struct mem_runs w = { 0 };
	unsigned long pos = v->start;
	uint64_t t0 = now_us();
	int err = written_bits(fd, v->start, v->end, vec, SINCE_VEC, &w);

	n->walk_us += now_us() - t0;
	n->regions += w.nr;
	for (unsigned int i = 0, j; !err && i < w.nr; i = j) {
		unsigned long s = w.runs[i].start, e = s + w.runs[i].nr_pages * PAGE_SIZE;

		n->candidates += w.runs[i].nr_pages;
		if (s > pos)
			err = mem_runs_append(parent, pos, (s - pos) >> PAGE_SHIFT, MEM_SAVE_ANON);
		for (j = i + 1; j < w.nr && w.runs[j].start - e <= SINCE_GAP * PAGE_SIZE; j++) {
			/* the protected pages between stay PE_PARENT */
			if (!err)
				err = mem_runs_append(parent, e,
						      (w.runs[j].start - e) >> PAGE_SHIFT,
						      MEM_SAVE_ANON);
			n->candidates += w.runs[j].nr_pages;
			e = w.runs[j].start + w.runs[j].nr_pages * PAGE_SIZE;
		}
		n->calls++;
		if (!err)
			err = mem_scan_range(pid, fd, s, e, MEM_SAVE_ANON, j > i + 1, data);
		pos = e;
	}
	if (!err && pos < v->end)
		err = mem_runs_append(parent, pos, (v->end - pos) >> PAGE_SHIFT, MEM_SAVE_ANON);
	mem_runs_fini(&w);
	return err;
}

static uint64_t runs_pages(const struct mem_runs *r)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < r->nr; i++)
		n += r->runs[i].nr_pages;
	return n;
}

int mem_scan_since(pid_t pid, int fd, const struct vma_list *vmas, const enum mem_policy *policy,
		   struct mem_runs *data, struct mem_runs *parent, bool *untracked,
		   struct mem_stats *st)
{
	_cleanup_free_ struct page_region *vec = calloc(SINCE_VEC, sizeof(*vec));
	struct since_count c = { 0 };
	uint64_t t0 = now_us(), pages = 0;
	unsigned int nr = 0;
	int err = vec ? 0 : -ENOMEM;

	for (unsigned int i = 0; i < vmas->nr && !err; i++) {
		const struct vma_entry *v = &vmas->vmas[i];
		unsigned int dmark = data->nr, pmark = parent->nr;
		unsigned long dlast = dmark ? data->runs[dmark - 1].nr_pages : 0;
		unsigned long plast = pmark ? parent->runs[pmark - 1].nr_pages : 0;

		if (!mem_vma_since_ok(v, policy[i]))
			continue;
		nr++;
		pages += (v->end - v->start) >> PAGE_SHIFT;
		err = since_vma(pid, fd, v, vec, data, parent, &c);
		if (err != -EPERM)
			continue;
		/* not registered: every page of it is new, as mem_scan_tracked() says */
		pr_debug("pid %d: %lx-%lx is not tracked: saved whole\n", pid, v->start, v->end);
		data->nr = dmark;
		if (dmark)
			data->runs[dmark - 1].nr_pages = dlast;
		parent->nr = pmark;
		if (pmark)
			parent->runs[pmark - 1].nr_pages = plast;
		untracked[i] = true;
		err = mem_scan_range(pid, fd, v->start, v->end, MEM_SAVE_ANON, false, data);
	}
	if (err) {
		pr_errno(err, "pid %d: finding the pages written since the last round", pid);
		return err;
	}
	st->pages_scanned += pages;
	st->pages_to_save += runs_pages(data);
	pr_info("pid %d: %u private VMAs (%" PRIu64 " pages) by their write bits (%" PRIu64
		" us): %" PRIu64 " pages in %u ranges written or not protected, scanned in %u "
		"calls: %u runs of data; %" PRIu64 " us\n",
		pid, nr, pages, c.walk_us, c.candidates, c.regions, c.calls, data->nr,
		now_us() - t0);
	return 0;
}

/*
 * What mem_scan_since() relies on, tried once on our own memory with the
 * rounds' protection (of present pages only, never of a whole range, which
 * would leave markers on empty PTEs): after a protected page is dropped
 * (MADV_DONTNEED) and another written, the fast walk reports both, and the
 * PTEs never filled; so does it a 2 MiB whose only page, protected, was
 * dropped (its page table may be freed: CONFIG_PT_RECLAIM). The protected
 * pages left it does not report. Before 6.10 (the fix of the fast walk that
 * read a swap entry's bits as a present PTE's) it is not used at all.
 */
static int protect(int uffd, unsigned long start, unsigned long len)
{
	struct uffdio_writeprotect wp = { .range = { start, len },
					  .mode = UFFDIO_WRITEPROTECT_MODE_WP };

	return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
}

static bool since_try(void)
{
	const unsigned long two = 2UL << 20;
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC };
	struct page_region r[8];
	struct mem_runs w = { 0 };
	unsigned long base;
	char *m;
	int uffd, pm;
	bool ok = false;

	m = mmap(NULL, 3 * two, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return false;
	base = ((unsigned long)m + two - 1) & ~(two - 1);
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (uffd >= 0 && pm >= 0 && !madvise((void *)base, 2 * two, MADV_NOHUGEPAGE) &&
	    !ioctl(uffd, UFFDIO_API, &api)) {
		struct uffdio_register reg = { .range = { base, 2 * two },
					       .mode = UFFDIO_REGISTER_MODE_WP };

		memset((void *)base, 1, 4 * PAGE_SIZE);
		memset((void *)(base + two), 1, PAGE_SIZE);
		if (!ioctl(uffd, UFFDIO_REGISTER, &reg) && !protect(uffd, base, 4 * PAGE_SIZE) &&
		    !protect(uffd, base + two, PAGE_SIZE) &&
		    !madvise((void *)(base + PAGE_SIZE), PAGE_SIZE, MADV_DONTNEED) &&
		    !madvise((void *)(base + two), two, MADV_DONTNEED)) {
			((volatile char *)base)[2 * PAGE_SIZE] = 2;
			ok = !written_bits(pm, base, base + 2 * two, r, ARRAY_SIZE(r), &w) &&
			     w.nr == 2 && w.runs[0].start == base + PAGE_SIZE &&
			     w.runs[0].nr_pages == 2 && w.runs[1].start == base + 4 * PAGE_SIZE &&
			     w.runs[1].nr_pages == 2 * two / PAGE_SIZE - 4;
		}
	}
	mem_runs_fini(&w);
	if (pm >= 0)
		close(pm);
	if (uffd >= 0)
		close(uffd);
	munmap(m, 3 * two);
	return ok;
}

static bool kernel_at_least(unsigned int major, unsigned int minor)
{
	struct utsname u;
	unsigned int a = 0, b = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &a, &b) != 2)
		return false;
	return a > major || (a == major && b >= minor);
}

bool mem_scan_since_works(void)
{
	static int known = -1; /* set once probed: the workers of a parallel dump ask too */
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (k >= 0)
		return k;
	k = kernel_at_least(6, 10) && since_try();
	pr_debug("the write bits %s tell the final dump's pages\n", k ? "alone" : "do not");
	__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	return k;
}
