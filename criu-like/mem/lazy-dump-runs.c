// SPDX-License-Identifier: GPL-2.0
/*
 * The pure part of `dump --lazy-pages` (Documentation/lazy-pages.md, "A lazy
 * dump"): which pieces of a task's saved runs stay in the task (ld_split()),
 * and where the bytes of a pages image's holes are to be read (the index).
 */
#include <errno.h>
#include <stdlib.h>

#include "lazy-dump.h"
#include "util.h"

static int push(struct ld_piece **p, size_t *n, size_t *cap, uint64_t vaddr, uint64_t nr, bool lazy)
{
	struct ld_piece *last = *n ? &(*p)[*n - 1] : NULL;

	if (!nr)
		return 0;
	if (last && last->lazy == lazy && last->vaddr + last->nr_pages * PAGE_SIZE == vaddr) {
		last->nr_pages += nr;
		return 0;
	}
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct ld_piece *np = reallocarray(*p, c, sizeof(*np));

		if (!np)
			return -ENOMEM;
		*p = np;
		*cap = c;
	}
	(*p)[(*n)++] = (struct ld_piece){ vaddr, nr, lazy };
	return 0;
}

/* The VMA holding @a from *@vi on (both sorted), or NULL; *@vi advanced. */
static const struct ld_vma *vma_at(const struct ld_vma *v, size_t nv, size_t *vi, uint64_t a)
{
	while (*vi < nv && v[*vi].end <= a)
		(*vi)++;
	return *vi < nv && v[*vi].start <= a ? &v[*vi] : NULL;
}

/* Whether page @a is one of @eager, from *@ei on (both ascending). */
static bool is_eager(const uint64_t *eager, size_t ne, size_t *ei, uint64_t a)
{
	while (*ei < ne && eager[*ei] < a)
		(*ei)++;
	return *ei < ne && eager[*ei] == a;
}

int ld_split(const uint64_t *start, const uint64_t *nr_pages, size_t nr, const struct ld_vma *v,
	     size_t nv, const uint64_t *eager, size_t ne, struct ld_piece **out, size_t *n_out)
{
	struct ld_piece *p = NULL;
	size_t n = 0, cap = 0, vi = 0, ei = 0;
	int err = 0;

	for (size_t i = 0; i < nr && !err; i++) {
		uint64_t a = start[i], end = start[i] + nr_pages[i] * PAGE_SIZE;

		/* page by page only where it matters: each step ends a VMA or an eager page */
		while (a < end && !err) {
			const struct ld_vma *m = vma_at(v, nv, &vi, a);
			uint64_t stop = m ? min(end, m->end) : end;

			if (!m || !m->lazy) {
				err = push(&p, &n, &cap, a, (stop - a) / PAGE_SIZE, false);
				a = stop;
				continue;
			}
			if (is_eager(eager, ne, &ei, a)) {
				err = push(&p, &n, &cap, a, 1, false);
				a += PAGE_SIZE;
				continue;
			}
			/* lazy up to the next eager page or the VMA's end */
			if (ei < ne && eager[ei] < stop)
				stop = eager[ei];
			err = push(&p, &n, &cap, a, (stop - a) / PAGE_SIZE, true);
			a = stop;
		}
	}
	if (err) {
		free(p);
		return err;
	}
	*out = p;
	*n_out = n;
	return 0;
}

int ld_index_add(struct ld_index *ix, const struct ld_span *s)
{
	if (ix->n == ix->cap) {
		size_t c = ix->cap ? ix->cap * 2 : 64;
		struct ld_span *ns = reallocarray(ix->s, c, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		ix->s = ns;
		ix->cap = c;
	}
	ix->s[ix->n++] = *s;
	return 0;
}

const struct ld_span *ld_index_find(const struct ld_index *ix, uint32_t id, uint64_t off)
{
	size_t lo = 0, hi = ix->n;

	/* the first span not before (id, off): ids ascend, offsets ascend within an id */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ld_span *s = &ix->s[mid];

		if (s->pages_id < id || (s->pages_id == id && s->off + s->len <= off))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && ix->s[lo].pages_id == id ? &ix->s[lo] : NULL;
}

void ld_index_fini(struct ld_index *ix)
{
	free(ix->s);
	*ix = (struct ld_index){ 0 };
}
