// SPDX-License-Identifier: GPL-2.0
/*
 * The pure part of dump --snapshot (snapshot.c): where a page lies in the
 * pages image, and whether a chunk read while the tree runs is still the
 * memory of the freeze.
 */
#include <errno.h>
#include <stdlib.h>

#include "snapshot.h"
#include "util.h"

int snap_layout_init(struct snap_layout *l, const struct mem_runs *runs)
{
	unsigned int i;

	l->runs = runs;
	l->first = calloc(runs->nr + 1, sizeof(*l->first));
	if (!l->first)
		return -ENOMEM;
	for (i = 0; i < runs->nr; i++)
		l->first[i + 1] = l->first[i] + runs->runs[i].nr_pages;
	return 0;
}

void snap_layout_fini(struct snap_layout *l)
{
	free(l->first);
	l->first = NULL;
}

int64_t snap_page_index(const struct snap_layout *l, unsigned long addr, unsigned int *ret_run)
{
	unsigned int lo = 0, hi = l->runs->nr;

	/* the last run starting at or below @addr */
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (l->runs->runs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	lo--;
	if (addr >= l->runs->runs[lo].start + l->runs->runs[lo].nr_pages * PAGE_SIZE)
		return -ENOENT;
	*ret_run = lo;
	return (int64_t)(l->first[lo] + (addr - l->runs->runs[lo].start) / PAGE_SIZE);
}

long snap_chunk_check(const uint8_t *state, unsigned long addr, unsigned long nr_pages,
		      const struct page_region *reg, unsigned int nr_reg)
{
	unsigned long i;
	unsigned int r = 0;

	for (i = 0; i < nr_pages; i++) {
		unsigned long a = addr + i * PAGE_SIZE;

		if (state[i] == SNAP_FAULTED)
			continue;
		while (r < nr_reg && reg[r].end <= a)
			r++;
		if (r == nr_reg || reg[r].start > a)
			return (long)i;
	}
	return -ENOENT;
}
