/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORE_INT_H
#define CRIU_LIKE_RESTORE_INT_H

/*
 * Internals of the restore of the tree and its files (restore.c,
 * restore-tree.c, restore-fork.c, restore-files.c, restore-files-plan.c).
 * restore-tree.c and restore-files-plan.c are pure logic over image records
 * (unit-tested in test/unit/test-restore-*.c); the others do the I/O.
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

/* A child of @t must be forked before @t calls setsid(): it stays in the session @t leaves. */
static inline bool rst_forks_before_setsid(const struct rst_task *t, const struct rst_task *child)
{
	return t->pe->sid == t->pe->pid && child->pe->sid != t->pe->sid;
}

static inline bool rst_task_zombie(const struct rst_task *t)
{
	return t->pe->state == TASK_STATE__TASK_ZOMBIE;
}

/* The index of @t in ctx->tasks (its slot in shared->pids). */
static inline unsigned int rst_task_idx(const struct restore_ctx *ctx, const struct rst_task *t)
{
	return (unsigned int)(t - ctx->tasks);
}

/* ---- restore-files-plan.c: fd tables and file ids ------------------------------------------ */

/* files.img indexed by id. */
struct rst_file_index {
	size_t n;
	FileEntry **by_id; /* sorted by id */
};

/* One task's fd table (fdinfo-PID.img) and fs (fs-PID.img): rst_task->files. */
struct rst_task_files {
	size_t nr_fds;
	FdEntry **fds; /* sorted by fd number */
	ProtobufCMessage **recs; /* fdinfo records, owned */
	size_t nr_recs;
	FsEntry *fs; /* NULL for zombies */
};

/* Index @n FileEntry records; refuses duplicate ids and entries missing their type's part. */
int rst_file_index_build(struct rst_file_index *idx, FileEntry **fes, size_t n);
void rst_file_index_free(struct rst_file_index *idx);
FileEntry *rst_file_index_find(const struct rst_file_index *idx, uint32_t id);
/* The position of @id in idx->by_id, or -1. */
/* The position of FileEntry @id in @idx, or -1 when it has none. */
long rst_file_index_pos(const struct rst_file_index *idx, uint32_t id);

/*
 * Sort @tf's fds by number; refuses a number used twice or an id missing
 * from @idx, naming @pid, the fd and the id.
 */
int rst_fd_plan_check(struct rst_task_files *tf, const struct rst_file_index *idx, pid_t pid);

/* Above every fd number of every live task's table, and above stdio (at least 3). */
int rst_service_fd_base(const struct restore_ctx *ctx);

/* ---- restore-files.c: descriptions opened in the controller, fds installed by tasks ------- */

/* Read files.img and each live task's fdinfo-PID.img and fs-PID.img. */
int rst_files_read(struct restore_ctx *ctx);
/* How many descriptions rst_files_open() will open. */
size_t rst_files_count(const struct restore_ctx *ctx);
/* Open every description once, at fds >= ctx->service_fd_base. */
int rst_files_open(struct restore_ctx *ctx);
/* In the task: its fds at their numbers, every other fd below the base closed. */
int rst_files_install(struct restore_ctx *ctx, struct rst_task *t);
/* In the task: each kind's step right after setsid() (a session's controlling terminal). */
int rst_files_after_setsid(struct restore_ctx *ctx, const struct rst_task *t);
/* In the task: each kind's step once every process group exists (a terminal's foreground). */
int rst_files_after_groups(struct restore_ctx *ctx, const struct rst_task *t);
/* In the controller, every thread at the barrier: each kind's last step (TCP repair off). */
int rst_files_resume(struct restore_ctx *ctx);
/* In the task: cwd, root, umask. */
int rst_fs_restore(struct restore_ctx *ctx, struct rst_task *t);
/* Close the controller's descriptions (after the resume or a failure) and free everything. */
void rst_files_fini(struct restore_ctx *ctx);

/* ---- restore-fork.c: the tree of processes -------------------------------------------------- */

/* In the controller: clone the root; it creates the rest. *@ret_pid is its pid. */
int rst_fork_root(struct restore_ctx *ctx, pid_t *ret_pid);

/* restore.c: move the log to an fd >= @base (its fd table will not touch it). */
int rst_move_log_above(int base);

/* ---- the shared area: futexes between processes (not FUTEX_PRIVATE) ------------------------ */

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
