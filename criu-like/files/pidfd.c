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
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "anon.h"
#include "compat.h"
#include "log.h"
#include "ns.h"
#include "restore-files-int.h"
#include "restorer.h"
#include "seize.h"
#include "util.h"

/* The kind, at the end of this file. */
extern const struct file_kind pidfd_kind;

/* What pidfd_open() takes; every other flag of a pidfd is O_RDWR, which it always has. */
#define PIDFD_OPEN_FLAGS ((uint32_t)(O_NONBLOCK | PIDFD_THREAD))

static int pidfd_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return !strcmp(f->link, "anon_inode:[pidfd]");
}

/*
 * 0 when the target of @f (fdinfo @fi) can be brought back, else -EOPNOTSUPP,
 * logged; *@thread: it is a thread of the holder's own process (PIDFD_THREAD).
 */
static int pidfd_refuse(const struct dump_ctx *ctx, const struct fd_info *f,
			const struct fdinfo *fi, bool *thread)
{
	const struct seized_task *t;
	pid_t pid = fi->pidfd.pid;
	bool leader = false;

	*thread = false;
	if (pid < 0)
		return 0; /* exited and reaped: its exit status is read in pidfd_dump() */
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
	/* only in flight in a queue (pidfd_in_flight_open()): made by the root, no thread's */
	if (t && !leader && f->pid == getpid()) {
		pr_err("a pidfd of thread %d of pid %d (PIDFD_THREAD), in flight in a unix "
		       "socket's queue and held by no task: not restored\n",
		       pid, t->pid);
		return -EOPNOTSUPP;
	}
	if (!t) {
		pr_err("pid %d fd %d: a pidfd of pid %d, which is not a task of the dumped tree: "
		       "it could not be brought back\n",
		       f->pid, f->fd, pid);
		return -EOPNOTSUPP;
	}
	/* the restorer makes the holder's threads, then their pidfds: only its own */
	if (!leader && t->pid != f->pid) {
		pr_err("pid %d fd %d: a pidfd of thread %d of another process, pid %d "
		       "(PIDFD_THREAD): only pidfds of a process's own threads are restored\n",
		       f->pid, f->fd, pid, t->pid);
		return -EOPNOTSUPP;
	}
	*thread = !leader;
	return 0;
}

/*
 * The wait status of the reaped process behind the pidfd @f (PIDFD_INFO_EXIT,
 * 6.15), into *@ret; -EOPNOTSUPP (logged) when the kernel does not say.
 */
static int pidfd_exit_status(const struct fd_info *f, int *ret)
{
	struct cr_pidfd_info info = { .mask = PIDFD_INFO_EXIT };

	if (ioctl(f->dfd, CR_PIDFD_GET_INFO, &info) || !(info.mask & PIDFD_INFO_EXIT)) {
		pr_err("pid %d fd %d: a pidfd of a process that has exited and been reaped, "
		       "whose exit status this kernel does not give (PIDFD_INFO_EXIT, 6.15): it "
		       "cannot be made again\n",
		       f->pid, f->fd);
		return -EOPNOTSUPP;
	}
	*ret = info.exit_code;
	return 0;
}

static int pidfd_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct fdinfo fi = { 0 };
	bool thread = false;
	PidfdEntry *e;
	int err;

	err = anon_fdinfo_read(f, FDINFO_PIDFD, false, &fi);
	if (err)
		return err;
	err = pidfd_refuse(ctx, f, &fi, &thread);
	e = err ? NULL : anon_priv_alloc(d, sizeof(*e));
	if (!err && !e)
		err = -ENOMEM;
	if (!err) {
		pidfd_entry__init(e);
		e->flags = f->flags;
		e->pid = fi.pidfd.pid < 0 ? 0 : pidns_vpid(fi.pidfd.pid);
		e->has_thread = e->thread = thread;
		if (fi.pidfd.pid < 0) {
			e->has_dead = e->has_exit_code = true;
			e->dead = true;
			err = pidfd_exit_status(f, &e->exit_code);
		}
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
	return anon_check(fe, fe->pidfd && (fe->pidfd->pid > 0 || fe->pidfd->dead));
}

/*
 * A pidfd of a process that has exited and been reaped, made in the task
 * that holds it (so the process was in the task's pid namespace, where the
 * pidfd must tell its exit status): a child made with clone3(CLONE_PIDFD)
 * and no exit signal (nothing queued for the task), ended with the saved
 * wait status (an exit code, or the signal that killed it, without a core
 * dump) and reaped.
 */
