// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/smaps after the infection (include/smaps-reader.h).
 */
#define LOG_PREFIX "proc: "

#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "smaps-reader.h"
#include "util.h"
#include "vma-fast.h"

/* smaps_fast_use(): the iterator that stands in for smaps' walk, or NULL. */
static struct vma_bpf *_Atomic fast;

void smaps_fast_use(struct vma_bpf *b)
{
	atomic_store(&fast, b);
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

int smaps_read(pid_t pid, const unsigned long *skip, unsigned int nskip, struct vma_list *ret)
{
	struct vma_bpf *b = atomic_load(&fast);
	int err = b ? vma_fast_read(b, pid, ret) : -EAGAIN;

	if (err == -EAGAIN) {
		if (b)
			pr_debug("pid %d: smaps read (its VMAs need it)\n", pid);
		err = proc_parse_maps(pid, true, ret);
	}

	for (unsigned int k = 0; !err && k < nskip; k++)
		drop_range(ret, skip[2 * k], skip[2 * k + 1]);
	return err;
}

struct smaps_job {
	const pid_t *pids;
	const unsigned long *skip;
	struct vma_list *rets;
	int *errs;
	uint64_t *us;
	unsigned int n, nr_threads;
	void (*then)(unsigned int i, void *arg);
	void *arg;
	atomic_uint next;
	pthread_t th[16];
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

		j->errs[i] = smaps_read(j->pids[i], j->skip ? &j->skip[2 * i] : NULL, !!j->skip,
					&j->rets[i]);
		j->us[i] = now_us() - t0;
		if (j->then)
			j->then(i, j->arg);
	}
	return NULL;
}

/*
 * A thread of a background job (smaps_read_start()) yields to the dumper's
 * own threads (nice 10, this thread only): the tracer thread infecting the
 * tree and the workers dumping it come first, the reads fill the time they
 * wait for their tasks.
 */
static void *smaps_bg_worker(void *arg)
{
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
	return smaps_worker(arg);
}

/* One thread per CPU for @n tasks, at most; @less fewer (the caller helps, not in the background). */
static void job_spawn(struct smaps_job *j, unsigned int less)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int nth = (unsigned int)(cpus > 1 ? cpus : 1);

	nth = min(min(nth, j->n), (unsigned int)ARRAY_SIZE(j->th));
	nth = nth > less ? nth - less : 0;
	for (j->nr_threads = 0; j->nr_threads < nth; j->nr_threads++)
		if (pthread_create(&j->th[j->nr_threads], NULL,
				   less ? smaps_worker : smaps_bg_worker, j))
			break;
}

static void job_join(struct smaps_job *j)
{
	/* a thread that could not start: its share is read here */
	smaps_worker(j);
	while (j->nr_threads)
		pthread_join(j->th[--j->nr_threads], NULL);
}

void smaps_read_many(const pid_t *pids, unsigned int n, struct vma_list *rets, int *errs,
		     uint64_t *us)
{
	struct smaps_job j = { pids, NULL, rets, errs, us, n, 0, NULL, NULL, 0 };

	job_spawn(&j, 1);
	job_join(&j);
}

struct smaps_job *smaps_read_start(const pid_t *pids, unsigned int n, const unsigned long *skip,
				   struct vma_list *rets, int *errs, uint64_t *us,
				   void (*then)(unsigned int i, void *arg), void *arg)
{
	struct smaps_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	*j = (struct smaps_job){ pids, skip, rets, errs, us, n, 0, then, arg, 0 };
	job_spawn(j, 0);
	return j;
}

unsigned int smaps_read_threads(const struct smaps_job *j)
{
	return j ? j->nr_threads : 0;
}

void smaps_read_cancel(struct smaps_job *j)
{
	if (j)
		atomic_store(&j->next, j->n);
}

void smaps_read_wait(struct smaps_job *j)
{
	if (!j)
		return;
	job_join(j);
	free(j);
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
