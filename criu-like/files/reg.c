// SPDX-License-Identifier: GPL-2.0
/*
 * Regular files and directories: path, flags, position, size, mode and the
 * inode (dev/ino/mnt_id) to check it is the same file at restore, where the
 * file is opened by its path again. A file that is open but unlinked
 * (st_nlink 0, memfds included) has its contents saved in ghost-ID.img
 * (reg-ghost.c). Also the files of mappings and the exe link
 * (dump_file_by_fd(), and open_mapped at restore). The locks of a file are
 * saved with it (locks.c).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files-int.h"
#include "log.h"
#include "reg.h"
#include "restore-files-int.h"
#include "util.h"

#define DELETED_SUFFIX " (deleted)"

/* The entry and its path, one block (file_desc.priv). */
struct reg_priv {
	RegFileEntry e;
	char path[];
};

/*
 * The name to save for the file @st that /proc shows as @link in task @pid
 * (@what names the fd or mapping in messages): @link without the " (deleted)"
 * the kernel appends once the file is unlinked. A file that still has links
 * must be reachable by its name from the task's root, or restore would open
 * another file: one renamed or removed while other links remain is refused.
 */
static char *reg_path(pid_t pid, const char *what, const char *link, const struct stat *st)
{
	size_t len = strlen(link), sl = strlen(DELETED_SUFFIX);
	char proot[PATH_MAX + 32];
	struct stat cur;
	char *path;

	if (link[0] != '/') {
		pr_err("pid %d %s: %s is not a path\n", pid, what, link);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (st->st_nlink == 0) {
		if (!S_ISREG(st->st_mode)) {
			pr_err("pid %d %s: %s is a removed directory: not supported yet\n", pid,
			       what, link);
			errno = EOPNOTSUPP;
			return NULL;
		}
		if (len > sl && !strcmp(link + len - sl, DELETED_SUFFIX))
			len -= sl;
		return strndup(link, len);
	}
	snprintf(proot, sizeof(proot), "/proc/%d/root%s", pid, link);
	if (stat(proot, &cur) || cur.st_dev != st->st_dev || cur.st_ino != st->st_ino) {
		pr_err("pid %d %s: %s no longer leads to the open file (renamed, or removed while "
		       "other links remain): not supported yet\n",
		       pid, what, link);
		errno = EOPNOTSUPP;
		return NULL;
	}
	path = strdup(link);
	return path;
}

/* Fill the regular file or directory entry @d for @fd (a dumper fd). */
static int reg_fill(struct dump_ctx *ctx, struct file_desc *d, pid_t pid, int fd, const char *path,
		    const struct stat *st, unsigned int flags, uint64_t pos, int mnt_id)
{
	size_t len = strlen(path);
	struct reg_priv *p = calloc(1, sizeof(*p) + len + 1);
	RegFileEntry *e;

	if (!p)
		return -ENOMEM;
	d->priv = p;
	memcpy(p->path, path, len + 1);
	e = &p->e;
	d->fe.type = S_ISDIR(st->st_mode) ? FILE_TYPE__FILE_DIR : FILE_TYPE__FILE_REG;
	reg_file_entry__init(e);
	e->path.data = (uint8_t *)p->path;
	e->path.len = len;
	e->flags = flags;
	e->pos = pos;
	e->size = (uint64_t)st->st_size;
	e->mode = st->st_mode;
	e->has_dev = e->has_ino = true;
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	if (mnt_id >= 0) {
		e->has_mnt_id = true;
		e->mnt_id = (uint64_t)mnt_id;
	}
	d->fe.reg = e;
	if (st->st_nlink)
		return 0;
	e->has_unlinked = true;
	e->unlinked = true;
	/*
	 * A memfd's seals (3.17) are on the inode: restore adds them after the
	 * contents. A memfd made without MFD_ALLOW_SEALING shows F_SEAL_SEAL.
	 */
	if (!strncmp(path, "/memfd:", 7)) {
		int seals = fcntl(fd, F_GET_SEALS);

		if (seals < 0) {
			pr_perror("pid %d: F_GET_SEALS of %s", pid, path);
			return neg_errno();
		}
		e->has_seals = true;
		e->seals = (uint32_t)seals;
	}
	return ghost_dump(ctx, pid, fd, d->id, e);
}

/* The mount id of @fd with statx (5.8), -1 when the kernel does not say. */
static int fd_mnt_id(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) || !(stx.stx_mask & STATX_MNT_ID))
		return -1;
	return (int)stx.stx_mnt_id;
}

int dump_file_by_fd(struct dump_ctx *ctx, pid_t pid, int fd, const char *path, int flags,
		    uint32_t *id)
{
	struct file_table *ft = file_table_get(ctx);
	_cleanup_free_ char *name = NULL;
	struct file_desc *d = NULL;
	struct stat st;
	int err;

	if (!ft)
		return -errno;
	if (fstat(fd, &st)) {
		pr_perror("pid %d: fstat of %s", pid, path);
		return neg_errno();
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISCHR(st.st_mode)) {
		pr_err("pid %d: %s is not a regular file (mode %o): not supported yet\n", pid, path,
		       st.st_mode);
		return -EOPNOTSUPP;
	}
	/* Files of mappings and the exe link are shared by inode, not by description. */
	while ((d = file_desc_next(ft, st.st_dev, st.st_ino, d)))
		if (d->pid == 0) {
			*id = d->id;
			return 0;
		}
	if (S_ISCHR(st.st_mode)) {
		err = chr_check_mapped(pid, path, &st);
		if (err)
			return err;
		d = file_desc_new(ft, st.st_dev, st.st_ino);
		if (!d)
			return -ENOMEM;
		d->fd = -1;
		err = chr_fill_mapped(d, path, &st, (unsigned int)flags & ~O_CLOEXEC);
		if (!err)
			*id = d->id;
		return err;
	}
	name = reg_path(pid, "file", path, &st);
	if (!name)
		return -errno;
	d = file_desc_new(ft, st.st_dev, st.st_ino);
	if (!d)
		return -errno;
	d->pid = 0;
	d->fd = -1;
	err = reg_fill(ctx, d, pid, fd, name, &st, (unsigned int)flags & ~O_CLOEXEC, 0,
		       fd_mnt_id(fd));
	if (err)
		return err;
	*id = d->id;
	return 0;
}

