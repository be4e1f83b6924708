// SPDX-License-Identifier: GPL-2.0
/*
 * What the threads of each process share, read once per process through the
 * BPF task iterator (include/task-bpf.h) while the tree is frozen: the
 * namespaces (ns/ns-ids.c), the cgroups (cgroup/cgset.c), the fd table
 * (files/fdtable.c) and the fs context (task/fs.c) of a thread are then its
 * process's first thread's without a file or a kcmp() of its own. Without
 * the iterator (no BPF, no BTF, criu-like in a pid namespace), or for a
 * process not read, each thread is read as before.
 *
 * CRIU_LIKE_TASK_BPF=0 in the environment never uses it (the tests of the
 * fallback), =1 uses it for every process with more than one thread; by
 * default, when the tree has TASK_BPF_MIN_THREADS threads in such processes:
 * the program's load (its BTF and the verifier, 1-2 ms) pays for itself.
 * When the root alone has that many, the load runs in a thread from before
 * the seize (dump_threads_prefetch()), out of the freeze.
 */
#define LOG_PREFIX "dump: "

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump.h"
#include "log.h"
#include "proc-parse.h"
#include "stats.h"
#include "task-bpf.h"
#include "util.h"

#define TASK_BPF_MIN_THREADS 32

/* -1: never, 1: always, 0: by the tree's size */
static int task_bpf_wanted(void)
{
	const char *e = getenv("CRIU_LIKE_TASK_BPF");

	if (!e || !*e)
		return 0;
	return strcmp(e, "0") ? 1 : -1;
}

/* The threads of the tree's processes with more than one. */
static unsigned int shared_threads(const struct pstree *tree)
{
	unsigned int i, n = 0;

	for (i = 0; i < tree->nr_tasks; i++)
		if (tree->tasks[i]->state != TASK_ZOMBIE && tree->tasks[i]->nr_threads > 1)
			n += tree->tasks[i]->nr_threads;
	return n;
}

/* The program's load in a thread from before the seize. */
struct thr_prefetch {
	pthread_t th;
	int prog; /* or -errno */
};

static void *prefetch_thread(void *arg)
{
	struct thr_prefetch *f = arg;

	f->prog = task_bpf_open();
	return NULL;
}

void dump_threads_prefetch(struct dump_ctx *ctx)
{
	struct proc_stat st;
	int want = task_bpf_wanted();
	struct thr_prefetch *f;

	if (want < 0 || proc_parse_stat(ctx->opts->tree, 0, &st) ||
	    st.num_threads < (want ? 2 : TASK_BPF_MIN_THREADS))
		return;
	f = calloc(1, sizeof(*f));
	if (!f)
		return;
	if (pthread_create(&f->th, NULL, prefetch_thread, f)) {
		free(f);
		return;
	}
	ctx->thr_load = f;
}

/* The program, from the prefetch (joined) or loaded now: its fd, or -errno. */
static int task_bpf_get(struct dump_ctx *ctx)
{
	struct thr_prefetch *f = ctx->thr_load;
	int prog;

	if (!f)
		return task_bpf_open();
	pthread_join(f->th, NULL);
	prog = f->prog;
	free(f);
	ctx->thr_load = NULL;
	return prog;
}

void dump_threads_read(struct dump_ctx *ctx)
{
	const struct pstree *tree = ctx->tree;
	int want = task_bpf_wanted();
	unsigned int n = shared_threads(tree), i, procs = 0, thr = 0;
	uint64_t t0 = stats_now_ns();
	int prog, err;

	if (want < 0 || !n || (!want && n < TASK_BPF_MIN_THREADS && !ctx->thr_load)) {
		dump_threads_fini(ctx);
		return;
	}
	prog = task_bpf_get(ctx);
	if (prog < 0) {
		pr_debug("no task iterator (%s): every thread read on its own\n", strerror(-prog));
		return;
	}
	ctx->thr = calloc(tree->nr_tasks, sizeof(*ctx->thr));
	for (i = 0; ctx->thr && i < tree->nr_tasks; i++) {
		const struct seized_task *t = tree->tasks[i];

		if (t->state == TASK_ZOMBIE || t->nr_threads < 2)
			continue;
		err = task_bpf_read(prog, t->pid, &ctx->thr[i].t, &ctx->thr[i].nr);
		if (err) {
			pr_debug("pid %d: the task iterator failed (%s): its threads read on their "
				 "own\n",
				 t->pid, strerror(-err));
			continue;
		}
		procs++;
		thr += ctx->thr[i].nr;
	}
	close(prog);
	pr_debug("task iterator: %u threads of %u processes in %llu us\n", thr, procs,
		 (unsigned long long)(stats_now_ns() - t0) / 1000);
}

void dump_threads_fini(struct dump_ctx *ctx)
{
	unsigned int i;
	int prog;

	/* a prefetch not used (a failed seize, a small tree): joined, its program closed */
	if (ctx->thr_load && (prog = task_bpf_get(ctx)) >= 0)
		close(prog);
	for (i = 0; ctx->thr && i < ctx->nr_tasks; i++)
		free(ctx->thr[i].t);
	free(ctx->thr);
	ctx->thr = NULL;
}

const struct proc_threads *dump_threads_of(const struct dump_ctx *ctx, const struct dump_task *dt)
{
	return ctx->thr ? &ctx->thr[dt - ctx->tasks] : NULL;
}

pid_t thread_apart(const struct proc_threads *p, const struct seized_task *t, enum thread_field f,
		   int kcmp_type)
{
	unsigned int i;

	for (i = 1; i < t->nr_threads; i++) {
		pid_t tid = t->threads[i].tid;

		if (!threads_same(p, t->pid, tid, f) && kcmp_pids(tid, t->pid, kcmp_type) > 0)
			return tid;
	}
	return 0;
}
