// SPDX-License-Identifier: GPL-2.0
/*
 * Files and directories of one process in /proc (/proc/N/..., and
 * /proc/N/task/T/...; /proc/self and /proc/thread-self show as numbers in
 * the fd link), held open as regular files: the dump half. Such a file can
 * only come back if N (and T) is a task of the tree: the restore opens it in
 * each task once the whole tree exists (reg.c, reg_installed()), so it names
 * the restored process again. In a container, N is a pid of the container
 * and the file must be on the container's own /proc. A file of a process
 * that has exited (reads give ESRCH) is restored as such (a file of a
 * short-lived child given that pid, which exits before the tree is made:
 * rst_proc_dead_open()), on the host's /proc. Refused at dump, naming the pid,
 * fd and path: a file of a live process outside the tree, of a thread other
 * than a leader (threads are made after the fds), of a process that has
 * exited in a container or whose pid a task of the tree has now, a position
 * the file cannot seek back to, and such a file only in flight in a unix queue.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sched.h>

#include "files-int.h"
#include "log.h"
#include "ns.h"
#include "reg.h"
#include "seize.h"
#include "util.h"

#define DELETED_SUFFIX " (deleted)"

/* A pid as procfs names it (no sign, no leading zero) at *@s, moved past it; 0 if none. */
static pid_t parse_pid(const char **s)
{
	const char *p = *s;
	long v = 0;

	if (*p < '1' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9' && v <= 0x7fffffff)
		v = v * 10 + (*p++ - '0');
	if (v > 0x7fffffff || (*p && *p != '/'))
		return 0;
	*s = p;
	return (pid_t)v;
}

int proc_pid_path(const char *path, pid_t *pid, pid_t *tid)
{
	const char *p;

	*pid = *tid = 0;
	if (strncmp(path, "/proc/", 6))
		return 0;
	p = path + 6;
	*pid = parse_pid(&p);
	if (!*pid)
		return 0;
	if (!strncmp(p, "/task/", 6)) {
		p += 6;
		*tid = parse_pid(&p);
	}
	return 1;
}

/* Whether @f's file (its /proc/PID/fd link, followed) is on a procfs. */
static bool on_procfs(const struct fd_info *f)
{
	char link[64];
	struct statfs sfs;

	snprintf(link, sizeof(link), "/proc/%d/fd/%d", f->pid, f->fd);
	return !statfs(link, &sfs) && sfs.f_type == PROC_SUPER_MAGIC;
}

/*
 * The position of @f can be set again by lseek() on a new description of the
 * same file (a seq file reads up to it, some /proc files cannot seek at all):
 * tried on one the dumper opens, so that the task's is left as it is.
 */
static int proc_pos_check(const struct fd_info *f, const char *path)
{
	char link[64];
	off_t got;
	int fd, err;

	if (!f->pos || (f->flags & O_PATH))
		return 0;
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", f->pid, f->fd);
	fd = open(link, (int)(f->flags & O_ACCMODE) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = neg_errno();
		pr_errno(err, "pid %d fd %d: %s: cannot open it again to check its position",
			 f->pid, f->fd, path);
		return err;
	}
	got = lseek(fd, (off_t)f->pos, SEEK_SET);
	err = got < 0 ? neg_errno() : 0;
	close(fd);
	if (got == (off_t)f->pos)
		return 0;
	pr_err("pid %d fd %d: %s at position %llu: the file cannot seek back there (%s): its "
	       "position could not be restored\n",
	       f->pid, f->fd, path, (unsigned long long)f->pos,
	       err ? strerror(-err) : "it lands elsewhere");
	return -EOPNOTSUPP;
}

/* The host pid of the task or thread of the tree whose pid in the tree's namespace is @vpid. */
static pid_t host_of_vpid(const struct dump_ctx *ctx, pid_t vpid)
{
	unsigned int i, j;

	for (i = 0; i < ctx->nr_tasks; i++) {
		const struct seized_task *t = ctx->tasks[i].t;

		for (j = 0; j < t->nr_threads; j++)
			if (pidns_vpid(t->threads[j].tid) == vpid)
				return t->threads[j].tid;
		if (pidns_vpid(t->pid) == vpid)
			return t->pid;
	}
	return 0;
}

/*
 * A tree with a pid namespace of its own (a container): a file of /proc/N
 * comes back only from the container's own proc, the one its root has at
 * /proc (the restore opens the path in the task, in the container's mount
 * namespace, where that proc is made again), where N is a pid of the
 * container: *@pid and *@tid are turned into host pids for the checks.
 */
static int container_proc(const struct dump_ctx *ctx, const struct fd_info *f, pid_t *pid,
			  pid_t *tid)
{
	char path[64];
	struct stat st;
	pid_t hp = host_of_vpid(ctx, *pid), ht = *tid ? host_of_vpid(ctx, *tid) : 0;

	snprintf(path, sizeof(path), "/proc/%d/root/proc", ctx->tree->root->pid);
	if (stat(path, &st) || st.st_dev != f->st.st_dev) {
		pr_err("pid %d fd %d: %s: a file of a process in a proc that is not the "
		       "container's /proc (another pid namespace's, or the host's): it could not "
		       "be restored to the same process\n",
		       f->pid, f->fd, f->link);
		return -EOPNOTSUPP;
	}
	if (!hp || (*tid && !ht)) {
		pr_err("pid %d fd %d: %s: a file of pid %d of the container, which is not a task "
		       "of "
		       "the dumped tree (or has exited): it could not be restored\n",
		       f->pid, f->fd, f->link, *tid ? *tid : *pid);
		return -EOPNOTSUPP;
	}
	*pid = hp;
	*tid = ht;
	return 0;
}

/*
 * Whether the file of @f, @path (/proc/N/..., " (deleted)" stripped), belongs
 * to a process that has exited: the directory's link says " (deleted)"; a
 * file's does not, but its path no longer leads to its inode (gone, or pid N
 * taken by another process since).
 */
static bool proc_gone(const struct fd_info *f, const char *path, bool deleted)
{
	struct stat st;

	if (deleted)
		return true;
	if (stat(path, &st))
		return errno == ENOENT || errno == ESRCH;
	return st.st_dev == f->st.st_dev && st.st_ino != f->st.st_ino;
}

/*
 * A file of pid @pid, which has exited: restored as one of a process that
 * has exited, by opening it while a short-lived child has that pid (reg.c,
 * rst_proc_dead_open()). Only on the host's /proc (the controller opens it
 * there), only /proc/N[/FILE] (not a thread's), and only when no task of the
 * tree has that pid now (the child could not have it at restore).
 */
static int proc_dead_check(const struct dump_ctx *ctx, const struct fd_info *f, pid_t pid,
			   pid_t tid)
{
	bool leader = false;
	struct stat proc;

	if (pidns_dump_levels() > 1 || stat("/proc", &proc) || proc.st_dev != f->st.st_dev) {
		pr_err("pid %d fd %d: %s: a file of pid %d, which has exited, in a proc that is "
		       "not the host's /proc (a container's): not restored yet\n",
		       f->pid, f->fd, f->link, pid);
		return -EOPNOTSUPP;
	}
	if (tid) {
		pr_err("pid %d fd %d: %s: a file of thread %d of pid %d, which has exited: not "
		       "restored yet\n",
		       f->pid, f->fd, f->link, tid, pid);
		return -EOPNOTSUPP;
	}
	if (dump_tree_task_of(ctx, pid, &leader)) {
		pr_err("pid %d fd %d: %s: a file of a pid %d that has exited, now the pid of a "
		       "task of the tree: the restore could not give it to a process that exits\n",
		       f->pid, f->fd, f->link, pid);
		return -EOPNOTSUPP;
	}
	return 1;
}

int reg_proc_check(const struct dump_ctx *ctx, const struct fd_info *f)
{
	size_t len = strlen(f->link), sl = strlen(DELETED_SUFFIX);
	const struct seized_task *t, *owner;
	bool leader = false, tleader = false;
	_cleanup_free_ char *path = NULL;
	bool deleted = false;
	pid_t pid, tid;

	if (len > sl && !strcmp(f->link + len - sl, DELETED_SUFFIX)) {
		deleted = true;
		len -= sl;
	}
	path = strndup(f->link, len);
	if (!path)
		return -ENOMEM;
	if (!proc_pid_path(path, &pid, &tid) || !on_procfs(f))
		return 0;
	if (f->pid == getpid()) {
		pr_err("pid %d fd %d: %s (a file of a process in /proc) in flight in a unix "
		       "queue is held by no task: it could not be reopened\n",
		       f->pid, f->fd, f->link);
		return -EOPNOTSUPP;
	}
	if (pidns_dump_levels() == 1 && proc_gone(f, path, deleted))
		return proc_dead_check(ctx, f, pid, tid);
	if (pidns_dump_levels() > 1) {
		int err = container_proc(ctx, f, &pid, &tid);

		if (err)
			return err;
	}
	if (deleted)
		return proc_dead_check(ctx, f, pid, tid); /* refused, naming why */
	t = dump_tree_task_of(ctx, pid, &leader);
	if (!t) {
		pr_err("pid %d fd %d: %s: a file of pid %d, which is not a task of the dumped "
		       "tree: it could not be restored to the same process\n",
		       f->pid, f->fd, f->link, pid);
		return -EOPNOTSUPP;
	}
	if (!leader) {
		pr_err("pid %d fd %d: %s: a file of thread %d of pid %d: threads are made after "
		       "the fds are restored, so it could not be reopened\n",
		       f->pid, f->fd, f->link, pid, t->pid);
		return -EOPNOTSUPP;
	}
	if (tid && tid != pid) {
		owner = dump_tree_task_of(ctx, tid, &tleader);
		if (owner != t) {
			pr_err("pid %d fd %d: %s: thread %d is not a thread of pid %d in the "
			       "dumped "
			       "tree: it could not be restored\n",
			       f->pid, f->fd, f->link, tid, pid);
			return -EOPNOTSUPP;
		}
		pr_err("pid %d fd %d: %s: a file of thread %d of pid %d: threads are made after "
		       "the fds are restored, so it could not be reopened\n",
		       f->pid, f->fd, f->link, tid, pid);
		return -EOPNOTSUPP;
	}
	return proc_pos_check(f, f->link);
}

/* ---- restore ------------------------------------------------------------------------------- */

int rst_proc_dead_open(const char *path, uint32_t flags, int (*open_fn)(const char *, uint32_t))
{
	struct clone_args ca = { .exit_signal = 0, .set_tid_size = 1 };
	pid_t pid, tid, child;
	int p[2], fd, err = 0, status;
	char c;

	if (!proc_pid_path(path, &pid, &tid) || tid) {
		pr_err("%s: not a file of one process in /proc\n", path);
		return -EINVAL;
	}
	if (pipe2(p, O_CLOEXEC))
		return neg_errno();
	/* a child of exactly that pid, alive while the file is opened */
	ca.set_tid = (uint64_t)(uintptr_t)&pid;
	child = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (child == 0) {
		close(p[1]);
		_exit(read(p[0], &c, 1) < 0 ? 1 : 0);
	}
	close(p[0]);
	if (child < 0) {
		err = neg_errno();
		close(p[1]);
		if (err == -EEXIST)
			pr_err("%s: a file of pid %d, which had exited: pid %d is taken by a "
			       "process here, it cannot be given back\n",
			       path, pid, pid);
		else
			pr_errno(err, "%s: cannot make a process of pid %d", path, pid);
		return err;
	}
	fd = open_fn(path, flags);
	if (fd < 0)
		err = neg_errno();
	close(p[1]); /* the child exits, and is reaped: the file is of a process gone */
	if (waitpid(child, &status, __WALL) != child && !err)
		err = neg_errno();
	if (err) {
		pr_errno(err, "%s: cannot open it while pid %d lives", path, pid);
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}
