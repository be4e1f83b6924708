// SPDX-License-Identifier: GPL-2.0
/*
 * Files of a restore. The controller opens every open file description of
 * files.img once, at fds >= ctx->service_fd_base; each task inherits all of
 * them through fork, so a description shared by several fds or processes is
 * one description again. A task then dup3()s the ones its fd table names to
 * their numbers and closes every other fd below the base.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_PREFIX "restore-files: "
#include "image.h"
#include "log.h"
#include "restore-files-anon.h"
#include "restore-files-fifo.h"
#include "restore-files-locks.h"
#include "restore-files-int.h"
#include "restore-files-pty.h"
#include "util.h"

/*
 * Flags a description is reopened with: nothing that creates or truncates,
 * never inherited by exec.
 */
static int open_flags(uint32_t flags)
{
	return (int)(flags & ~(uint32_t)(O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC | O_NOCTTY)) |
	       O_CLOEXEC | O_NOCTTY;
}

/*
 * open() that cannot block: a FIFO or a device put at the path since the dump
 * would wait for a peer. The type is checked after, O_NONBLOCK then dropped
 * unless the description had it.
 */
static int open_nonblock(const char *path, uint32_t flags)
{
	return open(path, open_flags(flags) | O_NONBLOCK);
}

static int drop_nonblock(int fd, uint32_t flags)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)))
		return neg_errno();
	return 0;
}

/* Move @fd (consumed) to the first free number >= the service fd base. */
static int to_service_fd(const struct restore_ctx *ctx, int fd)
{
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, ctx->service_fd_base);
	int err = nfd < 0 ? neg_errno() : 0;

	close(fd);
	return err ? err : nfd;
}

int rst_reopen_fd(int fd, uint32_t flags)
{
	char self[64];
	int nfd;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	nfd = open(self, open_flags(flags));
	return nfd < 0 ? neg_errno() : nfd;
}

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

	fd = open_nonblock(path, fe->reg->flags);
	if (fd < 0) {
		pr_perror("file %u: cannot open %s", fe->id, path);
		return neg_errno();
	}
	err = check_same_file(fe, path, fd);
	if (!err && !(fe->reg->flags & O_PATH))
		err = drop_nonblock(fd, fe->reg->flags);
	/* a directory's position is its file system's getdents cookie; O_PATH has none */
	if (!err && !(fe->reg->flags & O_PATH))
		err = seek_to(fd, fe->reg->pos, path);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* ---- character devices and the terminal -------------------------------------------------- */

/* Character device @fe at @path, checked to be the same device. */
static int chr_open(const FileEntry *fe, const char *path, uint32_t flags)
{
	struct stat st;
	int fd;

	if (!path) {
		pr_err("file %u: character device %llx has no path\n", fe->id,
		       (unsigned long long)fe->chr->rdev);
		return -EINVAL;
	}
	fd = open_nonblock(path, flags);
	if (fd < 0) {
		pr_perror("file %u: cannot open %s", fe->id, path);
		return neg_errno();
	}
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode) || (uint64_t)st.st_rdev != fe->chr->rdev) {
		pr_err("%s is not character device %llx any more\n", path,
		       (unsigned long long)fe->chr->rdev);
		close(fd);
		return -ESTALE;
	}
	if (drop_nonblock(fd, flags)) {
		close(fd);
		return -EIO;
	}
	return fd;
}

static int open_chr(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const char *path = ctx->files->paths[pos];
	int fd = chr_open(fe, path, fe->chr->flags);

	/* Most devices have no position (ESPIPE) or ignore it. */
	if (fd >= 0 && fe->chr->has_pos && fe->chr->pos &&
	    lseek(fd, (off_t)fe->chr->pos, SEEK_SET) < 0 && errno != ESPIPE)
		pr_warn("%s: cannot seek to %llu: %m\n", path, (unsigned long long)fe->chr->pos);
	return fd;
}

/* --shell-job: the controller's own terminal description, as a shell's children share it. */
static int open_tty(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	int fd;

	if (!ctx->opts->shell_job) {
		pr_err("file %u is the terminal of the dumped job: restore with --shell-job\n",
		       fe->id);
		return -EINVAL;
	}
	for (fd = 0; fd < 3; fd++) {
		if (isatty(fd)) {
			int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);

			return nfd < 0 ? neg_errno() : nfd;
		}
	}
	pr_err("file %u is a terminal, but criu-like has none on fds 0-2 to give it\n", fe->id);
	return -ENOTTY;
}

