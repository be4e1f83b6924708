// SPDX-License-Identifier: GPL-2.0
/*
 * Runs of pages (struct mem_runs): built in address order by the scan,
 * sorted and merged as object page offsets for shmem objects, and cut
 * against the runs a parent image holds (pre-dump chains). See
 * include/mem-scan.h and Documentation/memory.md.
 */
#define LOG_PREFIX "mem: "
#include <limits.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "mem-int.h"
#include "mem-scan.h"
#include "util.h"

int mem_runs_push(struct mem_runs *r, unsigned long start, unsigned long nr_pages,
		  enum mem_policy policy)
{
	if (r->nr == r->cap) {
		unsigned int cap = r->cap ? r->cap * 2 : 64;
		struct mem_run *n = reallocarray(r->runs, cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->runs = n;
		r->cap = cap;
	}
	r->runs[r->nr++] = (struct mem_run){ start, nr_pages, policy };
	return 0;
}

/* Run units: bytes for address runs, pages for object offsets; @unit is the page size in those. */
static unsigned long run_end(const struct mem_run *m, unsigned long unit)
{
	return m->start + m->nr_pages * unit;
}

static int runs_append_unit(struct mem_runs *r, unsigned long start, unsigned long nr_pages,
			    enum mem_policy policy, unsigned long unit)
{
	struct mem_run *last = r->nr ? &r->runs[r->nr - 1] : NULL;

	if (last && last->policy == policy && start >= last->start &&
	    start <= run_end(last, unit)) {
		unsigned long end = max(run_end(last, unit), start + nr_pages * unit);

		last->nr_pages = (end - last->start) / unit;
		return 0;
	}
	return mem_runs_push(r, start, nr_pages, policy);
}

int mem_runs_append(struct mem_runs *r, unsigned long start, unsigned long nr_pages,
		    enum mem_policy policy)
{
	return runs_append_unit(r, start, nr_pages, policy, PAGE_SIZE);
}

void mem_runs_fini(struct mem_runs *r)
{
	free(r->runs);
	*r = (struct mem_runs){ 0 };
}

static int run_cmp(const void *a, const void *b)
{
	const struct mem_run *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void mem_runs_normalize_pages(struct mem_runs *r)
{
	unsigned int i, out = 0;

	qsort(r->runs, r->nr, sizeof(*r->runs), run_cmp);
	for (i = 0; i < r->nr; i++) {
		struct mem_run *last = out ? &r->runs[out - 1] : NULL;

		if (last && r->runs[i].start <= run_end(last, 1)) {
			unsigned long end = max(run_end(last, 1), run_end(&r->runs[i], 1));

			last->nr_pages = end - last->start;
			continue;
		}
		r->runs[out++] = r->runs[i];
	}
	r->nr = out;
}

void mem_plan_fini(struct mem_plan *p)
{
	free(p->policy);
	mem_runs_fini(&p->runs);
	mem_runs_fini(&p->unprotected);
	*p = (struct mem_plan){ 0 };
}

/* ---- pre-dump chains ------------------------------------------------------ */

/* Room for @nr more runs at once: no reallocation (and copy) in the frozen path. */
static int runs_reserve(struct mem_runs *r, unsigned long nr)
{
	struct mem_run *n;

	if (r->nr + nr <= r->cap)
		return 0;
	if (r->nr + nr > UINT_MAX / 2)
		return -ENOMEM;
	n = reallocarray(r->runs, r->nr + nr, sizeof(*n));
	if (!n)
		return -ENOMEM;
	r->runs = n;
	r->cap = (unsigned int)(r->nr + nr);
	return 0;
}

int mem_runs_within(const struct mem_runs *runs, const struct iovec *r, unsigned int n,
		    struct iovec **ret, unsigned int *ret_n)
{
	struct iovec *p = calloc((size_t)runs->nr + n + 1, sizeof(*p));
	unsigned int i = 0, k, np = 0;

	if (!p)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		unsigned long a = (unsigned long)r[k].iov_base, b = a + r[k].iov_len;

		while (i < runs->nr &&
		       runs->runs[i].start + runs->runs[i].nr_pages * PAGE_SIZE <= a)
			i++;
		/* each run ends at most one piece per range, each range at most one run */
		for (unsigned int j = i; j < runs->nr && runs->runs[j].start < b; j++) {
			unsigned long s = max(runs->runs[j].start, a);
			unsigned long e = min(runs->runs[j].start +
						      runs->runs[j].nr_pages * PAGE_SIZE,
					      b);

			if (s >= e)
				continue;
			p[np].iov_base = (void *)s;
			p[np++].iov_len = e - s;
		}
	}
	*ret = p;
	*ret_n = np;
	return 0;
}

int mem_runs_split(const struct mem_runs *present, const struct mem_runs *written,
		   struct mem_runs *data, struct mem_runs *parent)
{
	unsigned int j = 0;
	int err;

	/* Each written run ends at most one data run and one parent run. */
	err = runs_reserve(data, (unsigned long)written->nr + present->nr);
	if (!err)
		err = runs_reserve(parent, (unsigned long)written->nr + present->nr);

	for (unsigned int i = 0; i < present->nr && !err; i++) {
		const struct mem_run *r = &present->runs[i];
		unsigned long pos = r->start, end = run_end(r, PAGE_SIZE);

		while (j < written->nr && run_end(&written->runs[j], PAGE_SIZE) <= pos)
			j++;
		while (pos < end && !err) {
			const struct mem_run *w = j < written->nr ? &written->runs[j] : NULL;
			unsigned long stop;

			if (!w || w->start >= end) {
				err = mem_runs_append(parent, pos, (end - pos) / PAGE_SIZE,
						      r->policy);
				break;
			}
			if (w->start > pos) {
				err = mem_runs_append(parent, pos, (w->start - pos) / PAGE_SIZE,
						      r->policy);
				pos = w->start;
				continue;
			}
			stop = min(end, run_end(w, PAGE_SIZE));
			err = mem_runs_append(data, pos, (stop - pos) / PAGE_SIZE, r->policy);
			pos = stop;
			if (stop == run_end(w, PAGE_SIZE))
				j++;
		}
	}
	return err;
}
