// SPDX-License-Identifier: GPL-2.0
/*
 * Collect and freeze a process tree (Documentation/seize.md).
 *
 * Every thread is attached with PTRACE_SEIZE (no SIGSTOP is sent, unlike
 * PTRACE_ATTACH, so the task cannot tell) and stopped with PTRACE_INTERRUPT.
 * New threads and children are not caught with PTRACE_O_TRACECLONE/TRACEFORK
 * (those would auto-attach tasks outside our bookkeeping and report extra
 * events); like CRIU, the walk is repeated until a pass finds nothing new: a
 * thread in a ptrace stop cannot create anything, so once every known thread
 * is stopped the next pass is the last.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOG_PREFIX "seize: "
#include "compat.h"
#include "freezer.h"
#include "log.h"
#include "par.h"
#include "fault.h"
#include "proc-parse.h"
#include "seize.h"
#include "seize-int.h"
#include "util.h"

static bool past_deadline(struct seize_ctx *ctx)
{
	struct timespec now;

	if (ctx->timed_out)
		return true;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ctx->timed_out = now.tv_sec > ctx->deadline.tv_sec ||
			 (now.tv_sec == ctx->deadline.tv_sec &&
			  now.tv_nsec >= ctx->deadline.tv_nsec);
	return ctx->timed_out;
}

/* Grow @*arr (of @nr elements of @size) when @nr reaches a power of two. */
static int grow(void **arr, unsigned int nr, size_t size)
{
	void *n;

	if (nr && (nr & (nr - 1)))
		return 0;
	n = realloc(*arr, (nr ? nr * 2 : 4) * size);
	if (!n)
		return -ENOMEM;
	*arr = n;
	return 0;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* ---- refusals ---------------------------------------------------------------- */

static void comm_of(pid_t pid, char *buf, size_t len)
{
	struct proc_stat st;

	if (proc_parse_stat(pid, 0, &st))
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%s", st.comm);
}

/* A thread that refused PTRACE_SEIZE: say who traces it, or 0 when nobody does. */
static int check_tracer(pid_t pid, pid_t tid)
{
	struct proc_status s;
	char comm[64];
	pid_t tracer;

	if (proc_parse_status(pid, tid, &s))
		return 0;
	tracer = s.tracer_pid;
	proc_status_fini(&s);
	if (!tracer)
		return 0;
	comm_of(tracer, comm, sizeof(comm));
	if (tracer == getpid())
		pr_err("pid %d (thread %d) is already traced by this process (seized twice?)\n",
		       pid, tid);
	else
		pr_err("pid %d (thread %d) is already traced by pid %d (%s): detach it first\n",
		       pid, tid, tracer, comm);
	return -EBUSY;
}

static int check_not_ancestor(pid_t root)
{
	pid_t p = getpid();

	while (p > 0) {
		struct proc_stat st;

		if (p == root) {
			pr_err("pid %d is %s: refusing to seize it\n", root,
			       p == getpid() ? "this process" : "an ancestor of this process");
			return -EDEADLK;
		}
		if (proc_parse_stat(p, 0, &st))
			break;
		p = st.ppid;
	}
	return 0;
}

static int check_root(pid_t root)
{
	struct proc_status s;
	struct proc_stat st;
	pid_t tgid;
	int err;

	if (root <= 0 || proc_parse_stat(root, 0, &st)) {
		pr_err("pid %d does not exist\n", root);
		return -ESRCH;
	}
	if (root == 1) {
		pr_err("pid 1 (%s) is the init of this pid namespace: refusing to seize it\n",
		       st.comm);
		return -EPERM;
	}
	if ((st.flags & PF_KTHREAD) || root == 2 || st.ppid == 2) {
		pr_err("pid %d (%s) is a kernel thread: refusing to seize it\n", root, st.comm);
		return -EPERM;
	}
	err = proc_parse_status(root, 0, &s);
	if (err) {
		pr_errno(err, "cannot read /proc/%d/status", root);
		return err;
	}
	tgid = s.tgid;
	proc_status_fini(&s);
	err = check_not_ancestor(root);
	if (err)
		return err;
	if (tgid == getpid()) {
		pr_err("pid %d is a thread of this process: refusing to seize it\n", root);
		return -EDEADLK;
	}
	if (tgid != root) {
		pr_err("pid %d is a thread of process %d, not a process: seize %d instead\n", root,
		       tgid, tgid);
		return -EINVAL;
	}
	return check_tracer(root, root);
}

/* ---- one thread ---------------------------------------------------------------- */

/* Whether @tid is gone or exited (a zombie thread cannot be attached to any more). */
static bool thread_dead(pid_t pid, pid_t tid)
{
	struct proc_stat st;

	return proc_parse_stat(pid, tid, &st) || st.state == 'Z' || st.state == 'X' ||
	       st.state == 'x';
}

/* A leader that exited while other threads run: waitpid() reports it only when they are gone. */
static bool leader_waits_for_threads(pid_t pid)
{
	struct proc_stat st;

	return !proc_parse_stat(pid, 0, &st) && st.state == 'Z' && st.num_threads > 1;
}

static void thread_exited(struct seized_task *task, struct seized_thread *th)
{
	pr_debug("thread %d of %d exited during the seize\n", th->tid, task->pid);
	th->seized = false;
	th->stopped = false;
}

/* Handle one wait status of @th. Returns 1 once it is stopped or gone, 0 to wait more. */
static int handle_status(struct seized_task *task, struct seized_thread *th, int status)
{
	int sig;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		thread_exited(task, th);
		return 1;
	}
	if (!WIFSTOPPED(status))
		return 0;
	sig = WSTOPSIG(status);
	if (status >> 16 == PTRACE_EVENT_STOP) {
		/* SIGTRAP: our interrupt; a stop signal: a group-stop (ptrace(2)). */
		th->stopped = true;
		th->stop_sig = sig;
		return 1;
	}
	/*
	 * A signal-delivery-stop: the thread dequeued @sig before our interrupt
	 * took effect. Resuming without it would discard it, so hand it back with
	 * PTRACE_CONT: the thread takes it as it would have without us (handler
	 * frame, default action, or a group-stop for a stop signal), then the
	 * still-pending interrupt traps it before it returns to user code.
	 */
	pr_debug("thread %d of %d: signal %d arrived during the seize, delivering it\n", th->tid,
		 task->pid, sig);
	if (ptrace(PTRACE_CONT, th->tid, NULL, (void *)(long)(sig == (SIGTRAP | 0x80) ? 0 : sig)) &&
	    errno != ESRCH)
		return neg_errno();
	return 0;
}

