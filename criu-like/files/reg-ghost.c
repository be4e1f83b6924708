// SPDX-License-Identifier: GPL-2.0
/*
 * Unlinked open files of a restore: the contents saved in ghost-ID.img are
 * written into a new file at the original path, or next to it under a
 * temporary name if the path is taken (memfds: into a new memfd of the same
 * name), which is opened with the
 * saved flags and unlinked again, so the task finds an unlinked file with
 * the same contents at the same position.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_PREFIX "restore-files: "
#include "crc32c.h"
#include "image.h"
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

#define GHOST_CHUNK (1u << 20)
#define MEMFD_PREFIX "/memfd:"

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
static int same_ghost(const struct rst_files *f, size_t pos)
{
	const RegFileEntry *r = f->idx.by_id[pos]->reg;
	size_t i;

	if (!r->has_dev || !r->has_ino)
		return -1;
	for (i = 0; i < pos; i++) {
		const FileEntry *o = f->idx.by_id[i];

		if (f->fds[i] >= 0 && o->reg && o->reg->has_unlinked && o->reg->unlinked &&
		    o->reg->has_dev && o->reg->has_ino && o->reg->dev == r->dev &&
		    o->reg->ino == r->ino)
			return f->fds[i];
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
	int same = same_ghost(ctx->files, pos);
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
