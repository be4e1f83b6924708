// SPDX-License-Identifier: GPL-2.0
/*
 * epoll: every registered target with its events and data, from the "tfd:"
 * lines of fdinfo. epoll keys a registration by (file, fd number), so a
 * target is saved as the fd number it was registered with, and restore
 * registers it in the process whose fd it is, once that process's fds are
 * back at their numbers. kcmp(KCMP_EPOLL_TFD) finds that process: the one the
 * epoll is dumped from (owner_pid), or another process of the tree that
 * shares the epoll and registered the target with its own fd number (the
 * target's owner_pid). A target no process of the tree holds under its
 * registered number (closed, or moved with dup2() since) is refused.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"
#include "anon.h"
#include "log.h"
#include "ns.h"
#include "restore-files-int.h"
#include "util.h"

/* The kind, at the end of this file. */
extern const struct file_kind epoll_kind;

static int epoll_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return !strcmp(f->link, "anon_inode:[eventpoll]");
}

static long kcmp_tfd(pid_t pid, const struct fd_info *f, const struct fdinfo_epoll_tfd *t,
		     unsigned int toff)
{
	struct kcmp_epoll_slot slot = { .efd = (uint32_t)f->fd,
					.tfd = (uint32_t)t->tfd,
					.toff = toff };

	return syscall(SYS_kcmp, pid, f->pid, KCMP_EPOLL_TFD, (unsigned long)t->tfd,
		       (unsigned long)&slot);
}

/*
 * The process of the tree whose fd @t->tfd is the file registered as target
 * @toff of that number, in *@ret_owner: @f->pid itself, or another process
 * sharing the epoll that registered it with its own fd number.
 */
static int epoll_find_owner(const struct dump_ctx *ctx, const struct fd_info *f,
			    const struct fdinfo_epoll_tfd *t, unsigned int toff, pid_t *ret_owner)
{
	long r = kcmp_tfd(f->pid, f, t, toff);
	int err = errno;
	unsigned int i;

	*ret_owner = f->pid;
	if (r == 0)
		return 0;
	if (r < 0 && err != EBADF) {
		pr_perror("pid %d fd %d: kcmp(KCMP_EPOLL_TFD) of target fd %d", f->pid, f->fd,
			  t->tfd);
		return -err;
	}
	/* Zombies and tasks without that fd fail with EBADF: only an exact match counts. */
	for (i = 0; i < ctx->nr_tasks; i++) {
		pid_t pid = ctx->tasks[i].t->pid;

		if (pid != f->pid && kcmp_tfd(pid, f, t, toff) == 0) {
			*ret_owner = pid;
			return 0;
		}
	}
	if (r < 0)
		pr_err("pid %d fd %d: epoll target fd %d (inode %llu) is not open in pid %d, nor "
		       "that file under that number in another process of the tree (closed or "
		       "moved since it was registered): not supported\n",
		       f->pid, f->fd, t->tfd, (unsigned long long)t->ino, f->pid);
	else
		pr_err("pid %d fd %d: epoll target fd %d (inode %llu) now holds another file than "
		       "the one registered, and no other process of the tree has that file under "
		       "that number: not supported\n",
		       f->pid, f->fd, t->tfd, (unsigned long long)t->ino);
	return -EOPNOTSUPP;
}

/* The entry and its targets in one block owned by @d. */
static EpollFileEntry *epoll_entry_alloc(struct file_desc *d, unsigned int n)
{
	EpollFileEntry *e;
	EpollTargetEntry *te;
	unsigned int i;

	e = anon_priv_alloc(d, sizeof(*e) + n * (sizeof(*e->targets) + sizeof(*te)));
	if (!e)
		return NULL;
	epoll_file_entry__init(e);
	e->targets = (EpollTargetEntry **)(e + 1);
	te = (EpollTargetEntry *)(e->targets + n);
	for (i = 0; i < n; i++) {
		epoll_target_entry__init(&te[i]);
		e->targets[i] = &te[i];
	}
	e->n_targets = n;
	return e;
}

/*
 * A pidfd of a thread (PIDFD_THREAD) is made by the restorer, after the
 * epoll registered its targets, which would then watch its placeholder:
 * refused as a target.
 */
static int check_thread_pidfd(const struct fd_info *f, pid_t owner, int tfd)
{
	char path[64], link[32], line[128];
	_cleanup_fclose_ FILE *fi = NULL;
	unsigned int flags = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", owner, tfd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0 || (link[n] = '\0', strcmp(link, "anon_inode:[pidfd]")))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", owner, tfd);
	fi = fopen(path, "re");
	while (fi && fgets(line, sizeof(line), fi))
		if (sscanf(line, "flags: %o", &flags) == 1)
			break;
	if (!(flags & O_EXCL))
		return 0;
	pr_err("pid %d fd %d: epoll target fd %d of pid %d is a pidfd of a thread (PIDFD_THREAD), "
	       "which is made after the epoll's targets at restore: not supported\n",
	       f->pid, f->fd, tfd, owner);
	return -EOPNOTSUPP;
}