int wait_thread(struct seize_ctx *ctx, struct seized_task *task, struct seized_thread *th)
{
	unsigned int delay = 10;

	while (th->seized && !th->stopped) {
		int status, ret;
		pid_t r = waitpid(th->tid, &status, __WALL | WNOHANG);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			/* ECHILD: another waiter reaped it: it is gone. */
			if (errno != ECHILD)
				return neg_errno();
			thread_exited(task, th);
			break;
		}
		if (r > 0) {
			ret = handle_status(task, th, status);
			if (ret < 0)
				return ret;
			delay = 10;
			continue;
		}
		/*
		 * A thread that exited is reported by waitpid() (we must collect it, or
		 * it stays a traced zombie); only a leader that exited before its other
		 * threads is not, until they are all gone.
		 */
		if (th->tid == task->pid && leader_waits_for_threads(task->pid)) {
			thread_exited(task, th);
			break;
		}
		if (past_deadline(ctx))
			return -ETIMEDOUT;
		usleep(delay);
		delay = min(delay * 2, 5000u);
	}
	return 0;
}

/*
 * PTRACE_O_SUSPEND_SECCOMP (4.3, CAP_SYS_ADMIN) for a thread in a seccomp
 * mode, so the parasite's syscalls bypass its filters (and strict mode does
 * not kill it); 0 for the others.
 */
long seize_seccomp_options(pid_t pid, pid_t tid)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	int mode = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	text = read_file_at(AT_FDCWD, path, NULL);
	if (!text || seccomp_parse_status(text, &mode) || !mode)
		return 0;
	pr_debug("task %d/%d: seccomp mode %d: suspended while seized\n", pid, tid, mode);
	return CR_PTRACE_O_SUSPEND_SECCOMP;
}

