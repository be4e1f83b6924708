/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORE_H
#define CRIU_LIKE_RESTORE_H

/*
 * The restore (Documentation/restore.md). Two halves meet here:
 *
 * - restore.c and friends (the tree and its files): cr_restore() reads
 *   inventory.img and pstree.img, refuses what it cannot restore, opens every
 *   open file description of files.img in the controller (the criu-like
 *   process) at fd numbers above every fd any task uses, creates the shared
 *   area, forks the root with clone3(set_tid); each task forks its own
 *   children (clone3 with set_tid) before anything else, so every task
 *   inherits every description and shared descriptions stay shared; then each
 *   task sets its sid/pgid, installs its fds at their numbers (dup2/fcntl),
 *   closes the rest except what rst_task_finish() needs, sets cwd/root/umask,
 *   and calls rst_task_finish().
 *
 * - restore-mem.c and parasite/restorer.c (memory and task state):
 *   rst_mem_prepare() runs once in the controller before the first fork;
 *   rst_task_finish() runs in each restored task and does not come back on
 *   success: it maps the restorer blob where no saved VMA lies and jumps into
 *   it; the blob rebuilds memory, threads (clone3 set_tid), signals, timers,
 *   rseq, creds (last), reports at the barrier and sigreturns every thread
 *   once the controller says RST_STAGE_RESUME.
 *
 * Every function returns 0 or -errno after logging what failed, naming the
 * pid and the object.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ns.h"
#include "options.h"

#include "core.pb-c.h"
#include "creds.pb-c.h"
#include "fs.pb-c.h"
#include "inventory.pb-c.h"
#include "pstree.pb-c.h"

enum rst_stage {
	RST_STAGE_FORKING = 1, /* tasks being created */
	RST_STAGE_RESTORING, /* every task created: restore files, memory, state */
	RST_STAGE_RESUME, /* every thread reached the barrier: sigreturn */
	RST_STAGE_ABORT, /* something failed: every task exits (or is killed) */
};

/*
 * MAP_SHARED|MAP_ANONYMOUS area created by the controller before the first
 * fork, at the same address in every task; the restorer blob gets its
 * address in its arguments. Futex words are 32-bit.
 */
struct rst_shared {
	uint32_t stage; /* enum rst_stage; futex: FUTEX_WAKE after each change */
	uint32_t nr_pending; /* threads (all tasks) yet to reach the barrier; futex */
	int32_t error; /* first failure, -errno; 0 while all is well */
	int32_t failed_pid; /* the task that set error */
	uint32_t nr_created; /* pids[] entries used, atomically incremented */
	uint32_t fs_lock; /* 1 while a task changes its cwd (rst_fs_lock()) */
	uint64_t filled; /* bytes of pages the restorers have read so far: the progress line */
	/* stats-restore: pages of inherited VMAs looked at, and kept from the parent by fork */
	uint64_t pages_compared, pages_skipped_cow;
	/* every task created so far, to kill on failure; then the uffds; then fd tables' turns */
	int32_t pids[];
};

/*
 * Around a change of the cwd during the restore (the task's own at the end,
 * a directory entered to bind a relative unix name): tasks that share one fs
 * context (CLONE_FS) take turns. No-ops outside a restore's tasks.
 */
void rst_fs_lock(void);
void rst_fs_unlock(void);

struct rst_task {
	PstreeEntry *pe; /* pid, ppid, pgid, sid, threads, state */
	CoreEntry *core; /* core-PID.img (NULL for zombies) */
	struct rst_task *parent; /* NULL for the root */
	unsigned int nr_children;
	struct rst_task **children;
	void *mem; /* restore-mem.c's per-task plan (rst_mem_prepare) */
	void *files; /* restore-files.c's per-task fd plan */
};

struct rst_files; /* restore-files.c: files.img, opened descriptions */
struct rst_shmem; /* restore-mem.c: shared anonymous memory objects */
struct rst_cgroup; /* cgroup/cgroup-int.h */