static int reg_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	char what[32];
	char *path;

	(void)ctx;
	if (!S_ISREG(f->st.st_mode) && !S_ISDIR(f->st.st_mode))
		return 0;
	/* nsfs ("net:[...]"), anon inodes and the like have no path: other kinds. */
	if (f->link[0] != '/')
		return 0;
	snprintf(what, sizeof(what), "fd %d", f->fd);
	path = reg_path(f->pid, what, f->link, &f->st);
	if (!path)
		return -errno;
	free(path);
	return 1;
}

static int reg_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	_cleanup_free_ char *path = NULL;
	char what[32];
	struct stat st;

	if (fstat(f->dfd, &st)) {
		pr_perror("pid %d fd %d: fstat", f->pid, f->fd);
		return neg_errno();
	}
	snprintf(what, sizeof(what), "fd %d", f->fd);
	path = reg_path(f->pid, what, f->link, &st);
	if (!path)
		return -errno;
	return reg_fill(ctx, d, f->pid, f->dfd, path, &st, f->flags, f->pos, f->mnt_id);
}

/* ---- restore: the messages keep the restore's prefix ---------------------------------------- */
static int check_same_file(const FileEntry *fe, const char *path, int fd)
{
	const RegFileEntry *r = fe->reg;
	struct stat st;

	if (fstat(fd, &st))
		return neg_errno();
	if (st.st_mode != r->mode) {
		pr_err("%s: mode %o, it was %o at the dump\n", path, st.st_mode, r->mode);
		return -ESTALE;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size != r->size) {
		pr_err("%s: size %lld, it was %llu at the dump\n", path, (long long)st.st_size,
		       (unsigned long long)r->size);
		return -ESTALE;
	}
	/* Inode numbers change with a copy or a restore on another machine. */
	if (r->has_ino && (uint64_t)st.st_ino != r->ino)
		pr_warn("%s: inode %llu, it was %llu at the dump\n", path,
			(unsigned long long)st.st_ino, (unsigned long long)r->ino);
	return 0;
}

static int seek_to(int fd, uint64_t pos, const char *path)
{
	if (lseek(fd, (off_t)pos, SEEK_SET) < 0) {
		pr_perror("%s: cannot seek to %llu", path, (unsigned long long)pos);
		return neg_errno();
	}
	return 0;
}

/* ---- regular files and directories --------------------------------------------------------- */

static int open_reg(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const char *path = ctx->files->paths[pos];
	int fd, err;

	if (fe->reg->has_unlinked && fe->reg->unlinked)
		return rst_ghost_open(ctx, pos);

	fd = rst_open_nonblock(path, fe->reg->flags);
	if (fd < 0) {
		pr_perror("file %u: cannot open %s", fe->id, path);
		return neg_errno();
	}
	err = check_same_file(fe, path, fd);
	if (!err && !(fe->reg->flags & O_PATH))
		err = rst_drop_nonblock(fd, fe->reg->flags);
	/* a directory's position is its file system's getdents cookie; O_PATH has none */
	if (!err && !(fe->reg->flags & O_PATH))
		err = seek_to(fd, fe->reg->pos, path);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Without a description to reopen (a mapping of a file no fd holds): the path, checked. */
static int reg_open_mapped(struct restore_ctx *ctx, size_t pos, int flags)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const char *path = ctx->files->paths[pos];
	int fd, err;

	if (fe->reg->has_unlinked && fe->reg->unlinked) {
		pr_err("unlinked file %u (%s) has not been rebuilt\n", fe->id, path);
		return -ENOENT;
	}
	fd = rst_open_nonblock(path, (uint32_t)flags);
	if (fd < 0) {
		pr_perror("file %u: cannot open %s", fe->id, path);
		return neg_errno();
	}
	err = check_same_file(fe, path, fd);
	if (!err && !(flags & O_PATH))
		err = rst_drop_nonblock(fd, (uint32_t)flags);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Opening anything but its own type (a FIFO put there) could block the restore. */
static int reg_check(const FileEntry *fe)
{
	if (!fe->reg)
		return rst_file_part_missing(fe);
	if ((fe->type == FILE_TYPE__FILE_REG && !S_ISREG(fe->reg->mode)) ||
	    (fe->type == FILE_TYPE__FILE_DIR && !S_ISDIR(fe->reg->mode))) {
		pr_err("files.img: file %u has mode %o, not its type's\n", fe->id, fe->reg->mode);
		return -EINVAL;
	}
	return 0;
}

static const ProtobufCBinaryData *reg_entry_path(const FileEntry *fe)
{
	return &fe->reg->path;
}

const struct file_kind reg_kind = {
	.name = "regular file",
	.match = reg_match,
	.dump = reg_dump,
	.types = { FILE_TYPE__FILE_REG, FILE_TYPE__FILE_DIR },
	.in_flight = true,
	.check = reg_check,
	.path = reg_entry_path,
	.open = open_reg,
	.open_mapped = reg_open_mapped,
};
