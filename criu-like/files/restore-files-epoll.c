// SPDX-License-Identifier: GPL-2.0
/*
 * epoll of a restore. The controller creates the empty instance with the
 * other descriptions; each target is registered later, in the task whose fd
 * it is (EpollTargetEntry.owner_pid, else EpollFileEntry.owner_pid), once
 * that task's fds are at their final numbers: epoll keys each registration
 * by (file, fd number), and the application's later EPOLL_CTL_MOD/DEL name
 * its own fd numbers, never the controller's service fds. The task calls
 * epoll_ctl() through the service fd of the epoll it inherited, so it needs
 * no fd of the epoll of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#define LOG_PREFIX "restore-files: "
#include "log.h"
#include "restore-files-anon.h"
#include "util.h"

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

int rst_epoll_open(struct restore_ctx *ctx, size_t pos)
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

int rst_epoll_register(struct restore_ctx *ctx, const struct rst_task *t)
{
	const struct rst_files *f = ctx->files;
	size_t pos;
	int err;

	for (pos = 0; pos < f->idx.n; pos++) {
		if (f->idx.by_id[pos]->type != FILE_TYPE__FILE_EPOLL)
			continue;
		err = epoll_register(t, f->fds[pos], f->idx.by_id[pos]);
		if (err)
			return err;
	}
	return 0;
}