struct restore_ctx {
	const struct cr_options *opts;
	int dirfd; /* the image directory */
	InventoryEntry *inv;
	unsigned int nr_tasks;
	struct rst_task *tasks; /* pstree.img order: parents before children */
	unsigned int nr_threads; /* all threads of all live tasks */
	struct rst_shared *shared;
	size_t shared_size;
	struct rst_files *files;
	struct rst_shmem *shmem;
	/*
	 * Every fd >= service_fd_base belongs to the restore machinery (opened
	 * descriptions, shmem objects, the image dir, the log): above every fd
	 * number any task's table uses. restore.c sets it before rst_mem_prepare();
	 * a task installing its fd table closes every fd below it that is not in
	 * its table and leaves the ones above to rst_task_finish(), which closes
	 * what it does not need before the jump (the blob closes the rest).
	 */
	int service_fd_base;
	/*
	 * net-lock.c: the lock of the restored connections, set by the first
	 * netlock_restore_conn(); removed by netlock_restore_fini() once the
	 * tree runs, kept when the restore fails (net-lock.h).
	 */
	struct netlock *netlock;
	/*
	 * net-lock-tree.c: the dump's packet holder found by
	 * netlock_restore_ahead() (hold_found: looked for; hold NULL: not there).
	 */
	struct nfq_hold *hold;
	bool hold_found;
	/* cgroup/: the cgroups of cgroup.img (cgroup.h), NULL when there are none to enter */
	struct rst_cgroup *cgroup;
	/* ns.c: the namespaces the root is created in, from their images */
	struct ns_restore ns;
	/* for stats-restore (image/stats.c) */
	struct {
		uint64_t forking_ns; /* the root's clone to every task created */
		uint64_t pages_restored; /* pages the images give the tasks and shmem objects */
	} stats;
	/*
	 * criu-like's /proc, above the service base: a task of a tree with a pid
	 * namespace of its own reads its host pid there (/proc/self) whatever
	 * /proc its mount namespace shows; the IPC sysctls are written there
	 * (ns/ipc-sysv.c); -1 until opened.
	 */
	int proc_fd;
	int ctl_pidfd; /* criu-like's own pidfd, for the init of a new pid namespace; -1 */
	/*
	 * --lazy-pages (restore-lazy.c): the daemon's socket (-1), the uffd
	 * features to ask, /dev/userfaultfd above the service base for the
	 * tasks to make their uffd with (-1: userfaultfd() in each)
	 */
	int lazy_sk;
	/*
	 * the directory of the daemon's socket (the work dir, else the image
	 * dir), opened before the tree's mount namespace is entered (-1)
	 */
	int lazy_dirfd;
	bool lazy_hello; /* the daemon's HELLO read (restore-lazy.c check_daemon()) */
	bool lazy_tried; /* rst_lazy_connect() ran: nothing for rst_lazy_abandon() to wait for */
	uint64_t uffd_features;
	int uffd_dev;
	/* restore-task.c: criu-like's maps read once before the root's fork (NULL: none) */
	struct rst_self_maps *ctl_maps;
};

/*
 * restore-lazy.c, --lazy-pages: connect to the lazy-pages daemon and open
 * /dev/userfaultfd before anything is created; at the barrier, take every
 * task's uffd, ask its features, register its lazy VMAs, hand it to the
 * daemon with a pidfd, and wait until it holds them all (then the tree may run).
 * The uffd numbers are in shared->pids[nr_tasks + i] (rst_lazy_slot()).
 */
int rst_lazy_open_dev(struct restore_ctx *ctx);
int rst_lazy_open_dir(struct restore_ctx *ctx);
int rst_lazy_connect(struct restore_ctx *ctx);
int rst_lazy_handover(struct restore_ctx *ctx);
/* A restore failing before it connected tells the daemon (FAILED), which stops waiting. */
void rst_lazy_abandon(struct restore_ctx *ctx, int err);
void rst_lazy_fini(struct restore_ctx *ctx);
static inline int32_t *rst_lazy_slot(const struct restore_ctx *ctx, unsigned int i)
{
	return &ctx->shared->pids[ctx->nr_tasks + i];
}

