// SPDX-License-Identifier: GPL-2.0
/*
 * Named pipes of a restore: each description opens the FIFO by its path
 * again, which must exist (the restore does not create file system nodes).
 * A FIFO opened for writing alone waits for a reader (or fails with
 * O_NONBLOCK), so the FIFO is first held open O_RDWR, which never waits;
 * the unread data is written back through that hold, then the description
 * is opened, and the hold closed: the data stays as long as one end is open.
 * A FIFO kept open outside the tree since the dump still has its data: it is
 * not written twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_PREFIX "restore-files: "
#include "log.h"
#include "restore-files-fifo.h"
#include "util.h"

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

int rst_fifo_open(struct restore_ctx *ctx, size_t pos)
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
	hold = fifo_hold(fe, path, &st);
	if (hold < 0)
		return hold;
	err = fifo_fill(fe->fifo, hold, path);
	if (err)
		return err;
	return fifo_open_desc(fe, path, &st);
}
