// SPDX-License-Identifier: GPL-2.0
/*
 * Pipes: every end is a description of its own (FILE_PIPE, its flags say
 * which end); both ends share the pipe's inode number. The unread data is
 * saved once per pipe, in pipes-data.img, and read without consuming it:
 * tee() duplicates the pipe's buffers into a pipe of the dumper, which is
 * then read. Named FIFOs are another kind (refused for now).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files-int.h"
#include "restore-files-int.h"
#include "image.h"
#include "log.h"
#include "util.h"

struct pipe_data *pipe_data_add(struct file_table *ft, uint64_t ino)
{
	struct pipe_data *p;

	if (ft->nr_pipes == ft->cap_pipes) {
		unsigned int cap = ft->cap_pipes ? ft->cap_pipes * 2 : 16;

		p = realloc(ft->pipes, cap * sizeof(*p));
		if (!p)
			return NULL;
		ft->pipes = p;
		ft->cap_pipes = cap;
	}
	p = &ft->pipes[ft->nr_pipes++];
	memset(p, 0, sizeof(*p));
	p->ino = ino;
	return p;
}

/*
 * A read end of the pipe behind @f: the drained fd when it is one, else a
 * new one opened through /proc/PID/fd/N (opening a pipe's magic link read-only
 * gives a read end of the same pipe, as for a FIFO; O_NONBLOCK so it never
 * waits for a writer).
 */
int pipe_read_end(const struct fd_info *f, int *ret_owned)
{
	char path[64];
	int fd;

	*ret_owned = -1;
	/* A pipe end is O_RDONLY or O_WRONLY; a FIFO may also be O_RDWR. */
	if ((f->flags & O_ACCMODE) != O_WRONLY)
		return f->dfd;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", f->pid, f->fd);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("pid %d fd %d: cannot open a read end of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	*ret_owned = fd;
	return fd;
}

/* Copy the @len unread bytes of the pipe @rfd, of @size bytes, leaving them in it. */
int pipe_peek(const struct fd_info *f, int rfd, int size, size_t len, uint8_t *buf)
{
	_cleanup_close_ int tr = -1, tw = -1;
	int tp[2];
	ssize_t n;

	if (pipe2(tp, O_NONBLOCK | O_CLOEXEC))
		return neg_errno();
	tr = tp[0];
	tw = tp[1];
	/*
	 * As many slots as the source, so tee() takes every buffer at once: it
	 * always starts at the head of the pipe, so it cannot be resumed.
	 */
	if (fcntl(tw, F_SETPIPE_SZ, size) < 0) {
		pr_perror("pid %d fd %d: cannot size a pipe to %d bytes to copy %s", f->pid, f->fd,
			  size, f->link);
		return neg_errno();
	}
	n = tee(rfd, tw, len, SPLICE_F_NONBLOCK);
	if (n < 0) {
		pr_perror("pid %d fd %d: tee of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	if ((size_t)n != len) {
		pr_err("pid %d fd %d: tee of %s copied %zd of %zu bytes\n", f->pid, f->fd, f->link,
		       n, len);
		return -EAGAIN;
	}
	return read_all(tr, buf, len);
}

static int pipe_save_data(struct file_table *ft, const struct fd_info *f)
{
	_cleanup_close_ int owned = -1;
	_cleanup_free_ uint8_t *buf = NULL;
	struct pipe_data *p;
	int rfd, size, avail = 0, err;

	rfd = pipe_read_end(f, &owned);
	if (rfd < 0)
		return rfd;
	size = fcntl(rfd, F_GETPIPE_SZ);
	if (size < 0 || ioctl(rfd, FIONREAD, &avail) < 0) {
		pr_perror("pid %d fd %d: F_GETPIPE_SZ/FIONREAD of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	if (avail > 0) {
		buf = malloc((size_t)avail);
		if (!buf)
			return -ENOMEM;
		err = pipe_peek(f, rfd, size, (size_t)avail, buf);
		if (err)
			return err;
	}
	p = pipe_data_add(ft, f->st.st_ino);
	if (!p)
		return -ENOMEM;
	p->pipe_size = (uint32_t)size;
	p->len = (size_t)avail;
	p->data = TAKE_PTR(buf);
	pr_debug("pid %d fd %d: %s holds %d unread bytes (size %d)\n", f->pid, f->fd, f->link,
		 avail, size);
	return 0;
}

static int pipe_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return S_ISFIFO(f->st.st_mode) && !strncmp(f->link, "pipe:[", 6);
}

static int pipe_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct file_table *ft = file_table_get(ctx);
	struct file_desc *other;

	if (!ft)
		return -ENOMEM;
	d->fe.type = FILE_TYPE__FILE_PIPE;
	pipe_file_entry__init(&d->pipe);
	d->pipe.pipe_ino = f->st.st_ino;
	d->pipe.flags = f->flags;
	d->fe.pipe = &d->pipe;
	/* The other end was dumped already, and with it the data. */
	for (other = NULL; (other = file_desc_next(ft, d->dev, d->ino, other));)
		if (other != d && other->fe.type == FILE_TYPE__FILE_PIPE)
			return 0;
	return pipe_save_data(ft, f);
}

/* pipes-data.img: the unread data of every pipe, once per pipe. */
static int pipe_dump_finish(struct dump_ctx *ctx)
{
	const struct file_table *ft = ctx->files;
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_PIPES_DATA, 0, IMG_WRITE);
	unsigned int i;
	int err = 0;

	if (!img)
		return -errno;
	for (i = 0; i < ft->nr_pipes && !err; i++) {
		PipeDataEntry e = PIPE_DATA_ENTRY__INIT;

		e.pipe_ino = ft->pipes[i].ino;
		e.data.data = ft->pipes[i].data;
		e.data.len = ft->pipes[i].len;
		e.has_pipe_size = true;
		e.pipe_size = ft->pipes[i].pipe_size;
		err = img_write_record(img, &e.base);
	}
	return img_close(img) ?: err;
}

static int pipe_check(const FileEntry *fe)
{
	return fe->pipe ? 0 : rst_file_part_missing(fe);
}

/* The pipe ends that no description took (a writer that was closed: EOF after the data). */
static int pipe_opened(struct restore_ctx *ctx)
{
	rst_pipes_close(ctx->files);
	return 0;
}

static void pipe_fini(struct restore_ctx *ctx)
{
	rst_pipes_close(ctx->files);
}

const struct file_kind pipe_kind = {
	.name = "pipe",
	.match = pipe_match,
	.dump = pipe_dump,
	.types = { FILE_TYPE__FILE_PIPE },
	.in_flight = true,
	.dump_finish = pipe_dump_finish,
	.check = pipe_check,
	.open = rst_pipe_open,
	.opened = pipe_opened,
	.fini = pipe_fini,
};
