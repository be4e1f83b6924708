// SPDX-License-Identifier: GPL-2.0
/*
 * The pages of one address space that the lazy-pages daemon has still to
 * fill: a sorted array of ranges, each naming where its contents are in the
 * page source. Faults and the prefetch remove what they filled; the uffd
 * events remove (unmap, MADV_DONTNEED/REMOVE) or move (mremap) ranges; a
 * fork copies the whole set. What goes in: the pages of the VMAs the restore
 * left lazy (lazy_ranges_add_lazy()). And the 2 MiB stretches to collapse into huge
 * pages once they are in (lazy_thp_chunks()). Pure: test/unit/test-lazy.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lazy.h"
#include "restore-mem.h"
#include "util.h"

#include "mm.pb-c.h"

static int reserve(struct lazy_ranges *s, size_t n)
{
	struct lazy_range *r;
	size_t cap;

	if (n <= s->cap)
		return 0;
	cap = s->cap ? s->cap * 2 : 16;
	while (cap < n)
		cap *= 2;
	r = reallocarray(s->r, cap, sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->r = r;
	s->cap = cap;
	return 0;
}

/* Index of the first range ending above @addr (s->n when none). */
static size_t first_after(const struct lazy_ranges *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->r[mid].vaddr + s->r[mid].len <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert_at(struct lazy_ranges *s, size_t i, const struct lazy_range *r)
{
	int err = reserve(s, s->n + 1);

	if (err)
		return err;
	memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(*s->r));
	s->r[i] = *r;
	s->n++;
	s->bytes += r->len;
	return 0;
}

int lazy_ranges_add(struct lazy_ranges *s, const struct lazy_range *r)
{
	if (!r->len || r->vaddr + r->len < r->vaddr ||
	    (s->n && s->r[s->n - 1].vaddr + s->r[s->n - 1].len > r->vaddr))
		return -EINVAL;
	return insert_at(s, s->n, r);
}

const struct lazy_range *lazy_ranges_find(const struct lazy_ranges *s, uint64_t addr)
{
	size_t i = first_after(s, addr);

	return i < s->n && s->r[i].vaddr <= addr ? &s->r[i] : NULL;
}

int lazy_ranges_remove(struct lazy_ranges *s, uint64_t start, uint64_t end)
{
	size_t i = first_after(s, start);

	while (i < s->n && s->r[i].vaddr < end) {
		struct lazy_range *r = &s->r[i];
		uint64_t r_end = r->vaddr + r->len;

		if (r->vaddr < start && r_end > end) {
			/* a hole in the middle: split */
			struct lazy_range tail = *r;
			int err;

			tail.off += end - r->vaddr;
			tail.vaddr = end;
			tail.len = r_end - end;
			s->bytes -= r_end - start;
			r->len = start - r->vaddr;
			err = insert_at(s, i + 1, &tail); /* adds tail.len back */
			if (err) {
				s->bytes += r_end - start;
				r->len = r_end - r->vaddr;
			}
			return err;
		}
		if (r->vaddr < start) {
			s->bytes -= r_end - start;
			r->len = start - r->vaddr;
			i++;
		} else if (r_end > end) {
			s->bytes -= end - r->vaddr;
			r->off += end - r->vaddr;
			r->len = r_end - end;
			r->vaddr = end;
			i++;
		} else {
			s->bytes -= r->len;
			memmove(r, r + 1, (s->n - i - 1) * sizeof(*r));
			s->n--;
		}
	}
	return 0;
}

int lazy_ranges_move(struct lazy_ranges *s, uint64_t from, uint64_t to, uint64_t len)
{
	struct lazy_ranges moved = { 0 };
	size_t i;
	int err = 0;

	/* the pieces of [from, from + len), clipped */
	for (i = first_after(s, from); i < s->n && s->r[i].vaddr < from + len && !err; i++) {
		struct lazy_range r = s->r[i];
		uint64_t start = r.vaddr > from ? r.vaddr : from;
		uint64_t end = r.vaddr + r.len < from + len ? r.vaddr + r.len : from + len;

		r.off += start - r.vaddr;
		r.vaddr = start - from + to;
		r.len = end - start;
		err = lazy_ranges_add(&moved, &r);
	}
	if (!err)
		err = lazy_ranges_remove(s, from, from + len);
	if (!err)
		err = lazy_ranges_remove(s, to, to + len);
	for (i = 0; i < moved.n && !err; i++)
		err = insert_at(s, first_after(s, moved.r[i].vaddr), &moved.r[i]);
	lazy_ranges_fini(&moved);
	return err;
}

int lazy_ranges_dup(const struct lazy_ranges *s, struct lazy_ranges *out)
{
	struct lazy_ranges d = { 0 };
	int err = reserve(&d, s->n);

	if (err)
		return err;
	if (s->n)
		memcpy(d.r, s->r, s->n * sizeof(*s->r));
	d.n = s->n;
	d.bytes = s->bytes;
	*out = d;
	return 0;
}

