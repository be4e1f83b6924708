// SPDX-License-Identifier: GPL-2.0
/*
 * File locks (--file-locks), from the "lock:" lines of /proc/PID/fdinfo/N.
 * The kernel shows there (fs/locks.c show_fd_locks()) the locks taken through
 * that very description: flock() and OFD locks, which belong to the
 * description, in every process holding it; a POSIX lock only in the process
 * that owns it, on its fds of the description it was taken through. They are
 * saved with that description (RegFileEntry.locks, so only regular files and
 * directories can hold them): flock and OFD locks once, POSIX locks once per
 * owner. Leases (F_SETLEASE) belong to the description too and are saved
 * with it; a lease whose break is pending (another process opening the file
 * waits for its holder) is saved with its target type and its break started
 * again at restore (lease_break_again()). Delegations and any lock without
 * --file-locks are refused.
 *
 * At restore, flock() and OFD locks belong to the open file description: the
 * controller takes them once, on the description it opened before forking,
 * and every task holding it inherits them. A POSIX lock belongs to a process
 * (its fd table): the owner takes it after its fds are installed, through its
 * own fd of the description. Closing any fd of a file releases the POSIX locks
 * of the process on that file (fs/locks.c locks_remove_posix()), so the owner
 * first closes the service fds it inherited on that file, which it would close
 * later anyway; the dump refused processes mapping a file they hold POSIX
 * locks on. files.c and restore-files.c call these for every description.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "files-int.h"
#include "locks.h"
#include "reg.h"
#include "log.h"
#include "ns.h"
#include "restore-files-int.h"
#include "util.h"

/*
 * A lease whose break is pending: /proc shows its target type, READ for a
 * write lease an open for reading is downgrading, UNLCK for one being given
 * up, which was a read or a write lease: write here, locks_add() makes it a
 * read one on a read-only description.
 */
static int lease_breaking_entry(const struct fdinfo_lock *l, pid_t pid, FileLockEntry *e)
{
	e->kind = FILE_LOCK_KIND__LOCK_LEASE;
	e->has_breaking = e->breaking = true;
	e->has_break_to_read = true;
	if (!strcmp(l->type, "READ"))
		e->break_to_read = true;
	else if (strcmp(l->type, "UNLCK"))
		return -EOPNOTSUPP;
	e->write = true;
	e->has_owner_pid = true;
	e->owner_pid = (uint32_t)pidns_vpid(pid);
	return 0;
}

int lock_entry_from_fdinfo(const struct fdinfo_lock *l, pid_t pid, FileLockEntry *e)
{
	file_lock_entry__init(e);
	if (!strcmp(l->lclass, "FLOCK"))
		e->kind = FILE_LOCK_KIND__LOCK_FLOCK;
	else if (!strcmp(l->lclass, "POSIX"))
		e->kind = FILE_LOCK_KIND__LOCK_POSIX;
	else if (!strcmp(l->lclass, "OFDLCK"))
		e->kind = FILE_LOCK_KIND__LOCK_OFD;
	else if (!strcmp(l->lclass, "LEASE") && !strcmp(l->sub, "ACTIVE"))
		e->kind = FILE_LOCK_KIND__LOCK_LEASE;
	else if (!strcmp(l->lclass, "LEASE") && !strcmp(l->sub, "BREAKING"))
		return lease_breaking_entry(l, pid, e);
	else if (!strcmp(l->lclass, "LEASE"))
		return -EBUSY; /* BREAKER: not the holder's */
	else
		return -EOPNOTSUPP; /* DELEG, ACCESS (mandatory, before 5.15) */
	if (!strcmp(l->type, "WRITE"))
		e->write = true;
	else if (strcmp(l->type, "READ"))
		return -EOPNOTSUPP;
	if (e->kind == FILE_LOCK_KIND__LOCK_LEASE) {
		/* taken at restore by the first task seen holding it, through its fd */
		e->has_owner_pid = true;
		e->owner_pid = (uint32_t)pidns_vpid(pid);
	}
	if (e->kind == FILE_LOCK_KIND__LOCK_FLOCK || e->kind == FILE_LOCK_KIND__LOCK_LEASE)
		return 0;
	if (l->start < 0 || (l->end != -1 && l->end < l->start))
		return -EINVAL;
	e->has_start = e->has_len = true;
	e->start = (uint64_t)l->start;
	/* "EOF": to the end of the file whatever it grows to, l_len 0 */
	e->len = l->end == -1 ? 0 : (uint64_t)(l->end - l->start) + 1;
	if (e->kind == FILE_LOCK_KIND__LOCK_POSIX) {
		e->has_owner_pid = true;
		e->owner_pid = (uint32_t)pidns_vpid(pid);
	}
	return 0;
}

