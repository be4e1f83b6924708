// SPDX-License-Identifier: GPL-2.0
/*
 * Signal-driven I/O on a description of any kind (Documentation/files.md):
 * its owner (F_SETOWN, F_SETOWN_EX: a thread, a process or a process
 * group), the signal it sends (F_SETSIG) and O_ASYNC. All three belong to
 * the open file description. Dump: read through the drained fd, the owner's
 * pid translated into the tree's pid namespace. Restore: set by a task
 * holding the description once its fds are at their numbers, because the
 * kernel records the fd number O_ASYNC was set through and reports it as
 * si_fd; the owner's pid is then the task's own view of it.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "files-int.h"
#include "log.h"
#include "ns.h"
#include "restore-files-int.h"
#include "util.h"

/* The owner @o (host pids) is a thread, process or group of the dumped tree. */
static bool owner_in_tree(const struct dump_ctx *ctx, const struct f_owner_ex *o)
{
	bool leader = false;
	const struct seized_task *t = dump_tree_task_of(ctx, o->pid, &leader);

	/* a group by its leader, which must be in the tree (a pid, never reused meanwhile) */
	return t && (o->type == F_OWNER_TID || leader);
}

int fown_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct f_owner_ex o = {};
	bool async = f->flags & O_ASYNC;
	int sig;

	/* an O_PATH fd has no owner (fcntl() refuses to say: EBADF) */
	if (f->flags & O_PATH)
		return 0;
	sig = fcntl(f->dfd, F_GETSIG);
	if (sig < 0 || fcntl(f->dfd, F_GETOWN_EX, &o)) {
		pr_perror("pid %d fd %d: cannot read the owner of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	if (!o.pid && !sig && !async)
		return 0;
	if (o.pid && !owner_in_tree(ctx, &o)) {
		pr_err("pid %d fd %d: %s is owned for signal-driven I/O (F_SETOWN) by %s %d, "
		       "outside the dumped tree: not supported\n",
		       f->pid, f->fd, f->link,
		       o.type == F_OWNER_PGRP  ? "process group"
		       : o.type == F_OWNER_TID ? "thread"
					       : "pid",
		       o.pid);
		return -EOPNOTSUPP;
	}
	if (pidns_depth(f->pid)) {
		pr_err("pid %d fd %d: %s has signal-driven I/O set up in a pid namespace nested in "
		       "the tree's: not supported yet\n",
		       f->pid, f->fd, f->link);
		return -EOPNOTSUPP;
	}
	fown_entry__init(&d->fown);
	d->fown.pid_type = (uint32_t)o.type;
	d->fown.pid = o.pid ? pidns_vpid(o.pid) : 0;
	d->fown.signum = (uint32_t)sig;
	d->fown.async = async;
	d->fe.fown = &d->fown;
	pr_debug("pid %d fd %d: owner type %d pid %d (%d in the tree), signal %d%s\n", f->pid,
		 f->fd, o.type, o.pid, d->fown.pid, sig, async ? ", O_ASYNC" : "");
	return 0;
}

/* ---- restore: in the task, its fds in place ---- */

static int fown_set(pid_t pid, int fd, const FownEntry *o)
{
	struct f_owner_ex ex = { .type = (enum __pid_type)o->pid_type, .pid = o->pid };
	int fl;

	if (o->signum && fcntl(fd, F_SETSIG, (int)o->signum)) {
		pr_perror("pid %d fd %d: F_SETSIG %u", pid, fd, o->signum);
		return neg_errno();
	}
	if (o->pid && fcntl(fd, F_SETOWN_EX, &ex)) {
		pr_perror("pid %d fd %d: F_SETOWN_EX type %u pid %d", pid, fd, o->pid_type, o->pid);
		return neg_errno();
	}
	fl = fcntl(fd, F_GETFL);
	/* O_ASYNC set again from here: the kernel reports this fd's number in si_fd */
	if (o->async &&
	    (fl < 0 || fcntl(fd, F_SETFL, (fl & ~O_ASYNC)) || fcntl(fd, F_SETFL, fl | O_ASYNC))) {
		pr_perror("pid %d fd %d: cannot set O_ASYNC", pid, fd);
		return neg_errno();
	}
	return 0;
}

int rst_fown_installed(struct restore_ctx *ctx, const struct rst_task *t)
{
	const struct rst_task_files *tf = t->files;
	const struct rst_files *f = ctx->files;
	int err = 0;

	for (size_t i = 0; !err && i < tf->nr_fds; i++) {
		long pos = rst_file_index_pos(&f->idx, tf->fds[i]->id);
		const FileEntry *fe = pos >= 0 ? f->idx.by_id[pos] : NULL;

		if (!fe || !fe->fown)
			continue;
		if (fe->fown->pid_type > F_OWNER_PGRP) {
			pr_err("files.img: file %u: owner type %u is none the dump writes\n",
			       fe->id, fe->fown->pid_type);
			return -EINVAL;
		}
		err = fown_set((pid_t)t->pe->pid, (int)tf->fds[i]->fd, fe->fown);
	}
	return err;
}