/* restore.c: the command. */
int cr_restore(const struct cr_options *o);
/* The same, and *@ret_root (when not NULL) the restored root's pid once it runs (RPC). */
int cr_restore_pid(const struct cr_options *o, pid_t *ret_root);
struct rst_task *rst_find_task(const struct restore_ctx *ctx, pid_t pid);
/*
 * The pids of the images are the tree's (a container's: as seen inside it,
 * Documentation/namespaces.md, "The pid model"); criu-like talks to the
 * kernel with its own. rst_in_pidns(): the tree has a pid namespace of its
 * own. rst_host_pid(): the pid criu-like sees for task @t (its image pid
 * without a pid namespace; else what the task recorded once created, 0
 * before). rst_host_tid(): the same for its thread @vtid, -ESRCH if not found.
 */
static inline bool rst_in_pidns(const struct restore_ctx *ctx)
{
	return ctx->ns.own[NS_PID];
}
pid_t rst_host_pid(const struct restore_ctx *ctx, const struct rst_task *t);
pid_t rst_host_tid(const struct restore_ctx *ctx, const struct rst_task *t, pid_t vtid);
/* Record a failure in the shared area (first one wins) and wake the controller. */
void rst_fail(struct restore_ctx *ctx, int err);

/*
 * restore-misc.c. rst_task_misc(): in a restored task before rst_task_finish():
 * THP-disable. rst_threads_affinity(): in the controller once every thread
 * waits at the barrier.
 */
int rst_task_misc(struct restore_ctx *ctx, struct rst_task *t);
int rst_threads_affinity(struct restore_ctx *ctx);

/*
 * restore-files.c: a new fd for FileEntry @id (regular file, directory or
 * character device such as /dev/zero),
 * opened with @flags, checked to be the dumped file (dev/ino, size) or the
 * call fails naming the path. For file mappings and the exe link.
 */
int rst_file_open(struct restore_ctx *ctx, uint32_t id, int flags);
/* The path of FileEntry @id, for messages; NULL if unknown. */
const char *rst_file_path(const struct restore_ctx *ctx, uint32_t id);

/*
 * restore-mem.c. rst_mem_prepare(): in the controller, before the first
 * fork: read mm-PID.img, pagemap-PID.img of every task, check them, create
 * the shared anonymous memory objects (filled from their pages) at fds at or
 * above ctx->service_fd_base (fcntl F_DUPFD). rst_task_finish():
 * in a restored task whose fds and fs are in place; does not return on
 * success. rst_mem_fini(): frees the controller's copies.
 */
int rst_mem_prepare(struct restore_ctx *ctx);
int rst_task_finish(struct restore_ctx *ctx, struct rst_task *t);
/*
 * restore-task.c: criu-like's own mappings read once in the controller right
 * before the root's fork, where every task starts looking for a hole for its
 * restorer (each read its /proc/self/maps, the controller's layout it had
 * inherited, for that). Best effort: without it each task reads its own.
 */
void rst_snap_self_maps(struct restore_ctx *ctx);
/*
 * restore-task-state.c: the same for what the tasks inherit and restore-task-state.c
 * would read or write in each: cap_last_cap, oom_score_adj, loginuid.
 */
void rst_snap_self_state(void);
void rst_self_maps_free(struct restore_ctx *ctx);
void rst_mem_fini(struct restore_ctx *ctx);

static inline bool rst_task_zombie(const struct rst_task *t)
{
	return t->pe->state == TASK_STATE__TASK_ZOMBIE;
}

/*
 * --inherit-fd fd[N]:KEY (CRIU's form; the RPC's inherit_fd pairs become it):
 * 0 with @fd and @key (into @arg) set when either is not NULL, -EINVAL, or
 * -EOPNOTSUPP for a key that is neither a pipe's ("pipe:[INO]") nor a name
 * (letters, digits, '_', '.', '-': an external namespace's, "extRootNetNS").
 */
int inherit_fd_parse(const char *arg, int *fd, const char **key);
/* criu-like's fd that --inherit-fd gives for @key ("pipe:[INO]"), or -ENOENT. */
int rst_inherited_fd(const struct cr_options *o, const char *key);

#endif