bool lock_entry_same(const FileLockEntry *a, const FileLockEntry *b)
{
	/* one lease per description, whichever task it is seen through */
	if (a->kind == FILE_LOCK_KIND__LOCK_LEASE || b->kind == FILE_LOCK_KIND__LOCK_LEASE)
		return a->kind == b->kind && a->write == b->write && a->breaking == b->breaking &&
		       a->break_to_read == b->break_to_read;
	return a->kind == b->kind && a->write == b->write && a->owner_pid == b->owner_pid &&
	       a->start == b->start && a->len == b->len;
}

/*
 * @e into the entry @r of a description, once: the locks live in @r itself
 * (each entry malloc'ed), freed by locks_free().
 */
static int lock_set_add(RegFileEntry *r, const FileLockEntry *e)
{
	FileLockEntry **v, *ne;
	size_t i;

	for (i = 0; i < r->n_locks; i++)
		if (lock_entry_same(r->locks[i], e))
			return 0; /* seen through another fd of the description */
	v = realloc(r->locks, (r->n_locks + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->locks = v;
	ne = malloc(sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	*ne = *e;
	r->locks[r->n_locks++] = ne;
	return 0;
}

void locks_free(struct file_desc *d)
{
	RegFileEntry *r = d->fe.reg;
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n_locks; i++)
		free(r->locks[i]);
	free(r->locks);
	r->locks = NULL;
	r->n_locks = 0;
}

int locks_check(const struct dump_ctx *ctx, const struct fd_info *f)
{
	if (!f->n_locks || ctx->opts->file_locks)
		return 0;
	pr_err("pid %d fd %d: %s holds a file lock (%s): dump with --file-locks\n", f->pid, f->fd,
	       f->link, f->locks[0].line);
	return -EOPNOTSUPP;
}

/*
 * A process mapping the file it holds POSIX locks on would drop them at
 * restore: mapping the file opens it again, and the close of any fd of an
 * inode releases the process's POSIX locks on it (fs/locks.c
 * locks_remove_posix()). Refused.
 */
static int check_not_mapped(const struct fd_info *f, const char *what)
{
	_cleanup_fclose_ FILE *maps = NULL;
	unsigned long ino;
	unsigned int maj, mnr;
	char path[64], line[512];

	snprintf(path, sizeof(path), "/proc/%d/maps", f->pid);
	maps = fopen(path, "re");
	if (!maps) {
		pr_perror("cannot open %s", path);
		return neg_errno();
	}
	while (fgets(line, sizeof(line), maps)) {
		if (sscanf(line, "%*x-%*x %*s %*x %x:%x %lu", &maj, &mnr, &ino) != 3)
			continue;
		if (ino == f->st.st_ino && maj == major(f->st.st_dev) &&
		    mnr == minor(f->st.st_dev)) {
			pr_err("pid %d fd %d: %s holds a %s on a file it also maps: not "
			       "supported yet\n",
			       f->pid, f->fd, f->link, what);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

int locks_add(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	unsigned int i;
	int err;

	err = locks_check(ctx, f);
	if (err)
		return err;
	if (!d->fe.reg) {
		pr_err("pid %d fd %d: a lock on %s, which is not a regular file or a directory: "
		       "not supported yet\n",
		       f->pid, f->fd, f->link);
		return -EOPNOTSUPP;
	}
	for (i = 0; i < f->n_locks; i++) {
		const struct fdinfo_lock *l = &f->locks[i];
		FileLockEntry e;

		if (l->ino != (uint64_t)f->st.st_ino) {
			pr_err("pid %d fd %d: lock \"%s\" is not on %s (inode %llu)\n", f->pid,
			       f->fd, l->line, f->link, (unsigned long long)f->st.st_ino);
			return -EINVAL;
		}
		err = lock_entry_from_fdinfo(l, f->pid, &e);
		if (err == -EOPNOTSUPP)
			pr_err("pid %d fd %d: %s holds \"%s\": only flock, POSIX and OFD locks "
			       "and leases are supported\n",
			       f->pid, f->fd, f->link, l->line);
		else if (err == -EBUSY)
			pr_err("pid %d fd %d: %s shows a lease line of no holder (\"%s\"): not "
			       "supported\n",
			       f->pid, f->fd, f->link, l->line);
		else if (err)
			pr_err("pid %d fd %d: bad lock line \"%s\"\n", f->pid, f->fd, l->line);
		if (err == -EBUSY)
			err = -EOPNOTSUPP;
		/*
		 * Mapping the file at restore opens it again: a POSIX lock would go
		 * with the close, a lease be broken by the open (the restore waiting
		 * for its own lease).
		 */
		if (!err && e.kind == FILE_LOCK_KIND__LOCK_POSIX)
			err = check_not_mapped(f, "POSIX lock");
		if (!err && e.kind == FILE_LOCK_KIND__LOCK_LEASE)
			err = check_not_mapped(f, "lease");
		/* being given up: a read lease if the description cannot hold a write one */
		if (!err && e.breaking && !e.break_to_read && (f->flags & O_ACCMODE) == O_RDONLY)
			e.write = false;
		/*
		 * F_SETLEASE wants the file's owner as fsuid or CAP_LEASE in the
		 * initial user namespace: a task restored in the tree's own user
		 * namespace is criu-like's uid 0 until its last step, with its
		 * capabilities there only.
		 */
		if (!err && e.kind == FILE_LOCK_KIND__LOCK_LEASE && ns_user_own() && f->st.st_uid) {
			pr_err("pid %d fd %d: %s holds a lease on a file of uid %u in a tree with "
			       "a "
			       "user namespace of its own: not restored yet (F_SETLEASE asks for "
			       "the "
			       "owner's fsuid or CAP_LEASE over the host, a restoring task has "
			       "neither)\n",
			       f->pid, f->fd, f->link, (unsigned int)f->st.st_uid);
			err = -EOPNOTSUPP;
		}
		if (!err)
			err = lock_set_add(d->fe.reg, &e);
		if (err)
			return err;
		pr_debug("pid %d fd %d: %s: lock %s\n", f->pid, f->fd, f->link, l->line);
	}
	return 0;
}

/* ---- restore: the messages keep the restore's prefix ---------------------------------------- */
static const char *lock_kind_name(const FileLockEntry *l)
{
	switch (l->kind) {
	case FILE_LOCK_KIND__LOCK_FLOCK:
		return "flock";
	case FILE_LOCK_KIND__LOCK_POSIX:
		return "POSIX";
	case FILE_LOCK_KIND__LOCK_OFD:
		return "OFD";
	case FILE_LOCK_KIND__LOCK_LEASE:
		return "lease";
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
	} else if (l->kind == FILE_LOCK_KIND__LOCK_LEASE) {
		/* a read lease wants a read-only description and no writer, a write one no other open */
		if (fcntl(fd, F_SETLEASE, l->write ? F_WRLCK : F_RDLCK))
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

		if (l->kind == FILE_LOCK_KIND__LOCK_POSIX ||
		    l->kind == FILE_LOCK_KIND__LOCK_LEASE) {
			const struct rst_task *t = rst_find_task(ctx, (pid_t)l->owner_pid);

			/* the owner's, in the task: it must be there to take it */
			if (!l->has_owner_pid || !t || rst_task_zombie(t)) {
				pr_err("files.img: file %u (%s): %s of pid %u, which is not a live "
				       "task of the tree\n",
				       fe->id, path, lock_kind_name(l), l->owner_pid);
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

/*
 * The break of the lease just taken through @fd started again: an open of the
 * file that does not wait (O_NONBLOCK) starts it and fails with EWOULDBLOCK,
 * for writing to give the lease up (F_UNLCK), for reading to downgrade it.
 * The break signal goes to the file's owner, which the holder saw once
 * already (or has pending, restored with its signals): the owner is cleared
 * first, so that nobody gets it, and rst_fown_installed() sets it as it was.
 * An opener of the tree blocked in open() restarts it and joins this break.
 * The break time starts again in full (/proc/sys/fs/lease-break-time).
 */
static int lease_break_again(const FileEntry *fe, const FileLockEntry *l, int fd, const char *path)
{
	char self[64];
	int nfd, err;

	if (fcntl(fd, F_SETOWN, 0)) {
		err = neg_errno();
		pr_errno(err, "file %u (%s): cannot clear its owner", fe->id, path);
		return err;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	nfd = open(self, (l->break_to_read ? O_RDONLY : O_WRONLY) | O_NONBLOCK | O_CLOEXEC);
	if (nfd >= 0) {
		close(nfd);
		pr_err("file %u (%s): the open that breaks its lease went through\n", fe->id, path);
		return -EIO;
	}
	if (errno != EWOULDBLOCK) {
		err = neg_errno();
		pr_errno(err, "file %u (%s): cannot start the break of its lease again", fe->id,
			 path);
		return err;
	}
	pr_debug("file %u (%s): the break of its lease (to %s) started again\n", fe->id, path,
		 l->break_to_read ? "read" : "none");
	return 0;
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

/* The fd number of task @t for file @id, or -ENOENT. */
static int task_fd_of(const struct rst_task *t, uint32_t id)
{
	const struct rst_task_files *tf = t->files;
	size_t i;

	for (i = 0; i < tf->nr_fds; i++)
		if (tf->fds[i]->id == id)
			return (int)tf->fds[i]->fd;
	return -ENOENT;
}

static bool owns_kind(const FileEntry *fe, FileLockKind kind, pid_t pid)
{
	size_t i;

	for (i = 0; fe->reg && i < fe->reg->n_locks; i++)
		if (fe->reg->locks[i]->kind == kind &&
		    fe->reg->locks[i]->owner_pid == (uint32_t)pid)
			return true;
	return false;
}

/*
 * In task @t: every lock of @kind it owns, taken through its own fd of the
 * description (the first); POSIX locks after closing the task's service
 * copies of the file, whose close would drop them.
 */
static int take_owned(struct restore_ctx *ctx, struct rst_task *t, FileLockKind kind)
{
	const struct rst_kind *k = rst_kind_get(ctx, &reg_kind);
	struct rst_files *f = ctx->files;
	pid_t pid = (pid_t)t->pe->pid;
	size_t n, i;
	int fd, err;

	/* only regular files and directories hold locks (RegFileEntry.locks) */
	for (n = 0; n < k->n; n++) {
		size_t pos = k->pos[n];
		const FileEntry *fe = f->idx.by_id[pos];
		const char *path = f->paths[pos] ? f->paths[pos] : "?";
		const char *what = kind == FILE_LOCK_KIND__LOCK_POSIX ? "POSIX locks" : "a lease";

		if (!owns_kind(fe, kind, pid))
			continue;
		fd = task_fd_of(t, fe->id);
		if (fd < 0) {
			pr_err("pid %d holds %s on file %u (%s) but has no fd of it\n", pid, what,
			       fe->id, path);
			return -EINVAL;
		}
		err = kind == FILE_LOCK_KIND__LOCK_POSIX ? close_service_copies(f, fd) : 0;
		if (err) {
			pr_errno(err, "pid %d: cannot close its service fds on %s", pid, path);
			return err;
		}
		for (i = 0; i < fe->reg->n_locks; i++) {
			const FileLockEntry *l = fe->reg->locks[i];

			if (l->kind != kind || l->owner_pid != (uint32_t)pid)
				continue;
			err = lock_take(fe, l, fd, path);
			if (!err && l->breaking)
				err = lease_break_again(fe, l, fd, path);
			if (err)
				return err;
		}
		pr_debug("pid %d: %s on %s taken through fd %d\n", pid, what, path, fd);
	}
	return 0;
}

int rst_locks_post_install(struct restore_ctx *ctx, struct rst_task *t)
{
	return take_owned(ctx, t, FILE_LOCK_KIND__LOCK_POSIX);
}

/*
 * Leases of the descriptions @t took them through at the dump, through its
 * first fd of each: the break signal's si_fd is the fd F_SETLEASE was given,
 * and F_SETLEASE makes the caller the owner, which rst_fown_installed() then
 * sets as it was.
 */
int rst_leases_installed(struct restore_ctx *ctx, struct rst_task *t)
{
	return take_owned(ctx, t, FILE_LOCK_KIND__LOCK_LEASE);
}
