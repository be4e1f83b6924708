// SPDX-License-Identifier: GPL-2.0
/*
 * One thread seized: PTRACE_SEIZE (with PTRACE_O_SUSPEND_SECCOMP where its
 * seccomp needs it), PTRACE_INTERRUPT, and its wait statuses until it is
 * stopped, gone, or the deadline passes.
 */
#define LOG_PREFIX "seize: "

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"
#include "fault.h"
#include "log.h"
#include "proc-parse.h"
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
int seize_thread(struct seized_task *task, pid_t tid)
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
