// SPDX-License-Identifier: GPL-2.0
/*
 * Pipes: every end is a description of its own (FILE_PIPE, its flags say
 * which end); both ends share the pipe's inode number. The unread data is
 * saved once per pipe, in pipes-data.img, and read without consuming it:
 * tee() duplicates the pipe's buffers into a pipe of the dumper, which is
 * then read (named FIFOs, fifo.c, read theirs the same way).
 *
 * At restore, one pipe2() per pipe inode, grown to its saved size and
 * refilled with its unread data before any task runs. The first description
 * of each end is that end; a second description of the same end (an open of
 * /proc/PID/fd/N) is a reopen through /proc/self/fd, a description of its
 * own on the same pipe, as it was.
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
#include "image.h"
#include "log.h"
#include "pipe.h"
#include "restore-files-int.h"
#include "util.h"

/* The kind, at the end of this file. */
extern const struct file_kind pipe_kind;

/* The unread data of one pipe, read once for all its ends. */
struct pipe_data {
	uint64_t ino;
	uint32_t pipe_size;
	size_t len;
	uint8_t *data;
};

/* The kind's dump state: the data of every pipe, for pipes-data.img. */
struct pipe_dump {
	struct pipe_data *v;
	unsigned int n, cap;
};

/* ---- dump ----------------------------------------------------------------------------------- */

/*
 * A read end of the pipe behind @f: the drained fd when it is one, else a
 * new one opened through /proc/PID/fd/N (opening a pipe's magic link read-only
 * gives a read end of the same pipe, as for a FIFO; O_NONBLOCK so it never
 * waits for a writer).
 */
static int pipe_read_end(const struct fd_info *f, int *ret_owned)
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
static int pipe_peek(const struct fd_info *f, int rfd, int size, size_t len, uint8_t *buf)
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

int pipe_copy_data(const struct fd_info *f, const char *what, int *ret_size, size_t *ret_len,
		   uint8_t **ret_buf)
{
	_cleanup_close_ int owned = -1;
	_cleanup_free_ uint8_t *buf = NULL;
	int rfd, size, avail = 0, err;

	rfd = pipe_read_end(f, &owned);
	if (rfd < 0)
		return rfd;
	size = fcntl(rfd, F_GETPIPE_SZ);
	if (size < 0 || ioctl(rfd, FIONREAD, &avail) < 0 || avail < 0) {
		pr_perror("pid %d fd %d: F_GETPIPE_SZ/FIONREAD of %s%s", f->pid, f->fd, what,
			  f->link);
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
	pr_debug("pid %d fd %d: %s%s holds %d unread bytes (size %d)\n", f->pid, f->fd, what,
		 f->link, avail, size);
	*ret_size = size;
	*ret_len = (size_t)avail;
	*ret_buf = TAKE_PTR(buf);
	return 0;
}

/* A new pipe data record in the kind's dump state. */
static struct pipe_data *pipe_data_add(struct dump_ctx *ctx, uint64_t ino)
{
	void **slot = file_kind_dump_state(ctx, &pipe_kind);
	struct pipe_dump *pd;
	struct pipe_data *p;

	if (!slot)
		return NULL;
	if (!*slot)
		*slot = calloc(1, sizeof(struct pipe_dump));
	pd = *slot;
	if (!pd || file_table_grow((void **)&pd->v, &pd->cap, pd->n, sizeof(*p)))
		return NULL;
	p = &pd->v[pd->n++];
	memset(p, 0, sizeof(*p));
	p->ino = ino;
	return p;
}

static int pipe_save_data(struct dump_ctx *ctx, const struct fd_info *f)
{
	_cleanup_free_ uint8_t *buf = NULL;
	struct pipe_data *p;
	size_t len = 0;
	int size = 0, err;

	err = pipe_copy_data(f, "", &size, &len, &buf);
	if (err)
		return err;
	p = pipe_data_add(ctx, f->st.st_ino);
	if (!p)
		return -ENOMEM;
	p->pipe_size = (uint32_t)size;
	p->len = len;
	p->data = TAKE_PTR(buf);
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
	PipeFileEntry *e;

	if (!ft)
		return -ENOMEM;
	e = calloc(1, sizeof(*e)); /* file_desc.priv */
	if (!e)
		return -ENOMEM;
	d->priv = e;
	d->fe.type = FILE_TYPE__FILE_PIPE;
	pipe_file_entry__init(e);
	e->pipe_ino = f->st.st_ino;
	e->flags = f->flags;
	d->fe.pipe = e;
	/* The other end was dumped already, and with it the data. */
	for (other = NULL; (other = file_desc_next(ft, d->dev, d->ino, other));)
		if (other != d && other->fe.type == FILE_TYPE__FILE_PIPE)
			return 0;
	return pipe_save_data(ctx, f);
}

/* pipes-data.img: the unread data of every pipe, once per pipe. */
static int pipe_dump_finish(struct dump_ctx *ctx)
{
	void **slot = file_kind_dump_state(ctx, &pipe_kind);
	const struct pipe_dump *pd = slot ? *slot : NULL;
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_PIPES_DATA, 0, IMG_WRITE);
	unsigned int i;
	int err = 0;

	if (!img)
		return -errno;
	for (i = 0; pd && i < pd->n && !err; i++) {
		PipeDataEntry e = PIPE_DATA_ENTRY__INIT;

		e.pipe_ino = pd->v[i].ino;
		e.data.data = pd->v[i].data;
		e.data.len = pd->v[i].len;
		e.has_pipe_size = true;
		e.pipe_size = pd->v[i].pipe_size;
		err = img_write_record(img, &e.base);
	}
	return img_close(img) ?: err;
}

