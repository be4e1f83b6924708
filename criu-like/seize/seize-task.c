// SPDX-License-Identifier: GPL-2.0
/*
 * The threads of one process seized: listed again until a listing shows
 * nothing new, io_uring workers refused, and the process's state derived
 * from its threads' stops.
 */
#define LOG_PREFIX "seize: "

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "compat.h"
#include "log.h"
#include "par.h"
#include "proc-parse.h"
#include "seize-int.h"
#include "util.h"

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static struct seized_thread *find_thread(struct seized_task *task, pid_t tid)
{
	unsigned int i;

	for (i = 0; i < task->nr_threads; i++)
		if (task->threads[i].tid == tid)
			return &task->threads[i];
	return NULL;
}

int add_thread(struct seized_task *task, pid_t tid, bool seized)
{
	struct seized_thread *th;

	if (grow((void **)&task->threads, task->nr_threads, sizeof(*th)))
		return -ENOMEM;
	th = &task->threads[task->nr_threads++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->seized = seized;
	/* threads[0] is the leader: /proc lists tids ascending, so put it first. */
	if (tid == task->pid && task->nr_threads > 1) {
		struct seized_thread tmp = task->threads[0];

		task->threads[0] = *th;
		*th = tmp;
	}
	return 0;
}

/*
 * PTRACE_SEIZE of a job-control stopped task makes it re-trap and waits
 * (killable only) until it has: a task both stopped and v1-frozen cannot, so
 * the seize would hang until the thaw. Such a thread shows State D with
 * wchan do_signal_stop; it is left for the walk after the thaw.
 */
static bool stopped_and_frozen(pid_t pid, pid_t tid)
{
	_cleanup_free_ char *wchan = NULL;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", pid, tid);
	wchan = read_file_at(AT_FDCWD, path, NULL);
	return wchan && !strcmp(wchan, "do_signal_stop");
}

/*
 * io_uring's kernel threads live in the thread group of the task that made
 * the ring (PF_IO_WORKER, stat flags): iou-sqp-PID polls a ring's SQ
 * (IORING_SETUP_SQPOLL), iou-wrk-PID runs its requests. They never stop
 * for ptrace, and they mean work in flight: refused by name.
 */
static bool is_io_worker(pid_t pid, pid_t tid, char **ret_stat)
{
	_cleanup_free_ char *stat = NULL;
	unsigned long flags = 0;
	char path[64], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	stat = read_file_at(AT_FDCWD, path, NULL);
	p = stat ? strrchr(stat, ')') : NULL;
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1 ||
	    !(flags & 0x10 /* PF_IO_WORKER */))
		return false;
	if (ret_stat)
		*ret_stat = TAKE_PTR(stat);
	return true;
}

static int refuse_io_worker(pid_t pid, pid_t tid)
{
	_cleanup_free_ char *stat = NULL;

	if (!is_io_worker(pid, tid, &stat))
		return 0;
	pr_err("pid %d: thread %d is an io_uring kernel thread (%s): a ring with a submission "
	       "thread (IORING_SETUP_SQPOLL) or with requests in flight is not supported\n",
	       pid, tid,
	       strstr(stat, "(iou-sqp-") ? "iou-sqp, IORING_SETUP_SQPOLL" : "iou-wrk, io-wq");
	return -EOPNOTSUPP;
}

/*
 * The io_uring check of many new threads (a stat file each, before their
 * seize) read side by side (par_for()): @io[i] for @tids[i].
 */
#define IO_SCAN_PAR_MIN 64

struct io_scan {
	pid_t pid;
	const pid_t *tids;
	bool *io;
};

static int io_scan_one(void *arg, unsigned int i)
{
	struct io_scan *s = arg;

	s->io[i] = is_io_worker(s->pid, s->tids[i], NULL);
	return 0;
}

/* @io for the @nr threads of @tids, or NULL to check them one by one (few new ones). */
static bool *io_scan(const struct seized_task *task, const pid_t *tids, unsigned int nr)
{
	struct io_scan s = { task->pid, tids, NULL };
	_cleanup_free_ int *errs = NULL;

	if (nr < task->nr_threads + IO_SCAN_PAR_MIN)
		return NULL;
	s.io = calloc(nr, sizeof(*s.io));
	errs = calloc(nr, sizeof(*errs));
	if (!s.io || !errs) {
		free(s.io);
		return NULL;
	}
	par_for(nr, io_scan_one, &s, errs, NULL);
	return s.io;
}

