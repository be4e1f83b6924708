// SPDX-License-Identifier: GPL-2.0
/*
 * Named pipes (FIFOs): every description is saved with its path and flags
 * (FILE_FIFO), to be opened by that path again at restore. The unread data
 * of a FIFO is saved once, with the first description of it, read without
 * consuming it: tee() duplicates the buffers into a pipe of the dumper, as
 * files-pipe.c does for pipes. A FIFO removed from the file system, or no
 * longer found under its path, is refused: restore could not open it.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files-int.h"
#include "restore-files-fifo.h"
#include "restore-files-int.h"
#include "log.h"
#include "util.h"

/* The entry and the unread data, one block (file_desc.priv). */
struct fifo_priv {
	FifoFileEntry e;
	uint8_t data[];
};

static int fifo_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	char proot[PATH_MAX + 32];
	struct stat cur;

	(void)ctx;
	if (!S_ISFIFO(f->st.st_mode) || f->link[0] != '/')
		return 0;
	snprintf(proot, sizeof(proot), "/proc/%d/root%s", f->pid, f->link);
	if (f->st.st_nlink == 0 || stat(proot, &cur) || cur.st_dev != f->st.st_dev ||
	    cur.st_ino != f->st.st_ino) {
		pr_err("pid %d fd %d: named FIFO %s was removed or renamed: not supported yet\n",
		       f->pid, f->fd, f->link);
		return -EOPNOTSUPP;
	}
	return 1;
}

/* The FIFO's unread data and size into a new priv block of @d. */
static int fifo_save_data(const struct fd_info *f, struct file_desc *d)
{
	_cleanup_close_ int owned = -1;
	struct fifo_priv *p;
	int rfd, size, avail = 0, err;

	rfd = pipe_read_end(f, &owned);
	if (rfd < 0)
		return rfd;
	size = fcntl(rfd, F_GETPIPE_SZ);
	if (size < 0 || ioctl(rfd, FIONREAD, &avail) < 0 || avail < 0) {
		pr_perror("pid %d fd %d: F_GETPIPE_SZ/FIONREAD of FIFO %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	p = calloc(1, sizeof(*p) + (size_t)avail);
	if (!p)
		return -ENOMEM;
	d->priv = p;
	if (avail) {
		err = pipe_peek(f, rfd, size, (size_t)avail, p->data);
		if (err)
			return err;
	}
	fifo_file_entry__init(&p->e);
	p->e.has_data = p->e.has_pipe_size = true;
	p->e.data.data = p->data;
	p->e.data.len = (size_t)avail;
	p->e.pipe_size = (uint32_t)size;
	pr_debug("pid %d fd %d: FIFO %s holds %d unread bytes (size %d)\n", f->pid, f->fd, f->link,
		 avail, size);
	return 0;
}

static int fifo_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct file_table *ft = file_table_get(ctx);
	struct file_desc *other;
	struct fifo_priv *p;
	bool first = true;
	int err;

	if (!ft)
		return -ENOMEM;
	d->path = strdup(f->link);
	if (!d->path)
		return -ENOMEM;
	/*
	 * Another description of this FIFO was dumped already, and with it the
	 * data. An O_PATH fd holds no pipe: it neither has nor saves data.
	 */
	for (other = NULL; (other = file_desc_next(ft, d->dev, d->ino, other));)
		if (other != d && other->fe.type == FILE_TYPE__FILE_FIFO && other->fe.fifo &&
		    !(other->fe.fifo->flags & O_PATH))
			first = false;
	if (f->flags & O_PATH)
		first = false;
	if (first) {
		err = fifo_save_data(f, d);
		if (err)
			return err;
	} else {
		d->priv = calloc(1, sizeof(*p));
		if (!d->priv)
			return -ENOMEM;
		fifo_file_entry__init(&((struct fifo_priv *)d->priv)->e);
	}
	p = d->priv;
	p->e.path.data = (uint8_t *)d->path;
	p->e.path.len = strlen(d->path);
	p->e.flags = f->flags;
	p->e.has_dev = p->e.has_ino = true;
	p->e.dev = f->st.st_dev;
	p->e.ino = f->st.st_ino;
	if (f->mnt_id >= 0) {
		p->e.has_mnt_id = true;
		p->e.mnt_id = (uint64_t)f->mnt_id;
	}
	d->fe.type = FILE_TYPE__FILE_FIFO;
	d->fe.fifo = &p->e;
	return 0;
}

static int fifo_check(const FileEntry *fe)
{
	return fe->fifo ? 0 : rst_file_part_missing(fe);
}

static const ProtobufCBinaryData *fifo_path(const FileEntry *fe)
{
	return &fe->fifo->path;
}

const struct file_kind fifo_kind = {
	.name = "named FIFO",
	.match = fifo_match,
	.dump = fifo_dump,
	.types = { FILE_TYPE__FILE_FIFO },
	.in_flight = true,
	.check = fifo_check,
	.path = fifo_path,
	.open = rst_fifo_open,
};
