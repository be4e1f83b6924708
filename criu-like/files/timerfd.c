// SPDX-License-Identifier: GPL-2.0
/*
 * eventfd, signalfd, timerfd and inotify of a restore: each description is
 * created anew in the controller, before the first fork, with the state
 * files.img holds (Documentation/files.md). Two things wait for the tasks
 * (rst_timerfd_installed()): epoll targets (restore-files-epoll.c), and
 * arming timerfds, so their time left counts from as late as we can.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define LOG_PREFIX "restore-files: "
#include "log.h"
#include "restore-files-anon.h"
#include "util.h"

#ifndef TFD_IOC_SET_TICKS
/* Linux 3.17 (CONFIG_CHECKPOINT_RESTORE); linux/timerfd.h clashes with sys/timerfd.h */
#define TFD_IOC_SET_TICKS _IOW('T', 0, uint64_t)
#endif

/* Past this many watch descriptors to skip, an inotify is refused (each skip is two syscalls). */
#define INOTIFY_MAX_WD_SKIP (1 << 20)

int rst_anonfd_check(const FileEntry *fe)
{
	bool ok;

	switch (fe->type) {
	case FILE_TYPE__FILE_EVENTFD:
		ok = fe->eventfd != NULL;
		break;
	case FILE_TYPE__FILE_SIGNALFD:
		ok = fe->signalfd != NULL;
		break;
	case FILE_TYPE__FILE_TIMERFD:
		ok = fe->timerfd != NULL && fe->timerfd->value_nsec < 1000000000ull &&
		     fe->timerfd->interval_nsec < 1000000000ull;
		break;
	case FILE_TYPE__FILE_EPOLL:
		ok = fe->epoll != NULL;
		break;
	case FILE_TYPE__FILE_INOTIFY:
		ok = fe->inotify != NULL;
		break;
	default:
		ok = false;
		break;
	}
	if (!ok) {
		pr_err("files.img: file %u lacks the description of its type %d, or it is bad\n",
		       fe->id, fe->type);
		return -EINVAL;
	}
	return 0;
}

