// SPDX-License-Identifier: GPL-2.0
/*
 * pidfds (pidfd_open(2), clone(CLONE_PIDFD)): the target pid (fdinfo Pid:)
 * and the description's flags (PIDFD_NONBLOCK is O_NONBLOCK, PIDFD_THREAD,
 * 6.9, is O_EXCL). Only a pidfd of a process of the dumped tree can come
 * back, and it cannot be made before that process exists: the controller
 * installs a placeholder, and each task, once the whole tree is forked and
 * its fd table in place (pidfd_installed()), puts a new pidfd of the target
 * over it, at the same fd number and with the same close-on-exec bit. One
 * description shared by several fds of a task stays one; shared by several
 * tasks, it comes back as one description per task (Documentation/files.md).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "anon.h"
#include "log.h"
#include "ns.h"
#include "restore-files-int.h"
#include "seize.h"
#include "util.h"

/* The kind, at the end of this file. */
extern const struct file_kind pidfd_kind;

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: the pidfd of one thread */
#endif
/* What pidfd_open() takes; every other flag of a pidfd is O_RDWR, which it always has. */
#define PIDFD_OPEN_FLAGS ((uint32_t)(O_NONBLOCK | PIDFD_THREAD))

static int pidfd_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return !strcmp(f->link, "anon_inode:[pidfd]");
}

/* 0 when the target of @f (fdinfo @fi) can be brought back, else -EOPNOTSUPP, logged. */
static int pidfd_refuse(const struct dump_ctx *ctx, const struct fd_info *f,
			const struct fdinfo *fi)
{
	const struct seized_task *t;
	pid_t pid = fi->pidfd.pid;
	bool leader = false;

	if (pid < 0) {
		pr_err("pid %d fd %d: a pidfd of a process that has exited and been reaped "
		       "(fdinfo Pid: -1): it cannot be made again\n",
		       f->pid, f->fd);
		return -EOPNOTSUPP;
	}
	if (fi->pidfd.nspid_levels > pidns_dump_levels()) {
		pr_err("pid %d fd %d: a pidfd of pid %d, which lives in a nested pid namespace "
		       "(NSpid: %u levels): pid namespaces are not restored\n",
		       f->pid, f->fd, pid, fi->pidfd.nspid_levels);
		return -EOPNOTSUPP;
	}
	if (pidns_depth(f->pid)) {
		pr_err("pid %d fd %d: a pidfd held in a nested pid namespace: not restored yet\n",
		       f->pid, f->fd);
		return -EOPNOTSUPP;
	}
	t = dump_tree_task_of(ctx, pid, &leader);
	if (!t) {
		pr_err("pid %d fd %d: a pidfd of pid %d, which is not a task of the dumped tree: "
		       "it could not be brought back\n",
		       f->pid, f->fd, pid);
		return -EOPNOTSUPP;
	}
	if (!leader) {
		pr_err("pid %d fd %d: a pidfd of thread %d of pid %d (PIDFD_THREAD): threads are "
		       "made after the fds are restored, so it could not be reopened\n",
		       f->pid, f->fd, pid, t->pid);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int pidfd_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct fdinfo fi = { 0 };
	PidfdEntry *e;
	int err;

	err = anon_fdinfo_read(f, FDINFO_PIDFD, false, &fi);
	if (err)
		return err;
	err = pidfd_refuse(ctx, f, &fi);
	e = err ? NULL : anon_priv_alloc(d, sizeof(*e));
	if (!err && !e)
		err = -ENOMEM;
	if (!err) {
		pidfd_entry__init(e);
		e->flags = f->flags;
		e->pid = pidns_vpid(fi.pidfd.pid);
		d->fe.type = FILE_TYPE__FILE_PIDFD;
		d->fe.pidfd = e;
		pr_debug("pid %d fd %d: pidfd of pid %d, flags %#o\n", f->pid, f->fd, e->pid,
			 e->flags);
	}
	fdinfo_fini(&fi);
	return err;
}

/* ---- restore ---- */
static int pidfd_check(const FileEntry *fe)
{
	return anon_check(fe, fe->pidfd && fe->pidfd->pid > 0);
}

/*
 * The target does not exist yet: a placeholder, which every task holding the
 * pidfd replaces in pidfd_installed().
 */
static int pidfd_open_placeholder(struct restore_ctx *ctx, size_t pos)
{
	return rst_late_placeholder(ctx, pos);
}

/* A pidfd of the target of description @pos, for @fd of task @t. */
static int pidfd_reopen(struct restore_ctx *ctx, const struct rst_task *t, const FdEntry *fd,
			size_t pos)
{
	const PidfdEntry *e = ctx->files->idx.by_id[pos]->pidfd;
	unsigned int flags = e->flags & PIDFD_OPEN_FLAGS;
	int pfd;

	pfd = (int)syscall(__NR_pidfd_open, (pid_t)e->pid, flags);
	if (pfd < 0) {
		pfd = neg_errno();
		pr_errno(pfd, "pid %u fd %u: cannot reopen the pidfd of pid %d (flags %#o)",
			 t->pe->pid, fd->fd, e->pid, flags);
	}
	return pfd;
}

/*
 * In task @t, every task of the tree forked and @t's fds at their numbers
 * (end of rst_files_install()): a pidfd of its target over each placeholder.
 * fds of one description get one new pidfd, dup'ed. Before epoll's step in
 * the table, so an epoll watching a pidfd registers the real one.
 */
static int pidfd_installed(struct restore_ctx *ctx, struct rst_task *t)
{
	return rst_late_install(ctx, t, &pidfd_kind, NULL, pidfd_reopen);
}

const struct file_kind pidfd_kind = {
	.name = "pidfd",
	.match = pidfd_match,
	.dump = pidfd_dump,
	.types = { FILE_TYPE__FILE_PIDFD },
	.check = pidfd_check,
	.open = pidfd_open_placeholder,
	.installed = pidfd_installed,
};
