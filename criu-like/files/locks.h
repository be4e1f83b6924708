/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_LOCKS_H
#define CRIU_LIKE_FILES_LOCKS_H

/* File locks (locks.c), saved with --file-locks: dump and restore. */
#include <stdbool.h>
#include <stddef.h>

#include "files-int.h"
#include "restore-files-int.h"

/*
 * locks_check(): 0, or -EOPNOTSUPP (logged, naming the pid, fd and lock) when
 * @f holds locks and --file-locks was not given. locks_add(): the locks of @f
 * into its dumped description @d, each once. locks_free(): @d's locks.
 * lock_entry_from_fdinfo(): one lock line as an entry (@pid owns a POSIX
 * lock); -EOPNOTSUPP for delegations and other classes, -EBUSY for a lease
 * line of no holder (BREAKER).
 */
int locks_check(const struct dump_ctx *ctx, const struct fd_info *f);
int locks_add(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d);
void locks_free(struct file_desc *d);
int lock_entry_from_fdinfo(const struct fdinfo_lock *l, pid_t pid, FileLockEntry *e);
bool lock_entry_same(const FileLockEntry *a, const FileLockEntry *b);

/*
 * In the controller, once description idx.by_id[@pos] is at its service fd:
 * its flock() and OFD locks, which belong to the description (taken once,
 * they stay with it through fork). 0 or -errno (logged, naming the file).
 */
int rst_locks_desc(struct restore_ctx *ctx, size_t pos);

/*
 * In task @t, once its fds are at their numbers: the POSIX locks @t owned,
 * through its own fds. Its inherited service fds on those files are closed
 * first: closing any fd of a file drops the POSIX locks of the process on it.
 */
int rst_locks_post_install(struct restore_ctx *ctx, struct rst_task *t);
/* In task @t, its fds installed, before their owners are set: the leases it holds. */
int rst_leases_installed(struct restore_ctx *ctx, struct rst_task *t);

#endif
