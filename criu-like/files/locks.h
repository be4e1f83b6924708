/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_LOCKS_H
#define CRIU_LIKE_FILES_LOCKS_H

/* File locks of a restore (restore-files-locks.c), saved with --file-locks. */
#include <stddef.h>

#include "restore-files-int.h"

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

#endif
