// SPDX-License-Identifier: GPL-2.0
/*
 * What the anonymous-inode kinds share (anon.h): eventfd.c,
 * signalfd.c, timerfd.c, epoll.c, inotify.c and fanotify's file. Their
 * state is what /proc/PID/fdinfo/N shows; eventfd, signalfd and timerfd
 * have nothing else, and dump through anon_dump_fdinfo().
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <stdlib.h>

#include "anon.h"
#include "log.h"

int anon_fdinfo_read(const struct fd_info *f, enum fdinfo_kind kind, bool plain_ok,
		     struct fdinfo *ret)
{
	int err = proc_parse_fdinfo(f->pid, f->fd, ret);

	if (err) {
		pr_errno(err, "pid %d fd %d: cannot parse the fdinfo of %s", f->pid, f->fd,
			 f->link);
		return err;
	}
	if (ret->kind != kind && !(plain_ok && ret->kind == FDINFO_PLAIN)) {
		pr_err("pid %d fd %d: the fdinfo of %s does not describe it (kind %d)\n", f->pid,
		       f->fd, f->link, ret->kind);
		fdinfo_fini(ret);
		return -EINVAL;
	}
	return 0;
}

void *anon_priv_alloc(struct file_desc *d, size_t size)
{
	free(d->priv);
	d->priv = calloc(1, size);
	return d->priv;
}

int anon_dump_fdinfo(const struct fd_info *f, enum fdinfo_kind kind, size_t size,
		     anon_fill_fn *fill, struct file_desc *d)
{
	struct fdinfo fi = { 0 };
	void *e;
	int err;

	err = anon_fdinfo_read(f, kind, false, &fi);
	if (err)
		return err;
	e = anon_priv_alloc(d, size);
	if (e)
		fill(f, &fi, d, e);
	fdinfo_fini(&fi);
	return e ? 0 : -ENOMEM;
}

/* ---- restore ---- */
int anon_check(const FileEntry *fe, bool ok)
{
	if (ok)
		return 0;
	pr_err("files.img: file %u lacks the description of its type %d, or it is bad\n", fe->id,
	       fe->type);
	return -EINVAL;
}
