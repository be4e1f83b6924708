/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_POSIX_MQ_H
#define CRIU_LIKE_POSIX_MQ_H

/*
 * POSIX message queues, shared by their fd kind (files/mqueue.c) and the
 * IPC namespace (ns/ipc.c): the kernel cannot peek at a queue, so reading
 * its messages means receiving them and sending them back.
 */
#include <mqueue.h>
#include <stddef.h>
#include <sys/types.h>

struct mq_msg {
	unsigned int prio;
	size_t len;
	char *data; /* malloc'ed */
};

/*
 * Receive the (at most a->mq_curmsgs) messages of @qfd into @msgs, *@n of
 * them, and send them back at once in the order received, which leaves the
 * queue as it was. @what names the queue in messages. 0 or -errno (logged).
 */
int mq_read_all(int qfd, const char *what, const struct mq_attr *a, struct mq_msg *msgs, long *n);
/*
 * The notification registered on @qfd (mq_notify), from the queue file's
 * text: the registering process (in the reader's pid namespace; 0: none),
 * sigev_notify (SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD) and the signal.
 */
struct mq_notify_info {
	pid_t pid;
	int notify, signo;
};
int mq_notify_read(int qfd, struct mq_notify_info *ni);
/* The same from the text @buf itself (pure). 0, or -EINVAL when malformed. */
int mq_notify_parse(const char *buf, struct mq_notify_info *ni);

#endif
