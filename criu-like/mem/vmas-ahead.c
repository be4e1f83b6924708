// SPDX-License-Identifier: GPL-2.0
/*
 * A tree's smaps read before its freeze (include/vmas-ahead.h): for each
 * task, the BPF iterator's VMAs (start, end, kernel flags), smaps, the
 * iterator again; kept when both iterator reads agree with each other and
 * with smaps' ranges. In the freeze the iterator is read once more and
 * /proc/PID/maps (no page walk): the list is used only if nothing differs.
 *
 * What smaps gives beyond maps is then as it was a moment before the
 * freeze: the flags (VmFlags) cannot have changed (the kernel's are
 * compared), the counters can. Of those the dump uses the resident and
 * swapped counts to skip an empty PROT_NONE VMA (a guard region): such a
 * VMA is marked resident here, so its pages are scanned, never skipped; the
 * anonymous and huge counts are hints (a read-ahead of a child's pagemap,
 * whether the restore asks for huge pages again).
 */
#define LOG_PREFIX "mem: "

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "smaps-reader.h"
#include "stats.h"
#include "util.h"
#include "vma-bpf.h"
#include "vmas-ahead.h"

struct ahead_task {
	pid_t pid;
	struct vma_raw *raw; /* the iterator's, after the smaps read */
	unsigned int nr_raw;
	struct vma_list smaps;
	bool taken;
};

struct vmas_ahead {
	struct vma_bpf *bpf;
	struct ahead_task *t;
	unsigned int nr;
};

bool vma_raw_same(const struct vma_raw *a, unsigned int na, const struct vma_raw *b,
		  unsigned int nb)
{
	return na == nb && (!na || !memcmp(a, b, na * sizeof(*a)));
}

bool vma_raw_is_list(const struct vma_list *l, const struct vma_raw *r, unsigned int n)
{
	unsigned int i, k = 0;

	for (i = 0; i < l->nr; i++) {
		if (l->vmas[i].start >= 1UL << 63)
			continue;
		if (k == n || l->vmas[i].start != r[k].start || l->vmas[i].end != r[k].end)
			return false;
		k++;
	}
	return k == n;
}

static bool str_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

bool vmas_ahead_same(const struct vma_list *maps, const struct vma_list *smaps)
{
	if (!vma_layout_same(maps, smaps))
		return false;
	for (unsigned int i = 0; i < maps->nr; i++) {
		const struct vma_entry *x = &maps->vmas[i], *y = &smaps->vmas[i];

		if (x->deleted != y->deleted || x->memfd != y->memfd ||
		    !str_same(x->path, y->path) || !str_same(x->anon_name, y->anon_name))
			return false;
	}
	return true;
}

/* @p's VMAs read: iterator, smaps, iterator; 0 when they agree, -EAGAIN or -errno. */
static int read_task(struct vma_bpf *bpf, struct ahead_task *p)
{
	struct vma_raw *a = NULL;
	unsigned int na = 0;
	int err;

	err = vma_bpf_read(bpf, p->pid, &a, &na);
	if (!err)
		err = smaps_read(p->pid, NULL, 0, &p->smaps);
	if (!err)
		err = vma_bpf_read(bpf, p->pid, &p->raw, &p->nr_raw);
	if (!err && (!vma_raw_same(a, na, p->raw, p->nr_raw) ||
		     !vma_raw_is_list(&p->smaps, p->raw, p->nr_raw)))
		err = -EAGAIN;
	free(a);
	return err;
}

struct vmas_ahead *vmas_ahead_read(const pid_t *pids, unsigned int n)
{
	uint64_t t0 = stats_now_ns();
	struct vmas_ahead *a = calloc(1, sizeof(*a));
	unsigned int i, kept = 0;

	if (!a)
		return NULL;
	if (vma_bpf_open(&a->bpf)) {
		free(a);
		return NULL; /* smaps is read in the freeze */
	}
	a->t = calloc(n, sizeof(*a->t));
	if (!a->t) {
		vmas_ahead_free(a);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		struct ahead_task *p = &a->t[a->nr];
		int err;

		p->pid = pids[i];
		err = read_task(a->bpf, p);
		if (err) {
			pr_debug("pid %d: its VMAs changed while smaps was read, or could not be "
				 "read (%s): read in the freeze\n",
				 p->pid, strerror(-err));
			free(p->raw);
			vma_list_fini(&p->smaps);
			memset(p, 0, sizeof(*p));
			continue;
		}
		a->nr++;
		kept++;
	}
	pr_debug("smaps of %u of %u tasks read before the freeze, %llu us\n", kept, n,
		 (unsigned long long)((stats_now_ns() - t0) / 1000));
	return a;
}

int vmas_ahead_take(struct vmas_ahead *a, pid_t pid, struct vma_list *ret)
{
	struct ahead_task *p = NULL;
	struct vma_list maps = { 0 };
	struct vma_raw *r = NULL;
	unsigned int i, n = 0;
	bool same;
	int err;

	for (i = 0; a && i < a->nr && !p; i++)
		if (a->t[i].pid == pid && !a->t[i].taken)
			p = &a->t[i];
	if (!p)
		return -ENOENT;
	err = vma_bpf_read(a->bpf, pid, &r, &n);
	if (!err)
		err = proc_parse_maps(pid, false, &maps);
	same = !err && vma_raw_same(r, n, p->raw, p->nr_raw) && vmas_ahead_same(&maps, &p->smaps);
	free(r);
	vma_list_fini(&maps);
	if (err)
		return err;
	if (!same) {
		pr_debug("pid %d: its VMAs changed since smaps was read ahead: read again\n", pid);
		return -ESTALE;
	}
	p->taken = true;
	*ret = p->smaps;
	memset(&p->smaps, 0, sizeof(p->smaps));
	/* the counters are the read's: an empty PROT_NONE VMA may have pages since */
	for (i = 0; i < ret->nr; i++)
		if (!ret->vmas[i].prot && !ret->vmas[i].rss)
			ret->vmas[i].rss = 1;
	return 0;
}

void vmas_ahead_free(struct vmas_ahead *a)
{
	if (!a)
		return;
	for (unsigned int i = 0; i < a->nr; i++) {
		free(a->t[i].raw);
		vma_list_fini(&a->t[i].smaps);
	}
	free(a->t);
	if (a->bpf)
		vma_bpf_close(a->bpf);
	free(a);
}
