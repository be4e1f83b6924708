// SPDX-License-Identifier: GPL-2.0
/*
 * timerfd: the clock, the settime flags, the time left, the interval and the
 * expirations not read, from /proc/PID/fdinfo/N. Nothing is changed in the
 * task but what timerfd_gettime() does to it (see timerfd_dump()). Restore
 * creates it disarmed in the controller; the first task holding it arms it
 * once its fds are in place (timerfd_installed()), so its time left counts
 * from as late as we can.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <time.h>

#include "anon.h"
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

/* The kind, at the end of this file. */
extern const struct file_kind timerfd_kind;

#ifndef TFD_IOC_SET_TICKS
/* Linux 3.17 (CONFIG_CHECKPOINT_RESTORE); linux/timerfd.h clashes with sys/timerfd.h */
#define TFD_IOC_SET_TICKS _IOW('T', 0, uint64_t)
#endif

static int timerfd_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return !strcmp(f->link, "anon_inode:[timerfd]");
}

static void timerfd_fill(const struct fd_info *f, const struct fdinfo *fi, struct file_desc *d,
			 void *entry)
{
	TimerfdFileEntry *e = entry;

	timerfd_file_entry__init(e);
	e->flags = f->flags;
	e->clockid = fi->timerfd.clockid;
	e->ticks = fi->timerfd.ticks;
	e->settime_flags = (uint32_t)fi->timerfd.settime_flags;
	/* fdinfo shows it_value as the time left, whatever the settime flags were */
	e->value_sec = fi->timerfd.it_value_sec;
	e->value_nsec = fi->timerfd.it_value_nsec;
	e->interval_sec = fi->timerfd.it_interval_sec;
	e->interval_nsec = fi->timerfd.it_interval_nsec;
	d->fe.type = FILE_TYPE__FILE_TIMERFD;
	d->fe.timerfd = e;
	pr_debug("pid %d fd %d: timerfd clock %d, %llu.%09llu s left, interval %llu.%09llu s, "
		 "%llu ticks\n",
		 f->pid, f->fd, e->clockid, (unsigned long long)e->value_sec,
		 (unsigned long long)e->value_nsec, (unsigned long long)e->interval_sec,
		 (unsigned long long)e->interval_nsec, (unsigned long long)e->ticks);
}

static int timerfd_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct itimerspec its;

	(void)ctx;
	/*
	 * An expired periodic timer is not forwarded until it is read or asked:
	 * fdinfo would show 1 tick and 0 s left, whatever the overruns. A
	 * timerfd_gettime() folds them into the ticks (the count a read gives
	 * is the same) and restarts the timer, so fdinfo then tells the truth.
	 */
	if (timerfd_gettime(f->dfd, &its)) {
		pr_perror("pid %d fd %d: timerfd_gettime", f->pid, f->fd);
		return neg_errno();
	}
	return anon_dump_fdinfo(f, FDINFO_TIMERFD, sizeof(TimerfdFileEntry), timerfd_fill, d);
}

/* ---- restore ---- */
static int timerfd_check(const FileEntry *fe)
{
	return anon_check(fe, fe->timerfd != NULL && fe->timerfd->value_nsec < 1000000000ull &&
				      fe->timerfd->interval_nsec < 1000000000ull);
}

/* Created disarmed: the first task holding it arms it (timerfd_installed()). */
static int timerfd_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const TimerfdFileEntry *e = fe->timerfd;
	int fd;

	fd = timerfd_create(e->clockid, TFD_CLOEXEC | (int)(e->flags & O_NONBLOCK));
	if (fd < 0) {
		pr_perror("file %u: timerfd_create on clock %d", fe->id, e->clockid);
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

/*
 * In task @t, once every fd is at its number (end of rst_files_install()):
 * arm every timerfd of which @t is the first holder (ctx->tasks order), with
 * its time left and its unread expirations, through the first of its fds.
 */
static int timerfd_installed(struct restore_ctx *ctx, struct rst_task *t)
{
	const struct rst_task_files *tf = t->files;
	size_t i, j;
	int err = 0;

	if (!rst_kind_get(ctx, &timerfd_kind)->n)
		return 0;
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

const struct file_kind timerfd_kind = {
	.name = "timerfd",
	.match = timerfd_match,
	.dump = timerfd_dump,
	.types = { FILE_TYPE__FILE_TIMERFD },
	.check = timerfd_check,
	.open = timerfd_open,
	.installed = timerfd_installed,
};
