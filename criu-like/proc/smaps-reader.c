// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/smaps in a thread of its own (include/smaps-reader.h).
 */
#define LOG_PREFIX "proc: "

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "smaps-reader.h"

static void *reader_main(void *arg)
{
	struct smaps_reader *r = arg;

	r->err = proc_parse_maps(r->pid, true, &r->vmas);
	return NULL;
}

int smaps_read_start(struct smaps_reader *r, pid_t pid)
{
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->started = !pthread_create(&r->th, NULL, reader_main, r);
	return 0;
}

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

int smaps_read_join(struct smaps_reader *r, unsigned long skip_start, unsigned long skip_end,
		    struct vma_list *ret)
{
	if (r->started)
		pthread_join(r->th, NULL);
	else
		reader_main(r);
	r->started = false;
	if (r->err) {
		vma_list_fini(&r->vmas);
		return r->err;
	}
	drop_range(&r->vmas, skip_start, skip_end);
	*ret = r->vmas;
	memset(&r->vmas, 0, sizeof(r->vmas));
	return 0;
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
