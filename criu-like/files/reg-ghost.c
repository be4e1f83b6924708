// SPDX-License-Identifier: GPL-2.0
/*
 * The contents of unlinked open files (reg.c): a file open but unlinked
 * (st_nlink 0, memfds and O_TMPFILE files included) has them saved in
 * ghost-ID.img, copied in the kernel, with their crc32c. At restore they are
 * written into a new file at the original path, or next to it under a
 * temporary name if the path is taken (memfds: into a new memfd of the same
 * name), which is opened with the saved flags and unlinked again, so the task
 * finds an unlinked file with the same contents at the same position.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_PREFIX "files: "
#include "crc32c.h"
#include "files-int.h"
#include "image.h"
#include "log.h"
#include "reg.h"
#include "restore-files-int.h"
#include "util.h"

#define GHOST_CHUNK (1u << 20)
#define MEMFD_PREFIX "/memfd:"

/* ---- dump ----------------------------------------------------------------------------------- */

static int ghost_copy_range(int src, int dst, uint64_t size)
{
	loff_t off = 0;
	bool sendfile_only = false;

	while ((uint64_t)off < size) {
		size_t want = (size_t)min(size - (uint64_t)off, (uint64_t)(1u << 30));
		ssize_t n = -1;

		if (!sendfile_only) {
			n = copy_file_range(src, &off, dst, NULL, want, 0);
			/* Across file systems of different types (EXDEV) and on old kernels. */
			if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				      errno == EOPNOTSUPP)) {
				sendfile_only = true;
				continue;
			}
		} else {
			n = sendfile(dst, src, &off, want);
		}
		if (n < 0)
			return neg_errno();
		if (n == 0)
			return -ENODATA; /* the file shrank under us */
	}
	return 0;
}

static int ghost_crc(int src, uint64_t size, uint32_t *ret)
{
	_cleanup_free_ uint8_t *buf = malloc(GHOST_CHUNK);
	uint64_t off = 0;
	uint32_t crc = 0;

	if (!buf)
		return -ENOMEM;
	while (off < size) {
		ssize_t n = pread(src, buf, (size_t)min(size - off, (uint64_t)GHOST_CHUNK),
				  (off_t)off);

		if (n < 0)
			return neg_errno();
		if (n == 0)
			return -ENODATA;
		crc = crc32c(crc, buf, (size_t)n);
		off += (uint64_t)n;
	}
	*ret = crc;
	return 0;
}

/*
 * Copy the contents of the unlinked file behind @fd into ghost-ID.img. A new
 * description is opened through /proc/self/fd: reading the drained one would
 * move the task's file position, and it may be write-only.
 */
