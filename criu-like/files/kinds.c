// SPDX-License-Identifier: GPL-2.0
/*
 * Every kind of open file, in the order the dump asks them whether an fd is
 * theirs (the first to say yes dumps it); the restore runs their hooks in
 * the same order. Adding a kind: its file, its line here (and in the extern
 * above), one FileEntry part in images/ (Documentation/architecture.md).
 */
#include "files-int.h"
#include "util.h"

/* Each kind's table, at the end of its own file. */
extern const struct file_kind reg_kind, pty_kind, chr_kind, pipe_kind, fifo_kind;
extern const struct file_kind eventfd_kind, signalfd_kind, pidfd_kind, epoll_kind;
extern const struct file_kind timerfd_kind, inotify_kind, unix_kind, inet_kind;
extern const struct file_kind fanotify_kind, mqueue_kind, netlink_kind, nsfs_kind, tun_kind;
extern const struct file_kind packet_kind, io_uring_kind;

/* clang-format off */
const struct file_kind *const file_kinds[] = {
	&mqueue_kind,	/* files/mqueue.c: before reg_kind, which would take its "/NAME" */
	&reg_kind,	/* files/reg.c, reg-ghost.c */
	&pty_kind,	/* files/pty.c, pty-data.c: before chr_kind, which keeps the --shell-job terminal */
	&tun_kind,	/* files/tun.c: before chr_kind, which refuses the devices it does not know */
	&chr_kind,	/* files/chr.c */
	&pipe_kind,	/* files/pipe.c */
	&fifo_kind,	/* files/fifo.c */
	&eventfd_kind,	/* files/eventfd.c */
	&signalfd_kind,	/* files/signalfd.c */
	&pidfd_kind,	/* files/pidfd.c: before epoll_kind, whose installed hook may watch a pidfd */
	&nsfs_kind,	/* files/nsfs.c: reopened late like pidfds */
	&io_uring_kind,	/* files/io_uring.c: made late, after the late kinds above (its registered files), before epoll */
	&epoll_kind,	/* files/epoll.c */
	&timerfd_kind,	/* files/timerfd.c */
	&inotify_kind,	/* files/inotify.c */
	&unix_kind,	/* files/unix.c, unix-name.c, unix-queue.c, unix-diag.c */
	&inet_kind,	/* files/inet.c, inet-diag.c, inet-opts.c, tcp.c, tcp-repair.c, udp.c */
	&fanotify_kind,	/* files/fanotify.c */
	&netlink_kind,	/* files/netlink.c */
	&packet_kind,	/* files/packet.c */
};
/* clang-format on */

const size_t nr_file_kinds = ARRAY_SIZE(file_kinds);

size_t file_kind_index(const struct file_kind *k)
{
	size_t i;

	for (i = 0; i < nr_file_kinds && file_kinds[i] != k; i++)
		;
	return i;
}

const struct file_kind *file_kind_of_type(int type)
{
	size_t i, j;

	for (i = 0; i < nr_file_kinds; i++)
		for (j = 0; j < ARRAY_SIZE(file_kinds[i]->types) && file_kinds[i]->types[j]; j++)
			if ((int)file_kinds[i]->types[j] == type)
				return file_kinds[i];
	return NULL;
}
