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
#include <sys/syscall.h>
#include <unistd.h>

#include "files-int.h"
#include "log.h"
#include "ns.h"
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
static char *reg_path(const struct dump_ctx *ctx, pid_t pid, const char *what, const char *link,
		      const struct stat *st, bool *remap)
{
	size_t len = strlen(link), sl = strlen(DELETED_SUFFIX);
	char *path;

	if (link[0] != '/') {
		pr_err("pid %d %s: %s is not a path\n", pid, what, link);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (st->st_nlink == 0) {
		/* a removed file or directory: made again at restore (reg-ghost.c) */
		if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode)) {
			pr_err("pid %d %s: %s was removed and is neither a file nor a directory: "
			       "not supported yet\n",
			       pid, what, link);
			errno = EOPNOTSUPP;
			return NULL;
		}
		if (len > sl && !strcmp(link + len - sl, DELETED_SUFFIX))
			len -= sl;
		return strndup(link, len);
	}
	*remap = false;
	/* a symlink (an O_PATH | O_NOFOLLOW fd) is the link itself, not where it leads */
	if (!file_path_leads_to(ctx, pid, link, S_ISLNK(st->st_mode), st, false)) {
		bool removed = S_ISREG(st->st_mode) && len > sl &&
			       !strcmp(link + len - sl, DELETED_SUFFIX);

		/* --link-remap: a hidden link made by reg_dump() (reg-remap.c) */
		if (removed && ctx->opts->link_remap) {
			*remap = true;
			return strndup(link, len - sl);
		}
		pr_err("pid %d %s: %s no longer leads to the open file (%s): %s\n", pid, what, link,
		       removed ? "removed while other links remain" : "renamed",
		       removed ? "dump with --link-remap to give it a hidden link"
			       : "not supported yet");
		errno = EOPNOTSUPP;
		return NULL;
	}
	path = strdup(link);
	return path;
}

/* Fill the regular file or directory entry @d for @fd (a dumper fd). */
static int reg_fill(struct dump_ctx *ctx, struct file_desc *d, pid_t pid, int fd, const char *path,
		    const struct stat *st, unsigned int flags, uint64_t pos, int mnt_id, bool remap)
{
	size_t len = strlen(path);
	/* an unlinked file's extended attributes go into the same block, after the path */
	ssize_t xlen = st->st_nlink ? 0 : ghost_xattrs_size(fd);
	struct reg_priv *p = xlen < 0 ? NULL : calloc(1, sizeof(*p) + len + 1 + (size_t)xlen);
	RegFileEntry *e;

	if (xlen < 0) {
		pr_errno((int)xlen, "pid %d: cannot list the extended attributes of unlinked %s",
			 pid, path);
		return (int)xlen;
	}
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
	if (remap) {
		const char *hidden = link_remap_make(ctx, pid, fd, path, d->id);

		if (!hidden)
			return errno ? neg_errno() : -EIO;
		e->link_remap.data = (uint8_t *)hidden;
		e->link_remap.len = strlen(hidden);
		e->has_link_remap = true;
	}
	if (st->st_nlink)
		return 0;
	e->has_unlinked = true;
	e->unlinked = true;
	ghost_attrs_fill(e, st);
	if (xlen) {
		int err = ghost_xattrs_fill(fd, e, p->path + len + 1, (size_t)xlen);

		if (err) {
			pr_errno(err, "pid %d: cannot read the extended attributes of unlinked %s",
				 pid, path);
			return err;
		}
	}
	/* a removed directory is empty: made again with its attributes, no contents */
	if (S_ISDIR(st->st_mode))
		return 0;
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

/* The mount id of @fd with statx (5.8), -EOPNOTSUPP when the kernel does not say, or -errno. */
static int fd_mnt_id(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx))
		return neg_errno();
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	return (int)stx.stx_mnt_id;
}

