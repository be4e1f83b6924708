// SPDX-License-Identifier: GPL-2.0
/*
 * The per-task steps of a tree's dump on worker threads, one per CPU, several
 * tasks at once (Documentation/infect.md, "The commands of a tree in
 * parallel"). A task is taken once its parent's steps are done (a child's
 * memory is compared with what its parent saved, its fd table with its
 * parent's); the tracer thread meanwhile serves the ptrace requests of the
 * workers (par_tracer_run()). Each worker holds the big lock of par.h but
 * where it waits for its parasite or reads what is its task's own.
 */
#define LOG_PREFIX "dump: "

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "dump.h"
#include "log.h"
#include "par.h"
#include "util.h"

enum {
	TASK_WAITING,
	TASK_RUNNING,
	TASK_RELEASED, /* still running, its children may go (dump_par_release()) */
	TASK_DONE
};

struct par_run {
	struct dump_ctx *ctx;
	const struct par_job *job;
	struct dump_task **dts;
	unsigned int n;
	int *parent; /* index in dts of the task's parent, or -1 */
	unsigned char *state;
	int *errs;
	unsigned int left; /* not started yet */
	bool stop; /* a task failed: no more are started */
	pthread_cond_t ready; /* a task is done or released: its children may go */
};

/* The first task whose parent is done or released (or not in the run), or -1. */
static int pick(const struct par_run *r)
{
	for (unsigned int i = 0; i < r->n; i++)
		if (r->state[i] == TASK_WAITING && (!r->job->after_parent || r->parent[i] < 0 ||
						    r->state[r->parent[i]] >= TASK_RELEASED))
			return (int)i;
	return -1;
}

void dump_par_release(struct dump_ctx *ctx, const struct dump_task *dt)
{
	struct par_run *r = ctx->par;

	for (unsigned int i = 0; r && i < r->n; i++)
		if (r->dts[i] == dt && r->state[i] == TASK_RUNNING) {
			r->state[i] = TASK_RELEASED;
			pthread_cond_broadcast(&r->ready);
		}
}

static void *worker(void *arg)
{
	struct par_run *r = arg;

	par_worker_enter();
	while (!r->stop && r->left) {
		int i = pick(r), err;

		if (i < 0) {
			par_cond_wait(&r->ready);
			continue;
		}
		r->state[i] = TASK_RUNNING;
		r->left--;
		err = r->job->fn(r->ctx, r->dts[i]);
		r->state[i] = TASK_DONE;
		r->errs[i] = err;
		if (err)
			r->stop = true;
		pthread_cond_broadcast(&r->ready);
	}
	par_worker_leave();
	return NULL;
}

static void find_parents(struct par_run *r)
{
	for (unsigned int i = 0; i < r->n; i++) {
		r->parent[i] = -1;
		for (unsigned int j = 0; j < r->n; j++)
			if (r->dts[j]->t == r->dts[i]->t->parent)
				r->parent[i] = (int)j;
	}
}

/* Up to @want workers started (signals blocked in them): how many. */
static unsigned int start_workers(struct par_run *r, pthread_t *th, unsigned int want)
{
	sigset_t all, old;
	unsigned int n = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	par_workers_add((int)want);
	for (; n < want; n++)
		if (pthread_create(&th[n], NULL, worker, r))
			break;
	par_workers_add(-(int)(want - n));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return n;
}

unsigned int dump_par_workers(unsigned int n_tasks)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cpus < 2)
		cpus = 2; /* the tasks' parasites answer while another task's work is done */
	return n_tasks < (unsigned long)cpus ? n_tasks : (unsigned int)cpus;
}

/* The tracer's own part of @r's job: a failure stops the workers. */
static int tracer_part(struct par_run *r)
{
	int err = r->job->tracer ? r->job->tracer(r->ctx, r->dts, r->n) : 0;

	if (err) {
		par_take(true);
		r->stop = true;
		par_drop();
	}
	return err;
}

int dump_tasks_par(struct dump_ctx *ctx, struct dump_task **dts, unsigned int n,
		   const struct par_job *job)
{
	struct par_run r = { .ctx = ctx, .job = job, .dts = dts, .n = n, .left = n };
	unsigned int want = dump_par_workers(n), started, i;
	_cleanup_free_ pthread_t *th = calloc(want ? want : 1, sizeof(*th));
	_cleanup_free_ int *parent = calloc(n ? n : 1, sizeof(*parent));
	_cleanup_free_ unsigned char *state = calloc(n ? n : 1, sizeof(*state));
	_cleanup_free_ int *errs = calloc(n ? n : 1, sizeof(*errs));
	int err = 0, terr;

	if (!th || !parent || !state || !errs)
		return -ENOMEM;
	r.parent = parent;
	r.state = state;
	r.errs = errs;
	find_parents(&r);
	pthread_cond_init(&r.ready, NULL);
	ctx->par = &r;
	started = start_workers(&r, th, want);
	terr = started ? tracer_part(&r) : 0;
	par_tracer_serve();
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	ctx->par = NULL;
	pthread_cond_destroy(&r.ready);
	if (!started) {
		pr_warn("no worker thread: the tasks are done one after the other\n");
		for (i = 0; i < n && !err; i++)
			err = job->fn(ctx, dts[i]);
		return err ?: job->tracer ? job->tracer(ctx, dts, n) : 0;
	}
	pr_debug("%u tasks done by %u workers\n", n - r.left, started);
	/* the first failure in the tree's order: its message was logged by the worker */
	for (i = 0; i < n && !err; i++)
		err = errs[i];
	return err ?: terr;
}