static int epoll_fill(const struct dump_ctx *ctx, const struct fd_info *f, const struct fdinfo *fi,
		      EpollFileEntry *e)
{
	unsigned int i, j, toff;
	pid_t owner;
	int err;

	for (i = 0; i < fi->n_tfd; i++) {
		const struct fdinfo_epoll_tfd *t = &fi->tfd[i];

		/* Same-numbered targets come in the order kcmp counts them (the rbtree's). */
		for (toff = 0, j = 0; j < i; j++)
			toff += fi->tfd[j].tfd == t->tfd;
		err = epoll_find_owner(ctx, f, t, toff, &owner);
		if (!err)
			err = check_thread_pidfd(f, owner, t->tfd);
		if (err)
			return err;
		if (owner != f->pid) {
			e->targets[i]->has_owner_pid = true;
			e->targets[i]->owner_pid = (uint32_t)pidns_vpid(owner);
		}
		e->targets[i]->tfd = (uint32_t)t->tfd;
		e->targets[i]->events = t->events;
		e->targets[i]->data = t->data;
		e->targets[i]->has_ino = true;
		e->targets[i]->ino = t->ino;
	}
	return 0;
}

static int epoll_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct fdinfo fi = { 0 };
	EpollFileEntry *e;
	int err;

	err = anon_fdinfo_read(f, FDINFO_EPOLL, true, &fi);
	if (err)
		return err;
	e = epoll_entry_alloc(d, fi.n_tfd);
	err = e ? epoll_fill(ctx, f, &fi, e) : -ENOMEM;
	if (!err) {
		e->flags = f->flags;
		e->owner_pid = (uint32_t)pidns_vpid(f->pid);
		d->fe.type = FILE_TYPE__FILE_EPOLL;
		d->fe.epoll = e;
		pr_debug("pid %d fd %d: epoll with %u targets\n", f->pid, f->fd, fi.n_tfd);
	}
	fdinfo_fini(&fi);
	return err;
}

/* ---- restore ----
 *
 * The controller creates the empty instance with the other descriptions;
 * each target is registered later, in the task whose fd it is
 * (EpollTargetEntry.owner_pid, else EpollFileEntry.owner_pid), once that
 * task's fds are at their final numbers: epoll keys each registration by
 * (file, fd number), and the application's later EPOLL_CTL_MOD/DEL name its
 * own fd numbers, never the controller's service fds. The task calls
 * epoll_ctl() through the service fd of the epoll it inherited, so it needs
 * no fd of the epoll of its own.
 */
static int epoll_check(const FileEntry *fe)
{
	return anon_check(fe, fe->epoll != NULL);
}

/* The FdEntry of fd number @fd in @tf (sorted by number), or NULL. */
static const FdEntry *task_fd(const struct rst_task_files *tf, uint32_t fd)
{
	size_t lo = 0, hi = tf->nr_fds;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tf->fds[mid]->fd == fd)
			return tf->fds[mid];
		if (tf->fds[mid]->fd < fd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static uint32_t target_owner(const EpollFileEntry *e, const EpollTargetEntry *te)
{
	return te->has_owner_pid ? te->owner_pid : e->owner_pid;
}

/* Every target's process is a task of the tree holding that fd, checked before any fork. */
static int epoll_check_owners(struct restore_ctx *ctx, const FileEntry *fe)
{
	const EpollFileEntry *e = fe->epoll;
	size_t i;

	for (i = 0; i < e->n_targets; i++) {
		uint32_t owner = target_owner(e, e->targets[i]);
		const struct rst_task *t = rst_find_task(ctx, (pid_t)owner);

		if (!t || !t->files || !task_fd(t->files, e->targets[i]->tfd)) {
			pr_err("file %u: epoll target fd %u is not an fd of pid %u\n", fe->id,
			       e->targets[i]->tfd, owner);
			return -EINVAL;
		}
	}
	return 0;
}

static int epoll_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	int fd, err;

	err = epoll_check_owners(ctx, fe);
	if (err)
		return err;
	fd = epoll_create1(EPOLL_CLOEXEC);
	if (fd < 0) {
		pr_perror("file %u: epoll_create1", fe->id);
		return neg_errno();
	}
	if ((fe->epoll->flags & O_NONBLOCK) && fcntl(fd, F_SETFL, O_NONBLOCK)) {
		err = neg_errno();
		close(fd);
		return err;
	}
	return fd;
}

/* The targets of epoll @fe (at service fd @epfd) that are fds of @t. */
static int epoll_register(const struct rst_task *t, int epfd, const FileEntry *fe)
{
	const EpollFileEntry *e = fe->epoll;
	unsigned int n = 0;
	size_t i;

	for (i = 0; i < e->n_targets; i++) {
		const EpollTargetEntry *te = e->targets[i];
		struct epoll_event ev = { .events = te->events, .data.u64 = te->data };

		if (target_owner(e, te) != t->pe->pid)
			continue;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, (int)te->tfd, &ev)) {
			pr_perror("pid %u: epoll %u: cannot register fd %u (events %x)", t->pe->pid,
				  fe->id, te->tfd, te->events);
			return neg_errno();
		}
		n++;
	}
	if (n)
		pr_debug("pid %u: epoll %u: %u of its %zu targets registered\n", t->pe->pid, fe->id,
			 n, e->n_targets);
	return 0;
}

/*
 * In task @t, once every fd is at its number (end of rst_files_install()):
 * register every epoll target that is an fd of @t, by that fd number.
 */
static int epoll_installed(struct restore_ctx *ctx, struct rst_task *t)
{
	const struct rst_files *f = ctx->files;
	const struct rst_kind *k = rst_kind_get(ctx, &epoll_kind);
	size_t i;
	int err;

	for (i = 0; i < k->n; i++) {
		err = epoll_register(t, f->fds[k->pos[i]], f->idx.by_id[k->pos[i]]);
		if (err)
			return err;
	}
	return 0;
}

const struct file_kind epoll_kind = {
	.name = "epoll",
	.match = epoll_match,
	.dump = epoll_dump,
	.types = { FILE_TYPE__FILE_EPOLL },
	.check = epoll_check,
	.open = epoll_open,
	.installed = epoll_installed,
};
