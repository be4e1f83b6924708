// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/smaps after the infection (include/smaps-reader.h).
 */
#define LOG_PREFIX "proc: "

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "smaps-reader.h"

/* Remove the entries lying inside [start, end). */
static void drop_range(struct vma_list *l, unsigned long start, unsigned long end)
{
	unsigned int i, k = 0;

	for (i = 0; i < l->nr; i++) {
		struct vma_entry *v = &l->vmas[i];

		if (start < end && v->start >= start && v->end <= end) {
			free(v->path);
			free(v->anon_name);
			continue;
		}
		l->vmas[k++] = *v;
	}
	l->nr = k;
}

int smaps_read(pid_t pid, unsigned long skip_start, unsigned long skip_end, struct vma_list *ret)
{
	int err = proc_parse_maps(pid, true, ret);

	if (!err)
		drop_range(ret, skip_start, skip_end);
	return err;
}

bool vma_layout_same(const struct vma_list *a, const struct vma_list *b)
{
	if (a->nr != b->nr)
		return false;
	for (unsigned int i = 0; i < a->nr; i++) {
		const struct vma_entry *x = &a->vmas[i], *y = &b->vmas[i];

		if (x->start != y->start || x->end != y->end || x->prot != y->prot ||
		    x->shared != y->shared || x->kind != y->kind || x->dev_major != y->dev_major ||
		    x->dev_minor != y->dev_minor || x->ino != y->ino || x->pgoff != y->pgoff)
			return false;
	}
	return true;
}
