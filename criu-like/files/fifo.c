// SPDX-License-Identifier: GPL-2.0
/*
 * Named pipes (FIFOs): every description is saved with its path and flags
 * (FILE_FIFO), to be opened by that path again at restore. The unread data
 * of a FIFO is saved once, with the first description of it, read without
 * consuming it: tee() duplicates the buffers into a pipe of the dumper, as
 * pipe.c does for pipes (pipe_copy_data()). A FIFO removed from the file
 * system is saved with its mode and owner and made again at restore (under
 * its path when free, else next to it), held open and removed again: every
 * description of it is then opened through that hold. A FIFO no longer
 * found under its path (renamed) is refused: restore could not open it.
 *
 * At restore each description opens the FIFO by its path again, which must
 * exist (the restore does not create file system nodes). A FIFO opened for
 * writing alone waits for a reader (or fails with O_NONBLOCK), so the FIFO is
 * first held open O_RDWR, which never waits; the unread data is written back
 * through that hold, then the description is opened, and the hold closed: the
 * data stays as long as one end is open. A FIFO kept open outside the tree
 * since the dump still has its data: it is not written twice.
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
#include "log.h"
#include "node-attrs.h"
#include "pipe.h"
#include "restore-files-int.h"
#include "util.h"

/* The entry, the unread data and the path, one block (file_desc.priv). */
struct fifo_priv {
	FifoFileEntry e;
	uint8_t buf[]; /* the unread data (e.data), then the path (e.path, NUL-terminated) */
};

static int fifo_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	char proot[PATH_MAX + 32];
	struct stat cur;

	(void)ctx;
	if (!S_ISFIFO(f->st.st_mode) || f->link[0] != '/')
		return 0;
	if (f->st.st_nlink == 0)
		return 1; /* removed: made again at restore */
	snprintf(proot, sizeof(proot), "/proc/%d/root%s", f->pid, f->link);
	if (stat(proot, &cur) || cur.st_dev != f->st.st_dev || cur.st_ino != f->st.st_ino) {
		pr_err("pid %d fd %d: named FIFO %s was removed or renamed: not supported yet\n",
		       f->pid, f->fd, f->link);
		return -EOPNOTSUPP;
	}
	return 1;
}

static int fifo_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct file_table *ft = file_table_get(ctx);
	_cleanup_free_ uint8_t *data = NULL, *xdata = NULL;
	ProtobufCBinaryData xattrs = { 0, NULL };
	size_t len = 0, plen = strlen(f->link);
	struct file_desc *other;
	struct fifo_priv *p;
	bool first = true;
	int size = 0, err;

	/* a removed FIFO: its path without the kernel's " (deleted)" */
	if (f->st.st_nlink == 0 && plen > 10 && !strcmp(f->link + plen - 10, " (deleted)"))
		plen -= 10;

	if (!ft)
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
		err = pipe_copy_data(f, "FIFO ", &size, &len, &data);
		if (err)
			return err;
	}
	if (f->st.st_nlink == 0) {
		char self[64];

		snprintf(self, sizeof(self), "/proc/self/fd/%d", f->dfd);
		err = node_xattrs_dump(self, true, &xattrs);
		xdata = xattrs.data;
		if (err) {
			pr_errno(err, "pid %d fd %d: cannot read the extended attributes of %s",
				 f->pid, f->fd, f->link);
			return err;
		}
	}
	p = calloc(1, sizeof(*p) + len + plen + 1 + xattrs.len);
	if (!p)
		return -ENOMEM;
	d->priv = p;
	fifo_file_entry__init(&p->e);
	if (first) {
		if (len)
			memcpy(p->buf, data, len);
		p->e.has_data = p->e.has_pipe_size = true;
		p->e.data.data = p->buf;
		p->e.data.len = len;
		p->e.pipe_size = (uint32_t)size;
	}
	memcpy(p->buf + len, f->link, plen);
	p->buf[len + plen] = '\0';
	if (f->st.st_nlink == 0) {
		p->e.has_unlinked = p->e.has_mode = p->e.has_uid = p->e.has_gid = true;
		p->e.unlinked = true;
		p->e.mode = f->st.st_mode & 07777;
		p->e.uid = f->st.st_uid;
		p->e.gid = f->st.st_gid;
		p->e.has_atime_ns = p->e.has_mtime_ns = true;
		p->e.atime_ns = node_ns(&f->st.st_atim);
		p->e.mtime_ns = node_ns(&f->st.st_mtim);
		p->e.has_xattrs = xattrs.len != 0;
		p->e.xattrs.data = p->buf + len + plen + 1;
		p->e.xattrs.len = xattrs.len;
		if (xattrs.len)
			memcpy(p->e.xattrs.data, xattrs.data, xattrs.len);
	}
	p->e.path.data = p->buf + len;
	p->e.path.len = plen;
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