static int open_eventfd(const FileEntry *fe)
{
	const EventfdFileEntry *e = fe->eventfd;
	int flags = EFD_CLOEXEC | (int)(e->flags & O_NONBLOCK) | (e->semaphore ? EFD_SEMAPHORE : 0);
	uint64_t add = e->counter;
	int fd;

	/* eventfd() takes an unsigned int: a larger counter is written, which adds to it. */
	fd = eventfd(add <= UINT32_MAX ? (unsigned int)add : 0, flags);
	if (fd < 0) {
		pr_perror("file %u: eventfd", fe->id);
		return neg_errno();
	}
	if (add > UINT32_MAX && write(fd, &add, sizeof(add)) != sizeof(add)) {
		pr_perror("file %u: cannot set the eventfd counter to %llu", fe->id,
			  (unsigned long long)add);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static int open_signalfd(const FileEntry *fe)
{
	const SignalfdFileEntry *e = fe->signalfd;
	sigset_t set;
	int sig, fd;

	sigemptyset(&set);
	for (sig = 1; sig <= 64; sig++)
		if (e->sigmask & (1ull << (sig - 1)))
			sigaddset(&set, sig);
	fd = signalfd(-1, &set, SFD_CLOEXEC | (int)(e->flags & O_NONBLOCK));
	if (fd < 0) {
		pr_perror("file %u: signalfd with mask %016llx", fe->id,
			  (unsigned long long)e->sigmask);
		return neg_errno();
	}
	return fd;
}

/*
 * The time left at the dump counts from now. An absolute timer is set
 * absolute again (TFD_TIMER_CANCEL_ON_SET needs it), at now + the time left.
 */
static int timerfd_arm(const FileEntry *fe, int fd)
{
	const TimerfdFileEntry *e = fe->timerfd;
	struct itimerspec its = { 0 };
	struct timespec now;

	its.it_value.tv_sec = (time_t)e->value_sec;
	its.it_value.tv_nsec = (long)e->value_nsec;
	its.it_interval.tv_sec = (time_t)e->interval_sec;
	its.it_interval.tv_nsec = (long)e->interval_nsec;
	/* fdinfo shows 0 left for a periodic timer caught expiring: it is still armed */
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec) {
		if (!its.it_interval.tv_sec && !its.it_interval.tv_nsec)
			return 0;
		its.it_value.tv_nsec = 1;
	}
	if (e->settime_flags & TFD_TIMER_ABSTIME) {
		if (clock_gettime(e->clockid, &now))
			return neg_errno();
		its.it_value.tv_sec += now.tv_sec;
		its.it_value.tv_nsec += now.tv_nsec;
		if (its.it_value.tv_nsec >= 1000000000L) {
			its.it_value.tv_sec++;
			its.it_value.tv_nsec -= 1000000000L;
		}
	}
	if (timerfd_settime(fd, (int)e->settime_flags, &its, NULL))
		return neg_errno();
	return 0;
}

/* Created disarmed: the first task holding it arms it (rst_timerfd_installed()). */
static int open_timerfd(const FileEntry *fe)
{
	const TimerfdFileEntry *e = fe->timerfd;
	int fd;

	fd = timerfd_create(e->clockid, TFD_CLOEXEC | (int)(e->flags & O_NONBLOCK));
	if (fd < 0) {
		pr_perror("file %u: timerfd_create on clock %d", fe->id, e->clockid);
		return neg_errno();
	}
	return fd;
}

/* Arm the timerfd @fe at fd @fd of task @t and give it back its unread expirations. */
static int timerfd_restore(const struct rst_task *t, uint32_t fd, const FileEntry *fe)
{
	const TimerfdFileEntry *e = fe->timerfd;
	uint64_t ticks = e->ticks;
	int err;

	err = timerfd_arm(fe, (int)fd);
	if (err) {
		pr_errno(err, "pid %u fd %u: cannot arm timerfd %u (%llu.%09llu s left, flags %x)",
			 t->pe->pid, fd, fe->id, (unsigned long long)e->value_sec,
			 (unsigned long long)e->value_nsec, e->settime_flags);
		return err;
	}
	/* After timerfd_settime(), which zeroes them: expirations not read yet are kept. */
	if (ticks && ioctl((int)fd, TFD_IOC_SET_TICKS, &ticks)) {
		err = neg_errno();
		pr_errno(err,
			 "pid %u fd %u: cannot give timerfd %u its %llu unread expirations "
			 "(TFD_IOC_SET_TICKS needs CONFIG_CHECKPOINT_RESTORE)",
			 t->pe->pid, fd, fe->id, (unsigned long long)ticks);
		return err;
	}
	return 0;
}

/*
 * Watch @w->path with watch descriptor @w->wd. inotify gives the next number
 * after the last one it gave (idr_alloc_cyclic), so a wd is reached by adding
 * and removing the watch until it comes out right; each removal queues an
 * IN_IGNORED event, which *@ret_skipped tells the caller to drain.
 */
static int inotify_add_one(const FileEntry *fe, int fd, const InotifyWatchEntry *w,
			   const char *path, bool *ret_skipped)
{
	uint32_t mask = w->mask & ~(uint32_t)IN_MASK_ADD;
	unsigned int tries = 0;
	int wd;

	for (;;) {
		wd = inotify_add_watch(fd, path, mask);
		if (wd < 0) {
			pr_perror("file %u: cannot watch %s (mask %x)", fe->id, path, mask);
			return neg_errno();
		}
		if ((uint32_t)wd >= w->wd || ++tries > INOTIFY_MAX_WD_SKIP)
			break;
		if (inotify_rm_watch(fd, wd))
			return neg_errno();
		*ret_skipped = true;
	}
	if ((uint32_t)wd != w->wd) {
		pr_err("file %u: the watch of %s got descriptor %d, it was %u at the dump\n",
		       fe->id, path, wd, w->wd);
		return -EBUSY;
	}
	return 0;
}

/* Read away the IN_IGNORED events of the watches removed to skip descriptors. */
static int inotify_drain(int fd)
{
	char buf[4096];
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		return neg_errno();
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	if (errno != EAGAIN || fcntl(fd, F_SETFL, fl))
		return neg_errno();
	return 0;
}

static int inotify_watch_path(const FileEntry *fe, const InotifyWatchEntry *w, char **ret)
{
	struct stat st;

	if (memchr(w->path.data, 0, w->path.len) ||
	    !(*ret = strndup((char *)w->path.data, w->path.len))) {
		pr_err("file %u: watch %u: bad path\n", fe->id, w->wd);
		return -EINVAL;
	}
	if (stat(*ret, &st)) {
		pr_perror("file %u: watch %u: %s", fe->id, w->wd, *ret);
		return neg_errno();
	}
	/* Inode numbers change with a copy or a restore on another machine. */
	if (w->has_ino && (uint64_t)st.st_ino != w->ino)
		pr_warn("file %u: watched %s is inode %llu, it was %llu at the dump\n", fe->id,
			*ret, (unsigned long long)st.st_ino, (unsigned long long)w->ino);
	return 0;
}

static int open_inotify(const FileEntry *fe)
{
	const InotifyFileEntry *e = fe->inotify;
	_cleanup_close_ int fd = -1;
	bool skipped = false;
	size_t i;
	int err;

	fd = inotify_init1(IN_CLOEXEC | (int)(e->flags & O_NONBLOCK));
	if (fd < 0) {
		pr_perror("file %u: inotify_init1", fe->id);
		return neg_errno();
	}
	for (i = 0; i < e->n_watches; i++) {
		const InotifyWatchEntry *w = e->watches[i];
		_cleanup_free_ char *path = NULL;

		if (i && w->wd <= e->watches[i - 1]->wd) {
			pr_err("file %u: watch descriptors not ascending (%u after %u)\n", fe->id,
			       w->wd, e->watches[i - 1]->wd);
			return -EINVAL;
		}
		err = inotify_watch_path(fe, w, &path);
		if (!err)
			err = inotify_add_one(fe, fd, w, path, &skipped);
		if (err)
			return err;
	}
	if (skipped) {
		err = inotify_drain(fd);
		if (err) {
			pr_errno(err, "file %u: cannot drain the inotify", fe->id);
			return err;
		}
	}
	return TAKE_FD(fd);
}

int rst_anonfd_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];

	switch (fe->type) {
	case FILE_TYPE__FILE_EVENTFD:
		return open_eventfd(fe);
	case FILE_TYPE__FILE_SIGNALFD:
		return open_signalfd(fe);
	case FILE_TYPE__FILE_TIMERFD:
		return open_timerfd(fe);
	case FILE_TYPE__FILE_EPOLL:
		return rst_epoll_open(ctx, pos);
	case FILE_TYPE__FILE_INOTIFY:
		return open_inotify(fe);
	default:
		break;
	}
	pr_err("file %u: type %d is not an anonymous-inode file\n", fe->id, fe->type);
	return -EINVAL;
}

