// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets of a restore (FILE_UNIXSK), created in the controller before
 * any fork like every description. Sockets that belong together are made
 * together, the first time one of them is opened, and the others are parked
 * at their own slot of f->fds until rst_files_open() reaches them:
 *
 * - a listening socket: bound, listening, then the connections it accepted
 *   (their clients connect and are accepted at once), then the connections
 *   still in its backlog, connected in the saved order and left there;
 * - two sockets connected to each other: socketpair(), then bound to their
 *   names (bind() works on a connected unix socket); a stream pair with a
 *   name whose listening socket is gone: accepted from a temporary listening
 *   socket on that name (several accepted sockets share it);
 * - a socket whose peer was closed: socketpair(), the other end closed after
 *   the queue was refilled from it;
 * - a datagram socket connected to a bound one: that one first, then
 *   connect(); with --ext-unix-sk, connect() to a name outside the tree.
 *
 * Receive queues are refilled from the peer, from the bound socket that sent
 * each datagram, or from a new unbound socket, before shutdown() and the
 * saved options and flags are applied. A queue with fds in flight or
 * credentials waits until every description is open: it is refilled by
 * rst_unix_late() (restore-files-unix-queue.c), and the options of the
 * sockets taking part are applied after it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define LOG_PREFIX "restore-files: "
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

#define TCP_ESTABLISHED 1
#define TCP_LISTEN 10
#define FD_IN_PROGRESS (-2) /* f->fds[] of a socket being opened: a cycle of peers */

const UnixSkEntry *usk_at(const struct rst_files *f, size_t pos)
{
	return f->idx.by_id[pos]->unixsk;
}

uint32_t usk_id(const struct rst_files *f, size_t pos)
{
	return f->idx.by_id[pos]->id;
}

/* The position of the unix socket with inode @ino, or -1. */
long usk_find(const struct rst_files *f, uint64_t ino)
{
	size_t i;

	for (i = 0; i < f->idx.n; i++)
		if (f->idx.by_id[i]->type == FILE_TYPE__FILE_UNIXSK && usk_at(f, i)->ino == ino)
			return (long)i;
	return -1;
}

static bool same_name(const UnixSkEntry *a, const UnixSkEntry *b)
{
	return a->has_name && b->has_name && a->name.len == b->name.len &&
	       !memcmp(a->name.data, b->name.data, a->name.len);
}

/* The listening socket @e was accepted from (it has its name), or -1. */
static long usk_listener_named(const struct rst_files *f, const UnixSkEntry *e)
{
	size_t i;

	for (i = 0; i < f->idx.n; i++) {
		const UnixSkEntry *l;

		if (f->idx.by_id[i]->type != FILE_TYPE__FILE_UNIXSK)
			continue;
		l = usk_at(f, i);
		if (l != e && l->state == TCP_LISTEN && l->type == e->type && same_name(l, e))
			return (long)i;
	}
	return -1;
}

/* The listening socket with the client @ino in its backlog, or -1. */
static long usk_listener_of(const struct rst_files *f, uint64_t ino)
{
	size_t i, k;

	for (i = 0; i < f->idx.n; i++) {
		const UnixSkEntry *l;

		if (f->idx.by_id[i]->type != FILE_TYPE__FILE_UNIXSK)
			continue;
		l = usk_at(f, i);
		for (k = 0; l->state == TCP_LISTEN && k < l->n_icons_peer; k++)
			if (l->icons_peer[k] == ino)
				return (long)i;
	}
	return -1;
}

int usk_addr(const ProtobufCBinaryData *name, struct sockaddr_un *sa, socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!name->len || name->len > sizeof(sa->sun_path))
		return -EINVAL;
	memcpy(sa->sun_path, name->data, name->len);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + name->len);
	return 0;
}