/* ---- restore: the messages keep the restore's prefix ---------------------------------------- */
/* Grow the FIFO to its saved size and write its unread data back through @hold. */
static int fifo_fill(const FifoFileEntry *ff, int hold, const char *path)
{
	int size = fcntl(hold, F_GETPIPE_SZ), avail = 0;
	ssize_t n;

	/* Past /proc/sys/fs/pipe-max-size this needs CAP_SYS_RESOURCE (EPERM). */
	if (ff->has_pipe_size && size >= 0 && ff->pipe_size > (uint32_t)size &&
	    fcntl(hold, F_SETPIPE_SZ, (int)ff->pipe_size) < 0) {
		pr_perror("FIFO %s: cannot grow to %u bytes", path, ff->pipe_size);
		return neg_errno();
	}
	if (!ff->has_data || !ff->data.len)
		return 0;
	/*
	 * A FIFO that still holds data was kept open outside the tree since the
	 * dump (the kernel frees the buffer with the last open end): what it
	 * holds is the data, written again it would come twice.
	 */
	if (ioctl(hold, FIONREAD, &avail) == 0 && avail > 0) {
		pr_warn("FIFO %s: open outside the tree, it still holds %d bytes: the %zu saved "
			"bytes are not written again\n",
			path, avail, ff->data.len);
		return 0;
	}
	/* The hold is non-blocking: more data than fits fails instead of hanging. */
	n = write(hold, ff->data.data, ff->data.len);
	if (n != (ssize_t)ff->data.len) {
		if (n < 0)
			pr_perror("FIFO %s: cannot write back %zu bytes", path, ff->data.len);
		else
			pr_err("FIFO %s: only %zd of its %zu bytes fit\n", path, n, ff->data.len);
		return n < 0 ? neg_errno() : -EFBIG;
	}
	return 0;
}

/* The FIFO at @path, held open for reading and writing; checked to be one. */
static int fifo_hold(const FileEntry *fe, const char *path, struct stat *st)
{
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		if (errno == ENOENT)
			pr_err("file %u: named FIFO %s does not exist: create it (mkfifo) before "
			       "the restore\n",
			       fe->id, path);
		else
			pr_perror("file %u: cannot open named FIFO %s", fe->id, path);
		return neg_errno();
	}
	if (fstat(fd, st) || !S_ISFIFO(st->st_mode)) {
		pr_err("file %u: %s is not a named FIFO any more\n", fe->id, path);
		close(fd);
		return -ESTALE;
	}
	/* Inode numbers change with a copy or a restore on another machine. */
	if (fe->fifo->has_ino && (uint64_t)st->st_ino != fe->fifo->ino)
		pr_warn("FIFO %s: inode %llu, it was %llu at the dump\n", path,
			(unsigned long long)st->st_ino, (unsigned long long)fe->fifo->ino);
	return fd;
}

/* The description itself, with its flags, on the same FIFO as @hold_st. */
static int fifo_open_desc(const FileEntry *fe, const char *path, const struct stat *hold_st)
{
	uint32_t flags = fe->fifo->flags & ~(uint32_t)(O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC);
	struct stat st;
	int fd, err = 0;

	fd = open(path, (int)flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		pr_perror("file %u: cannot open named FIFO %s", fe->id, path);
		return neg_errno();
	}
	if (fstat(fd, &st) || st.st_dev != hold_st->st_dev || st.st_ino != hold_st->st_ino) {
		pr_err("file %u: named FIFO %s was replaced during the restore\n", fe->id, path);
		err = -ESTALE;
	} else if (!(flags & (O_NONBLOCK | O_PATH)) &&
		   fcntl(fd, F_SETFL, (int)flags & ~O_NONBLOCK) < 0) {
		err = neg_errno();
		pr_perror("file %u: cannot clear O_NONBLOCK of FIFO %s", fe->id, path);
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

extern const struct file_kind fifo_kind;

/* The removed FIFOs made again, each held open (the kind's restore state). */
struct fifo_holds {
	struct {
		uint64_t dev, ino; /* as dumped */
		int hold;
		struct stat st;
	} * v;
	size_t n;
};

/*
 * A removed FIFO: made again under its path (or next to it when the path is
 * taken), with its mode and owner, held open O_RDWR and removed; every
 * description of it is opened through the hold. The first description of it
 * makes it, the others find it by the dumped dev/ino.
 */
static int fifo_unlinked_hold(struct restore_ctx *ctx, const FileEntry *fe, const char *path,
			      struct stat *st)
{
	struct rst_kind *k = rst_kind_get(ctx, &fifo_kind);
	struct fifo_holds *h = k->priv;
	const FifoFileEntry *ff = fe->fifo;
	/* the times once the unread data are back (fifo_open()): a write moves them */
	struct node_attrs na = { false, 0, 0, ff->has_xattrs ? &ff->xattrs : NULL };
	char name[PATH_MAX], what[PATH_MAX + 32];
	struct dir_times dt;
	int fd, err = 0;
	void *v;

	if (!h && !(h = k->priv = calloc(1, sizeof(*h))))
		return -ENOMEM;
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].dev == ff->dev && h->v[i].ino == ff->ino) {
			*st = h->v[i].st;
			return h->v[i].hold;
		}
	if (access(path, F_OK))
		snprintf(name, sizeof(name), "%s", path);
	else
		snprintf(name, sizeof(name), "%s.criu-like-fifo.%u.%d", path, fe->id, getpid());
	dir_times_save(&dt, name);
	if (mkfifo(name, 0600)) {
		pr_perror("file %u: cannot make the removed FIFO %s again as %s", fe->id, path,
			  name);
		dir_times_put_back(&dt);
		return neg_errno();
	}
	fd = open(name, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || (ff->has_uid && ff->has_gid && fchown(fd, ff->uid, ff->gid)) ||
	    (ff->has_mode && fchmod(fd, ff->mode & 07777)))
		err = neg_errno();
	snprintf(what, sizeof(what), "file %u: removed FIFO %s", fe->id, path);
	if (!err)
		err = node_attrs_set(fd, NULL, false, &na, what);
	if (!err && fstat(fd, st))
		err = neg_errno();
	if (unlink(name) && !err)
		err = neg_errno();
	dir_times_put_back(&dt);
	v = err ? NULL : realloc(h->v, (h->n + 1) * sizeof(*h->v));
	if (!err && !v)
		err = -ENOMEM;
	if (err) {
		pr_errno(err, "file %u: cannot make the removed FIFO %s again", fe->id, path);
		if (fd >= 0)
			close(fd);
		return err;
	}
	h->v = v;
	h->v[h->n].dev = ff->dev;
	h->v[h->n].ino = ff->ino;
	h->v[h->n].hold = fd;
	h->v[h->n].st = *st;
	h->n++;
	return fd;
}

