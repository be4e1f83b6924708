/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_PIPE_H
#define CRIU_LIKE_FILES_PIPE_H

/* pipe.c, for pipes and named FIFOs (fifo.c). */
#include <stddef.h>
#include <stdint.h>

#include "files-int.h"

/*
 * The size of the pipe behind @f in *@ret_size, and a copy of its unread
 * bytes in *@ret_buf (malloc'ed, NULL when none) and *@ret_len, left in the
 * pipe: read through a read end of it (the drained fd when it reads, else one
 * opened through /proc/PID/fd/N). @what ("" or "FIFO ") goes before the
 * link in messages.
 */
int pipe_copy_data(const struct fd_info *f, const char *what, int *ret_size, size_t *ret_len,
		   uint8_t **ret_buf);

#endif