static int usk_socket(const UnixSkEntry *e, uint32_t id)
{
	/* Non-blocking while restoring, so a full queue fails instead of hanging. */
	int sk = socket(AF_UNIX, (int)e->type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (sk < 0) {
		pr_perror("file %u: socket(AF_UNIX, %u)", id, e->type);
		return neg_errno();
	}
	return sk;
}

/*
 * bind() to the saved name. A path still there from the dumped socket (a
 * socket file is not removed when its socket closes) is removed first; a
 * name that was unlinked after bind() is unlinked again.
 */
static int usk_bind_keep(int sk, const UnixSkEntry *e, uint32_t id, bool keep)
{
	struct sockaddr_un sa;
	socklen_t len;
	struct stat st;
	bool path;

	if (!e->has_name)
		return 0;
	if (usk_addr(&e->name, &sa, &len)) {
		pr_err("file %u: bad socket name of %zu bytes\n", id, e->name.len);
		return -EINVAL;
	}
	path = sa.sun_path[0] != '\0';
	if (path && !lstat(sa.sun_path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			pr_err("file %u: %s exists and is not a socket file\n", id, sa.sun_path);
			return -EEXIST;
		}
		if (unlink(sa.sun_path) && errno != ENOENT) {
			pr_perror("file %u: cannot remove the old socket file %s", id, sa.sun_path);
			return neg_errno();
		}
	}
	if (bind(sk, (struct sockaddr *)&sa, len)) {
		pr_perror("file %u: cannot bind to %s%s", id, path ? "" : "@", sa.sun_path + !path);
		return neg_errno();
	}
	if (path && e->name_unlinked && !keep && unlink(sa.sun_path)) {
		pr_perror("file %u: cannot unlink %s again", id, sa.sun_path);
		return neg_errno();
	}
	return 0;
}

static int usk_bind(int sk, const UnixSkEntry *e, uint32_t id)
{
	return usk_bind_keep(sk, e, id, false);
}

static int usk_connect(int sk, const ProtobufCBinaryData *name, uint32_t id)
{
	struct sockaddr_un sa;
	socklen_t len;

	if (usk_addr(name, &sa, &len)) {
		pr_err("file %u: bad peer name of %zu bytes\n", id, name->len);
		return -EINVAL;
	}
	if (connect(sk, (struct sockaddr *)&sa, len)) {
		pr_perror("file %u: cannot connect to %s%s", id, sa.sun_path[0] ? "" : "@",
			  sa.sun_path + !sa.sun_path[0]);
		return neg_errno();
	}
	return 0;
}

int usk_set_sndbuf(int sk, int val)
{
	/* SO_SNDBUFFORCE (CAP_NET_ADMIN) passes net.core.wmem_max; the kernel doubles it. */
	val /= 2;
	if (setsockopt(sk, SOL_SOCKET, SO_SNDBUFFORCE, &val, sizeof(val)) &&
	    setsockopt(sk, SOL_SOCKET, SO_SNDBUF, &val, sizeof(val)))
		return neg_errno();
	return 0;
}

static int send_all(int from, const ProtobufCBinaryData *b, const struct sockaddr_un *to,
		    socklen_t tolen)
{
	size_t off = 0;

	do {
		ssize_t n = sendto(from, b->data + off, b->len - off, MSG_DONTWAIT | MSG_NOSIGNAL,
				   (const struct sockaddr *)to, to ? tolen : 0);

		if (n < 0)
			return neg_errno();
		off += (size_t)n;
	} while (off < b->len);
	return 0;
}

/*
 * Refill queue elements [@lo, @hi) of entry @e from @from: connected to it,
 * or @e's name is the address. The sender's buffer is forced large enough
 * (the data is charged to the sender until read), then put back.
 */
static int refill_range(int from, const UnixSkEntry *e, size_t lo, size_t hi, bool connected,
			uint32_t id)
{
	struct sockaddr_un sa, *to = NULL;
	socklen_t salen = 0, olen = sizeof(int);
	size_t i, total = 0;
	int old = 0, err = 0;

	if (lo >= hi)
		return 0;
	if (!connected) {
		if (!e->has_name || usk_addr(&e->name, &sa, &salen)) {
			pr_err("file %u: an unbound socket with a receive queue and no peer\n", id);
			return -EINVAL;
		}
		to = &sa;
	}
	for (i = lo; i < hi; i++)
		total += e->queue[i].len + 1024; /* data and the overhead of each skb */
	if (getsockopt(from, SOL_SOCKET, SO_SNDBUF, &old, &olen) ||
	    usk_set_sndbuf(from, (int)min(total * 2 + (1u << 20), (size_t)INT_MAX / 2))) {
		pr_perror("file %u: cannot size the sending socket for %zu bytes", id, total);
		return neg_errno();
	}
	for (i = lo; i < hi && !err; i++)
		err = send_all(from, &e->queue[i], to, salen);
	if (err)
		pr_errno(err, "file %u: cannot refill its receive queue (%zu of %zu)", id, i,
			 e->n_queue);
	if (usk_set_sndbuf(from, old) && !err)
		err = neg_errno();
	return err;
}

/* The queue of @pos from @from, unless it has control data: refilled late (rst_unix_late()). */
static int usk_refill(const struct rst_files *f, int from, size_t pos, bool connected)
{
	const UnixSkEntry *e = usk_at(f, pos);

	if (f->usk_late[pos] & USK_LATE_RECV)
		return 0;
	return refill_range(from, e, 0, e->n_queue, connected, usk_id(f, pos));
}

static int set_timeo(int sk, int opt, bool has, uint64_t us)
{
	struct timeval tv = { .tv_sec = (time_t)(us / 1000000), .tv_usec = (long)(us % 1000000) };

	return has && setsockopt(sk, SOL_SOCKET, opt, &tv, sizeof(tv)) ? neg_errno() : 0;
}

int usk_finish_now(int sk, const UnixSkEntry *e, uint32_t id)
{
	int one = 1, how = -1, rcv = (int)e->rcvbuf / 2;

	/* SO_RCVBUFFORCE like SO_SNDBUFFORCE: the kernel doubles what it is given. */
	if ((e->has_rcvbuf && setsockopt(sk, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv))) ||
	    (e->has_sndbuf && usk_set_sndbuf(sk, (int)e->sndbuf)) ||
	    (e->passcred && setsockopt(sk, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one))) ||
	    (e->has_peek_off &&
	     setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &e->peek_off, sizeof(e->peek_off))) ||
	    set_timeo(sk, SO_RCVTIMEO, e->has_rcvtimeo_us, e->rcvtimeo_us) ||
	    set_timeo(sk, SO_SNDTIMEO, e->has_sndtimeo_us, e->sndtimeo_us)) {
		pr_perror("file %u: cannot set the socket's buffers, SO_PASSCRED, SO_PEEK_OFF or "
			  "timeouts",
			  id);
		return neg_errno();
	}
	switch (e->shutdown & 3) {
	case 1:
		how = SHUT_RD;
		break;
	case 2:
		how = SHUT_WR;
		break;
	case 3:
		how = SHUT_RDWR;
		break;
	}
	if (how >= 0 && shutdown(sk, how)) {
		pr_perror("file %u: shutdown(%d)", id, how);
		return neg_errno();
	}
	if (fcntl(sk, F_SETFL, (int)(e->flags & O_NONBLOCK)) < 0) {
		pr_perror("file %u: cannot set its flags %#x", id, e->flags);
		return neg_errno();
	}
	return 0;
}