int ghost_dump(struct dump_ctx *ctx, pid_t pid, int fd, uint32_t id, RegFileEntry *e)
{
	const char *path = (const char *)e->path.data; /* NUL-terminated by reg.c */
	_cleanup_close_ int src = -1;
	struct cr_img *img;
	char self[64];
	uint32_t crc = 0;
	int err, cerr;

	/* --ghost-limit, as CRIU: a larger unlinked file fails the dump (0: no limit) */
	if (ctx->opts && ctx->opts->ghost_limit && e->size > ctx->opts->ghost_limit) {
		pr_err("pid %d fd %d: unlinked %s has %llu bytes, more than --ghost-limit %llu\n",
		       pid, fd, path, (unsigned long long)e->size, ctx->opts->ghost_limit);
		return -EFBIG;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	src = open(self, O_RDONLY | O_CLOEXEC);
	if (src < 0) {
		pr_perror("pid %d: cannot reopen unlinked %s for its contents", pid, path);
		return neg_errno();
	}
	img = img_open(ctx->dirfd, CR_IMG_GHOST, id, IMG_WRITE);
	if (!img)
		return -errno;
	err = ghost_copy_range(src, img_raw_fd(img), e->size);
	if (!err)
		err = ghost_crc(src, e->size, &crc);
	cerr = img_close(img);
	if (err) {
		pr_errno(err, "pid %d: cannot copy unlinked %s into ghost-%u.img", pid, path, id);
		return err;
	}
	if (cerr)
		return cerr;
	e->has_ghost_crc32c = true;
	e->ghost_crc32c = crc;
	pr_debug("pid %d: ghost-%u.img: %llu bytes of unlinked %s\n", pid, id,
		 (unsigned long long)e->size, path);
	return 0;
}

/* ---- restore: the messages keep the restore's prefix ---------------------------------------- */
static int ghost_copy(struct cr_img *img, const FileEntry *fe, int dst, const char *path)
{
	_cleanup_free_ uint8_t *buf = NULL;
	uint64_t off = 0, size = img_raw_size(img);
	uint32_t crc = 0;
	int err = 0;

	if (size != fe->reg->size) {
		pr_err("ghost-%u.img holds %llu bytes, unlinked %s had %llu\n", fe->id,
		       (unsigned long long)size, path, (unsigned long long)fe->reg->size);
		return -EBADMSG;
	}
	buf = malloc(GHOST_CHUNK);
	if (!buf)
		return -ENOMEM;
	while (!err && off < size) {
		size_t n = (size_t)min(size - off, (uint64_t)GHOST_CHUNK);

		err = img_read_raw(img, off, buf, n);
		if (!err)
			err = write_all(dst, buf, n);
		crc = crc32c(crc, buf, n);
		off += n;
	}
	if (!err && fe->reg->has_ghost_crc32c && crc != fe->reg->ghost_crc32c) {
		pr_err("ghost-%u.img: crc32c %08x, the dump saved %08x\n", fe->id, crc,
		       fe->reg->ghost_crc32c);
		err = -EBADMSG;
	}
	return err;
}

/* Copy the ghost image data into @dst, checking its size and crc32c. */
static int ghost_fill(struct restore_ctx *ctx, const FileEntry *fe, int dst, const char *path)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_GHOST, fe->id, IMG_READ);
	int err;

	if (!img)
		return neg_errno();
	err = ghost_copy(img, fe, dst, path);
	img_close(img);
	return err;
}

/* The fd of an earlier description of the same unlinked inode (to open that inode again), or -1. */
static int same_ghost(const struct restore_ctx *ctx, size_t pos)
{
	const struct rst_files *f = ctx->files;
	const struct rst_kind *k = rst_kind_get(ctx, &reg_kind);
	const RegFileEntry *r = f->idx.by_id[pos]->reg;
	size_t i;

	if (!r->has_dev || !r->has_ino)
		return -1;
	for (i = 0; i < k->n && k->pos[i] < pos; i++) {
		const RegFileEntry *o = f->idx.by_id[k->pos[i]]->reg;

		if (f->fds[k->pos[i]] >= 0 && o->has_unlinked && o->unlinked && o->has_dev &&
		    o->has_ino && o->dev == r->dev && o->ino == r->ino)
			return f->fds[k->pos[i]];
	}
	return -1;
}

/*
 * An O_TMPFILE file (3.11) never had a name (/proc shows "DIR/#INO"): made
 * again in its directory with its own flags, so it stays linkable with
 * linkat(AT_EMPTY_PATH), or not with O_EXCL, as it was.
 */
