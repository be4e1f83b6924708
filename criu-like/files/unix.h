/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_UNIX_H
#define CRIU_LIKE_FILES_UNIX_H

/*
 * Unix sockets (FILE_UNIXSK), the kind's own header, shared by its files:
 * unix.c (the socket: dump, peers, open, the kind table), unix-diag.c (what
 * sock_diag says about a socket), unix-name.c (bound names and listening
 * sockets) and unix-queue.c (receive queues with their fds in flight and
 * credentials).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "files-int.h"
#include "restore-files-int.h"

#define USK_NAME_MAX (sizeof(((struct sockaddr_un *)0)->sun_path))

#define TCP_ESTABLISHED 1
#define TCP_LISTEN 10

extern const struct file_kind unix_kind;

/* ---- dump ---- */

/* What sock_diag says about one unix socket. */
struct usk_diag {
	uint32_t ino, peer;
	bool has_peer, has_vfs;
	uint8_t type, state, shutdown;
	char name[USK_NAME_MAX];
	unsigned int name_len;
	uint32_t vfs_ino;
	uint32_t rqueue, wqueue; /* a listening socket: backlog length and its maximum */
	uint32_t *icons; /* malloc'ed: the connections in the backlog */
	unsigned int nr_icons;
};

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

/* unix-diag.c: sock_diag of the unix socket @ino into @ret (usk_diag_fini() it); -ENOENT if none. */
int usk_diag_get(uint32_t ino, struct usk_diag *ret);
void usk_diag_fini(struct usk_diag *d);
/*
 * unix-diag.c: the listening socket with a connection from @client not yet
 * accepted; 0 if none.
 */
int usk_find_listener(uint32_t client, uint32_t *ret);
/* unix-diag.c: the datagram socket bound to @name; 0 if none. */
int usk_sender_ino(const struct usk_from *name, uint32_t *ret);

/* unix.c: @f is @what the socket @peer outside the tree: -EOPNOTSUPP (logged). */
int usk_refuse_outside(const struct fd_info *f, uint32_t peer, const char *what);

/* unix-name.c: the name of the bound socket @dg into @e. */
/* @dir (PATH_MAX bytes) holds the directory of a relative name, e->name_dir points there. */
int usk_dump_name(const struct fd_info *f, const struct usk_diag *dg, UnixSkEntry *e, char *dir);
/* unix-name.c: the connections in the backlog of the listening socket @dg, into @e. */
int usk_dump_icons(const struct dump_ctx *ctx, const struct fd_info *f, const struct usk_diag *dg,
		   UnixSkEntry *e);
/* unix-name.c: every bound sender of a datagram in @q is a socket of the tree. */
int usk_check_senders(const struct dump_ctx *ctx, const struct fd_info *f,
		      const struct usk_queue *q);

/*
 * unix-queue.c: the receive queue of @f (type @type, @shut_rd: shut down for
 * receiving) into @q, left in the socket as it was; the SO_PEEK_OFF found in
 * *@ret_peek_off (-1: disabled). Fds in flight are installed in the dumper
 * (q->scm[].fds). 0 or -errno (logged, naming the pid and fd).
 */
int usk_peek_queue(const struct fd_info *f, int type, bool shut_rd, struct usk_queue *q,
		   int *ret_peek_off);
/* unix-queue.c: free @q and close the fds in flight it still holds. */
void usk_queue_fini(struct usk_queue *q);

/* ---- restore ---- */

#define FD_IN_PROGRESS (-2) /* f->fds[] of a socket being opened: a cycle of peers */

/* A unix socket whose queue has control data (fds in flight, credentials): refilled late. */
#define USK_LATE_RECV 1
/* A unix socket that sends into such a queue: its options and shutdown applied late too. */
#define USK_LATE_SEND 2