/* usk_finish_now(), unless the socket takes part in a late refill: applied after it. */
static int usk_finish(const struct rst_files *f, int sk, size_t pos)
{
	if (f->usk_late[pos])
		return 0;
	return usk_finish_now(sk, usk_at(f, pos), usk_id(f, pos));
}

/*
 * The other end @fd of the socket @pos whose peer was closed: closed, or
 * kept to refill the queue of @pos late.
 */
static void close_or_keep(struct rst_files *f, size_t pos, int fd)
{
	if (f->usk_late[pos] & USK_LATE_RECV)
		f->usk_from[pos] = fd;
	else
		close(fd);
}

static void park(struct rst_files *f, long pos, int fd)
{
	f->fds[pos] = fd;
}

/* Two sockets connected to each other (or @pb < 0: to a socket closed since). */
static int open_pair(struct rst_files *f, size_t pa, long pb)
{
	const UnixSkEntry *a = usk_at(f, pa), *b = pb >= 0 ? usk_at(f, pb) : NULL;
	uint32_t ida = usk_id(f, pa), idb = pb >= 0 ? usk_id(f, pb) : 0;
	int sv[2], err;

	if (socketpair(AF_UNIX, (int)a->type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv)) {
		pr_perror("file %u: socketpair(%u)", ida, a->type);
		return neg_errno();
	}
	err = usk_bind(sv[0], a, ida);
	if (!err && b)
		err = usk_bind(sv[1], b, idb);
	if (!err)
		err = usk_refill(f, sv[1], pa, true);
	if (!err && b)
		err = usk_refill(f, sv[0], (size_t)pb, true);
	if (!err)
		err = usk_finish(f, sv[0], pa);
	if (!err && b)
		err = usk_finish(f, sv[1], (size_t)pb);
	if (err) {
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (!b) {
		close_or_keep(f, pa, sv[1]);
		return sv[0];
	}
	park(f, pb, sv[1]);
	return sv[0];
}

/* A new socket for entry @pos, bound, connected to the listening socket @l. */
static int connect_client(const struct rst_files *f, long pos, const UnixSkEntry *l, int type)
{
	UnixSkEntry tmp = UNIX_SK_ENTRY__INIT;
	const UnixSkEntry *e = pos >= 0 ? usk_at(f, pos) : &tmp;
	uint32_t id = pos >= 0 ? usk_id(f, pos) : 0;
	int sk, err;

	tmp.type = (uint32_t)type;
	sk = usk_socket(e, id);
	if (sk < 0)
		return sk;
	err = usk_bind(sk, e, id);
	if (!err)
		err = usk_connect(sk, &l->name, id);
	if (err) {
		close(sk);
		return err;
	}
	return sk;
}

/*
 * The connection of the accepted socket @pb, made again through the listening
 * socket @lsk (bound to @l's name).
 */
static int accept_one(struct rst_files *f, int lsk, const UnixSkEntry *l, size_t pb)
{
	const UnixSkEntry *b = usk_at(f, pb);
	long pa = b->peer_closed ? -1 : usk_find(f, b->peer);
	const UnixSkEntry *a = pa >= 0 ? usk_at(f, pa) : NULL;
	int csk, ssk, err = 0;

	if (!b->peer_closed && (!a || a->peer != b->ino || f->fds[pa] >= 0)) {
		pr_err("file %u: accepted, but its peer %llu is not in the images\n", usk_id(f, pb),
		       (unsigned long long)b->peer);
		return -EINVAL;
	}
	csk = connect_client(f, pa, l, (int)b->type);
	if (csk < 0)
		return csk;
	ssk = accept4(lsk, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (ssk < 0) {
		pr_perror("file %u: accept", usk_id(f, pb));
		close(csk);
		return neg_errno();
	}
	err = usk_refill(f, csk, pb, true);
	if (!err && a)
		err = usk_refill(f, ssk, (size_t)pa, true);
	if (!err)
		err = usk_finish(f, ssk, pb);
	if (!err && a)
		err = usk_finish(f, csk, (size_t)pa);
	if (err) {
		close(csk);
		close(ssk);
		return err;
	}
	if (!a)
		close_or_keep(f, pb, csk);
	if (a)
		park(f, pa, csk);
	park(f, (long)pb, ssk);
	return 0;
}

/* The connections of the listening socket @lsk: accepted ones, then its backlog in order. */
static int listener_conns(struct rst_files *f, int lsk, size_t pl)
{
	const UnixSkEntry *l = usk_at(f, pl);
	size_t i;
	int err;

	for (i = 0; i < f->idx.n; i++) {
		const UnixSkEntry *b;

		if (i == pl || f->idx.by_id[i]->type != FILE_TYPE__FILE_UNIXSK || f->fds[i] >= 0)
			continue;
		b = usk_at(f, i);
		if (b->state != TCP_ESTABLISHED || usk_listener_named(f, b) != (long)pl)
			continue;
		err = accept_one(f, lsk, l, i);
		if (err)
			return err;
	}
	for (i = 0; i < l->n_icons_peer; i++) {
		long pc = l->icons_peer[i] ? usk_find(f, l->icons_peer[i]) : -1;
		int csk;

		if (l->icons_peer[i] && (pc < 0 || f->fds[pc] >= 0)) {
			pr_err("file %u: the client %llu in its backlog is not in the images\n",
			       usk_id(f, pl), (unsigned long long)l->icons_peer[i]);
			return -EINVAL;
		}
		csk = connect_client(f, pc, l, (int)l->type);
		if (csk < 0)
			return csk;
		/* A client closed since: its connection stays in the backlog, its peer gone. */
		err = pc >= 0 ? usk_finish(f, csk, (size_t)pc) : 0;
		if (err || pc < 0) {
			close(csk);
			if (err)
				return err;
			continue;
		}
		park(f, pc, csk);
	}
	return 0;
}

static int open_listener(struct rst_files *f, size_t pl)
{
	const UnixSkEntry *l = usk_at(f, pl);
	uint32_t id = usk_id(f, pl);
	int sk, err;

	if (!l->has_name) {
		pr_err("file %u: a listening socket without a name\n", id);
		return -EINVAL;
	}
	sk = usk_socket(l, id);
	if (sk < 0)
		return sk;
	err = usk_bind(sk, l, id);
	if (!err && listen(sk, (int)l->backlog)) {
		pr_perror("file %u: listen(%u)", id, l->backlog);
		err = neg_errno();
	}
	if (!err)
		err = listener_conns(f, sk, pl);
	if (!err)
		err = usk_finish(f, sk, pl);
	if (err) {
		close(sk);
		return err;
	}
	return sk;
}

long usk_find_named(const struct rst_files *f, const ProtobufCBinaryData *name)
{
	size_t i;

	for (i = 0; i < f->idx.n; i++) {
		const UnixSkEntry *s;

		if (f->idx.by_id[i]->type != FILE_TYPE__FILE_UNIXSK)
			continue;
		s = usk_at(f, i);
		if (s->type == SOCK_DGRAM && s->has_name && s->name.len == name->len &&
		    !memcmp(s->name.data, name->data, name->len))
			return (long)i;
	}
	return -1;
}

/* The datagram socket of the images bound to @name, opened first if need be; or -errno. */
static int sender_fd(struct restore_ctx *ctx, const ProtobufCBinaryData *name, uint32_t id)
{
	struct rst_files *f = ctx->files;
	long i = usk_find_named(f, name);
	int fd;

	if (i < 0) {
		pr_err("file %u: a datagram in its queue comes from a socket not in the images\n",
		       id);
		return -ENOENT;
	}
	if (f->fds[i] == FD_IN_PROGRESS) {
		pr_err("file %u: its senders need each other first: not supported\n", id);
		return -EINVAL;
	}
	if (f->fds[i] < 0) {
		fd = rst_unix_open(ctx, (size_t)i);
		if (fd < 0)
			return fd;
		park(f, i, fd);
	}
	return f->fds[i];
}

/*
 * The queue of the datagram socket @pos (bound, parked at its slot so its
 * senders can connect to it), each datagram sent by its bound sender, or by
 * @dflt when it had none.
 */
static int refill_dgram(struct restore_ctx *ctx, size_t pos, int dflt)
{
	const UnixSkEntry *e = usk_at(ctx->files, pos);
	uint32_t id = usk_id(ctx->files, pos);
	size_t i;
	int err = 0;

	if (ctx->files->usk_late[pos] & USK_LATE_RECV)
		return 0;
	if (e->n_queue_from != e->n_queue)
		return usk_refill(ctx->files, dflt, pos, false);
	for (i = 0; i < e->n_queue && !err; i++) {
		int from = e->queue_from[i].len ? sender_fd(ctx, &e->queue_from[i], id) : dflt;

		err = from < 0 ? from : refill_range(from, e, i, i + 1, false, id);
	}
	return err;
}

/*
 * A datagram socket connected to @pp (bound, opened first), or any socket
 * connected to a name outside the tree (--ext-unix-sk): connect() again.
 */
static int open_dgram_to(struct restore_ctx *ctx, size_t pos, long pp)
{
	struct rst_files *f = ctx->files;
	const UnixSkEntry *e = usk_at(f, pos);
	uint32_t id = usk_id(f, pos);
	const ProtobufCBinaryData *to = &e->ext_peer_name;
	int sk, err = 0, psk = -1;

	if (pp >= 0) {
		if (f->fds[pp] == FD_IN_PROGRESS) {
			pr_err("file %u: its peers connect in a cycle: not supported\n", id);
			return -EINVAL;
		}
		if (f->fds[pp] < 0) {
			int fd = rst_unix_open(ctx, (size_t)pp);

			if (fd < 0)
				return fd;
			park(f, pp, fd);
		}
		psk = f->fds[pp];
		to = &usk_at(f, pp)->name;
		if (!usk_at(f, pp)->has_name) {
			pr_err("file %u: connected to the unbound file %u\n", id, usk_id(f, pp));
			return -EINVAL;
		}
	}
	sk = usk_socket(e, id);
	if (sk < 0)
		return sk;
	err = usk_bind(sk, e, id);
	if (!err)
		err = usk_connect(sk, to, id);
	/* What is queued here came from the peer (a connected socket takes nothing else). */
	if (!err && e->n_queue && psk < 0) {
		pr_err("file %u: data queued from a socket outside the tree\n", id);
		err = -EINVAL;
	}
	if (!err && psk >= 0) {
		park(f, (long)pos, sk);
		err = refill_dgram(ctx, pos, psk);
	}
	if (!err)
		err = usk_finish(f, sk, pos);
	if (err) {
		close(sk);
		return err;
	}
	return sk;
}

/* Not connected: bound or not, its queue sent by a new unbound socket. */
static int open_alone(struct restore_ctx *ctx, size_t pos)
{
	struct rst_files *f = ctx->files;
	const UnixSkEntry *e = usk_at(f, pos);
	uint32_t id = usk_id(f, pos);
	int sk, err, from = -1;

	sk = usk_socket(e, id);
	if (sk < 0)
		return sk;
	err = usk_bind(sk, e, id);
	if (!err && e->n_queue && !(f->usk_late[pos] & USK_LATE_RECV)) {
		/* Parked (rst_unix_open() takes it back): its senders may connect to it. */
		park(f, (long)pos, sk);
		from = socket(AF_UNIX, (int)e->type | SOCK_CLOEXEC, 0);
		err = from < 0 ? neg_errno() : refill_dgram(ctx, pos, from);
		if (from >= 0)
			close(from);
	}
	if (!err)
		err = usk_finish(f, sk, pos);
	if (err) {
		close(sk);
		return err;
	}
	return sk;
}

/*
 * A connected stream or seqpacket pair with a name and no listening socket of
 * that name in the images (closed since): the named end is accepted from a
 * temporary listening socket on its name, so several accepted sockets can
 * share the name as they did (bind() would refuse the second).
 */
static int open_pair_named(struct rst_files *f, size_t pa, size_t pb)
{
	size_t ps = usk_at(f, pb)->has_name ? pb : pa;
	const UnixSkEntry *s = usk_at(f, ps);
	uint32_t id = usk_id(f, ps);
	struct sockaddr_un sa;
	socklen_t len;
	int lsk, err, fd;

	lsk = usk_socket(s, id);
	if (lsk < 0)
		return lsk;
	err = usk_bind_keep(lsk, s, id, true);
	if (!err && listen(lsk, 1))
		err = neg_errno();
	if (!err)
		err = accept_one(f, lsk, s, ps);
	close(lsk);
	if (!err && s->name_unlinked && !usk_addr(&s->name, &sa, &len) && sa.sun_path[0] &&
	    unlink(sa.sun_path))
		err = neg_errno();
	if (err) {
		pr_errno(err, "file %u: cannot connect it again through its name", id);
		return err;
	}
	fd = f->fds[pa];
	f->fds[pa] = -1;
	return fd;
}

/* @pos made with the listening socket @pl, which is parked at its slot. */
static int open_via_listener(struct rst_files *f, size_t pos, size_t pl)
{
	int fd = open_listener(f, pl);

	if (fd < 0)
		return fd;
	park(f, (long)pl, fd);
	fd = f->fds[pos];
	if (fd < 0) {
		pr_err("file %u: not one of the connections of file %u\n", usk_id(f, pos),
		       usk_id(f, pl));
		return -EINVAL;
	}
	return fd;
}

static int open_connected(struct restore_ctx *ctx, size_t pos)
{
	struct rst_files *f = ctx->files;
	const UnixSkEntry *e = usk_at(f, pos);
	long pp = usk_find(f, e->peer), pl;

	if (pp < 0) {
		pr_err("file %u: its peer %llu is not in the images\n", usk_id(f, pos),
		       (unsigned long long)e->peer);
		return -EINVAL;
	}
	if (usk_at(f, pp)->peer != e->ino) {
		if (e->type != SOCK_DGRAM) {
			pr_err("file %u: connected to file %u, which is connected elsewhere\n",
			       usk_id(f, pos), usk_id(f, pp));
			return -EINVAL;
		}
		return open_dgram_to(ctx, pos, pp);
	}
	/* Accepted from a listening socket of the tree (either end may be the accepted one). */
	pl = usk_listener_named(f, e);
	if (pl < 0 && e->type != SOCK_DGRAM)
		pl = usk_listener_named(f, usk_at(f, pp));
	if (pl >= 0 && e->type != SOCK_DGRAM)
		return open_via_listener(f, pos, (size_t)pl);
	if (e->type != SOCK_DGRAM && (e->has_name || usk_at(f, pp)->has_name))
		return open_pair_named(f, pos, (size_t)pp);
	return open_pair(f, pos, pp);
}

int rst_unix_open(struct restore_ctx *ctx, size_t pos)
{
	struct rst_files *f = ctx->files;
	const UnixSkEntry *e = usk_at(f, pos);
	long pl;
	int fd;

	if (!f->usk_late) {
		fd = rst_unix_late_init(f);
		if (fd)
			return fd;
	}
	/* Made with another socket already: hand it over (the caller moves it). */
	if (f->fds[pos] >= 0) {
		fd = f->fds[pos];
		f->fds[pos] = -1;
		return fd;
	}
	f->fds[pos] = FD_IN_PROGRESS;
	pl = e->state == TCP_LISTEN ? -1 : usk_listener_of(f, e->ino);
	if (e->state == TCP_LISTEN)
		fd = open_listener(f, pos);
	else if (pl >= 0) /* in its backlog */
		fd = open_via_listener(f, pos, (size_t)pl);
	else if (e->peer_closed)
		fd = open_pair(f, pos, -1);
	else if (e->has_peer)
		fd = open_connected(ctx, pos);
	else if (e->has_ext_peer_name)
		fd = open_dgram_to(ctx, pos, -1);
	else
		fd = open_alone(ctx, pos);
	f->fds[pos] = -1;
	return fd;
}