/*
 * Whether every thread can be seized with PTRACE_O_SUSPEND_SECCOMP, filtered
 * or not: the kernel grants it to a tracer with CAP_SYS_ADMIN and no seccomp
 * of its own, and it changes nothing for a thread without filters. Then no
 * thread's status is read for its mode (the costliest /proc file, per
 * thread). Asked once; a refusal (EPERM: no CAP_SYS_ADMIN in the initial
 * user namespace) turns it off for good, see seize_thread().
 */
static int suspend_always = -1;

static bool seccomp_suspend_always(void)
{
	_cleanup_free_ char *text = NULL;
	const char *cap;
	int mode = -1;

	if (suspend_always >= 0)
		return suspend_always;
	suspend_always = 0;
	text = read_file_at(AT_FDCWD, "/proc/self/status", NULL);
	if (!text || seccomp_parse_status(text, &mode) || mode)
		return false;
	cap = strstr(text, "\nCapEff:");
	if (cap && (strtoull(cap + 8, NULL, 16) >> 21) & 1) /* CAP_SYS_ADMIN */
		suspend_always = 1;
	return suspend_always;
}

/* Attach to @tid and ask it to stop. Returns 1 when attached, 0 when it is gone. */
static int seize_thread(struct seized_task *task, pid_t tid)
{
	/* with PTRACE_O_SUSPEND_SECCOMP when filtered: the parasite's syscalls bypass the filters */
	long opts = PTRACE_O_TRACESYSGOOD |
		    (seccomp_suspend_always() ? CR_PTRACE_O_SUSPEND_SECCOMP
					      : seize_seccomp_options(task->pid, tid));
	int ret = fault_err(-ENOMEM, "PTRACE_SEIZE %d", tid)
			  ? -1
			  : (int)ptrace(PTRACE_SEIZE, tid, NULL, (void *)opts);

	if (ret && errno == EPERM && (opts & CR_PTRACE_O_SUSPEND_SECCOMP) && suspend_always == 1) {
		pr_debug("PTRACE_O_SUSPEND_SECCOMP refused: asked thread by thread from now on\n");
		suspend_always = 0;
		return seize_thread(task, tid);
	}
	if (ret) {
		int err = -errno;

		/* EPERM: an exiting thread, or one traced by someone else. */
		if (err == -ESRCH || (err == -EPERM && thread_dead(task->pid, tid)))
			return 0;
		if (err == -EPERM && check_tracer(task->pid, tid))
			return -EBUSY;
		pr_errno(err, "cannot seize thread %d of pid %d", tid, task->pid);
		return err;
	}
	/* ESRCH here: it died right after the seize; wait_thread() collects the exit. */
	if ((fault_err(-EIO, "PTRACE_INTERRUPT %d", tid) ||
	     ptrace(PTRACE_INTERRUPT, tid, NULL, NULL)) &&
	    errno != ESRCH) {
		pr_perror("cannot interrupt thread %d of pid %d", tid, task->pid);
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return neg_errno();
	}
	return 1;
}

/* ---- one process ----------------------------------------------------------------- */

static struct seized_thread *find_thread(struct seized_task *task, pid_t tid)
{
	unsigned int i;

	for (i = 0; i < task->nr_threads; i++)
		if (task->threads[i].tid == tid)
			return &task->threads[i];
	return NULL;
}

static int add_thread(struct seized_task *task, pid_t tid, bool seized)
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

/*
 * Seize the threads of @task not seen yet, listing again until a listing
 * shows nothing new. With @wait, each is waited for; without (frozen cgroup),
 * the stops are collected by wait_task() after the thaw.
 */
static int wait_task(struct seize_ctx *ctx, struct seized_task *task);

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

static int seize_threads(struct seize_ctx *ctx, struct seized_task *task, bool wait, bool *changed)
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

static int wait_task(struct seize_ctx *ctx, struct seized_task *task)
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
static void settle_task(struct seized_task *task)
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

static struct seized_task *find_task(const struct pstree *t, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < t->nr_tasks; i++)
		if (t->tasks[i]->pid == pid)
			return t->tasks[i];
	return NULL;
}

struct seized_task *pstree_find(const struct pstree *t, pid_t pid)
{
	struct seized_task *task = t ? find_task(t, pid) : NULL;

	if (!task)
		errno = ESRCH;
	return task;
}

/*
 * Record @pid (a child of @parent, or the root). A zombie is recorded with its
 * wait status and not seized; a pid that is already gone is not recorded.
 */
