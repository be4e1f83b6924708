// SPDX-License-Identifier: GPL-2.0
/*
 * eventfd: the counter and EFD_SEMAPHORE, from /proc/PID/fdinfo/N (fdinfo
 * has the flag since 6.6). Restore creates it anew in the controller with
 * that counter.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "anon.h"
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

static int eventfd_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return !strcmp(f->link, "anon_inode:[eventfd]");
}

static void eventfd_fill(const struct fd_info *f, const struct fdinfo *fi, struct file_desc *d,
			 void *entry)
{
	EventfdFileEntry *e = entry;

	eventfd_file_entry__init(e);
	e->flags = f->flags;
	e->counter = fi->eventfd.count;
	/* Before 6.6 fdinfo does not say: the kernel gives no other way to ask. */
	if (fi->eventfd.semaphore < 0)
		pr_warn("pid %d fd %d: this kernel does not tell whether an eventfd has "
			"EFD_SEMAPHORE: restored without it\n",
			f->pid, f->fd);
	e->semaphore = fi->eventfd.semaphore > 0;
	d->fe.type = FILE_TYPE__FILE_EVENTFD;
	d->fe.eventfd = e;
	pr_debug("pid %d fd %d: eventfd count %llu%s\n", f->pid, f->fd,
		 (unsigned long long)e->counter, e->semaphore ? " (semaphore)" : "");
}

static int eventfd_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	(void)ctx;
	return anon_dump_fdinfo(f, FDINFO_EVENTFD, sizeof(EventfdFileEntry), eventfd_fill, d);
}

/* ---- restore ---- */
static int eventfd_check(const FileEntry *fe)
{
	return anon_check(fe, fe->eventfd != NULL);
}

static int eventfd_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const EventfdFileEntry *e = fe->eventfd;
	int flags = EFD_CLOEXEC | (int)(e->flags & O_NONBLOCK) | (e->semaphore ? EFD_SEMAPHORE : 0);
	uint64_t add = e->counter;
	int fd;

	/* eventfd() takes an unsigned int: a larger counter is written, which adds to it. */
	fd = eventfd(add <= UINT32_MAX ? (unsigned int)add : 0, flags);
	if (fd < 0) {
		pr_perror("file %u: eventfd", fe->id);
		return neg_errno();
	}
	if (add > UINT32_MAX && write(fd, &add, sizeof(add)) != sizeof(add)) {
		pr_perror("file %u: cannot set the eventfd counter to %llu", fe->id,
			  (unsigned long long)add);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

const struct file_kind eventfd_kind = {
	.name = "eventfd",
	.match = eventfd_match,
	.dump = eventfd_dump,
	.types = { FILE_TYPE__FILE_EVENTFD },
	.in_flight = true,
	.check = eventfd_check,
	.open = eventfd_open,
};
