// SPDX-License-Identifier: GPL-2.0
/*
 * epoll of a restore. The controller creates the empty instance with the
 * other descriptions; its targets are registered later, in the one task
 * that owns it (EpollFileEntry.owner_pid, the task it was dumped from), once
 * that task's fds are at their final numbers: epoll keys each registration
 * by (file, fd number), and the application's later EPOLL_CTL_MOD/DEL name
 * its own fd numbers, never the controller's service fds.
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

/* Whether the owner of @fe holds it, and holds every target, before anything is forked. */
static int epoll_check_owner(struct restore_ctx *ctx, const FileEntry *fe)
{
	const EpollFileEntry *e = fe->epoll;
	const struct rst_task *t = rst_find_task(ctx, (pid_t)e->owner_pid);
	const struct rst_task_files *tf = t ? t->files : NULL;
	bool holds = false;
	size_t i;

	for (i = 0; tf && i < tf->nr_fds && !holds; i++)
		holds = tf->fds[i]->id == fe->id;
	if (!holds) {
		pr_err("file %u: epoll owner pid %u does not hold it\n", fe->id, e->owner_pid);
		return -EINVAL;
	}
	for (i = 0; i < e->n_targets; i++) {
		if (!task_fd(tf, e->targets[i]->tfd)) {
			pr_err("file %u: epoll target fd %u is not an fd of pid %u\n", fe->id,
			       e->targets[i]->tfd, e->owner_pid);
			return -EINVAL;
		}
	}
	return 0;
}

int rst_epoll_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	int fd, err;

	err = epoll_check_owner(ctx, fe);
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

int rst_epoll_register(const struct rst_task *t, uint32_t epfd, const FileEntry *fe)
{
	size_t i;

	for (i = 0; i < fe->epoll->n_targets; i++) {
		const EpollTargetEntry *te = fe->epoll->targets[i];
		struct epoll_event ev = { .events = te->events, .data.u64 = te->data };

		if (epoll_ctl((int)epfd, EPOLL_CTL_ADD, (int)te->tfd, &ev)) {
			pr_perror("pid %u: epoll fd %u: cannot register fd %u (events %x)",
				  t->pe->pid, epfd, te->tfd, te->events);
			return neg_errno();
		}
	}
	pr_debug("pid %u: epoll fd %u: %zu targets registered\n", t->pe->pid, epfd,
		 fe->epoll->n_targets);
	return 0;
}
