// SPDX-License-Identifier: GPL-2.0
/*
 * Inet sockets (FILE_INETSK): TCP and UDP over IPv4 and IPv6. Not dumped
 * yet: every one is refused, naming the pid, the fd and the family.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <sys/socket.h>

#include "files-int.h"
#include "log.h"

static int inet_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	if (f->sk_family != AF_INET && f->sk_family != AF_INET6)
		return 0;
	pr_err("pid %d fd %d: %s (%s socket) is not supported yet\n", f->pid, f->fd, f->link,
	       f->sk_family == AF_INET ? "inet" : "inet6");
	return -EOPNOTSUPP;
}

static int inet_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	(void)ctx;
	(void)d;
	pr_err("pid %d fd %d: inet sockets are not dumped yet\n", f->pid, f->fd);
	return -EOPNOTSUPP;
}

const struct file_ops inet_file_ops = {
	.name = "inet",
	.match = inet_match,
	.dump = inet_dump,
};

void inet_dump_fini(struct dump_ctx *ctx, bool resume)
{
	(void)resume;
	ctx->inet = NULL; /* nothing is put in repair mode yet */
}