int dump_file_by_fd(struct dump_ctx *ctx, pid_t pid, int fd, const char *path, int flags,
		    uint32_t *id)
{
	struct file_table *ft = file_table_get(ctx);
	_cleanup_free_ char *name = NULL;
	struct file_desc *d = NULL;
	struct stat st;
	bool remap;
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
	name = reg_path(ctx, pid, "file", path, &st, &remap);
	if (!name)
		return -errno;
	d = file_desc_new(ft, st.st_dev, st.st_ino);
	if (!d)
		return -errno;
	d->pid = 0;
	d->fd = -1;
	err = reg_fill(ctx, d, pid, fd, name, &st, (unsigned int)flags & ~O_CLOEXEC, 0,
		       fd_mnt_id(fd), remap);
	if (err)
		return err;
	*id = d->id;
	return 0;
}

static int reg_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	char what[32];
	char *path;
	bool remap;
	int err;

	/*
	 * O_PATH descriptors of the other inodes a path can name are kept the
	 * same way (a symlink itself, with O_NOFOLLOW; a socket file; a block
	 * device): they give no access to what is behind them. FIFOs and
	 * character devices have kinds of their own.
	 */
	if (!S_ISREG(f->st.st_mode) && !S_ISDIR(f->st.st_mode) &&
	    !((f->flags & O_PATH) &&
	      (S_ISLNK(f->st.st_mode) || S_ISSOCK(f->st.st_mode) || S_ISBLK(f->st.st_mode))))
		return 0;
	/* nsfs ("net:[...]"), anon inodes and the like have no path: other kinds. */
	if (f->link[0] != '/')
		return 0;
	err = reg_proc_check(ctx, f);
	if (err)
		return err < 0 ? err : 1; /* 1: of a process that has exited (reg_dump()) */
	snprintf(what, sizeof(what), "fd %d", f->fd);
	path = reg_path(ctx, f->pid, what, f->link, &f->st, &remap);
	if (!path)
		return -errno;
	free(path);
	return 1;
}

/* A file of a process in /proc that has exited: its path, no contents, no position. */
static int reg_proc_dead_fill(struct dump_ctx *ctx, struct file_desc *d, const struct fd_info *f,
			      struct stat *st)
{
	size_t len = strlen(f->link), sl = strlen(DELETED_SUFFIX);
	_cleanup_free_ char *path = NULL;
	int err;

	if (len > sl && !strcmp(f->link + len - sl, DELETED_SUFFIX))
		len -= sl;
	path = strndup(f->link, len);
	if (!path)
		return -ENOMEM;
	st->st_nlink = st->st_nlink ?: 1; /* not an unlinked file to save */
	err = reg_fill(ctx, d, f->pid, f->dfd, path, st, f->flags, 0, f->mnt_id, false);
	if (err)
		return err;
	d->fe.reg->has_proc_dead = d->fe.reg->proc_dead = true;
	pr_info("pid %d fd %d: %s: a file of a process that has exited\n", f->pid, f->fd, path);
	return 0;
}

static int reg_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	_cleanup_free_ char *path = NULL;
	char what[32];
	struct stat st;
	bool remap;

	if (fstat(f->dfd, &st)) {
		pr_perror("pid %d fd %d: fstat", f->pid, f->fd);
		return neg_errno();
	}
	if (reg_proc_check(ctx, f) == 1)
		return reg_proc_dead_fill(ctx, d, f, &st);
	snprintf(what, sizeof(what), "fd %d", f->fd);
	path = reg_path(ctx, f->pid, what, f->link, &st, &remap);
	if (!path)
		return -errno;
	return reg_fill(ctx, d, f->pid, f->dfd, path, &st, f->flags, f->pos, f->mnt_id, remap);
}

/* ---- restore: the messages keep the restore's prefix ---------------------------------------- */
static int check_same_file(const FileEntry *fe, const char *path, int fd, bool check_ino)
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
	if (check_ino && r->has_ino && (uint64_t)st.st_ino != r->ino)
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

/*
 * Open description @pos by its path, check it, set its flags and position.
 * @proc: a file of a process in /proc, whose inode is new to every process;
 * its position is set by reg_resume().
 */