/* ---- the plan: read every image ----------------------------------------------------------- */

static int read_all_of(int dirfd, enum cr_img_kind kind, uint32_t id, bool optional,
		       ProtobufCMessage ***recs, size_t *n)
{
	struct cr_img *img = img_open(dirfd, kind, id, IMG_READ | (optional ? IMG_OPTIONAL : 0));
	int err, cerr;

	*recs = NULL;
	*n = 0;
	if (!img)
		return optional && errno == ENOENT ? 0 : neg_errno();
	err = img_read_all(img, recs, n);
	cerr = img_close(img);
	return err ? err : cerr;
}

static char *bytes_dup(const ProtobufCBinaryData *b)
{
	if (memchr(b->data, 0, b->len)) {
		errno = EINVAL;
		return NULL;
	}
	return strndup((const char *)b->data, b->len);
}

static int index_files(struct rst_files *f)
{
	size_t i;
	int err;

	err = rst_file_index_build(&f->idx, (FileEntry **)f->file_recs, f->nr_file_recs);
	if (err)
		return err;
	f->paths = calloc(f->idx.n + 1, sizeof(*f->paths));
	f->fds = malloc((f->idx.n + 1) * sizeof(*f->fds));
	if (!f->paths || !f->fds)
		return -ENOMEM;
	for (i = 0; i < f->idx.n; i++) {
		const FileEntry *fe = f->idx.by_id[i];
		const ProtobufCBinaryData *p = NULL;

		f->fds[i] = -1;
		if (fe->reg)
			p = &fe->reg->path;
		else if (fe->chr && fe->chr->has_path)
			p = &fe->chr->path;
		else if (fe->fifo)
			p = &fe->fifo->path;
		if (!p)
			continue;
		f->paths[i] = bytes_dup(p);
		if (!f->paths[i]) {
			pr_err("files.img: file %u: bad path\n", fe->id);
			return -EINVAL;
		}
	}
	return 0;
}

static int read_task_files(struct restore_ctx *ctx, struct rst_task *t)
{
	pid_t pid = (pid_t)t->pe->pid;
	struct rst_task_files *tf;
	int err;

	tf = calloc(1, sizeof(*tf));
	if (!tf)
		return -ENOMEM;
	t->files = tf;
	if (rst_task_zombie(t))
		return 0;
	err = read_all_of(ctx->dirfd, CR_IMG_FDINFO, (uint32_t)pid, false, &tf->recs, &tf->nr_recs);
	if (err)
		return err;
	tf->fds = (FdEntry **)tf->recs;
	tf->nr_fds = tf->nr_recs;
	err = rst_fd_plan_check(tf, &ctx->files->idx, pid);
	if (err)
		return err;
	return img_read_one(ctx->dirfd, CR_IMG_FS, (uint32_t)pid, (ProtobufCMessage **)&tf->fs);
}

static bool dumped_files(const InventoryEntry *inv)
{
	size_t i;

	for (i = 0; i < inv->n_dumped; i++)
		if (inv->dumped[i] == DUMPED_PART__PART_FILES)
			return true;
	return false;
}

