// SPDX-License-Identifier: GPL-2.0
/*
 * File locks of a restore. flock() and OFD locks belong to the open file
 * description: the controller takes them once, on the description it opened
 * before forking, and every task holding it inherits them. A POSIX lock
 * belongs to a process (its fd table): the owner takes it after its fds are
 * installed, through its own fd of the description. Closing any fd of a file
 * releases the POSIX locks of the process on that file (fs/locks.c
 * locks_remove_posix()), so the owner first closes the service fds it
 * inherited on that file, which it would close later anyway; the dump
 * refused processes mapping a file they hold POSIX locks on.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_PREFIX "restore-files: "
#include "log.h"
#include "locks.h"
#include "util.h"

static const char *lock_kind_name(const FileLockEntry *l)
{
	switch (l->kind) {
	case FILE_LOCK_KIND__LOCK_FLOCK:
		return "flock";
	case FILE_LOCK_KIND__LOCK_POSIX:
		return "POSIX";
	case FILE_LOCK_KIND__LOCK_OFD:
		return "OFD";
	default:
		return "unknown";
	}
}

/* struct flock of a POSIX or OFD entry; -EINVAL when the range does not fit off_t. */
static int lock_range(const FileLockEntry *l, struct flock *fl)
{
	if (!l->has_start || !l->has_len || l->start > INT64_MAX || l->len > INT64_MAX)
		return -EINVAL;
	fl->l_type = l->write ? F_WRLCK : F_RDLCK;
	fl->l_whence = SEEK_SET;
	fl->l_start = (off_t)l->start;
	fl->l_len = (off_t)l->len;
	fl->l_pid = 0; /* F_OFD_SETLK requires it */
	return 0;
}

/* Take @l (of file @fe) through @fd. */
static int lock_take(const FileEntry *fe, const FileLockEntry *l, int fd, const char *path)
{
	struct flock fl;
	int err = 0;

	if (l->kind == FILE_LOCK_KIND__LOCK_FLOCK) {
		if (flock(fd, (l->write ? LOCK_EX : LOCK_SH) | LOCK_NB))
			err = neg_errno();
	} else if (l->kind == FILE_LOCK_KIND__LOCK_POSIX || l->kind == FILE_LOCK_KIND__LOCK_OFD) {
		err = lock_range(l, &fl);
		if (err) {
			pr_err("files.img: file %u: bad lock range\n", fe->id);
			return err;
		}
		if (fcntl(fd, l->kind == FILE_LOCK_KIND__LOCK_OFD ? F_OFD_SETLK : F_SETLK, &fl))
			err = neg_errno();
	} else {
		pr_err("files.img: file %u: unknown lock kind %d\n", fe->id, l->kind);
		return -EINVAL;
	}
	if (err)
		pr_errno(err, "file %u (%s): cannot take its %s %s lock%s", fe->id, path,
			 lock_kind_name(l), l->write ? "write" : "read",
			 err == -EAGAIN || err == -EWOULDBLOCK ? " (held by another process)" : "");
	return err;
}

int rst_locks_desc(struct restore_ctx *ctx, size_t pos)
{
	const struct rst_files *f = ctx->files;
	const FileEntry *fe = f->idx.by_id[pos];
	const char *path = f->paths[pos] ? f->paths[pos] : "?";
	size_t i;
	int err;

	if (!fe->reg)
		return 0;
	for (i = 0; i < fe->reg->n_locks; i++) {
		const FileLockEntry *l = fe->reg->locks[i];

		if (l->kind == FILE_LOCK_KIND__LOCK_POSIX) {
			const struct rst_task *t = rst_find_task(ctx, (pid_t)l->owner_pid);

			/* the owner's, in rst_locks_post_install(): it must be there to take it */
			if (!l->has_owner_pid || !t || rst_task_zombie(t)) {
				pr_err("files.img: file %u (%s): POSIX lock of pid %u, which is "
				       "not "
				       "a live task of the tree\n",
				       fe->id, path, l->owner_pid);
				return -EINVAL;
			}
			continue;
		}
		err = lock_take(fe, l, f->fds[pos], path);
		if (err)
			return err;
	}
	return 0;
}

static bool owns_posix_lock(const FileEntry *fe, pid_t pid)
{
	size_t i;

	for (i = 0; fe->reg && i < fe->reg->n_locks; i++)
		if (fe->reg->locks[i]->kind == FILE_LOCK_KIND__LOCK_POSIX &&
		    fe->reg->locks[i]->owner_pid == (uint32_t)pid)
			return true;
	return false;
}

/* Close this task's copies of the service fds on the file of @fd (it has its own fds). */
static int close_service_copies(struct rst_files *f, int fd)
{
	struct stat st, o;
	size_t j;

	if (fstat(fd, &st))
		return neg_errno();
	for (j = 0; j < f->idx.n; j++) {
		if (f->fds[j] < 0 || fstat(f->fds[j], &o) || o.st_dev != st.st_dev ||
		    o.st_ino != st.st_ino)
			continue;
		close(f->fds[j]);
		f->fds[j] = -1; /* this task's copy of the table only */
	}
	return 0;
}

/* The fd number of task @t for file @id, or -1. */
static int task_fd_of(const struct rst_task *t, uint32_t id)
{
	const struct rst_task_files *tf = t->files;
	size_t i;

	for (i = 0; i < tf->nr_fds; i++)
		if (tf->fds[i]->id == id)
			return (int)tf->fds[i]->fd;
	return -1;
}

int rst_locks_post_install(struct restore_ctx *ctx, struct rst_task *t)
{
	struct rst_files *f = ctx->files;
	pid_t pid = (pid_t)t->pe->pid;
	size_t pos, i;
	int fd, err;

	for (pos = 0; pos < f->idx.n; pos++) {
		const FileEntry *fe = f->idx.by_id[pos];
		const char *path = f->paths[pos] ? f->paths[pos] : "?";

		if (!owns_posix_lock(fe, pid))
			continue;
		fd = task_fd_of(t, fe->id);
		if (fd < 0) {
			pr_err("pid %d owns POSIX locks on file %u (%s) but has no fd of it\n", pid,
			       fe->id, path);
			return -EINVAL;
		}
		err = close_service_copies(f, fd);
		if (err) {
			pr_errno(err, "pid %d: cannot close its service fds on %s", pid, path);
			return err;
		}
		for (i = 0; i < fe->reg->n_locks; i++) {
			const FileLockEntry *l = fe->reg->locks[i];

			if (l->kind != FILE_LOCK_KIND__LOCK_POSIX || l->owner_pid != (uint32_t)pid)
				continue;
			err = lock_take(fe, l, fd, path);
			if (err)
				return err;
		}
		pr_debug("pid %d: POSIX locks on %s taken through fd %d\n", pid, path, fd);
	}
	return 0;
}