static int add_task(struct pstree *t, pid_t pid, struct seized_task *parent)
{
	struct seized_task *task;
	struct proc_stat st;

	if (proc_parse_stat(pid, 0, &st))
		return 0;
	if (grow((void **)&t->tasks, t->nr_tasks, sizeof(*t->tasks)))
		return -ENOMEM;
	task = calloc(1, sizeof(*task));
	if (!task)
		return -ENOMEM;
	task->pid = pid;
	task->ppid = st.ppid;
	task->pgid = st.pgid;
	task->sid = st.sid;
	task->parent = parent;
	task->state = st.state == 'T' ? TASK_STOPPED : TASK_ALIVE;
	/* A leader that exited before its threads also shows Z: only 1 thread means dead. */
	if (st.state == 'Z' && st.num_threads <= 1) {
		task->state = TASK_ZOMBIE;
		task->exit_code = st.exit_code;
		if (add_thread(task, pid, false)) {
			free(task);
			return -ENOMEM;
		}
	}
	t->tasks[t->nr_tasks++] = task;
	pr_debug("pid %d (%s, parent %d) state %c\n", pid, st.comm, st.ppid, st.state);
	return 0;
}

/*
 * Record the children of every thread of @task not seen yet. A thread's
 * children file lists the tasks it forked (it forks none while stopped),
 * those its children made with CLONE_PARENT, and the orphans the kernel gave
 * it: those go to the first live thread of a process (kernel
 * find_alive_thread(): of the process whose thread exited, or of the
 * subreaper). So a thread that had no child when it was read stopped is not
 * read again in the next passes, but for the first seized thread of the task.
 */
/* The children files of many threads (a process of 64 or more to read) read side by side. */
#define KIDS_PAR_MIN 64

struct kids_read {
	pid_t pid;
	const unsigned int *idx; /* in task->threads */
	const struct seized_thread *threads;
	pid_t **kids;
	unsigned int *nr;
	int *err;
};

static int kids_read_one(void *arg, unsigned int i)
{
	struct kids_read *r = arg;

	r->err[i] = proc_parse_children(r->pid, r->threads[r->idx[i]].tid, &r->kids[i], &r->nr[i]);
	return 0;
}

static int collect_children(struct pstree *t, struct seized_task *task, bool *changed)
{
	_cleanup_free_ unsigned int *idx = calloc(task->nr_threads + 1, sizeof(*idx));
	_cleanup_free_ pid_t **kids = calloc(task->nr_threads + 1, sizeof(*kids));
	_cleanup_free_ unsigned int *nr = calloc(task->nr_threads + 1, sizeof(*nr));
	_cleanup_free_ int *errs = calloc(task->nr_threads + 1, sizeof(*errs));
	_cleanup_free_ int *par_errs = calloc(task->nr_threads + 1, sizeof(*par_errs));
	struct kids_read r = { task->pid, idx, task->threads, kids, nr, errs };
	unsigned int i, j, n = 0;
	bool first = true;
	int err = 0;

	if (!idx || !kids || !nr || !errs || !par_errs)
		return -ENOMEM;
	for (i = 0; i < task->nr_threads; i++) {
		const struct seized_thread *th = &task->threads[i];

		if (!th->seized || (th->children_read && !first))
			continue;
		first = false;
		idx[n++] = i;
	}
	if (n >= KIDS_PAR_MIN)
		par_for(n, kids_read_one, &r, par_errs, NULL);
	else
		for (i = 0; i < n; i++)
			kids_read_one(&r, i);
	for (i = 0; i < n && !err; i++) {
		struct seized_thread *th = &task->threads[idx[i]];

		th->children_read = !errs[i] && !nr[i] && th->stopped;
		if (errs[i] == -ENOENT || errs[i] == -ESRCH)
			continue;
		err = errs[i];
		if (err) {
			pr_errno(err, "cannot read the children of %d/%d", task->pid, th->tid);
			break;
		}
		for (j = 0; j < nr[i] && !err; j++) {
			if (find_task(t, kids[i][j]))
				continue;
			err = add_task(t, kids[i][j], task);
			*changed = true;
		}
	}
	for (i = 0; i < n; i++)
		free(kids[i]);
	return err;
}