static int open_path(struct restore_ctx *ctx, size_t pos, bool proc)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const char *path = ctx->files->paths[pos];
	bool seek = !(fe->reg->flags & O_PATH) && !proc;
	int fd, err;

	fd = rst_open_nonblock(path, fe->reg->flags);
	if (fd < 0) {
		pr_perror("file %u: cannot open %s", fe->id, path);
		return neg_errno();
	}
	err = check_same_file(fe, path, fd, !proc);
	if (!err && !(fe->reg->flags & O_PATH))
		err = rst_drop_nonblock(fd, fe->reg->flags);
	/* a directory's position is its file system's getdents cookie; O_PATH has none */
	if (!err && seek)
		err = seek_to(fd, fe->reg->pos, path);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * A file of a process in /proc that had exited (reg-proc.c): opened in the
 * controller, before the tree exists, while a short-lived child has its pid;
 * its type checked (reads give ESRCH, as they did).
 */
static int open_proc_dead(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const char *path = ctx->files->paths[pos];
	struct stat st;
	int fd;

	fd = rst_proc_dead_open(path, fe->reg->flags, rst_open_nonblock);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || (st.st_mode & S_IFMT) != (fe->reg->mode & S_IFMT)) {
		pr_err("file %u: %s is not of the type it was at the dump\n", fe->id, path);
		close(fd);
		return -ESTALE;
	}
	if (!(fe->reg->flags & O_PATH) && rst_drop_nonblock(fd, fe->reg->flags)) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/*
 * A file of a process in /proc (reg-proc.c), which exists only once the tree
 * is forked, or any file on a mount the restored root makes after its clone
 * (the proc of the tree's own pid namespace: /proc/sys/..., as `id` holds
 * kernel/ngroups_max): opened late, in each task holding it (reg_installed()).
 */
static bool reg_late(const struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const char *path = ctx->files->paths[pos];
	pid_t pid, tid;

	if ((fe->reg->has_unlinked && fe->reg->unlinked) || fe->reg->proc_dead || !path)
		return false;
	return proc_pid_path(path, &pid, &tid) ||
	       (fe->reg->has_mnt_id && ns_mnt_made_by_root(&ctx->ns, fe->reg->mnt_id));
}

static int open_reg(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];

	if (fe->reg->has_unlinked && fe->reg->unlinked)
		return rst_ghost_open(ctx, pos);
	if (reg_late(ctx, pos))
		return rst_late_placeholder(ctx, pos);
	if (fe->reg->proc_dead)
		return open_proc_dead(ctx, pos);
	return open_path(ctx, pos, false);
}

static int reg_reopen(struct restore_ctx *ctx, const struct rst_task *t, const FdEntry *fd,
		      size_t pos)
{
	int nfd = open_path(ctx, pos, true);

	if (nfd < 0)
		pr_errno(nfd, "pid %u fd %u: cannot reopen %s (file %u)", t->pe->pid, fd->fd,
			 ctx->files->paths[pos], fd->id);
	return nfd;
}

/*
 * In task @t, every task of the tree forked and @t's fds at their numbers:
 * the files of processes in /proc over their placeholders. First in the
 * table, so an epoll watching one registers the real file.
 */
static int reg_installed(struct restore_ctx *ctx, struct rst_task *t)
{
	return rst_late_install(ctx, t, &reg_kind, reg_late, reg_reopen);
}

/* The first fd of task @t on the description of @tf->fds[@i] that needs its position set. */
static bool late_seek(const struct restore_ctx *ctx, const struct rst_task_files *tf, size_t i)
{
	long pos = rst_file_index_pos(&ctx->files->idx, tf->fds[i]->id);
	const RegFileEntry *r;
	size_t j;

	if (pos < 0 || ctx->files->kind_at[pos] != &reg_kind || !reg_late(ctx, (size_t)pos))
		return false;
	r = ctx->files->idx.by_id[pos]->reg;
	if (!r->pos || (r->flags & O_PATH))
		return false;
	for (j = 0; j < i && tf->fds[j]->id != tf->fds[i]->id; j++)
		;
	return j == i;
}

