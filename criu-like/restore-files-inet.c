// SPDX-License-Identifier: GPL-2.0
/* Restore of TCP or UDP sockets (FILE_INETSK): not restored yet. */
#define LOG_PREFIX "restore-files: "

#include <errno.h>

#include "log.h"
#include "restore-files-int.h"

int rst_inet_open(struct restore_ctx *ctx, size_t pos)
{
	pr_err("file %u: a TCP or UDP socket cannot be restored yet\n", ctx->files->idx.by_id[pos]->id);
	return -EOPNOTSUPP;
}

int rst_inet_repair_off(struct restore_ctx *ctx)
{
	(void)ctx; /* no socket is restored in repair mode yet */
	return 0;
}
