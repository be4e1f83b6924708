// SPDX-License-Identifier: GPL-2.0
/* Restore of fanotify groups (FILE_FANOTIFY): not restored yet. */
#define LOG_PREFIX "restore-files: "

#include <errno.h>

#include "log.h"
#include "restore-files-int.h"

int rst_fanotify_open(struct restore_ctx *ctx, size_t pos)
{
	pr_err("file %u: a fanotify group cannot be restored yet\n", ctx->files->idx.by_id[pos]->id);
	return -EOPNOTSUPP;
}
