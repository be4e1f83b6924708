// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/smaps after the infection (include/smaps-reader.h).
 */
#define LOG_PREFIX "proc: "

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

struct smaps_job {
	const pid_t *pids;
	struct vma_list *rets;
	int *errs;
	uint64_t *us;
	unsigned int n;
	atomic_uint next;
};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Takes the next task until none is left. */
static void *smaps_worker(void *arg)
{
	struct smaps_job *j = arg;
	unsigned int i;

	while ((i = atomic_fetch_add(&j->next, 1)) < j->n) {
		uint64_t t0 = now_us();

		j->errs[i] = smaps_read(j->pids[i], 0, 0, &j->rets[i]);
		j->us[i] = now_us() - t0;
	}
	return NULL;
}

void smaps_read_many(const pid_t *pids, unsigned int n, struct vma_list *rets, int *errs,
		     uint64_t *us)
{
	struct smaps_job j = { pids, rets, errs, us, n, 0 };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int nth = (unsigned int)(cpus > 1 ? cpus : 1), started = 0;
	pthread_t th[16];

	if (nth > 16)
		nth = 16;
	if (nth > n)
		nth = n;
	/* this thread is one of them: the others only help, none is needed */
	for (; started + 1 < nth; started++)
		if (pthread_create(&th[started], NULL, smaps_worker, &j))
			break;
	smaps_worker(&j);
	while (started)
		pthread_join(th[--started], NULL);
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