/* Every seized thread of @task in a ptrace stop (and one at least)? */
static bool all_stopped(const struct seized_task *task)
{
	unsigned int i, n = 0;

	for (i = 0; i < task->nr_threads; i++) {
		if (task->threads[i].seized && !task->threads[i].stopped)
			return false;
		n += task->threads[i].seized;
	}
	return n > 0;
}

/*
 * Seize the threads of @task not seen yet, listing again until a listing
 * shows nothing new. With @wait, each is waited for; without (frozen cgroup),
 * the stops are collected by wait_task() after the thaw.
 */
int seize_threads(struct seize_ctx *ctx, struct seized_task *task, bool wait, bool *changed)
{
	bool frozen_v1 = ctx->t->freezer && !ctx->t->freezer_v2;
	bool again = true;

	/*
	 * A thread in a ptrace stop makes no thread: once a listing made with
	 * all of them stopped showed nothing new, the next passes of the walk
	 * list them no more.
	 */
	if (task->threads_final)
		return 0;
	while (again) {
		_cleanup_free_ pid_t *tids = NULL;
		_cleanup_free_ bool *io = NULL;
		/* the stops taken before this listing: the sweep's leader, the walk's threads */
		bool stopped = !ctx->t->freezer && all_stopped(task), fresh = false;
		unsigned int nr, i;
		int err = proc_list_threads(task->pid, &tids, &nr);

		if (err == -ENOENT || err == -ESRCH || (!err && !nr)) {
			task->state = TASK_DEAD;
			return 0;
		}
		if (err) {
			pr_errno(err, "cannot list the threads of pid %d", task->pid);
			return err;
		}
		io = io_scan(task, tids, nr);
		for (i = 0; i < nr; i++) {
			int ret;

			if (find_thread(task, tids[i]))
				continue;
			if (frozen_v1 && stopped_and_frozen(task->pid, tids[i])) {
				pr_debug("thread %d of %d is stopped: seized after the thaw\n",
					 tids[i], task->pid);
				continue;
			}
			/* an io_uring worker is never the leader: its stat is not read */
			ret = tids[i] == task->pid ? 0
			      : !io || io[i]	   ? refuse_io_worker(task->pid, tids[i])
						   : 0;
			if (ret < 0)
				return ret;
			ret = seize_thread(task, tids[i]);
			if (ret < 0)
				return ret;
			if (ret == 0) {
				/* A leader that exited before its threads: keep it as threads[0]. */
				if (tids[i] == task->pid && add_thread(task, tids[i], false))
					return -ENOMEM;
				continue;
			}
			err = add_thread(task, tids[i], true);
			if (err) {
				ptrace(PTRACE_DETACH, tids[i], NULL, NULL);
				return err;
			}
			fresh = *changed = true;
		}
		again = fresh;
		/*
		 * The stops of all the threads seized in this pass, collected once
		 * they are all interrupted: they reach their stops meanwhile, rather
		 * than each being waited for before the next is seized.
		 */
		if (again && wait) {
			err = wait_task(ctx, task);
			if (err)
				return err;
		}
		/* the first sweep (seize_sweep()): its stops are taken, and it listed again, later */
		if (!wait && !ctx->t->freezer)
			again = false;
		task->threads_final = !fresh && stopped;
	}
	return 0;
}

int wait_task(struct seize_ctx *ctx, struct seized_task *task)
{
	unsigned int i;

	for (i = 0; i < task->nr_threads; i++) {
		int err = wait_thread(ctx, task, &task->threads[i]);

		if (err)
			return err;
	}
	return 0;
}

/* Derive the task's state from its threads' stops once all of them are stopped. */
void settle_task(struct seized_task *task)
{
	unsigned int i, live = 0;
	struct proc_stat st;
	bool stopped = false;

	if (task->state == TASK_ZOMBIE || task->state == TASK_DEAD)
		return;
	for (i = 0; i < task->nr_threads; i++) {
		if (!task->threads[i].seized)
			continue;
		live++;
		/* A group-stop is process-wide: one thread in it means the task is stopped. */
		if (is_stop_signal(task->threads[i].stop_sig))
			stopped = true;
	}
	if (live) {
		task->state = stopped ? TASK_STOPPED : TASK_ALIVE;
		return;
	}
	/* Nothing seized: it exited during the seize, or its seize was deferred (frozen). */
	if (proc_parse_stat(task->pid, 0, &st)) {
		task->state = TASK_DEAD;
	} else if (st.state == 'Z' && st.num_threads <= 1) {
		task->state = TASK_ZOMBIE;
		task->exit_code = st.exit_code;
	}
}