/* A description of a removed FIFO, opened through its @hold (criu-like's /proc). */
static int fifo_reopen_desc(const FileEntry *fe, int hold, const char *path)
{
	uint32_t flags = fe->fifo->flags & ~(uint32_t)(O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC);
	int fd = rst_reopen_fd(hold, flags | O_NONBLOCK);

	if (fd < 0) {
		pr_errno(fd, "file %u: cannot open the removed FIFO %s again", fe->id, path);
		return fd;
	}
	if (!(flags & (O_NONBLOCK | O_PATH)) && fcntl(fd, F_SETFL, (int)flags & ~O_NONBLOCK) < 0) {
		int err = neg_errno();

		pr_perror("file %u: cannot clear O_NONBLOCK of FIFO %s", fe->id, path);
		close(fd);
		return err;
	}
	return fd;
}

static void fifo_fini(struct restore_ctx *ctx)
{
	struct rst_kind *k = rst_kind_get(ctx, &fifo_kind);
	struct fifo_holds *h = k ? k->priv : NULL;

	for (size_t i = 0; h && i < h->n; i++)
		close(h->v[i].hold);
	if (h)
		free(h->v);
	free(h);
	if (k)
		k->priv = NULL;
}

/* The saved times of a removed FIFO on its @hold, after its data went back. */
static int fifo_set_times(const FileEntry *fe, int hold, const char *path)
{
	const FifoFileEntry *ff = fe->fifo;
	struct node_attrs na = { ff->has_atime_ns && ff->has_mtime_ns, ff->atime_ns, ff->mtime_ns,
				 NULL };
	char what[PATH_MAX + 32];

	snprintf(what, sizeof(what), "file %u: removed FIFO %s", fe->id, path);
	return node_attrs_set(hold, NULL, false, &na, what);
}

/*
 * In the controller: the FIFO description idx.by_id[@pos], opened by its path
 * without blocking, its unread data written back when it holds them. -errno
 * (logged, naming the path) when the FIFO is missing or not a FIFO.
 */
static int fifo_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const ProtobufCBinaryData *p = &fe->fifo->path;
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int hold = -1;
	struct stat st;
	int err;

	if (!p->len || p->data[0] != '/' || memchr(p->data, 0, p->len)) {
		pr_err("files.img: file %u: bad FIFO path\n", fe->id);
		return -EINVAL;
	}
	path = strndup((const char *)p->data, p->len);
	if (!path)
		return -ENOMEM;
	if (fe->fifo->unlinked) {
		int h = fifo_unlinked_hold(ctx, fe, path, &st);

		if (h < 0)
			return h;
		err = fifo_fill(fe->fifo, h, path);
		if (!err)
			err = fifo_set_times(fe, h, path);
		return err ? err : fifo_reopen_desc(fe, h, path);
	}
	hold = fifo_hold(fe, path, &st);
	if (hold < 0)
		return hold;
	err = fifo_fill(fe->fifo, hold, path);
	if (err)
		return err;
	return fifo_open_desc(fe, path, &st);
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
	.open = fifo_open,
	.fini = fifo_fini,
};