/* The kind's restore state: rst_kind_get(ctx, &unix_kind)->priv, NULL without unix sockets. */
struct usk_rst {
	struct rst_files *f;
	const struct rst_kind *k; /* the unix sockets, in id order */
	uint8_t *late; /* per idx position: USK_LATE_* */
	int *from; /* per idx position: the closed peer kept to refill its queue late, or -1 */
	/*
	 * A container's queues with credentials naming pids, and any queue with a
	 * pidfd in flight (file_kind.in_flight_open): refilled by the
	 * root of the tree (inside its pid namespace) once every task exists,
	 * before its own fds are installed (usk_late_in_root()), not by the
	 * controller.
	 */
	bool deferred, in_root;
	bool *made; /* usk_late() in the root: per idx position, made there already */
};

/* unix.c */
const UnixSkEntry *usk_at(const struct usk_rst *u, size_t pos);
uint32_t usk_id(const struct usk_rst *u, size_t pos);
/* The position of the unix socket with inode @ino, or -ENOENT. */
long usk_find(const struct usk_rst *u, uint64_t ino);
int usk_socket(const UnixSkEntry *e, uint32_t id);
int usk_set_sndbuf(int sk, int val);
/* usk_finish_now(), unless the socket takes part in a late refill: applied after it. */
int usk_finish(const struct usk_rst *u, int sk, size_t pos);
/* Options, shutdown state and flags of the socket @sk of entry @e, once its queue is refilled. */
int usk_finish_now(int sk, const UnixSkEntry *e, uint32_t id);
void usk_close_or_keep(struct usk_rst *u, size_t pos, int fd);
void usk_park(struct usk_rst *u, long pos, int fd);
/*
 * The unix socket idx.by_id[@pos], made with the sockets it belongs with
 * (those are parked at their own f->fds slot), or -errno.
 */
int usk_open(struct restore_ctx *ctx, size_t pos);

/* unix-name.c */
int usk_addr(const ProtobufCBinaryData *name, struct sockaddr_un *sa, socklen_t *len);
int usk_bind(int sk, const UnixSkEntry *e, uint32_t id);
int usk_connect(int sk, const ProtobufCBinaryData *name, uint32_t id);
/* The datagram socket bound to @name, or -ENOENT. */
long usk_find_named(const struct usk_rst *u, const ProtobufCBinaryData *name);
/* The datagram socket of the images bound to @name, opened first if need be; or -errno. */
int usk_sender_fd(struct restore_ctx *ctx, const ProtobufCBinaryData *name, uint32_t id);
/* The listening socket @e was accepted from (it has its name), or -ENOENT. */
long usk_listener_named(const struct usk_rst *u, const UnixSkEntry *e);
/* The listening socket with the client @ino in its backlog, or -ENOENT. */
long usk_listener_of(const struct usk_rst *u, uint64_t ino);
int usk_open_listener(struct usk_rst *u, size_t pl);
/* @pos made with the listening socket @pl, which is parked at its slot. */
int usk_open_via_listener(struct usk_rst *u, size_t pos, size_t pl);
/* A connected stream or seqpacket pair @pa, @pb with a name and no listening socket of it. */
int usk_open_pair_named(struct usk_rst *u, size_t pa, size_t pb);

/* unix-queue.c */
/* Mark the sockets of late refills (u->late), before the first unix socket is opened. */
int usk_late_mark(struct usk_rst *u);
/* The queue of @pos from @from, unless it has control data: refilled late (usk_late()). */
int usk_refill(const struct usk_rst *u, int from, size_t pos, bool connected);
/*
 * The queue of the datagram socket @pos (bound, parked at its slot so its
 * senders can connect to it), each datagram sent by its bound sender, or by
 * @dflt when it had none.
 */
int usk_refill_dgram(struct restore_ctx *ctx, size_t pos, int dflt);
/*
 * Once every description is open (before any fork): refill the queues with
 * control data, each message with its fds in flight and credentials, then
 * apply the options and shutdown state held back; close the descriptions
 * only in flight (no task holds them).
 */
int usk_late(struct restore_ctx *ctx);
/* Close what the late refill kept. */
void usk_late_fini(struct usk_rst *u);

#endif