static void pipe_dump_fini(struct dump_ctx *ctx, bool resume)
{
	void **slot = ctx->files ? file_kind_dump_state(ctx, &pipe_kind) : NULL;
	struct pipe_dump *pd = slot ? *slot : NULL;
	unsigned int i;

	(void)resume;
	if (!pd)
		return;
	for (i = 0; i < pd->n; i++)
		free(pd->v[i].data);
	free(pd->v);
	free(pd);
	*slot = NULL;
}

/* ---- restore: the messages keep the restore's prefix ---------------------------------------- */
/* One pipe, by inode: both ends, created once for every description of it. */
struct rst_pipe {
	uint64_t ino;
	int ends[2]; /* [0] read, [1] write; the controller's, until pipes_close() */
	bool taken[2]; /* a description already is this end: others reopen it */
};

/* The kind's restore state (rst_kind.priv). */
struct pipe_rst {
	ProtobufCMessage **recs; /* pipes-data.img: PipeDataEntry */
	size_t nr_recs;
	struct rst_pipe *pipes;
	size_t nr_pipes;
};

/* Status flags F_SETFL can give a pipe end. */
#define PIPE_FL (O_NONBLOCK | O_DIRECT)

static struct pipe_rst *pipe_rst(const struct restore_ctx *ctx)
{
	return rst_kind_get(ctx, &pipe_kind)->priv;
}

/* pipes-data.img (none when the dump had no pipe). */
static int pipe_prepare(struct restore_ctx *ctx)
{
	struct pipe_rst *pr = calloc(1, sizeof(*pr));
	struct cr_img *img;
	int err;

	if (!pr)
		return -ENOMEM;
	rst_kind_get(ctx, &pipe_kind)->priv = pr;
	img = img_open(ctx->dirfd, CR_IMG_PIPES_DATA, 0, IMG_READ | IMG_OPTIONAL);
	if (!img)
		return errno == ENOENT ? 0 : neg_errno();
	err = img_read_all(img, &pr->recs, &pr->nr_recs);
	return img_close(img) ?: err;
}

static const PipeDataEntry *pipe_data(const struct pipe_rst *pr, uint64_t ino)
{
	size_t i;

	for (i = 0; i < pr->nr_recs; i++) {
		const PipeDataEntry *pd = (const PipeDataEntry *)pr->recs[i];

		if (pd->pipe_ino == ino)
			return pd;
	}
	return NULL;
}

static int fill_pipe(struct rst_pipe *p, const PipeDataEntry *pd)
{
	int size = fcntl(p->ends[1], F_GETPIPE_SZ);
	ssize_t n;

	/* Past /proc/sys/fs/pipe-max-size this needs CAP_SYS_RESOURCE (EPERM). */
	if (pd->has_pipe_size && size >= 0 && pd->pipe_size > (uint32_t)size &&
	    fcntl(p->ends[1], F_SETPIPE_SZ, (int)pd->pipe_size) < 0) {
		pr_perror("pipe %llu: cannot grow to %u bytes", (unsigned long long)p->ino,
			  pd->pipe_size);
		return neg_errno();
	}
	if (!pd->data.len)
		return 0;
	/* The end is non-blocking: data larger than the pipe fails instead of hanging. */
	n = write(p->ends[1], pd->data.data, pd->data.len);
	if (n != (ssize_t)pd->data.len) {
		if (n < 0)
			pr_perror("pipe %llu: cannot refill %zu bytes", (unsigned long long)p->ino,
				  pd->data.len);
		else
			pr_err("pipe %llu: only %zd of its %zu bytes fit\n",
			       (unsigned long long)p->ino, n, pd->data.len);
		return n < 0 ? neg_errno() : -EFBIG;
	}
	return 0;
}

