// SPDX-License-Identifier: GPL-2.0
/*
 * eventfd, signalfd and timerfd: small kernel objects whose whole state is
 * in /proc/PID/fdinfo/N. eventfd: the counter and EFD_SEMAPHORE (fdinfo has
 * it since 6.6). signalfd: the signal mask. timerfd: the clock, the
 * settime flags, the time left, the interval and the expirations not read.
 * Nothing is changed in the task but what timerfd_gettime() does to a
 * timerfd (see timerfd_dump()).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>

#include "files-anon.h"
#include "log.h"
#include "restore-files-anon.h"
#include "util.h"

int anon_fdinfo_read(const struct fd_info *f, enum fdinfo_kind kind, bool plain_ok,
		     struct fdinfo *ret)
{
	int err = proc_parse_fdinfo(f->pid, f->fd, ret);

	if (err) {
		pr_errno(err, "pid %d fd %d: cannot parse the fdinfo of %s", f->pid, f->fd,
			 f->link);
		return err;
	}
	if (ret->kind != kind && !(plain_ok && ret->kind == FDINFO_PLAIN)) {
		pr_err("pid %d fd %d: the fdinfo of %s does not describe it (kind %d)\n", f->pid,
		       f->fd, f->link, ret->kind);
		fdinfo_fini(ret);
		return -EINVAL;
	}
	return 0;
}

void *anon_priv_alloc(struct file_desc *d, size_t size)
{
	free(d->priv);
	d->priv = calloc(1, size);
	return d->priv;
}

static int eventfd_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return !strcmp(f->link, "anon_inode:[eventfd]");
}

static int eventfd_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct fdinfo fi = { 0 };
	EventfdFileEntry *e;
	int err;

	(void)ctx;
	err = anon_fdinfo_read(f, FDINFO_EVENTFD, false, &fi);
	if (err)
		return err;
	e = anon_priv_alloc(d, sizeof(*e));
	if (!e) {
		fdinfo_fini(&fi);
		return -ENOMEM;
	}
	eventfd_file_entry__init(e);
	e->flags = f->flags;
	e->counter = fi.eventfd.count;
	/* Before 6.6 fdinfo does not say: the kernel gives no other way to ask. */
	if (fi.eventfd.semaphore < 0)
		pr_warn("pid %d fd %d: this kernel does not tell whether an eventfd has "
			"EFD_SEMAPHORE: restored without it\n",
			f->pid, f->fd);
	e->semaphore = fi.eventfd.semaphore > 0;
	d->fe.type = FILE_TYPE__FILE_EVENTFD;
	d->fe.eventfd = e;
	pr_debug("pid %d fd %d: eventfd count %llu%s\n", f->pid, f->fd,
		 (unsigned long long)e->counter, e->semaphore ? " (semaphore)" : "");
	fdinfo_fini(&fi);
	return 0;
}

const struct file_kind eventfd_kind = {
	.name = "eventfd",
	.match = eventfd_match,
	.dump = eventfd_dump,
	.types = { FILE_TYPE__FILE_EVENTFD },
	.in_flight = true,
	.check = rst_anonfd_check,
	.open = rst_anonfd_open,
};

static int signalfd_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return !strcmp(f->link, "anon_inode:[signalfd]");
}

static int signalfd_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct fdinfo fi = { 0 };
	SignalfdFileEntry *e;
	int err;

	(void)ctx;
	err = anon_fdinfo_read(f, FDINFO_SIGNALFD, false, &fi);
	if (err)
		return err;
	e = anon_priv_alloc(d, sizeof(*e));
	if (!e) {
		fdinfo_fini(&fi);
		return -ENOMEM;
	}
	signalfd_file_entry__init(e);
	e->flags = f->flags;
	e->sigmask = fi.signalfd.sigmask;
	d->fe.type = FILE_TYPE__FILE_SIGNALFD;
	d->fe.signalfd = e;
	pr_debug("pid %d fd %d: signalfd mask %016llx\n", f->pid, f->fd,
		 (unsigned long long)e->sigmask);
	fdinfo_fini(&fi);
	return 0;
}

const struct file_kind signalfd_kind = {
	.name = "signalfd",
	.match = signalfd_match,
	.dump = signalfd_dump,
	.types = { FILE_TYPE__FILE_SIGNALFD },
	.in_flight = true,
	.check = rst_anonfd_check,
	.open = rst_anonfd_open,
};

static int timerfd_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return !strcmp(f->link, "anon_inode:[timerfd]");
}

static int timerfd_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct fdinfo fi = { 0 };
	struct itimerspec its;
	TimerfdFileEntry *e;
	int err;

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
	err = anon_fdinfo_read(f, FDINFO_TIMERFD, false, &fi);
	if (err)
		return err;
	e = anon_priv_alloc(d, sizeof(*e));
	if (!e) {
		fdinfo_fini(&fi);
		return -ENOMEM;
	}
	timerfd_file_entry__init(e);
	e->flags = f->flags;
	e->clockid = fi.timerfd.clockid;
	e->ticks = fi.timerfd.ticks;
	e->settime_flags = (uint32_t)fi.timerfd.settime_flags;
	/* fdinfo shows it_value as the time left, whatever the settime flags were */
	e->value_sec = fi.timerfd.it_value_sec;
	e->value_nsec = fi.timerfd.it_value_nsec;
	e->interval_sec = fi.timerfd.it_interval_sec;
	e->interval_nsec = fi.timerfd.it_interval_nsec;
	d->fe.type = FILE_TYPE__FILE_TIMERFD;
	d->fe.timerfd = e;
	pr_debug("pid %d fd %d: timerfd clock %d, %llu.%09llu s left, interval %llu.%09llu s, "
		 "%llu ticks\n",
		 f->pid, f->fd, e->clockid, (unsigned long long)e->value_sec,
		 (unsigned long long)e->value_nsec, (unsigned long long)e->interval_sec,
		 (unsigned long long)e->interval_nsec, (unsigned long long)e->ticks);
	fdinfo_fini(&fi);
	return 0;
}

const struct file_kind timerfd_kind = {
	.name = "timerfd",
	.match = timerfd_match,
	.dump = timerfd_dump,
	.types = { FILE_TYPE__FILE_TIMERFD },
	.check = rst_anonfd_check,
	.open = rst_anonfd_open,
	.installed = rst_timerfd_installed,
};