/* ---- the walk -------------------------------------------------------------------- */

/* One pass over every task, including those added during the pass. */
static int walk_pass(struct seize_ctx *ctx, bool wait, bool *changed)
{
	struct pstree *t = ctx->t;
	unsigned int i;

	for (i = 0; i < t->nr_tasks; i++) {
		struct seized_task *task = t->tasks[i];
		int err;

		if (task->state == TASK_ZOMBIE || task->state == TASK_DEAD)
			continue;
		if (task->parent && task->parent->state == TASK_DEAD) {
			/* Reparented out of the tree when its parent exited: not ours. */
			pr_warn("pid %d left the tree: its parent %d exited during the seize\n",
				task->pid, task->parent->pid);
			release_task(task, UNSEIZE_RESUME);
			task->state = TASK_DEAD;
			continue;
		}
		err = seize_threads(ctx, task, wait, changed);
		if (!err && wait)
			settle_task(task);
		if (!err && task->state != TASK_DEAD)
			err = collect_children(t, task, changed);
		if (err)
			return err;
	}
	return 0;
}

/* With a frozen cgroup: seize and interrupt everything while frozen, thaw, collect the stops. */
static int walk_frozen(struct seize_ctx *ctx)
{
	struct pstree *t = ctx->t;
	bool changed = true;
	unsigned int i;
	int err;

	while (changed) {
		changed = false;
		err = walk_pass(ctx, false, &changed);
		if (err)
			return err;
	}
	/* Frozen (v1) tasks reach the pending PTRACE_INTERRUPT trap only once thawed. */
	err = freezer_thaw(t->freezer, t->freezer_v2);
	if (err)
		return err;
	free(t->freezer);
	t->freezer = NULL;
	for (i = 0; i < t->nr_tasks; i++) {
		err = wait_task(ctx, t->tasks[i]);
		if (err)
			return err;
		settle_task(t->tasks[i]);
	}
	return 0;
}

static int freeze_cgroup(struct seize_ctx *ctx, const char *path)
{
	struct pstree *t = ctx->t;
	bool was_frozen = false;
	int err;

	t->freezer = strdup(path);
	if (!t->freezer)
		return -ENOMEM;
	err = freezer_take(path, &t->freezer_v2, &ctx->deadline, &was_frozen);
	if (!err && was_frozen) {
		t->refreeze = strdup(path);
		if (!t->refreeze)
			err = -ENOMEM;
	}
	if (err) {
		free(t->freezer);
		t->freezer = NULL;
	}
	return err;
}

/* Keep threads[0] (the leader, seized or not) and the seized threads. */
static void drop_dead_threads(struct seized_task *task)
{
	unsigned int i, n = min(task->nr_threads, 1u);

	for (i = 1; i < task->nr_threads; i++)
		if (task->threads[i].seized)
			task->threads[n++] = task->threads[i];
	task->nr_threads = n;
}

/* Drop dead tasks and threads, link parents to children; tasks[] keeps parents first. */
static int finish_tree(struct pstree *t)
{
	unsigned int i, n = 0;

	for (i = 0; i < t->nr_tasks; i++) {
		struct seized_task *task = t->tasks[i];

		if (task->state == TASK_DEAD) {
			free(task->threads);
			free(task);
			continue;
		}
		drop_dead_threads(task);
		t->tasks[n++] = task;
	}
	t->nr_tasks = n;
	for (i = 0; i < n; i++) {
		struct seized_task *task = t->tasks[i], *p = task->parent;

		if (!p)
			continue;
		if (grow((void **)&p->children, p->nr_children, sizeof(*p->children)))
			return -ENOMEM;
		p->children[p->nr_children++] = task;
	}
	return 0;
}

static bool seizable(const struct seized_task *task)
{
	return task->state != TASK_ZOMBIE && task->state != TASK_DEAD;
}

/* The sweep's first step in @task: its leader seized and interrupted, not waited for. */
static int seize_leader(struct seized_task *task)
{
	int ret, err;

	if (!seizable(task) || task->nr_threads)
		return 0;
	ret = seize_thread(task, task->pid);
	if (ret < 0)
		return ret;
	/* 0: gone or exiting; kept as threads[0] unseized, its threads found by the listing */
	err = add_thread(task, task->pid, ret > 0);
	if (err && ret > 0)
		ptrace(PTRACE_DETACH, task->pid, NULL, NULL);
	return err;
}