static int create_tmpfile(struct restore_ctx *ctx, const FileEntry *fe, const char *path)
{
	_cleanup_free_ char *dir = strdup(path);
	int fd, err;

	if (!dir)
		return -ENOMEM;
	fd = open(dirname(dir),
		  (int)(fe->reg->flags & ~(uint32_t)(O_CREAT | O_TRUNC | O_NOCTTY)) | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		pr_perror("unlinked %s: cannot make an O_TMPFILE file in %s", path, dir);
		return neg_errno();
	}
	err = ghost_fill(ctx, fe, fd, path);
	if (!err && fchmod(fd, fe->reg->mode & 07777))
		err = neg_errno();
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * The seals go on after the contents, which F_SEAL_WRITE and the size seals
 * would refuse: a memfd sealed against writes refuses them again.
 */
static int create_memfd(struct restore_ctx *ctx, const FileEntry *fe, const char *path)
{
	bool seals = fe->reg->has_seals;
	unsigned int mflags = MFD_CLOEXEC | (seals ? MFD_ALLOW_SEALING : 0);
	_cleanup_close_ int fd = memfd_create(path + strlen(MEMFD_PREFIX), mflags);
	int err;

	if (fd < 0) {
		pr_perror("cannot create memfd %s", path);
		return neg_errno();
	}
	err = ghost_fill(ctx, fe, fd, path);
	if (err)
		return err;
	if (seals && fe->reg->seals && fcntl(fd, F_ADD_SEALS, (int)fe->reg->seals) < 0) {
		pr_perror("memfd %s: cannot add its seals %#x", path, fe->reg->seals);
		return neg_errno();
	}
	return rst_reopen_fd(fd, fe->reg->flags);
}

/*
 * Where to create the file: at its own path when that is free, so that
 * /proc/PID/fd shows the same "PATH (deleted)" as before the dump; else under
 * a temporary name in the same directory (the same file system, as it was).
 */
static char *ghost_name(const char *path, uint32_t id)
{
	_cleanup_free_ char *dir = NULL;
	char *name;

	if (access(path, F_OK) && errno == ENOENT)
		return strdup(path);
	dir = strdup(path);
	if (!dir || asprintf(&name, "%s/.criu-like-ghost.%u.%d", dirname(dir), id, getpid()) < 0)
		return NULL;
	return name;
}

static int create_file(struct restore_ctx *ctx, const FileEntry *fe, const char *path)
{
	_cleanup_free_ char *tmp = ghost_name(path, fe->id);
	_cleanup_close_ int wfd = -1;
	int fd, err;

	if (!tmp)
		return -ENOMEM;
	wfd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (wfd < 0) {
		pr_perror("unlinked %s: cannot create %s for its contents", path, tmp);
		return neg_errno();
	}
	err = ghost_fill(ctx, fe, wfd, path);
	/* the saved mode, which the umask would have cut at creation */
	if (!err && fchmod(wfd, fe->reg->mode & 07777))
		err = neg_errno();
	fd = err ? err
		 : open(tmp, (int)(fe->reg->flags & ~(uint32_t)(O_CREAT | O_TRUNC | O_EXCL)) |
				     O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && !err) {
		err = neg_errno();
		pr_perror("unlinked %s: cannot open %s", path, tmp);
	}
	if (unlink(tmp) && !err) {
		err = neg_errno();
		pr_perror("unlinked %s: cannot unlink %s", path, tmp);
	}
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}

int rst_ghost_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const char *path = ctx->files->paths[pos];
	int same = same_ghost(ctx, pos);
	int fd;

	if (fe->type != FILE_TYPE__FILE_REG) {
		pr_err("file %u: unlinked %s is not a regular file\n", fe->id, path);
		return -EINVAL;
	}
	if (same >= 0)
		fd = rst_reopen_fd(same, fe->reg->flags);
	else if (!strncmp(path, MEMFD_PREFIX, strlen(MEMFD_PREFIX)))
		fd = create_memfd(ctx, fe, path);
	else if ((fe->reg->flags & O_TMPFILE) == O_TMPFILE)
		fd = create_tmpfile(ctx, fe, path);
	else
		fd = create_file(ctx, fe, path);
	if (fd < 0)
		return fd;
	if (!(fe->reg->flags & O_PATH) && lseek(fd, (off_t)fe->reg->pos, SEEK_SET) < 0) {
		int err = neg_errno();

		pr_perror("unlinked %s: cannot seek to %llu", path,
			  (unsigned long long)fe->reg->pos);
		close(fd);
		return err;
	}
	return fd;
}
