/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORE_INT_H
#define CRIU_LIKE_RESTORE_INT_H

/*
 * Internals of the restore of the tree (restore.c, restore-tree.c,
 * restore-fork.c). restore-tree.c is pure logic over image records
 * (unit-tested in test/unit/test-restore-tree.c); the others do the I/O.
 * The files of the tree are the files folder's (include/restore-files.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <time.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "restore.h"
#include "restore-files.h"

#include "files.pb-c.h"

/* ---- restore-tree.c: the task tree from pstree.img ---------------------------------------- */

/*
 * Build ctx->tasks from @n pstree records (parents before children, the
 * root first, its pid @root_pid). Refuses duplicate pids or tids, a task
 * listed before its parent (a cycle) or whose parent is missing (an orphan),
 * a live task without threads or whose first thread is not itself, a zombie
 * with threads or children. The records stay owned by the caller.
 */
int rst_tree_build(struct restore_ctx *ctx, PstreeEntry **pes, size_t n, uint32_t root_pid);
void rst_tree_free(struct restore_ctx *ctx);

/*
 * Check that sessions and process groups can be rebuilt with setsid() and
 * setpgid() in the order restore-fork.c uses, and with @shell_job rewrite the
 * root's session and group, when outside the tree, to @cur_sid/@cur_pgid (the
 * controller's, inherited by the root). Refuses naming the task and the id.
 */
int rst_tree_check_sessions(struct restore_ctx *ctx, bool shell_job, pid_t cur_sid, pid_t cur_pgid);

/*
 * Every task's core image (but a zombie's), checked against pstree.img:
 * side by side on the CPUs (par_for()).
 */
int rst_tree_read_cores(struct restore_ctx *ctx);

/* A child of @t must be forked before @t calls setsid(): it stays in the session @t leaves. */
static inline bool rst_forks_before_setsid(const struct rst_task *t, const struct rst_task *child)
{
	return t->pe->sid == t->pe->pid && child->pe->sid != t->pe->sid;
}

/* The index of @t in ctx->tasks (its slot in shared->pids). */
static inline unsigned int rst_task_idx(const struct restore_ctx *ctx, const struct rst_task *t)
{
	return (unsigned int)(t - ctx->tasks);
}

/*
 * The restorer area of task @i, [start, end), recorded by the task once
 * mapped (map_area()) for the resume to unmap: after the pids, the uffds and
 * the fd tables' turns in shared->pids (create_shared() sizes it).
 */
static inline uint64_t *rst_area_slot(const struct restore_ctx *ctx, unsigned int i)
{
	uintptr_t end = (uintptr_t)&ctx->shared->pids[3 * ctx->nr_tasks];

	return (uint64_t *)((end + 7) & ~(uintptr_t)7) + 2 * (size_t)i;
}

/*
 * Pid namespaces nested inside the tree's (namespaces.md, "The pid model"):
 * how many @t is below (PstreeEntry.ns_pid), and its pid at @level (0: the
 * tree's, the image pid).
 */
static inline unsigned int rst_pid_depth(const struct rst_task *t)
{
	return (unsigned int)t->pe->n_ns_pid;
}

static inline pid_t rst_pid_at(const struct rst_task *t, unsigned int level)
{
	return (pid_t)(level ? t->pe->ns_pid[level - 1] : t->pe->pid);
}

/*
 * @t is the init of a new pid namespace: the root of a tree with its own, or
 * pid 1 of a namespace one level below its parent's.
 */
static inline bool rst_task_pidns_init(const struct restore_ctx *ctx, const struct rst_task *t)
{
	unsigned int d = rst_pid_depth(t);

	if (!t->parent)
		return rst_in_pidns(ctx);
	return d && d == rst_pid_depth(t->parent) + 1 && rst_pid_at(t, d) == 1;
}

/* ---- restore-fork.c: the tree of processes -------------------------------------------------- */

/* In the controller: clone the root; it creates the rest. *@ret_pid is its pid. */
int rst_fork_root(struct restore_ctx *ctx, pid_t *ret_pid);

/* restore.c: move the log to an fd >= @base (its fd table will not touch it). */
int rst_move_log_above(int base);
/*
 * In a restoring task, before an fd table is installed: criu-like's own
 * stderr, the log or where errors are repeated, moved above the service
 * fd base (the table's fd 2 is the restored program's). 0 or -errno.
 */
int rst_keep_stderr(const struct restore_ctx *ctx);

/* ---- the shared area: futexes between processes (not FUTEX_PRIVATE) ------------------------ */

/*
 * restore-misc.c: the cwd lock (rst_fs_lock()) set up for @ctx's shared area,
 * taken only when a task of the tree shares its fs context; NULL: no lock.
 */
void rst_fs_lock_init(struct restore_ctx *ctx);
/*
 * How task @pid (the controller's pid namespace, @proc_fd its /proc) died, as
 * its zombie's /proc/PID/stat says: ": killed by signal 11 (Segmentation
 * fault)" or ": exited with status 1" in @buf, "" when it cannot say.
 */
const char *rst_death_how(int proc_fd, pid_t pid, char *buf, size_t size);

static inline void rst_futex_wake(uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Sleep while *@addr == @val, at most @ms milliseconds (0: no limit). */
static inline void rst_futex_wait(uint32_t *addr, uint32_t val, unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	syscall(SYS_futex, addr, FUTEX_WAIT, val, ms ? &ts : NULL, NULL, 0);
}

static inline uint32_t rst_load(const uint32_t *addr)
{
	return __atomic_load_n(addr, __ATOMIC_ACQUIRE);
}

/* Set the stage and wake every task waiting on it. */
static inline void rst_set_stage(struct rst_shared *sh, enum rst_stage st)
{
	__atomic_store_n(&sh->stage, (uint32_t)st, __ATOMIC_RELEASE);
	rst_futex_wake(&sh->stage);
}

#endif