/* Seek fd @fd->fd of @t (taken through @pidfd, the same description) to its dumped position. */
static int late_seek_one(const struct restore_ctx *ctx, const struct rst_task *t, int pidfd,
			 const FdEntry *fd)
{
	long pos = rst_file_index_pos(&ctx->files->idx, fd->id);
	uint64_t want = ctx->files->idx.by_id[pos]->reg->pos;
	int tfd, err = 0;

	errno = 0;
	tfd = (int)syscall(__NR_pidfd_getfd, pidfd, (int)fd->fd, 0);
	if (tfd < 0 || lseek(tfd, (off_t)want, SEEK_SET) != (off_t)want) {
		err = errno ? neg_errno() : -EIO;
		pr_errno(err, "pid %u fd %u: cannot seek %s to %llu", t->pe->pid, fd->fd,
			 ctx->files->paths[pos], (unsigned long long)want);
	}
	if (tfd >= 0)
		close(tfd);
	return err;
}

/*
 * The positions of the files of processes in /proc, set from the controller
 * on each task's own description (pidfd_getfd()) once every thread waits at
 * the barrier: a seq file (most of /proc/PID) renders its text up to the
 * position when it seeks and reads on from that text, so seeking earlier, in
 * the task, would keep what the task looked like half-restored (the
 * controller's comm and parent).
 */
static int reg_resume(struct restore_ctx *ctx)
{
	unsigned int i;
	size_t j;
	int pidfd, err = 0;

	/* every description open, the tree about to run: the hidden links go */
	link_remap_restored(ctx, true);
	if (!rst_kind_get(ctx, &reg_kind)->n)
		return 0;
	for (i = 0; !err && i < ctx->nr_tasks; i++) {
		const struct rst_task *t = &ctx->tasks[i];
		const struct rst_task_files *tf = t->files;

		pidfd = -1;
		for (j = 0; !err && tf && j < tf->nr_fds; j++) {
			if (!late_seek(ctx, tf, j))
				continue;
			if (pidfd < 0)
				pidfd = (int)syscall(__NR_pidfd_open, rst_host_pid(ctx, t), 0);
			if (pidfd < 0) {
				err = neg_errno();
				pr_errno(err, "pid %u: pidfd_open", t->pe->pid);
				break;
			}
			err = late_seek_one(ctx, t, pidfd, tf->fds[j]);
		}
		if (pidfd >= 0)
			close(pidfd);
	}
	return err;
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
	err = check_same_file(fe, path, fd, true);
	if (!err && !(flags & O_PATH))
		err = rst_drop_nonblock(fd, (uint32_t)flags);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Opening anything but its own type (a FIFO put there) could block the
 * restore; an O_PATH fd opens nothing, so it may name a symlink, a socket
 * file or a block device.
 */
static int reg_check(const FileEntry *fe)
{
	mode_t m = fe->reg ? fe->reg->mode : 0;
	bool path_only = fe->reg && (fe->reg->flags & O_PATH) &&
			 (S_ISLNK(m) || S_ISSOCK(m) || S_ISBLK(m));

	if (!fe->reg)
		return rst_file_part_missing(fe);
	if ((fe->type == FILE_TYPE__FILE_REG && !S_ISREG(m) && !path_only) ||
	    (fe->type == FILE_TYPE__FILE_DIR && !S_ISDIR(fe->reg->mode))) {
		pr_err("files.img: file %u has mode %o, not its type's\n", fe->id, fe->reg->mode);
		return -EINVAL;
	}
	return 0;
}

/* --link-remap: the file is opened through its hidden link (reg-remap.c) */
static const ProtobufCBinaryData *reg_entry_path(const FileEntry *fe)
{
	return fe->reg->has_link_remap ? &fe->reg->link_remap : &fe->reg->path;
}

static void reg_fini(struct restore_ctx *ctx)
{
	link_remap_restored(ctx, false); /* a failed restore leaves them, as the images */
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
	.installed = reg_installed,
	.resume = reg_resume,
	.prepare = link_remap_prepare,
	.fini = reg_fini,
	.dump_fini = link_remap_dump_fini,
};
