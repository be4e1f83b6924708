// SPDX-License-Identifier: GPL-2.0
/*
 * Copy-on-write sharing across fork (Documentation/memory.md, section 7): a
 * private page of a task that is the same physical page as its parent's at
 * the same address (a fork's copy-on-write, not written since by either) is
 * saved once, in the parent's image; the task's pagemap says
 * PE_PARENT_SHARED. PFNs are compared through /proc/PID/pagemap, which
 * shows them to CAP_SYS_ADMIN only.
 */
#define LOG_PREFIX "cow: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat.h"
#include "cow-share.h"
#include "log.h"
#include "util.h"

#define COW_ENTRIES 16384 /* pagemap entries per pread: 128 KiB per task */

static bool same_page(uint64_t c, uint64_t p, uint64_t zero_pfn)
{
	uint64_t pfn = c & PM_PFN_MASK;

	if (!(c & PM_PRESENT) || !(p & PM_PRESENT) || (c & PM_FILE) || (p & PM_FILE))
		return false;
	/*
	 * Mapped by both: neither entry says mapped once (a read ahead of a
	 * page the child had alone, freed and reused since, is not taken for one)
	 */
	if ((c & PM_MMAP_EXCLUSIVE) || (p & PM_MMAP_EXCLUSIVE))
		return false;
	return pfn && pfn == (p & PM_PFN_MASK) && pfn != zero_pfn;
}

int cow_same_pfn(unsigned long start, const uint64_t *child, const uint64_t *parent, size_t n,
		 uint64_t zero_pfn, enum mem_policy policy, struct mem_runs *out)
{
	size_t i = 0;
	int err = 0;

	while (i < n && !err) {
		size_t j;

		if (!same_page(child[i], parent[i], zero_pfn)) {
			i++;
			continue;
		}
		for (j = i + 1; j < n && same_page(child[j], parent[j], zero_pfn); j++)
			;
		err = mem_runs_append(out, start + i * PAGE_SIZE, j - i, policy);
		i = j;
	}
	return err;
}