int rst_files_read(struct restore_ctx *ctx)
{
	struct rst_files *f;
	unsigned int i;
	int err;

	if (!dumped_files(ctx->inv)) {
		pr_err("the images hold no files (inventory.img lacks PART_FILES): "
		       "nothing to give the tasks their fds\n");
		return -EINVAL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	ctx->files = f;
	err = read_all_of(ctx->dirfd, CR_IMG_FILES, 0, false, &f->file_recs, &f->nr_file_recs);
	if (!err)
		err = read_all_of(ctx->dirfd, CR_IMG_PIPES_DATA, 0, true, &f->pipe_recs,
				  &f->nr_pipe_recs);
	if (!err)
		err = index_files(f);
	for (i = 0; !err && i < ctx->nr_tasks; i++)
		err = read_task_files(ctx, &ctx->tasks[i]);
	return err;
}

size_t rst_files_count(const struct restore_ctx *ctx)
{
	return ctx->files ? ctx->files->idx.n : 0;
}

/* ---- the controller: open every description once ---------------------------------------- */

static int open_one(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];

	switch (fe->type) {
	case FILE_TYPE__FILE_REG:
	case FILE_TYPE__FILE_DIR:
		return open_reg(ctx, pos);
	case FILE_TYPE__FILE_PIPE:
		return rst_pipe_open(ctx, pos);
	case FILE_TYPE__FILE_CHR:
		return open_chr(ctx, pos);
	case FILE_TYPE__FILE_TTY:
		return open_tty(ctx, pos);
	case FILE_TYPE__FILE_EVENTFD:
	case FILE_TYPE__FILE_SIGNALFD:
	case FILE_TYPE__FILE_TIMERFD:
	case FILE_TYPE__FILE_INOTIFY:
		return rst_anonfd_open(ctx, pos);
	case FILE_TYPE__FILE_EPOLL:
		return rst_epoll_open(ctx, pos);
	case FILE_TYPE__FILE_UNIXSK:
		return rst_unix_open(ctx, pos);
	case FILE_TYPE__FILE_FIFO:
		return rst_fifo_open(ctx, pos);
	case FILE_TYPE__FILE_PTY:
		return rst_pty_open(ctx, pos);
	case FILE_TYPE__FILE_INETSK:
		return rst_inet_open(ctx, pos);
	case FILE_TYPE__FILE_FANOTIFY:
		return rst_fanotify_open(ctx, pos);
	default:
		break;
	}
	pr_err("file %u: unknown type %d\n", fe->id, fe->type);
	return -EINVAL;
}

int rst_files_open(struct restore_ctx *ctx)
{
	struct rst_files *f = ctx->files;
	size_t i;
	int fd, err = 0;

	for (i = 0; i < f->idx.n; i++) {
		fd = open_one(ctx, i);
		if (fd >= 0)
			fd = to_service_fd(ctx, fd);
		if (fd < 0) {
			err = fd;
			pr_errno(err, "file %u (%s) cannot be restored", f->idx.by_id[i]->id,
				 f->paths[i] ? f->paths[i] : "no path");
			break;
		}
		f->fds[i] = fd;
		/* flock and OFD locks belong to the description: taken once, here */
		err = rst_locks_desc(ctx, i);
		if (err)
			break;
	}
	/* Fds in flight: every description they name is open now. */
	if (!err)
		err = rst_unix_late(ctx);
	/* The pipe ends that no description took (a writer that was closed: EOF after the data). */
	rst_pipes_close(f);
	return err;
}

/* ---- the task: install its fd table ------------------------------------------------------- */

static long file_pos(const struct rst_files *f, uint32_t id)
{
	return rst_file_index_pos(&f->idx, id);
}

static int close_below(int from, int to)
{
	if (from < to && close_range((unsigned int)from, (unsigned int)to - 1, 0))
		return neg_errno();
	return 0;
}

int rst_files_install(struct restore_ctx *ctx, struct rst_task *t)
{
	const struct rst_task_files *tf = t->files;
	const struct rst_files *f = ctx->files;
	int next = 0, err;
	size_t i;

	for (i = 0; i < tf->nr_fds; i++) {
		const FdEntry *fd = tf->fds[i];
		long pos = file_pos(f, fd->id);
		int src = pos >= 0 ? f->fds[pos] : -1;

		/* dup3() onto a number that is open closes it: the controller's stdio, here */
		if (src < 0 || dup3(src, (int)fd->fd, fd->cloexec ? O_CLOEXEC : 0) < 0) {
			err = src < 0 ? -EBADF : neg_errno();
			pr_errno(err, "pid %u: cannot install fd %u (file %u)", t->pe->pid, fd->fd,
				 fd->id);
			return err;
		}
		err = close_below(next, (int)fd->fd);
		if (err)
			return err;
		next = (int)fd->fd + 1;
	}
	err = close_below(next, ctx->service_fd_base);
	if (err) {
		pr_errno(err, "pid %u: cannot close the fds it did not have", t->pe->pid);
		return err;
	}
	/*
	 * epoll keys its targets by the task's own fd numbers, only right now;
	 * timerfds start counting when the first task holding them is this far
	 */
	err = rst_anonfd_post_install(ctx, t);
	/* POSIX locks belong to the process: taken by it, through its own fds */
	return err ? err : rst_locks_post_install(ctx, t);
}

