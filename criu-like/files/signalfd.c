// SPDX-License-Identifier: GPL-2.0
/*
 * signalfd: the signal mask, from /proc/PID/fdinfo/N. Restore creates it
 * anew in the controller with that mask.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>

#include "anon.h"
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

static int signalfd_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return !strcmp(f->link, "anon_inode:[signalfd]");
}

static void signalfd_fill(const struct fd_info *f, const struct fdinfo *fi, struct file_desc *d,
			  void *entry)
{
	SignalfdFileEntry *e = entry;

	signalfd_file_entry__init(e);
	e->flags = f->flags;
	e->sigmask = fi->signalfd.sigmask;
	d->fe.type = FILE_TYPE__FILE_SIGNALFD;
	d->fe.signalfd = e;
	pr_debug("pid %d fd %d: signalfd mask %016llx\n", f->pid, f->fd,
		 (unsigned long long)e->sigmask);
}

static int signalfd_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	(void)ctx;
	return anon_dump_fdinfo(f, FDINFO_SIGNALFD, sizeof(SignalfdFileEntry), signalfd_fill, d);
}

/* ---- restore ---- */
static int signalfd_check(const FileEntry *fe)
{
	return anon_check(fe, fe->signalfd != NULL);
}

static int signalfd_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const SignalfdFileEntry *e = fe->signalfd;
	sigset_t set;
	int sig, fd;

	sigemptyset(&set);
	for (sig = 1; sig <= 64; sig++)
		if (e->sigmask & (1ull << (sig - 1)))
			sigaddset(&set, sig);
	fd = signalfd(-1, &set, SFD_CLOEXEC | (int)(e->flags & O_NONBLOCK));
	if (fd < 0) {
		pr_perror("file %u: signalfd with mask %016llx", fe->id,
			  (unsigned long long)e->sigmask);
		return neg_errno();
	}
	return fd;
}

const struct file_kind signalfd_kind = {
	.name = "signalfd",
	.match = signalfd_match,
	.dump = signalfd_dump,
	.types = { FILE_TYPE__FILE_SIGNALFD },
	.in_flight = true,
	.check = signalfd_check,
	.open = signalfd_open,
};