static int run_cmp(const void *a, const void *b)
{
	const struct mem_run *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int cow_runs_union(const struct mem_runs *const *lists, unsigned int n, struct mem_runs *out)
{
	struct mem_runs all = { 0 };
	int err = 0;

	for (unsigned int l = 0; l < n && !err; l++)
		for (unsigned int i = 0; lists[l] && i < lists[l]->nr && !err; i++)
			err = mem_runs_append(&all, lists[l]->runs[i].start,
					      lists[l]->runs[i].nr_pages, lists[l]->runs[i].policy);
	if (!err && all.nr)
		qsort(all.runs, all.nr, sizeof(*all.runs), run_cmp);
	/* disjoint lists: only touching runs of one policy merge */
	for (unsigned int i = 0; i < all.nr && !err; i++)
		err = mem_runs_append(out, all.runs[i].start, all.runs[i].nr_pages,
				      all.runs[i].policy);
	mem_runs_fini(&all);
	return err;
}

static unsigned long end_of(const struct mem_run *r)
{
	return r->start + r->nr_pages * PAGE_SIZE;
}

int cow_shared_runs(const struct mem_runs *same, const struct mem_runs *saved, struct mem_runs *out)
{
	unsigned int k = 0;
	int err = 0;

	for (unsigned int i = 0; i < same->nr && !err; i++) {
		unsigned long pos = same->runs[i].start, end = end_of(&same->runs[i]);

		while (k < saved->nr && end_of(&saved->runs[k]) <= pos)
			k++;
		for (unsigned int j = k; j < saved->nr && saved->runs[j].start < end && !err; j++) {
			unsigned long a = max(pos, saved->runs[j].start);
			unsigned long b = min(end, end_of(&saved->runs[j]));

			err = mem_runs_append(out, a, (b - a) / PAGE_SIZE, same->runs[i].policy);
		}
	}
	return err;
}

/* The entries of [@addr, @addr + @n pages): 0 or -errno, quietly (the read-ahead's). */
static int pread_ents(int fd, unsigned long addr, uint64_t *e, size_t n)
{
	off_t off = (off_t)(addr / PAGE_SIZE * sizeof(*e));
	size_t want = n * sizeof(*e);
	ssize_t got = pread(fd, e, want, off);

	if (got == (ssize_t)want)
		return 0;
	return got < 0 ? neg_errno() : -EIO;
}

static int read_ents(int fd, pid_t pid, unsigned long addr, uint64_t *e, size_t n)
{
	int err = pread_ents(fd, addr, e, n);

	if (err)
		pr_errno(err, "pid %d: pagemap at %lx (%zu pages)", pid, addr, n);
	return err;
}

static int open_pagemap_quiet(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static int open_pagemap(pid_t pid)
{
	int fd = open_pagemap_quiet(pid);

	if (fd < 0)
		pr_perror("pid %d: open /proc/%d/pagemap", pid, pid);
	return fd;
}

static int scan_same(int cfd, int pfd, pid_t pid, pid_t ppid, const struct mem_runs *runs,
		     struct mem_runs *same, uint64_t *c, uint64_t *p)
{
	uint64_t zero = mem_zero_pfn();
	int err = 0;

	for (unsigned int i = 0; i < runs->nr && !err; i++) {
		const struct mem_run *r = &runs->runs[i];

		for (unsigned long done = 0; done < r->nr_pages && !err;) {
			size_t n = min(r->nr_pages - done, (unsigned long)COW_ENTRIES);
			unsigned long addr = r->start + done * PAGE_SIZE;

			err = read_ents(cfd, pid, addr, c, n);
			if (!err)
				err = read_ents(pfd, ppid, addr, p, n);
			if (!err)
				err = cow_same_pfn(addr, c, p, n, zero, r->policy, same);
			done += n;
		}
	}
	return err;
}

/* The buffers are allocated here, not with a cleanup attribute cppcheck cannot follow. */
int cow_scan_same(pid_t pid, pid_t ppid, const struct mem_runs *runs, struct mem_runs *same)
{
	_cleanup_close_ int cfd = open_pagemap(pid);
	_cleanup_close_ int pfd = open_pagemap(ppid);
	uint64_t *c, *p;
	int err;

	if (cfd < 0 || pfd < 0)
		return neg_errno();
	c = calloc(COW_ENTRIES, sizeof(*c));
	p = calloc(COW_ENTRIES, sizeof(*p));
	err = c && p ? scan_same(cfd, pfd, pid, ppid, runs, same, c, p) : -ENOMEM;
	free(c);
	free(p);
	return err;
}

int cow_parent_load(pid_t pid, struct mem_runs *saved, struct cow_parent *cp)
{
	_cleanup_close_ int fd = open_pagemap(pid);
	unsigned long total = 0, k = 0;
	int err = 0;

	*cp = (struct cow_parent){ .pid = pid, .saved = *saved };
	*saved = (struct mem_runs){ 0 };
	if (fd < 0)
		return neg_errno();
	for (unsigned int i = 0; i < cp->saved.nr; i++)
		total += cp->saved.runs[i].nr_pages;
	cp->ents = calloc(total + 1, sizeof(*cp->ents));
	if (!cp->ents)
		return -ENOMEM;
	for (unsigned int i = 0; i < cp->saved.nr && !err; i++) {
		const struct mem_run *r = &cp->saved.runs[i];

		for (unsigned long done = 0; done < r->nr_pages && !err;) {
			size_t n = min(r->nr_pages - done, (unsigned long)COW_ENTRIES);

			err = read_ents(fd, pid, r->start + done * PAGE_SIZE, cp->ents + k, n);
			k += n;
			done += n;
		}
	}
	return err;
}

void cow_parent_fini(struct cow_parent *cp)
{
	mem_runs_fini(&cp->saved);
	free(cp->ents);
	*cp = (struct cow_parent){ 0 };
}

void cow_parent_ents(const struct cow_parent *cp, unsigned long addr, size_t n, uint64_t *out)
{
	const struct mem_runs *s = &cp->saved;
	unsigned int lo = 0, hi = s->nr;
	unsigned long end = addr + n * PAGE_SIZE, k = 0;

	memset(out, 0, n * sizeof(*out));
	/* the first run that ends after @addr */
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (s->runs[mid].start + s->runs[mid].nr_pages * PAGE_SIZE <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (unsigned int i = 0; i < lo; i++)
		k += s->runs[i].nr_pages;
	for (unsigned int i = lo; i < s->nr && s->runs[i].start < end; i++) {
		const struct mem_run *r = &s->runs[i];
		unsigned long a = max(addr, r->start);
		unsigned long b = min(end, r->start + r->nr_pages * PAGE_SIZE);

		memcpy(out + (a - addr) / PAGE_SIZE, cp->ents + k + (a - r->start) / PAGE_SIZE,
		       (b - a) / PAGE_SIZE * sizeof(*out));
		k += r->nr_pages;
	}
}

/* 64 MiB of entries per task (32 GiB of memory): past that, read when compared */
#define COW_PREFETCH_MAX (8UL << 20)

/* The VMAs read ahead: private, holding anonymous pages, while they fit in COW_PREFETCH_MAX. */
static bool prefetched(const struct vma_entry *v, size_t *total)
{
	size_t n = (v->end - v->start) / PAGE_SIZE;

	if (v->shared || !v->anonymous || *total + n > COW_PREFETCH_MAX)
		return false;
	*total += n;
	return true;
}

size_t cow_pagemap_need(const struct vma_list *vmas)
{
	size_t total = 0;

	for (unsigned int i = 0; i < vmas->nr; i++)
		prefetched(&vmas->vmas[i], &total);
	return total;
}

int cow_pagemap_prefetch(pid_t pid, const struct vma_list *vmas, struct cow_pagemap *pm)
{
	_cleanup_close_ int fd = -1;
	size_t total = 0;
	int err = 0;

	*pm = (struct cow_pagemap){ 0 };
	pm->seg = calloc(vmas->nr + 1, sizeof(*pm->seg));
	if (!pm->seg)
		return -ENOMEM;
	/* quiet: what is not read ahead is read when compared */
	fd = open_pagemap_quiet(pid);
	if (fd < 0)
		return neg_errno();
	for (unsigned int i = 0; i < vmas->nr && !err; i++) {
		const struct vma_entry *v = &vmas->vmas[i];
		struct cow_pm_seg *s = &pm->seg[pm->nr];

		if (!prefetched(v, &total))
			continue;
		s->n = (v->end - v->start) / PAGE_SIZE;
		s->start = v->start;
		s->ents = malloc(s->n * sizeof(*s->ents));
		if (!s->ents)
			return -ENOMEM;
		err = pread_ents(fd, s->start, s->ents, s->n);
		if (err)
			free(s->ents);
		else
			pm->nr++;
	}
	return err;
}

void cow_pagemap_fini(struct cow_pagemap *pm)
{
	for (unsigned int i = 0; i < pm->nr; i++)
		free(pm->seg[i].ents);
	free(pm->seg);
	*pm = (struct cow_pagemap){ 0 };
}

/* The entries of [@addr, @addr + @n pages) from @pm into @out, if one segment holds them all. */
static bool pm_ents(const struct cow_pagemap *pm, unsigned long addr, size_t n, uint64_t *out)
{
	for (unsigned int i = 0; pm && i < pm->nr; i++) {
		const struct cow_pm_seg *s = &pm->seg[i];

		if (s->start <= addr && addr + n * PAGE_SIZE <= s->start + s->n * PAGE_SIZE) {
			memcpy(out, s->ents + (addr - s->start) / PAGE_SIZE, n * sizeof(*out));
			return true;
		}
	}
	return false;
}

static int scan_cached(int fd, pid_t pid, const struct cow_parent *cp, const struct cow_pagemap *pm,
		       const struct mem_runs *runs, struct mem_runs *same, uint64_t *c, uint64_t *p)
{
	uint64_t zero = mem_zero_pfn();
	int err = 0;

	for (unsigned int i = 0; i < runs->nr && !err; i++) {
		const struct mem_run *r = &runs->runs[i];

		for (unsigned long done = 0; done < r->nr_pages && !err;) {
			size_t n = min(r->nr_pages - done, (unsigned long)COW_ENTRIES);
			unsigned long addr = r->start + done * PAGE_SIZE;

			err = pm_ents(pm, addr, n, c) ? 0 : read_ents(fd, pid, addr, c, n);
			if (!err) {
				cow_parent_ents(cp, addr, n, p);
				err = cow_same_pfn(addr, c, p, n, zero, r->policy, same);
			}
			done += n;
		}
	}
	return err;
}

/* The buffers are allocated here, not with a cleanup attribute cppcheck cannot follow. */
int cow_scan_same_cached(pid_t pid, int pagemap_fd, const struct cow_parent *cp,
			 const struct cow_pagemap *pm, const struct mem_runs *runs,
			 struct mem_runs *same)
{
	_cleanup_close_ int own = pagemap_fd < 0 ? open_pagemap(pid) : -1;
	int fd = pagemap_fd < 0 ? own : pagemap_fd;
	uint64_t *c, *p;
	int err;

	if (fd < 0)
		return neg_errno();
	c = calloc(COW_ENTRIES, sizeof(*c));
	p = calloc(COW_ENTRIES, sizeof(*p));
	err = c && p ? scan_cached(fd, pid, cp, pm, runs, same, c, p) : -ENOMEM;
	free(c);
	free(p);
	return err;
}
