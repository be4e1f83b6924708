/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORE_FILES_PTY_H
#define CRIU_LIKE_RESTORE_FILES_PTY_H

/* Pseudo-terminals of a restore (restore-files-pty.c, FILE_PTY of files.img). */
#include <stddef.h>

#include "restore-files-int.h"

/*
 * In the controller: the description of pty file idx.by_id[@pos], or -errno
 * (logged). Opening a master opens the pty at its dumped index and every
 * slave description of it, parked at their f->fds slot until their turn.
 */
int rst_pty_open(struct restore_ctx *ctx, size_t pos);

/*
 * In task @t right after setsid(), before it forks the rest of its session:
 * make the pty whose controlling terminal the session had its controlling
 * terminal again (TIOCSCTTY on the inherited slave description). 0 when @t
 * leads no session or its session had no pty of the tree.
 */
int rst_pty_set_ctty(struct restore_ctx *ctx, const struct rst_task *t);

/*
 * In session leader @t once every task exists and @t is in its group:
 * the foreground process group of its controlling terminal (tcsetpgrp).
 */
int rst_pty_set_fg(struct restore_ctx *ctx, const struct rst_task *t);

#endif