uint64_t lazy_readahead(struct lazy_readahead *ra, uint64_t addr, uint64_t min, uint64_t max)
{
	if (ra->len && addr >= ra->next && addr - ra->next <= ra->len)
		ra->len = ra->len * 2 < max ? ra->len * 2 : max;
	else
		ra->len = min < max ? min : max;
	ra->next = addr + ra->len;
	return ra->len;
}

static int hot_cmp(const void *a, const void *b)
{
	const struct lazy_range *x = a, *y = b;

	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

int lazy_hot_init(const struct lazy_ranges *s, struct lazy_hot *h)
{
	uint32_t top = 0;
	size_t n = 0;

	*h = (struct lazy_hot){ 0 };
	for (size_t i = 0; i < s->n; i++)
		top = s->r[i].level > top ? s->r[i].level : top;
	for (size_t i = 0; i < s->n; i++)
		n += s->r[i].level < top;
	if (!n)
		return 0;
	h->r = malloc(n * sizeof(*h->r));
	if (!h->r)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].level < top)
			h->r[h->n++] = s->r[i];
	qsort(h->r, h->n, sizeof(*h->r), hot_cmp);
	return 0;
}

bool lazy_hot_next(struct lazy_hot *h, const struct lazy_ranges *unserved, uint64_t *start,
		   uint64_t *len)
{
	for (; h->i < h->n; h->i++, h->at = 0) {
		const struct lazy_range *hr = &h->r[h->i], *r;
		uint64_t at = h->at > hr->vaddr ? h->at : hr->vaddr, end = hr->vaddr + hr->len;
		size_t k = first_after(unserved, at);

		if (k == unserved->n || unserved->r[k].vaddr >= end)
			continue; /* in already (a fault), or gone (unmapped) */
		r = &unserved->r[k];
		at = r->vaddr > at ? r->vaddr : at;
		*start = at;
		*len = (r->vaddr + r->len < end ? r->vaddr + r->len : end) - at;
		h->at = at;
		return true;
	}
	return false;
}

void lazy_hot_fini(struct lazy_hot *h)
{
	free(h->r);
	*h = (struct lazy_hot){ 0 };
}

void lazy_ranges_fini(struct lazy_ranges *s)
{
	free(s->r);
	*s = (struct lazy_ranges){ 0 };
}

#define THP_CHUNK (2UL << 20)

/* Bytes of [@a, @b) that @s's ranges cover. */
int lazy_ranges_add_lazy(struct lazy_ranges *out, const MmEntry *mm, const struct lazy_range *r)
{
	struct lazy_range rest = *r;
	int err = 0;

	for (size_t i = 0; i < mm->n_vmas && rest.len && !err; i++) {
		const VmaEntry *v = mm->vmas[i];
		struct lazy_range piece = rest;

		if (v->end <= rest.vaddr || v->start >= rest.vaddr + rest.len)
			continue;
		if (v->start > rest.vaddr) /* not in any VMA: rst_plan_runs() refused it */
			return -EINVAL;
		piece.len = min(rest.len, v->end - rest.vaddr);
		/* the restore filled this VMA itself: never registered, not ours */
		if (rst_lazy_vma(v))
			err = lazy_ranges_add(out, &piece);
		rest.vaddr += piece.len;
		rest.off += piece.len;
		rest.len -= piece.len;
	}
	return err ?: rest.len ? -EINVAL : 0;
}

static uint64_t covered(const struct lazy_ranges *s, uint64_t a, uint64_t b)
{
	uint64_t sum = 0;

	for (size_t i = first_after(s, a); i < s->n && s->r[i].vaddr < b; i++) {
		uint64_t lo = s->r[i].vaddr > a ? s->r[i].vaddr : a;
		uint64_t hi = s->r[i].vaddr + s->r[i].len < b ? s->r[i].vaddr + s->r[i].len : b;

		if (hi > lo)
			sum += hi - lo;
	}
	return sum;
}

int lazy_thp_chunks(const MmEntry *mm, const struct lazy_ranges *unserved, uint64_t **out,
		    size_t *n)
{
	uint64_t *c = NULL;
	size_t nc = 0, cap = 0;

	for (size_t i = 0; i < mm->n_vmas; i++) {
		const VmaEntry *v = mm->vmas[i];
		bool hg = v->has_madv && (v->madv & (1ULL << MADV_HUGEPAGE)) &&
			  !(v->madv & (1ULL << MADV_NOHUGEPAGE));
		bool thp = v->has_thp && v->thp;

		if (!hg && !thp)
			continue;
		for (uint64_t a = (v->start + THP_CHUNK - 1) & ~(THP_CHUNK - 1);
		     a + THP_CHUNK <= v->end; a += THP_CHUNK) {
			uint64_t got = covered(unserved, a, a + THP_CHUNK);

			if (hg ? !got : got != THP_CHUNK)
				continue;
			if (nc == cap) {
				uint64_t *grown = reallocarray(c, cap ? cap * 2 : 16, sizeof(*c));

				if (!grown) {
					free(c);
					return -ENOMEM;
				}
				c = grown;
				cap = cap ? cap * 2 : 16;
			}
			c[nc++] = a;
		}
	}
	*out = c;
	*n = nc;
	return 0;
}