int rst_fs_restore(struct restore_ctx *ctx __unused, struct rst_task *t)
{
	const FsEntry *fs = ((struct rst_task_files *)t->files)->fs;
	_cleanup_free_ char *cwd = bytes_dup(&fs->cwd);
	_cleanup_free_ char *root = bytes_dup(&fs->root);

	if (!cwd || !root) {
		pr_err("fs-%u.img: bad cwd or root\n", t->pe->pid);
		return -EINVAL;
	}
	/* /proc shows the cwd from the dumper's root: enter it before changing root */
	if (chdir(cwd)) {
		pr_perror("pid %u: cannot enter its working directory %s", t->pe->pid, cwd);
		return neg_errno();
	}
	if (strcmp(root, "/") && chroot(root)) {
		pr_perror("pid %u: cannot change its root to %s", t->pe->pid, root);
		return neg_errno();
	}
	umask((mode_t)fs->umask);
	return 0;
}

/* ---- for the restorer: file mappings and the exe link ------------------------------------- */

const char *rst_file_path(const struct restore_ctx *ctx, uint32_t id)
{
	long pos = ctx->files ? file_pos(ctx->files, id) : -1;

	return pos >= 0 ? ctx->files->paths[pos] : NULL;
}

/* Without a description to reopen: the path, checked like the dumped file. */
static int file_open_path(const FileEntry *fe, const char *path, int flags)
{
	int fd, err;

	if (fe->type == FILE_TYPE__FILE_CHR)
		return chr_open(fe, path, (uint32_t)flags);
	if (fe->reg->has_unlinked && fe->reg->unlinked) {
		pr_err("unlinked file %u (%s) has not been rebuilt\n", fe->id, path);
		return -ENOENT;
	}
	fd = open_nonblock(path, (uint32_t)flags);
	if (fd < 0) {
		pr_perror("file %u: cannot open %s", fe->id, path);
		return neg_errno();
	}
	err = check_same_file(fe, path, fd);
	if (!err && !(flags & O_PATH))
		err = drop_nonblock(fd, (uint32_t)flags);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int rst_file_open(struct restore_ctx *ctx, uint32_t id, int flags)
{
	const struct rst_files *f = ctx->files;
	long pos = f ? file_pos(f, id) : -1;
	const FileEntry *fe;
	int fd;

	if (pos < 0) {
		pr_err("file %u is not in files.img\n", id);
		return -ENOENT;
	}
	fe = f->idx.by_id[pos];
	if (fe->type != FILE_TYPE__FILE_REG && fe->type != FILE_TYPE__FILE_DIR &&
	    fe->type != FILE_TYPE__FILE_CHR) {
		pr_err("file %u is a pipe or a terminal: it cannot back a mapping\n", id);
		return -EINVAL;
	}
	/* The description opened (and checked, or rebuilt from its ghost) by rst_files_open(). */
	if (f->fds[pos] >= 0) {
		fd = rst_reopen_fd(f->fds[pos], (uint32_t)flags);
		if (fd >= 0)
			return fd;
	}
	return file_open_path(fe, f->paths[pos], flags);
}

/* ---- cleanup --------------------------------------------------------------------------------- */

static void free_task_files(struct rst_task *t)
{
	struct rst_task_files *tf = t->files;

	if (!tf)
		return;
	img_free_records(tf->recs, tf->nr_recs);
	if (tf->fs)
		protobuf_c_message_free_unpacked(&tf->fs->base, NULL);
	free(tf);
	t->files = NULL;
}

void rst_files_fini(struct restore_ctx *ctx)
{
	struct rst_files *f = ctx->files;
	unsigned int i;
	size_t j;

	for (i = 0; i < ctx->nr_tasks; i++)
		free_task_files(&ctx->tasks[i]);
	if (!f)
		return;
	rst_pipes_close(f);
	rst_unix_late_fini(f);
	for (j = 0; j < f->idx.n; j++) {
		if (f->fds && f->fds[j] >= 0)
			close(f->fds[j]);
		if (f->paths)
			free(f->paths[j]);
	}
	free(f->fds);
	free(f->paths);
	rst_file_index_free(&f->idx);
	img_free_records(f->file_recs, f->nr_file_recs);
	img_free_records(f->pipe_recs, f->nr_pipe_recs);
	free(f);
	ctx->files = NULL;
}
