// SPDX-License-Identifier: GPL-2.0
/*
 * Tasks held at their exit while a snapshot copies their memory
 * (Documentation/memory.md, "Live snapshot"): the tree runs again, but the
 * leader of every live task stays traced, with PTRACE_O_TRACEEXIT only
 * (not PTRACE_O_SUSPEND_SECCOMP: its own filters apply to its own code). A
 * leader that exits stops at PTRACE_EVENT_EXIT, before the kernel lets its
 * memory go, and stays there until every page is copied. Meanwhile each
 * signal it takes is handed back at once (a signal-delivery stop resumed
 * with the signal), and a group-stop is kept (PTRACE_LISTEN). At the end
 * each one is detached: from its exit stop (it finishes exiting), from a
 * signal-delivery stop (with the signal), or from an interrupt stop. A
 * criu-like that dies lets them go (no PTRACE_O_EXITKILL): the kernel
 * detaches them, and a held one finishes its exit.
 *
 * Only the leader: a process whose leader calls exit() or exit_group() is
 * held whatever its threads do; one killed by a signal, or ended by
 * another thread's exit_group(), is not (its leader gets SIGKILL and stops
 * nowhere): its copy fails as before.
 */
#define LOG_PREFIX "seize: "
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"
#include "log.h"
#include "seize.h"
#include "util.h"

enum hold_state {
	HOLD_RUNNING,
	HOLD_LISTENING, /* in a group-stop, PTRACE_LISTEN */
	HOLD_EXITING, /* at PTRACE_EVENT_EXIT: held */
	HOLD_GONE,
};

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

int exit_hold_take(struct pstree *t, struct exit_hold *h)
{
	unsigned int i;

	h->n = 0;
	h->tid = calloc(t->nr_tasks + 1, sizeof(*h->tid));
	h->state = calloc(t->nr_tasks + 1, sizeof(*h->state));
	if (!h->tid || !h->state)
		return -ENOMEM;
	/* a cgroup found frozen is frozen again: none of its tasks will exit meanwhile */
	if (t->refreeze || t->freezer)
		return 0;
	for (i = 0; i < t->nr_tasks; i++) {
		struct seized_task *task = t->tasks[i];
		struct seized_thread *th = &task->threads[0];

		if (task->state != TASK_ALIVE || !th->seized || !th->stopped ||
		    th->stop_sig != SIGTRAP)
			continue;
		if (ptrace(PTRACE_SETOPTIONS, th->tid, NULL,
			   (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXIT)))
			continue; /* detached with the others */
		/* a signal the infection parked: queued again, handed back at its stop */
		if (th->pending_sig)
			syscall(SYS_tgkill, task->pid, th->tid, th->pending_sig);
		if (ptrace(PTRACE_CONT, th->tid, NULL, 0)) {
			pr_perror("cannot resume the leader %d, held at its exit", th->tid);
			ptrace(PTRACE_DETACH, th->tid, NULL, NULL);
		} else {
			h->tid[h->n] = th->tid;
			h->state[h->n++] = HOLD_RUNNING;
		}
		th->seized = th->stopped = false;
		th->pending_sig = 0;
	}
	if (h->n)
		pr_debug("%u leaders resumed, held at their exit until the copy ends\n", h->n);
	return 0;
}

/* Take every stop @i reported, if any, and let it go on (or keep it, at its exit). */
static void take_stops(struct exit_hold *h, unsigned int i)
{
	pid_t tid = h->tid[i];
	int status;

	while (h->state[i] == HOLD_RUNNING || h->state[i] == HOLD_LISTENING) {
		pid_t r = waitpid(tid, &status, __WALL | WNOHANG);
		int ev, sig;

		if (!r || (r < 0 && errno == EINTR))
			return;
		if (r < 0 || !WIFSTOPPED(status)) {
			h->state[i] = HOLD_GONE; /* killed: reaped, its parent is told */
			continue;
		}
		ev = status >> 16;
		sig = WSTOPSIG(status);
		if (ev == PTRACE_EVENT_EXIT) {
			pr_info("pid %d exits during the copy: held there until its pages are "
				"copied\n",
				tid);
			h->state[i] = HOLD_EXITING;
		} else if (ev == PTRACE_EVENT_STOP && is_stop_signal(sig)) {
			h->state[i] = ptrace(PTRACE_LISTEN, tid, NULL, 0) ? HOLD_GONE
									  : HOLD_LISTENING;
		} else if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)(ev ? 0 : sig))) {
			h->state[i] = HOLD_GONE;
		} else {
			h->state[i] = HOLD_RUNNING;
		}
	}
}

void exit_hold_wait(struct exit_hold *h, const int *done)
{
	const struct timespec tick = { 0, 5 * 1000 * 1000 };
	sigset_t chld, old;
	unsigned int i;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	while (!__atomic_load_n(done, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < h->n; i++)
			take_stops(h, i);
		/* a tracee's stop sends us SIGCHLD; the copy's end too (exit_hold_done()) */
		sigtimedwait(&chld, NULL, &tick);
	}
	for (i = 0; i < h->n; i++)
		take_stops(h, i);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void exit_hold_done(int *done, pid_t waiter)
{
	__atomic_store_n(done, 1, __ATOMIC_RELEASE);
	syscall(SYS_tgkill, getpid(), waiter, SIGCHLD);
}

/* Detach @i from its next stop (an interrupt's, its exit's, a signal's: handed back). */
static void release_one(struct exit_hold *h, unsigned int i)
{
	pid_t tid = h->tid[i];
	int status, ev, sig;

	if (h->state[i] == HOLD_GONE)
		return;
	if (h->state[i] != HOLD_EXITING && ptrace(PTRACE_INTERRUPT, tid, NULL, 0)) {
		h->state[i] = HOLD_GONE;
		return;
	}
	for (;;) {
		if (h->state[i] != HOLD_EXITING) {
			pid_t r = waitpid(tid, &status, __WALL);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 || !WIFSTOPPED(status))
				break; /* killed meanwhile: reaped */
			ev = status >> 16;
			sig = WSTOPSIG(status);
		} else {
			ev = PTRACE_EVENT_EXIT;
			sig = SIGTRAP;
		}
		if (ev == PTRACE_EVENT_EXIT || ev == PTRACE_EVENT_STOP) {
			/* a group-stop is kept by the detach (seize.md) */
			ptrace(PTRACE_DETACH, tid, NULL, NULL);
			break;
		}
		if (!ev) { /* a signal-delivery stop: the signal goes with the detach */
			ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
			break;
		}
		if (ptrace(PTRACE_CONT, tid, NULL, 0))
			break;
	}
	h->state[i] = HOLD_GONE;
}

void exit_hold_release(struct exit_hold *h)
{
	unsigned int i;

	for (i = 0; i < h->n; i++)
		release_one(h, i);
	free(h->tid);
	free(h->state);
	h->tid = NULL;
	h->state = NULL;
	h->n = 0;
}