/* Whether @t is the first task, in ctx->tasks order, holding file @id. */
static bool first_holder(const struct restore_ctx *ctx, const struct rst_task *t, uint32_t id)
{
	unsigned int i;
	size_t j;

	for (i = 0; i < ctx->nr_tasks && &ctx->tasks[i] != t; i++) {
		const struct rst_task_files *tf = ctx->tasks[i].files;

		for (j = 0; tf && j < tf->nr_fds; j++)
			if (tf->fds[j]->id == id)
				return false;
	}
	return true;
}

int rst_timerfd_installed(struct restore_ctx *ctx, struct rst_task *t)
{
	const struct rst_task_files *tf = t->files;
	size_t i, j;
	int err = 0;

	for (i = 0; i < tf->nr_fds && !err; i++) {
		const FdEntry *fd = tf->fds[i];
		const FileEntry *fe = rst_file_index_find(&ctx->files->idx, fd->id);
		bool again = false;

		if (!fe || fe->type != FILE_TYPE__FILE_TIMERFD)
			continue;
		/* Once per description, through whichever of its fds comes first. */
		for (j = 0; j < i && !again; j++)
			again = tf->fds[j]->id == fd->id;
		if (!again && first_holder(ctx, t, fe->id))
			err = timerfd_restore(t, fd->fd, fe);
	}
	return err;
}
