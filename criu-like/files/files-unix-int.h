/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_UNIX_INT_H
#define CRIU_LIKE_FILES_UNIX_INT_H

/*
 * The receive queue of a unix socket at dump time, shared by files-unix.c
 * (the socket) and files-unix-queue.c (the peek at its queue).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "files-int.h"

#define USK_NAME_MAX (sizeof(((struct sockaddr_un *)0)->sun_path))

/* The name of the sender of a datagram. */
struct usk_from {
	unsigned int len; /* 0: an unbound sender (or a stream) */
	char name[USK_NAME_MAX];
};

/* The control data of one queue element. */
struct usk_scm {
	unsigned int elem;
	int *fds; /* malloc'ed: the fds in flight, installed in the dumper by the peek */
	unsigned int nr_fds;
	bool has_creds; /* SO_PASSCRED: what the receiver would be told */
	struct ucred creds;
};

/*
 * The receive queue of a socket: bytes, where each element ends (a datagram,
 * a packet, or a run of stream bytes), who sent each datagram, and the
 * elements with control data, in queue order.
 */
struct usk_queue {
	uint8_t *data;
	size_t len, cap;
	size_t *ends;
	struct usk_from *from; /* per datagram: who sent it */
	unsigned int n, cap_n, nr_named;
	struct usk_scm *scm;
	unsigned int nr_scm, cap_scm;
};

/*
 * The receive queue of @f (type @type, @shut_rd: shut down for receiving)
 * into @q, left in the socket as it was; the SO_PEEK_OFF found in
 * *@ret_peek_off (-1: disabled). Fds in flight are installed in the dumper
 * (q->scm[].fds). 0 or -errno (logged, naming the pid and fd).
 */
int usk_peek_queue(const struct fd_info *f, int type, bool shut_rd, struct usk_queue *q,
		   int *ret_peek_off);
/* Free @q and close the fds in flight it still holds. */
void usk_queue_fini(struct usk_queue *q);

#endif