static int new_pipe(struct pipe_rst *f, uint64_t ino, struct rst_pipe **ret)
{
	struct rst_pipe *p, *arr;
	const PipeDataEntry *pd;
	int err;

	arr = realloc(f->pipes, (f->nr_pipes + 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	f->pipes = arr;
	p = &arr[f->nr_pipes];
	memset(p, 0, sizeof(*p));
	p->ino = ino;
	if (pipe2(p->ends, O_CLOEXEC | O_NONBLOCK)) {
		pr_perror("pipe %llu: pipe2", (unsigned long long)ino);
		return neg_errno();
	}
	f->nr_pipes++;
	pd = pipe_data(f, ino);
	if (pd) {
		err = fill_pipe(p, pd);
		if (err)
			return err;
	}
	*ret = p;
	return 0;
}

/* The description of pipe file idx.by_id[@pos] (an fd below the base), or -errno. */
static int pipe_open(struct restore_ctx *ctx, size_t pos)
{
	struct pipe_rst *f = pipe_rst(ctx);
	const PipeFileEntry *pe = ctx->files->idx.by_id[pos]->pipe;
	struct rst_pipe *p = NULL;
	int acc = (int)(pe->flags & O_ACCMODE), end, fd, err, inh;
	char key[48];
	size_t i;

	/* --inherit-fd fd[N]:pipe:[INO]: the caller's pipe, as CRIU (runc's stdio) */
	snprintf(key, sizeof(key), "pipe:[%llu]", (unsigned long long)pe->pipe_ino);
	inh = rst_inherited_fd(ctx->opts, key);
	if (inh >= 0) {
		struct stat st;

		if (fstat(inh, &st) || !S_ISFIFO(st.st_mode)) {
			pr_err("file %u: --inherit-fd fd[%d]:%s: not an open pipe\n",
			       ctx->files->idx.by_id[pos]->id, inh, key);
			return -EBADF;
		}
		pr_info("file %u: %s is the inherited fd %d\n", ctx->files->idx.by_id[pos]->id, key,
			inh);
		fd = fcntl(inh, F_DUPFD_CLOEXEC, 3);
		if (fd < 0 || fcntl(fd, F_SETFL, (int)pe->flags & PIPE_FL) < 0) {
			err = neg_errno();
			if (fd >= 0)
				close(fd);
			return err;
		}
		return fd;
	}
	for (i = 0; i < f->nr_pipes && !p; i++)
		if (f->pipes[i].ino == pe->pipe_ino)
			p = &f->pipes[i];
	if (!p) {
		err = new_pipe(f, pe->pipe_ino, &p);
		if (err)
			return err;
	}
	end = acc == O_RDONLY ? 0 : 1;
	if (acc == O_RDWR || p->taken[end])
		return rst_reopen_fd(p->ends[end], pe->flags);
	fd = fcntl(p->ends[end], F_DUPFD_CLOEXEC, 3);
	if (fd < 0 || fcntl(fd, F_SETFL, (int)pe->flags & PIPE_FL) < 0) {
		err = neg_errno();
		if (fd >= 0)
			close(fd);
		return err;
	}
	p->taken[end] = true;
	return fd;
}

/*
 * The controller's own pipe ends (each description has its own fd), once every
 * description is open: the ends no description took (a writer that was
 * closed: EOF after the data) go.
 */
static int pipes_close(struct restore_ctx *ctx)
{
	struct pipe_rst *f = pipe_rst(ctx);
	size_t i;

	for (i = 0; f && i < f->nr_pipes; i++) {
		close(f->pipes[i].ends[0]);
		close(f->pipes[i].ends[1]);
	}
	if (f) {
		free(f->pipes);
		f->pipes = NULL;
		f->nr_pipes = 0;
	}
	return 0;
}

static void pipe_fini(struct restore_ctx *ctx)
{
	struct pipe_rst *f = pipe_rst(ctx);

	if (!f)
		return;
	pipes_close(ctx);
	img_free_records(f->recs, f->nr_recs);
	free(f);
	rst_kind_get(ctx, &pipe_kind)->priv = NULL;
}

static int pipe_check(const FileEntry *fe)
{
	return fe->pipe ? 0 : rst_file_part_missing(fe);
}

const struct file_kind pipe_kind = {
	.name = "pipe",
	.match = pipe_match,
	.dump = pipe_dump,
	.types = { FILE_TYPE__FILE_PIPE },
	.in_flight = true,
	.dump_finish = pipe_dump_finish,
	.dump_fini = pipe_dump_fini,
	.check = pipe_check,
	.prepare = pipe_prepare,
	.open = pipe_open,
	.opened = pipes_close,
	.fini = pipe_fini,
};
