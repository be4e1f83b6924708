/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORE_FILES_FIFO_H
#define CRIU_LIKE_RESTORE_FILES_FIFO_H

/* Named pipes of a restore (restore-files-fifo.c). */
#include <stddef.h>

#include "restore-files-int.h"

/*
 * In the controller: the FIFO description idx.by_id[@pos], opened by its path
 * without blocking, its unread data written back when it holds them. -errno
 * (logged, naming the path) when the FIFO is missing or not a FIFO.
 */
int rst_fifo_open(struct restore_ctx *ctx, size_t pos);

#endif
