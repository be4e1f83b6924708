// SPDX-License-Identifier: GPL-2.0
/*
 * File locks (--file-locks), from the "lock:" lines of /proc/PID/fdinfo/N.
 * The kernel shows there (fs/locks.c show_fd_locks()) the locks taken through
 * that very description: flock() and OFD locks, which belong to the
 * description, in every process holding it; a POSIX lock only in the process
 * that owns it, on its fds of the description it was taken through. They are
 * saved with that description (RegFileEntry.locks): flock and OFD locks once,
 * POSIX locks once per owner. Leases and delegations are refused, and so is
 * any lock without --file-locks.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "files-int.h"
#include "log.h"
#include "util.h"

struct lock_set {
	size_t n, cap;
	FileLockEntry *e; /* the entries... */
	FileLockEntry **p; /* ...and the pointers RegFileEntry.locks needs */
};

int lock_entry_from_fdinfo(const struct fdinfo_lock *l, pid_t pid, FileLockEntry *e)
{
	file_lock_entry__init(e);
	if (!strcmp(l->lclass, "FLOCK"))
		e->kind = FILE_LOCK_KIND__LOCK_FLOCK;
	else if (!strcmp(l->lclass, "POSIX"))
		e->kind = FILE_LOCK_KIND__LOCK_POSIX;
	else if (!strcmp(l->lclass, "OFDLCK"))
		e->kind = FILE_LOCK_KIND__LOCK_OFD;
	else
		return -EOPNOTSUPP; /* LEASE, DELEG, ACCESS (mandatory, before 5.15) */
	if (!strcmp(l->type, "WRITE"))
		e->write = true;
	else if (strcmp(l->type, "READ"))
		return -EOPNOTSUPP;
	if (e->kind == FILE_LOCK_KIND__LOCK_FLOCK)
		return 0;
	if (l->start < 0 || (l->end != -1 && l->end < l->start))
		return -EINVAL;
	e->has_start = e->has_len = true;
	e->start = (uint64_t)l->start;
	/* "EOF": to the end of the file whatever it grows to, l_len 0 */
	e->len = l->end == -1 ? 0 : (uint64_t)(l->end - l->start) + 1;
	if (e->kind == FILE_LOCK_KIND__LOCK_POSIX) {
		e->has_owner_pid = true;
		e->owner_pid = (uint32_t)pid;
	}
	return 0;
}

bool lock_entry_same(const FileLockEntry *a, const FileLockEntry *b)
{
	return a->kind == b->kind && a->write == b->write && a->owner_pid == b->owner_pid &&
	       a->start == b->start && a->len == b->len;
}

static int lock_set_add(struct file_desc *d, const FileLockEntry *e)
{
	struct lock_set *s = d->locks;
	size_t i;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		d->locks = s;
	}
	for (i = 0; i < s->n; i++)
		if (lock_entry_same(&s->e[i], e))
			return 0; /* seen through another fd of the description */
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4;
		FileLockEntry *ne = realloc(s->e, cap * sizeof(*ne));
		FileLockEntry **np;

		if (!ne)
			return -ENOMEM;
		s->e = ne;
		np = realloc(s->p, cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		s->p = np;
		s->cap = cap;
	}
	s->e[s->n++] = *e;
	for (i = 0; i < s->n; i++)
		s->p[i] = &s->e[i];
	d->reg.locks = s->p;
	d->reg.n_locks = s->n;
	return 0;
}

void locks_free(struct file_desc *d)
{
	struct lock_set *s = d->locks;

	if (!s)
		return;
	free(s->e);
	free(s->p);
	free(s);
	d->locks = NULL;
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
static int check_not_mapped(const struct fd_info *f)
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
			pr_err("pid %d fd %d: %s holds a POSIX lock on a file it also maps: not "
			       "supported yet\n",
			       f->pid, f->fd, f->link);
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
	if (d->fe.type != FILE_TYPE__FILE_REG && d->fe.type != FILE_TYPE__FILE_DIR) {
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
			       "are supported\n",
			       f->pid, f->fd, f->link, l->line);
		else if (err)
			pr_err("pid %d fd %d: bad lock line \"%s\"\n", f->pid, f->fd, l->line);
		if (!err && e.kind == FILE_LOCK_KIND__LOCK_POSIX)
			err = check_not_mapped(f);
		if (!err)
			err = lock_set_add(d, &e);
		if (err)
			return err;
		pr_debug("pid %d fd %d: %s: lock %s\n", f->pid, f->fd, f->link, l->line);
	}
	return 0;
}