/*
 * Without a freezer, a first sweep, a generation at a time: every leader of
 * the generation seized and interrupted without waiting for its stop, then
 * their stops taken; then every task's threads listed, the others seized and
 * interrupted, and their stops taken; then the children of all of them read,
 * which make the next generation. The tasks reach their stops side by side,
 * rather than one after the other with a scheduler round trip each. The
 * threads are listed with the leader stopped: a process of one thread then
 * shows it alone, stopped, and is listed no more (threads_final), where a
 * listing before the stop had to be made again by the walk. A child is
 * seized only once its parent is stopped: a parent in vfork() stops only
 * once its child has run on (to its exec or exit), and a running parent
 * could reap a child seized before it. The passes after find what they
 * forked meanwhile.
 */
static int seize_sweep(struct seize_ctx *ctx)
{
	struct pstree *t = ctx->t;
	unsigned int from = 0, to, i;
	bool changed = false;
	int err = 0;

	while (!err && from < t->nr_tasks) {
		to = t->nr_tasks;
		for (i = from; i < to && !err; i++)
			err = seize_leader(t->tasks[i]);
		for (i = from; i < to && !err; i++)
			err = wait_task(ctx, t->tasks[i]);
		for (i = from; i < to && !err; i++)
			if (seizable(t->tasks[i]))
				err = seize_threads(ctx, t->tasks[i], false, &changed);
		for (i = from; i < to && !err; i++) {
			err = wait_task(ctx, t->tasks[i]);
			if (!err)
				settle_task(t->tasks[i]);
		}
		for (i = from; i < to && !err; i++)
			if (seizable(t->tasks[i]))
				err = collect_children(t, t->tasks[i], &changed);
		from = to;
	}
	return err;
}

static int seize_walk(struct seize_ctx *ctx, const struct seize_opts *opts)
{
	struct pstree *t = ctx->t;
	bool changed = true;
	int err;

	if (opts && opts->freeze_cgroup) {
		err = freeze_cgroup(ctx, opts->freeze_cgroup);
		if (!err)
			err = walk_frozen(ctx);
		if (err)
			return err;
	} else {
		err = seize_sweep(ctx);
		if (err)
			return err;
	}
	while (changed) {
		changed = false;
		err = walk_pass(ctx, true, &changed);
		if (err)
			return err;
		if (t->root->state == TASK_DEAD) {
			pr_err("pid %d exited during the seize\n", t->root->pid);
			return -ESRCH;
		}
	}
	return finish_tree(t);
}

int seize_tree(pid_t root, const struct seize_opts *opts, struct pstree **ret)
{
	unsigned int timeout = opts && opts->timeout ? opts->timeout : SEIZE_DEFAULT_TIMEOUT;
	struct seize_ctx ctx = { 0 };
	int err;

	err = check_root(root);
	if (err)
		return err;
	clock_gettime(CLOCK_MONOTONIC, &ctx.deadline);
	ctx.deadline.tv_sec += timeout;
	ctx.t = calloc(1, sizeof(*ctx.t));
	if (!ctx.t)
		return -ENOMEM;
	err = add_task(ctx.t, root, NULL);
	if (!err && !ctx.t->nr_tasks)
		err = -ESRCH;
	if (err) {
		pr_err("pid %d vanished before it could be seized\n", root);
		pstree_free(ctx.t);
		return err;
	}
	ctx.t->root = ctx.t->tasks[0];
	if (ctx.t->root->state == TASK_ZOMBIE) {
		pr_err("pid %d is a zombie: nothing to seize\n", root);
		pstree_free(ctx.t);
		return -ESRCH;
	}
	err = seize_walk(&ctx, opts);
	if (err) {
		if (err == -ETIMEDOUT)
			pr_err("seizing the tree of pid %d took more than %u s: released it\n",
			       root, timeout);
		else if (err == -ENOMEM)
			pr_err("out of memory while seizing the tree of pid %d\n", root);
		unseize_tree(ctx.t, UNSEIZE_RESUME);
		return err;
	}
	pr_info("seized %u tasks of the tree of pid %d\n", ctx.t->nr_tasks, root);
	*ret = ctx.t;
	return 0;
}
