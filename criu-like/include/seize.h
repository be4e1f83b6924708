/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_SEIZE_H
#define CRIU_LIKE_SEIZE_H

/*
 * Collect and freeze a process tree (Documentation/seize.md). After
 * seize_tree() every thread of every live task is ptrace-seized and sitting
 * in a ptrace stop, so its registers can be read and syscalls injected.
 * unseize_tree() puts each task back exactly as it was found.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum task_state {
	TASK_ALIVE, /* running or sleeping when found */
	TASK_STOPPED, /* stopped by job control (SIGSTOP/SIGTSTP...) when found */
	TASK_ZOMBIE, /* exited, not reaped: recorded, not seized */
	TASK_DEAD, /* vanished during the seize */
};

struct seized_thread {
	pid_t tid;
	bool seized; /* PTRACE_SEIZE succeeded: must be detached */
	bool stopped; /* sitting in a ptrace stop (PTRACE_EVENT_STOP) */
	int stop_sig; /* SIGTRAP: PTRACE_INTERRUPT's stop; SIGSTOP/SIGTSTP/...: a group-stop */
	/*
	 * A signal taken out of the thread's queue by a signal-delivery-stop and
	 * not delivered yet. seize_tree() itself never leaves one here (it lets the
	 * thread take the signal at once); code that resumes threads later (the
	 * infection) may park one here, and unseize_tree() re-queues it with
	 * tgkill() before detaching, so it is not lost.
	 */
	int pending_sig;
	/* seize.c: it had no child, read while stopped: collect_children() reads it no more */
	bool children_read;
};

struct seized_task {
	pid_t pid, ppid, pgid, sid;
	enum task_state state;
	int exit_code; /* zombies: wait status from /proc/PID/stat */
	/*
	 * threads[0] is the thread-group leader; the others are all seized and
	 * stopped. threads[0] is not seized (check .seized) for a zombie, nor
	 * for a leader that exited before its threads (pthread_exit()).
	 */
	unsigned int nr_threads;
	struct seized_thread *threads;
	struct seized_task *parent; /* NULL for the root */
	/* listed with every seized thread in a ptrace stop, nothing new: none can come */
	bool threads_final;
	unsigned int nr_children;
	struct seized_task **children;
};

struct pstree {
	struct seized_task *root;
	unsigned int nr_tasks;
	struct seized_task **tasks; /* every task, parents before children */
	char *freezer; /* cgroup frozen by us, thawed on release */
	bool freezer_v2;
	bool killed; /* unseize_kill_send(): every live task has its SIGKILL */
	/* the cgroup, when it was found frozen: frozen again by unseize_tree() unless killing */
	char *refreeze;
	/*
	 * Tasks must run to reach a ptrace stop (v1) and to run injected code
	 * (v1 and v2), so seize_tree() thaws the cgroup once every task sits in
	 * a ptrace stop and sets freezer to NULL: it stays set only while frozen.
	 */
};

struct seize_opts {
	unsigned int timeout; /* seconds for the whole seize; 0: default */
	const char *freeze_cgroup; /* cgroup path (v1 freezer dir or cgroup2 dir) or NULL */
};

#define SEIZE_DEFAULT_TIMEOUT 10 /* seconds */

/*
 * Seize the tree rooted at @root. Refuses, with a message naming the pid,
 * a pid that does not exist, init of the host, kernel threads, and tasks
 * already traced by another tracer (-EBUSY), the caller itself or one of its
 * ancestors (-EDEADLK). -ESRCH for a pid that does not exist, -EPERM for
 * init and kernel threads, -ETIMEDOUT past opts->timeout. On failure
 * nothing stays seized. Returns 0 or -errno; @opts may be NULL.
 */
int seize_tree(pid_t root, const struct seize_opts *opts, struct pstree **ret);

enum unseize_mode {
	UNSEIZE_RESUME, /* every task continues in the state it was found in */
	UNSEIZE_KILL, /* SIGKILL every live task, then detach */
	UNSEIZE_STOPPED, /* leave every task stopped (SIGSTOP) after detaching */
};

/*
 * seize/exit-hold.c: a snapshot's tasks held at their exit while their
 * memory is copied. exit_hold_take(): before unseize_tree(RESUME), the
 * leader of every live task found running is resumed but stays traced
 * (PTRACE_O_TRACEEXIT; unseize_tree() leaves it be). exit_hold_wait(): in
 * the thread that seized them, until *@done: each signal they take handed
 * back, a group-stop kept, an exit held. exit_hold_done(): from the copy's
 * thread, sets *@done and wakes @waiter (that thread's tid).
 * exit_hold_release(): every one detached (a held exit goes on).
 */
struct exit_hold {
	unsigned int n;
	pid_t *tid;
	uint8_t *state;
};
int exit_hold_take(struct pstree *t, struct exit_hold *h);
void exit_hold_wait(struct exit_hold *h, const int *done);
void exit_hold_done(int *done, pid_t waiter);
void exit_hold_release(struct exit_hold *h);

/* Release every seized thread, thaw the freezer, free the tree. */
void unseize_tree(struct pstree *t, enum unseize_mode mode);
/*
 * The SIGKILL of unseize_tree(UNSEIZE_KILL) sent now, to every live task
 * (none runs its own code again), so that the caller's work overlaps their
 * exits until unseize_tree(UNSEIZE_KILL) detaches and reaps them.
 */
void unseize_kill_send(struct pstree *t);
void pstree_free(struct pstree *t);

struct seized_task *pstree_find(const struct pstree *t, pid_t pid);

/*
 * seize-thread.c: extra PTRACE_SEIZE options for thread @tid of @pid: PTRACE_O_SUSPEND_SECCOMP
 * (4.3, CONFIG_CHECKPOINT_RESTORE; the tracer needs CAP_SYS_ADMIN and no
 * seccomp of its own) when /proc shows it in a seccomp mode, 0 otherwise.
 * Without it the syscalls the infection injects and the parasite makes go
 * through the task's filters (a strict-mode thread is killed by the first
 * one); the suspension ends at the detach. A thread gone or unreadable
 * gives 0: the seize reports what happened to it.
 */
long seize_seccomp_options(pid_t pid, pid_t tid);

#endif