static int pidfd_make_dead(const FileEntry *fe)
{
	const PidfdEntry *e = fe->pidfd;
	struct {
		uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	} args = { .flags = CLONE_PIDFD };
	int pfd = -1, status = 0, err = 0;
	pid_t child;

	args.pidfd = (uint64_t)(uintptr_t)&pfd;
	child = (pid_t)syscall(__NR_clone3, &args, sizeof(args));
	if (child == 0) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		if (WIFSIGNALED(e->exit_code)) {
			signal(WTERMSIG(e->exit_code), SIG_DFL);
			syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), WTERMSIG(e->exit_code));
		}
		syscall(SYS_exit_group, WEXITSTATUS(e->exit_code));
	}
	if (child < 0)
		err = neg_errno();
	else if (waitpid(child, &status, __WALL) != child)
		err = neg_errno();
	if (!err && (status & 0xff7f) != (e->exit_code & 0xff7f)) {
		pr_err("file %u: the process made for a dead pidfd ended with status %#x, not "
		       "%#x\n",
		       fe->id, status, e->exit_code);
		err = -EIO;
	}
	/* the pidfd's own flags: O_NONBLOCK (PIDFD_NONBLOCK) */
	if (!err && (e->flags & O_NONBLOCK) && fcntl(pfd, F_SETFL, O_NONBLOCK))
		err = neg_errno();
	if (err) {
		pr_errno(err, "file %u: cannot make a pidfd of a dead process again", fe->id);
		if (pfd >= 0)
			close(pfd);
		return err;
	}
	return pfd;
}

/*
 * The target does not exist yet (or, dead, must be made in the task's pid
 * namespace): a placeholder, which every task holding the pidfd replaces in
 * pidfd_installed().
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

	if (e->dead)
		return pidfd_make_dead(ctx->files->idx.by_id[pos]);
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
static bool pidfd_of_process(const struct restore_ctx *ctx, size_t pos)
{
	return !ctx->files->idx.by_id[pos]->pidfd->thread;
}

static int pidfd_installed(struct restore_ctx *ctx, struct rst_task *t)
{
	/* a thread's: the restorer's, once it made the threads (rst_pidfd_threads()) */
	return rst_late_install(ctx, t, &pidfd_kind, pidfd_of_process, pidfd_reopen);
}

int rst_pidfd_threads(const struct restore_ctx *ctx, const struct rst_task *t,
		      struct rst_tpidfd *out, uint32_t *nr)
{
	const struct rst_task_files *tf = t->files;
	const struct rst_files *f = ctx->files;
	size_t i, k;

	*nr = 0;
	for (i = 0; tf && i < tf->nr_fds; i++) {
		const FdEntry *fd = tf->fds[i];
		long pos = rst_file_index_pos(&f->idx, fd->id);
		const PidfdEntry *e;
		bool own = false;

		if (pos < 0 || f->kind_at[pos] != &pidfd_kind)
			continue;
		e = f->idx.by_id[pos]->pidfd;
		if (!e->thread)
			continue;
		for (k = 0; t->core && k < t->core->n_threads; k++)
			own |= t->core->threads[k]->tid == (uint32_t)e->pid;
		if (!own) {
			pr_err("pid %u fd %u: a pidfd of thread %d, which is not one of its own: "
			       "not restored\n",
			       t->pe->pid, fd->fd, e->pid);
			return -EOPNOTSUPP;
		}
		if (out) {
			out[*nr].dup_of = -1;
			for (k = 0; k < i; k++)
				if (tf->fds[k]->id == fd->id)
					out[*nr].dup_of = (int32_t)tf->fds[k]->fd;
			out[*nr].fd = (int32_t)fd->fd;
			out[*nr].tid = e->pid;
			out[*nr].flags = e->flags & PIDFD_OPEN_FLAGS;
			out[*nr].cloexec = fd->cloexec;
		}
		(*nr)++;
	}
	return 0;
}

/*
 * In flight in a queue (held by no task, or also by tasks: then one more
 * description): made in the root once every task exists, and sent in place
 * of the controller's placeholder (unix-queue.c, usk_late()).
 */
static int pidfd_in_flight_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	int pfd;

	if (fe->pidfd->dead)
		return pidfd_make_dead(fe);
	pfd = (int)syscall(__NR_pidfd_open, (pid_t)fe->pidfd->pid,
			   fe->pidfd->flags & PIDFD_OPEN_FLAGS);
	if (pfd < 0) {
		pfd = neg_errno();
		pr_errno(pfd, "file %u: cannot make the pidfd of pid %u in flight", fe->id,
			 fe->pidfd->pid);
	}
	return pfd;
}

const struct file_kind pidfd_kind = {
	.name = "pidfd",
	.match = pidfd_match,
	.dump = pidfd_dump,
	.types = { FILE_TYPE__FILE_PIDFD },
	.check = pidfd_check,
	.open = pidfd_open_placeholder,
	.installed = pidfd_installed,
	.in_flight = true,
	.in_flight_open = pidfd_in_flight_open,
};
