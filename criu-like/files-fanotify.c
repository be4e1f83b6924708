// SPDX-License-Identifier: GPL-2.0
/*
 * fanotify groups (FILE_FANOTIFY). Not dumped yet: refused, naming the pid
 * and the fd.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <string.h>

#include "files-int.h"
#include "log.h"

static int fanotify_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	if (strcmp(f->link, "anon_inode:[fanotify]"))
		return 0;
	pr_err("pid %d fd %d: %s (fanotify) is not supported yet\n", f->pid, f->fd, f->link);
	return -EOPNOTSUPP;
}

static int fanotify_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	(void)ctx;
	(void)d;
	pr_err("pid %d fd %d: fanotify groups are not dumped yet\n", f->pid, f->fd);
	return -EOPNOTSUPP;
}

const struct file_ops fanotify_file_ops = {
	.name = "fanotify",
	.match = fanotify_match,
	.dump = fanotify_dump,
};
