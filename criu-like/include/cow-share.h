/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copy-on-write sharing across fork (Documentation/memory.md, section 7):
 * which private pages of a task are the same physical page as its parent's
 * at the same address, so the dump saves them once (PE_PARENT_SHARED).
 */
#ifndef CRIU_LIKE_COW_SHARE_H
#define CRIU_LIKE_COW_SHARE_H

#include <stddef.h>
#include <stdint.h>

#include "mem-scan.h"
#include "proc-parse.h"

/*
 * Pages [@start, @start + @n pages) whose pagemap entries @child[i] and
 * @parent[i] are both present, not page cache, not the zero page
 * (@zero_pfn, 0: unknown) and hold the same nonzero PFN are appended to
 * @out (merged, with @policy). Pure; 0 or -ENOMEM.
 */
int cow_same_pfn(unsigned long start, const uint64_t *child, const uint64_t *parent, size_t n,
		 uint64_t zero_pfn, enum mem_policy policy, struct mem_runs *out);

/*
 * The runs of the @n lists (each sorted, all disjoint; NULL entries
 * skipped) as one sorted list, touching runs of one policy merged, appended
 * to @out. Pure; 0 or -ENOMEM.
 */
int cow_runs_union(const struct mem_runs *const *lists, unsigned int n, struct mem_runs *out);

/*
 * The parts of @same (sorted, in bytes) inside @saved (sorted, disjoint:
 * every page of the parent that its image holds, as data, in its parent
 * dump or in its own parent's), appended to @out in address order with
 * the policy of @same. Pure; 0 or -ENOMEM.
 */
int cow_shared_runs(const struct mem_runs *same, const struct mem_runs *saved,
		    struct mem_runs *out);

/*
 * Read /proc/@pid/pagemap and /proc/@ppid/pagemap over @runs and append to
 * @same the pages that are the same physical page in both. Needs
 * CAP_SYS_ADMIN to see the PFNs: without it nothing is found (0). 0 or
 * -errno (logged).
 */
int cow_scan_same(pid_t pid, pid_t ppid, const struct mem_runs *runs, struct mem_runs *same);

/*
 * A parent's pagemap entries over the pages its image holds (@saved), read
 * once for all its children: a page outside @saved cannot be shared.
 */
struct cow_parent {
	pid_t pid;
	struct mem_runs saved;
	uint64_t *ents; /* one per page of saved, run after run */
};

/* Read @pid's entries over @saved (taken over by @cp). 0 or -errno (logged). */
int cow_parent_load(pid_t pid, struct mem_runs *saved, struct cow_parent *cp);
void cow_parent_fini(struct cow_parent *cp);

/*
 * A task's pagemap entries over its private VMAs that hold anonymous pages,
 * read ahead (in the background while another task is dumped,
 * dump/prepare.c) so that the comparison with its parent does not wait for
 * the read: 2-4 ms per 256 MiB here.
 */
struct cow_pagemap {
	unsigned int nr;
	struct cow_pm_seg {
		unsigned long start;
		size_t n; /* pages */
		uint64_t *ents;
	} * seg;
};

/*
 * Read @pid's entries over the private VMAs of @vmas with anonymous pages,
 * up to COW_PREFETCH_MAX entries in all (what is left out is read when it
 * is compared). 0 or -errno, not logged (it is run in a thread of its own,
 * and a failure only means the entries are read later); @pm holds what was
 * read either way.
 */
int cow_pagemap_prefetch(pid_t pid, const struct vma_list *vmas, struct cow_pagemap *pm);
/* The entries cow_pagemap_prefetch() would read for @vmas. Pure. */
size_t cow_pagemap_need(const struct vma_list *vmas);
void cow_pagemap_fini(struct cow_pagemap *pm);

/*
 * The same as cow_scan_same() against a loaded parent, @pm (NULL: none) read
 * ahead, @pid's pagemap read through @pagemap_fd (-1: opened here).
 */
int cow_scan_same_cached(pid_t pid, int pagemap_fd, const struct cow_parent *cp,
			 const struct cow_pagemap *pm, const struct mem_runs *runs,
			 struct mem_runs *same);

/*
 * The entries of @cp over [@addr, @addr + @n pages) into @out (0 where it
 * saved nothing). Pure.
 */
void cow_parent_ents(const struct cow_parent *cp, unsigned long addr, size_t n, uint64_t *out);

#endif
