/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORE_FILES_H
#define CRIU_LIKE_RESTORE_FILES_H

/*
 * What the files folder offers the restore engine: every open file
 * description of files.img opened once in the controller, each task's fd
 * table installed in the task, each kind's steps at the right moments
 * (criu-like/files/kind.h); and task/fs.c's cwd, root and umask.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "restore.h"

#include "files.pb-c.h"
#include "fs.pb-c.h"

/* ---- files/restore-files-plan.c: fd tables and file ids (pure logic) ---------------------- */

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
	/* fdtable.c: the tasks before and after this one in its shared fd table's group; -1 */
	int fdt_prev, fdt_next;
};

/* Index @n FileEntry records; refuses duplicate ids and entries missing their type's part. */
int rst_file_index_build(struct rst_file_index *idx, FileEntry **fes, size_t n);
void rst_file_index_free(struct rst_file_index *idx);
FileEntry *rst_file_index_find(const struct rst_file_index *idx, uint32_t id);
/* The position of FileEntry @id in @idx, or -ENOENT when it has none. */
long rst_file_index_pos(const struct rst_file_index *idx, uint32_t id);

/*
 * Sort @tf's fds by number; refuses a number used twice or an id missing
 * from @idx, naming @pid, the fd and the id.
 */
int rst_fd_plan_check(struct rst_task_files *tf, const struct rst_file_index *idx, pid_t pid);

/* Above every fd number of every live task's table, and above stdio (at least 3). */
int rst_service_fd_base(const struct restore_ctx *ctx);

/* ---- files/restore-files.c: descriptions opened in the controller, installed by tasks ------ */

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
/* Close the controller's descriptions (after the resume or a failure) and free everything. */
void rst_files_fini(struct restore_ctx *ctx);

/* File @id is of a kind the kernel maps only where it wants (io_uring): struct rst_vma.unfixed. */
bool rst_file_map_unfixed(const struct restore_ctx *ctx, uint32_t id);

/* task/fs.c, in the task: cwd, root, umask. */
int rst_fs_restore(struct restore_ctx *ctx, struct rst_task *t);
/* task/fs.c: in task @t, the last step before its restorer: chroot() to its root. */
int rst_fs_chroot(struct rst_task *t);
/*
 * pidfd.c: the pidfds of @t's own threads (PIDFD_THREAD), which its restorer
 * makes once it made the threads, into @out (NULL: count only); their number
 * in *@nr. -EOPNOTSUPP (logged) for a pidfd of a thread of another process.
 */
/*
 * unix-queue.c, in the root of a tree with a pid namespace of its own, once
 * every task exists and before its own fds are installed: the queues whose
 * messages carry the credentials of pids, refilled from inside that
 * namespace, where those pids are the tasks' (the controller left them:
 * usk_late()). 0 when there are none.
 */
int usk_late_in_root(struct restore_ctx *ctx);

struct rst_tpidfd;
struct rst_uring_reg;
struct rst_iovec;
/*
 * io_uring.c: the registered buffers of @t's rings, which its restorer
 * registers once its memory is back, into @regs and @iovs (NULL: count
 * only); how many of each in *@nr_regs and *@nr_iovs.
 */
/*
 * io_uring.c: the page addresses of the registered buffers of task @pid's
 * rings into @out (NULL: count only), at most @max: read eagerly with
 * --lazy-pages, the restorer pinning them. How many.
 */
size_t rst_io_uring_buf_pages(const struct restore_ctx *ctx, pid_t pid, uint64_t *out, size_t max);
int rst_io_uring_bufs(const struct restore_ctx *ctx, const struct rst_task *t,
		      struct rst_uring_reg *regs, struct rst_iovec *iovs, uint32_t *nr_regs,
		      uint32_t *nr_iovs);
int rst_pidfd_threads(const struct restore_ctx *ctx, const struct rst_task *t,
		      struct rst_tpidfd *out, uint32_t *nr);

/* fs.c: @t shares its parent's fs context (cloned with CLONE_FS) */
bool rst_fs_shared_with_parent(const struct rst_task *t);
/* A task of the tree shares its fs context (CLONE_FS) with its parent. */
bool rst_fs_any_shared(const struct restore_ctx *ctx);

/* ---- files/fdtable.c: fd tables shared between processes (CLONE_FILES) -------------------- */

/*
 * Pure logic: @n tasks in tree order, @parent[i] the index of task i's
 * parent (-1), @shared[i] whether it shares its parent's fd table; out: the
 * group of each (@owner[i], the first task of its table) and the members
 * before and after it in that group (@prev[i], @next[i]; -1 for none).
 */
void rst_fdt_order(const int *parent, const bool *shared, unsigned int n, int *owner, int *prev,
		   int *next);
/* Once every task's files are read: each task's place in its table's group. */
int rst_fdt_plan(struct restore_ctx *ctx);
/* @t shares its parent's fd table: cloned with CLONE_FILES, installs nothing. */
bool rst_fdt_shared_with_parent(const struct rst_task *t);
/* @t shares its table with another task of the tree; and is the last of them to restore. */
bool rst_fdt_in_group(const struct rst_task *t);
bool rst_fdt_last(const struct rst_task *t);
/* The member of @t's group that restores right before it; NULL for the first or none. */
const struct rst_task *rst_fdt_prev(const struct restore_ctx *ctx, const struct rst_task *t);
/* In @t, before it touches its fd table: wait until the member before it is done with it. */
int rst_fdt_wait_turn(struct restore_ctx *ctx, const struct rst_task *t);
/* The word @t's restorer sets to 1 once its fds are final (shared area). */
uint32_t *rst_fdt_word(const struct restore_ctx *ctx, const struct rst_task *t);
/* fds above the service base that the members before @t still hold, into @out: how many. */
unsigned int rst_fdt_kept(const struct restore_ctx *ctx, const struct rst_task *t, int *out,
			  unsigned int max);

#endif
