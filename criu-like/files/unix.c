// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets (FILE_UNIXSK), the socket itself.
 *
 * Dump: type, state, name, peer, shutdown state and the backlog of a
 * listening socket come from sock_diag (unix-diag.c); the receive queue is
 * read with MSG_PEEK from the duplicate the parasite drained, never
 * consumed, with its fds in flight (SCM_RIGHTS) and the senders'
 * credentials (SO_PASSCRED) by unix-queue.c; files.c turns each fd in
 * flight into a description at the end of the dump. Peers are named by
 * inode: a peer must be a socket of the tree, a socket in flight, a
 * connection waiting in the backlog of a listening socket of the tree, or a
 * socket that was closed; with --ext-unix-sk, a bound socket outside, saved
 * by name. Refused: datagrams from bound sockets outside the tree, data a
 * client sent before its connection was accepted, relative path names,
 * sockets of another network namespace.
 *
 * Restore: in the controller before any fork, like every description.
 * Sockets that belong together are made together, the first time one of
 * them is opened, and the others are parked at their own slot of f->fds
 * until rst_files_open() reaches them:
 *
 * - a listening socket: bound, listening, then the connections it accepted
 *   (their clients connect and are accepted at once), then the connections
 *   still in its backlog, connected in the saved order and left there
 *   (unix-name.c);
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
 * usk_late() (unix-queue.c), and the options of the sockets taking part are
 * applied after it.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "ns.h"
#include "unix.h"
#include "util.h"

/* ---- dump ------------------------------------------------------------------------------- */

/* One block (file_desc.priv is freed with free()): the entry and all it points to. */
struct usk_priv {
	UnixSkEntry e;
	ProtobufCBinaryData q[];
};

/*
 * The control data of @q into @p's entry, at @at (room for it all): one
 * UnixSkScm per element that has some, the ids of fds in flight filled in
 * by dump_files_finish(), which takes the fds. Returns where it ended.
 */
static uint8_t *usk_pack_scm(struct usk_priv *p, const struct usk_queue *q, uint8_t *at)
{
	UnixSkScm *s = (UnixSkScm *)at;
	UnixSkScm **v = (UnixSkScm **)(s + q->nr_scm);
	uint32_t *ids = (uint32_t *)(v + q->nr_scm);
	unsigned int i;

	for (i = 0; i < q->nr_scm; i++) {
		const struct usk_scm *c = &q->scm[i];

		unix_sk_scm__init(&s[i]);
		s[i].elem = c->elem;
		s[i].n_fd_ids = c->nr_fds;
		s[i].fd_ids = ids;
		memset(ids, 0, c->nr_fds * sizeof(*ids));
		ids += c->nr_fds;
		s[i].has_pid = s[i].has_uid = s[i].has_gid = c->has_creds;
		s[i].pid = pidns_vpid(c->creds.pid);
		s[i].uid = c->creds.uid;
		s[i].gid = c->creds.gid;
		v[i] = &s[i];
	}
	p->e.n_queue_scm = q->nr_scm;
	p->e.queue_scm = v;
	return (uint8_t *)ids;
}

/* The fds in flight of @q, handed to the file table with the slots of their ids in @e. */
static int usk_hand_fds(struct dump_ctx *ctx, const struct fd_info *f, UnixSkEntry *e,
			struct usk_queue *q)
{
	struct file_table *ft = file_table_get(ctx);
	unsigned int i, k;

	if (!ft)
		return -ENOMEM;
	for (i = 0; i < q->nr_scm; i++) {
		struct usk_scm *c = &q->scm[i];

		for (k = 0; k < c->nr_fds; k++) {
			if (file_in_flight_add(ft, c->fds[k], &e->queue_scm[i]->fd_ids[k], f))
				return -ENOMEM;
			c->fds[k] = -1; /* the table's now */
		}
	}
	return 0;
}

static int usk_pack(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d,
		    const UnixSkEntry *e, struct usk_queue *q)
{
	unsigned int nf = q->nr_named ? q->n : 0, nfds = 0, i;
	size_t names = 0, sz;
	struct usk_priv *p;
	uint8_t *at;

	for (i = 0; i < nf; i++)
		names += q->from[i].len;
	for (i = 0; i < q->nr_scm; i++)
		nfds += q->scm[i].nr_fds;
	sz = sizeof(struct usk_priv) + (q->n + nf) * sizeof(ProtobufCBinaryData) +
	     q->nr_scm * (sizeof(UnixSkScm) + sizeof(UnixSkScm *)) + nfds * sizeof(uint32_t) +
	     e->n_icons_peer * sizeof(uint64_t) + e->name.len + e->name_dir.len +
	     e->ext_peer_name.len + e->file_xattrs.len + q->len + names + sizeof(uint64_t);
	p = malloc(sz);
	if (!p)
		return -ENOMEM;
	p->e = *e;
	at = usk_pack_scm(p, q, (uint8_t *)(p->q + q->n + nf));
	at += (sizeof(uint64_t) - (uintptr_t)at % sizeof(uint64_t)) % sizeof(uint64_t);
	p->e.icons_peer = (uint64_t *)at;
	memcpy(at, e->icons_peer, e->n_icons_peer * sizeof(uint64_t));
	at += e->n_icons_peer * sizeof(uint64_t);
	p->e.name.data = at;
	memcpy(at, e->name.data, e->name.len);
	at += e->name.len;
	p->e.name_dir.data = at;
	memcpy(at, e->name_dir.data, e->name_dir.len);
	at += e->name_dir.len;
	p->e.ext_peer_name.data = at;
	memcpy(at, e->ext_peer_name.data, e->ext_peer_name.len);
	at += e->ext_peer_name.len;
	p->e.file_xattrs.data = at;
	if (e->file_xattrs.len)
		memcpy(at, e->file_xattrs.data, e->file_xattrs.len);
	at += e->file_xattrs.len;
	if (q->len)
		memcpy(at, q->data, q->len);
	for (i = 0; i < q->n; i++) {
		size_t start = i ? q->ends[i - 1] : 0;

		p->q[i].data = at + start;
		p->q[i].len = q->ends[i] - start;
	}
	at += q->len;
	for (i = 0; i < nf; i++) {
		p->q[q->n + i].data = at;
		p->q[q->n + i].len = q->from[i].len;
		memcpy(at, q->from[i].name, q->from[i].len);
		at += q->from[i].len;
	}
	p->e.n_queue = q->n;
	p->e.queue = p->q;
	p->e.n_queue_from = nf;
	p->e.queue_from = p->q + q->n;
	free(d->priv);
	d->priv = p;
	d->fe.unixsk = &p->e;
	d->fe.type = FILE_TYPE__FILE_UNIXSK;
	return usk_hand_fds(ctx, f, &p->e, q);
}

int usk_refuse_outside(const struct fd_info *f, uint32_t peer, const char *what)
{
	pr_err("pid %d fd %d: %s is %s socket %u outside the dumped tree: dump it with "
	       "--ext-unix-sk (sockets connected to a bound socket only)\n",
	       f->pid, f->fd, f->link, what, peer);
	return -EOPNOTSUPP;
}

/* A unix socket connected to @peer, which must be of the tree or in flight by the end. */
struct usk_peer_check {
	pid_t pid;
	int fd;
	uint64_t dev, ino;
	uint32_t peer;
};

/* The kind's dump state (file_kind_dump_state()): the peers checked by unix_check_peers(). */
struct usk_dump {
	struct usk_peer_check *checks;
	unsigned int nr_checks, cap_checks;
};

static struct usk_dump *usk_dump_state(struct dump_ctx *ctx)
{
	void **slot = file_kind_dump_state(ctx, &unix_kind);

	if (slot && !*slot)
		*slot = calloc(1, sizeof(struct usk_dump));
	return slot ? *slot : NULL;
}

static int usk_check_later(struct dump_ctx *ctx, const struct fd_info *f, uint32_t peer)
{
	struct usk_dump *ud = usk_dump_state(ctx);
	struct usk_peer_check *c;

	if (!ud ||
	    file_table_grow((void **)&ud->checks, &ud->cap_checks, ud->nr_checks, sizeof(*c)))
		return -ENOMEM;
	c = &ud->checks[ud->nr_checks++];
	c->pid = f->pid;
	c->fd = f->fd;
	c->dev = f->st.st_dev;
	c->ino = f->st.st_ino;
	c->peer = peer;
	return 0;
}

/*
 * For dump_files_finish(), once every fd in flight is in the table: a
 * socket connected to one neither of the tree nor in flight is refused
 * (-EOPNOTSUPP, logged naming the pid and fd).
 */
static int unix_check_peers(struct dump_ctx *ctx)
{
	struct file_table *ft = file_table_get(ctx);
	struct usk_dump *ud = usk_dump_state(ctx);
	unsigned int i;

	for (i = 0; ft && ud && i < ud->nr_checks; i++) {
		const struct usk_peer_check *c = &ud->checks[i];
		char link[48];
		struct fd_info f = { .pid = c->pid, .fd = c->fd, .link = link };

		if (file_desc_next(ft, c->dev, c->peer, NULL))
			continue; /* in flight */
		snprintf(link, sizeof(link), "socket:[%llu]", (unsigned long long)c->ino);
		return usk_refuse_outside(&f, c->peer, "connected to");
	}
	return ft && ud ? 0 : -ENOMEM;
}

static void unix_dump_fini(struct dump_ctx *ctx, bool resume)
{
	void **slot;
	struct usk_dump *ud;

	(void)resume;
	if (!ctx->files)
		return; /* no file table: no state either */
	slot = file_kind_dump_state(ctx, &unix_kind);
	ud = slot ? *slot : NULL;
	if (!ud)
		return;
	free(ud->checks);
	free(ud);
	*slot = NULL;
}

/* Where the peer of @dg is: in the tree, in a backlog of the tree, closed, or outside. */
static int usk_dump_peer(struct dump_ctx *ctx, const struct fd_info *f, const struct usk_diag *dg,
			 UnixSkEntry *e, struct usk_diag *pd)
{
	uint32_t listener = 0;
	int err;

	if (!dg->has_peer)
		return 0;
	if (!dg->peer) {
		/*
		 * Inode 0: a closed peer, or the socket waiting in the backlog of a
		 * listening socket (no inode before accept()), which lists this one.
		 */
		err = usk_find_listener(dg->ino, &listener);
		if (err)
			return err;
		if (!listener) {
			e->has_peer_closed = e->peer_closed = true;
			return 0;
		}
		if (!sock_in_tree(ctx, f->st.st_dev, listener))
			return usk_refuse_outside(f, listener, "waiting in the backlog of");
		return 0;
	}
	e->has_peer = true;
	e->peer = dg->peer;
	if (sock_in_tree(ctx, f->st.st_dev, dg->peer))
		return 0;
	err = usk_diag_get(dg->peer, pd);
	if (err && err != -ENOENT)
		return err;
	/* Or in flight in a queue, known once every queue is read: checked at the end. */
	if (!ctx->opts->ext_unix_sk || err || !pd->name_len)
		return usk_check_later(ctx, f, dg->peer);
	/*
	 * A stream's peer outside is the accepted end of a listening socket of
	 * that name (or a socket bound to it): the restore connects to the name
	 * again, a new connection the other side has to accept.
	 */
	if (dg->type != SOCK_DGRAM)
		pr_warn("pid %d fd %d: %s is connected to %s%.*s outside the tree: the restore "
			"makes a new connection to it\n",
			f->pid, f->fd, f->link, pd->name[0] ? "" : "@", (int)pd->name_len - 1,
			pd->name + !pd->name[0]);
	e->has_peer = false;
	e->has_ext_peer_name = true;
	e->ext_peer_name.data = (uint8_t *)pd->name;
	e->ext_peer_name.len = pd->name_len;
	return 0;
}

static int usk_sockopts(const struct fd_info *f, UnixSkEntry *e)
{
	int snd = 0, rcv = 0, cred = 0;
	struct timeval rto, sto;
	socklen_t l1 = sizeof(snd), l2 = sizeof(rcv), l3 = sizeof(cred), l4 = sizeof(rto),
		  l5 = sizeof(sto);

	if (getsockopt(f->dfd, SOL_SOCKET, SO_SNDBUF, &snd, &l1) ||
	    getsockopt(f->dfd, SOL_SOCKET, SO_RCVBUF, &rcv, &l2) ||
	    getsockopt(f->dfd, SOL_SOCKET, SO_PASSCRED, &cred, &l3) ||
	    getsockopt(f->dfd, SOL_SOCKET, SO_RCVTIMEO, &rto, &l4) ||
	    getsockopt(f->dfd, SOL_SOCKET, SO_SNDTIMEO, &sto, &l5)) {
		pr_perror("pid %d fd %d: getsockopt of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	e->has_sndbuf = e->has_rcvbuf = true;
	e->sndbuf = (uint32_t)snd;
	e->rcvbuf = (uint32_t)rcv;
	e->has_passcred = cred != 0;
	e->passcred = cred != 0;
	e->rcvtimeo_us = (uint64_t)rto.tv_sec * 1000000 + (uint64_t)rto.tv_usec;
	e->has_rcvtimeo_us = e->rcvtimeo_us != 0;
	e->sndtimeo_us = (uint64_t)sto.tv_sec * 1000000 + (uint64_t)sto.tv_usec;
	e->has_sndtimeo_us = e->sndtimeo_us != 0;
	return 0;
}

/* SO_PEEK_OFF of a socket that has no queue to read (-1: disabled). */
static int usk_peek_off(const struct fd_info *f, int *ret)
{
	socklen_t len = sizeof(*ret);

	if (getsockopt(f->dfd, SOL_SOCKET, SO_PEEK_OFF, ret, &len)) {
		pr_perror("pid %d fd %d: SO_PEEK_OFF of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	return 0;
}

static int usk_fill(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d,
		    const struct usk_diag *dg, struct usk_diag *pd)
{
	UnixSkEntry e = UNIX_SK_ENTRY__INIT;
	struct usk_queue q = { 0 };
	int err, peek_off = -1;
	char dir[PATH_MAX];

	e.ino = dg->ino;
	e.type = dg->type;
	e.state = dg->state;
	e.flags = f->flags;
	e.has_shutdown = dg->shutdown != 0;
	e.shutdown = dg->shutdown;
	err = usk_dump_name(f, dg, &e, dir);
	if (!err)
		err = usk_sockopts(f, &e);
	if (!err && dg->state == TCP_LISTEN)
		err = usk_dump_icons(ctx, f, dg, &e);
	else if (!err)
		err = usk_dump_peer(ctx, f, dg, &e, pd);
	/*
	 * A stream or seqpacket socket has a queue once connected only; before,
	 * a peek says EINVAL or ENOTCONN (a socket() whose connect() has not come
	 * yet or failed: `id` asking nscd, or a listener's name, caught there)
	 */
	if (!err && (dg->type == SOCK_DGRAM || dg->state == TCP_ESTABLISHED))
		err = usk_peek_queue(f, dg->type, dg->shutdown & 1, &q, &peek_off);
	else if (!err)
		err = usk_peek_off(f, &peek_off); /* kept for a later connect() */
	if (!err && q.nr_named)
		err = usk_check_senders(ctx, f, &q);
	if (!err && q.len && e.has_ext_peer_name && dg->type != SOCK_DGRAM) {
		pr_err("pid %d fd %d: %s holds %zu bytes from its peer outside the tree, which a "
		       "new connection cannot give back: not supported\n",
		       f->pid, f->fd, f->link, q.len);
		err = -EOPNOTSUPP;
	}
	e.has_peek_off = peek_off >= 0;
	e.peek_off = peek_off;
	if (!err)
		err = usk_pack(ctx, f, d, &e, &q);
	if (!err)
		pr_debug("pid %d fd %d: %s type %u state %u peer %llu, %u queued (%zu bytes)\n",
			 f->pid, f->fd, f->link, e.type, e.state, (unsigned long long)e.peer, q.n,
			 q.len);
	free(e.icons_peer);
	free(e.file_xattrs.data);
	usk_queue_fini(&q);
	return err;
}

static int unix_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	/* files.c sets sk_family of sockets (not of the parasite's, which it leaves out). */
	return f->sk_family == AF_UNIX;
}

static int unix_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct usk_diag dg, pd = { 0 };
	int err;

	if (f->st.st_ino > UINT32_MAX) {
		pr_err("pid %d fd %d: %s: inode beyond sock_diag's 32 bits\n", f->pid, f->fd,
		       f->link);
		return -EOVERFLOW;
	}
	err = usk_diag_get((uint32_t)f->st.st_ino, &dg);
	if (err == -ENOENT) {
		/* sock_diag answers for the dumper's network namespace only. */
		pr_err("pid %d fd %d: %s is a unix socket of another network namespace (sock_diag "
		       "does not know it): not supported yet\n",
		       f->pid, f->fd, f->link);
		return -EOPNOTSUPP;
	}
	if (err) {
		pr_errno(err, "pid %d fd %d: sock_diag of %s", f->pid, f->fd, f->link);
		return err;
	}
	err = usk_fill(ctx, f, d, &dg, &pd);
	usk_diag_fini(&dg);
	usk_diag_fini(&pd);
	return err;
}

/* ---- restore ---------------------------------------------------------------------------- */

static struct usk_rst *usk_rst(const struct restore_ctx *ctx)
{
	return rst_kind_get(ctx, &unix_kind)->priv;
}

const UnixSkEntry *usk_at(const struct usk_rst *u, size_t pos)
{
	return u->f->idx.by_id[pos]->unixsk;
}

uint32_t usk_id(const struct usk_rst *u, size_t pos)
{
	return u->f->idx.by_id[pos]->id;
}

/* The position of the unix socket with inode @ino, or -ENOENT. */
long usk_find(const struct usk_rst *u, uint64_t ino)
{
	size_t j;

	for (j = 0; j < u->k->n; j++)
		if (usk_at(u, u->k->pos[j])->ino == ino)
			return (long)u->k->pos[j];
	return -ENOENT;
}

int usk_socket(const UnixSkEntry *e, uint32_t id)
{
	/* Non-blocking while restoring, so a full queue fails instead of hanging. */
	int sk = socket(AF_UNIX, (int)e->type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (sk < 0) {
		pr_perror("file %u: socket(AF_UNIX, %u)", id, e->type);
		return neg_errno();
	}
	return sk;
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

static int set_timeo(int sk, int opt, bool has, uint64_t us)
{
	struct timeval tv = { .tv_sec = (time_t)(us / 1000000), .tv_usec = (long)(us % 1000000) };

	return has && setsockopt(sk, SOL_SOCKET, opt, &tv, sizeof(tv)) ? neg_errno() : 0;
}

/*
 * The buffer size @want (as getsockopt() read it at dump) set again through
 * @force (CAP_NET_ADMIN over the socket's network namespace: a task of a user
 * namespace that does not own it has not) or @opt, which net.core.rmem_max /
 * wmem_max cap: a size that did not come back whole is refused by name.
 */
static int usk_set_buf(int sk, int force, int opt, uint32_t want, uint32_t id)
{
	int val = (int)(want / 2), got = 0;
	socklen_t len = sizeof(got);

	if (!setsockopt(sk, SOL_SOCKET, force, &val, sizeof(val)))
		return 0;
	if (errno != EPERM || setsockopt(sk, SOL_SOCKET, opt, &val, sizeof(val)) ||
	    getsockopt(sk, SOL_SOCKET, opt, &got, &len))
		return neg_errno();
	if ((uint32_t)got != want) {
		pr_err("file %u: its %s buffer of %u bytes needs CAP_NET_ADMIN in its network "
		       "namespace's user namespace (net.core.%s caps it at %d)\n",
		       id, opt == SO_RCVBUF ? "receive" : "send", want,
		       opt == SO_RCVBUF ? "rmem_max" : "wmem_max", got);
		errno = EPERM;
		return -EPERM;
	}
	return 0;
}

int usk_finish_now(int sk, const UnixSkEntry *e, uint32_t id)
{
	int one = 1, how = -1;

	/* SO_RCVBUFFORCE like SO_SNDBUFFORCE: the kernel doubles what it is given. */
	if ((e->has_rcvbuf && usk_set_buf(sk, SO_RCVBUFFORCE, SO_RCVBUF, e->rcvbuf, id)) ||
	    (e->has_sndbuf && usk_set_buf(sk, SO_SNDBUFFORCE, SO_SNDBUF, e->sndbuf, id)) ||
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
int usk_finish(const struct usk_rst *u, int sk, size_t pos)
{
	if (u->late[pos])
		return 0;
	return usk_finish_now(sk, usk_at(u, pos), usk_id(u, pos));
}

/*
 * The other end @fd of the socket @pos whose peer was closed: closed, or
 * kept to refill the queue of @pos late.
 */
void usk_close_or_keep(struct usk_rst *u, size_t pos, int fd)
{
	if (u->late[pos] & USK_LATE_RECV)
		u->from[pos] = fd;
	else
		close(fd);
}

void usk_park(struct usk_rst *u, long pos, int fd)
{
	u->f->fds[pos] = fd;
}

/* Two sockets connected to each other (or @pb < 0: to a socket closed since). */
static int open_pair(struct usk_rst *u, size_t pa, long pb)
{
	const UnixSkEntry *a = usk_at(u, pa), *b = pb >= 0 ? usk_at(u, pb) : NULL;
	uint32_t ida = usk_id(u, pa), idb = pb >= 0 ? usk_id(u, pb) : 0;
	int sv[2], err;

	if (socketpair(AF_UNIX, (int)a->type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv)) {
		pr_perror("file %u: socketpair(%u)", ida, a->type);
		return neg_errno();
	}
	err = usk_bind(sv[0], a, ida);
	if (!err && b)
		err = usk_bind(sv[1], b, idb);
	if (!err)
		err = usk_refill(u, sv[1], pa, true);
	if (!err && b)
		err = usk_refill(u, sv[0], (size_t)pb, true);
	if (!err)
		err = usk_finish(u, sv[0], pa);
	if (!err && b)
		err = usk_finish(u, sv[1], (size_t)pb);
	if (err) {
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (!b) {
		usk_close_or_keep(u, pa, sv[1]);
		return sv[0];
	}
	usk_park(u, pb, sv[1]);
	return sv[0];
}

/*
 * A datagram socket connected to @pp (bound, opened first), or any socket
 * connected to a name outside the tree (--ext-unix-sk): connect() again.
 */
static int open_dgram_to(struct restore_ctx *ctx, size_t pos, long pp)
{
	struct usk_rst *u = usk_rst(ctx);
	const UnixSkEntry *e = usk_at(u, pos);
	uint32_t id = usk_id(u, pos);
	const ProtobufCBinaryData *to = &e->ext_peer_name;
	int sk, err = 0, psk = -1;

	if (pp >= 0) {
		if (u->f->fds[pp] == FD_IN_PROGRESS) {
			pr_err("file %u: its peers connect in a cycle: not supported\n", id);
			return -EINVAL;
		}
		if (u->f->fds[pp] < 0) {
			int fd = usk_open(ctx, (size_t)pp);

			if (fd < 0)
				return fd;
			usk_park(u, pp, fd);
		}
		psk = u->f->fds[pp];
		to = &usk_at(u, pp)->name;
		if (!usk_at(u, pp)->has_name) {
			pr_err("file %u: connected to the unbound file %u\n", id, usk_id(u, pp));
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
		usk_park(u, (long)pos, sk);
		err = usk_refill_dgram(ctx, pos, psk);
	}
	if (!err)
		err = usk_finish(u, sk, pos);
	if (err) {
		close(sk);
		return err;
	}
	return sk;
}

/* Not connected: bound or not, its queue sent by a new unbound socket. */
static int open_alone(struct restore_ctx *ctx, size_t pos)
{
	struct usk_rst *u = usk_rst(ctx);
	const UnixSkEntry *e = usk_at(u, pos);
	uint32_t id = usk_id(u, pos);
	int sk, err, from = -1;

	sk = usk_socket(e, id);
	if (sk < 0)
		return sk;
	err = usk_bind(sk, e, id);
	if (!err && e->n_queue && !(u->late[pos] & USK_LATE_RECV)) {
		/* Parked (usk_open() takes it back): its senders may connect to it. */
		usk_park(u, (long)pos, sk);
		from = socket(AF_UNIX, (int)e->type | SOCK_CLOEXEC, 0);
		err = from < 0 ? neg_errno() : usk_refill_dgram(ctx, pos, from);
		if (from >= 0)
			close(from);
	}
	if (!err)
		err = usk_finish(u, sk, pos);
	if (err) {
		close(sk);
		return err;
	}
	return sk;
}

static int open_connected(struct restore_ctx *ctx, size_t pos)
{
	struct usk_rst *u = usk_rst(ctx);
	const UnixSkEntry *e = usk_at(u, pos);
	long pp = usk_find(u, e->peer), pl;

	if (pp < 0) {
		pr_err("file %u: its peer %llu is not in the images\n", usk_id(u, pos),
		       (unsigned long long)e->peer);
		return -EINVAL;
	}
	if (usk_at(u, pp)->peer != e->ino) {
		if (e->type != SOCK_DGRAM) {
			pr_err("file %u: connected to file %u, which is connected elsewhere\n",
			       usk_id(u, pos), usk_id(u, pp));
			return -EINVAL;
		}
		return open_dgram_to(ctx, pos, pp);
	}
	/* Accepted from a listening socket of the tree (either end may be the accepted one). */
	pl = usk_listener_named(u, e);
	if (pl < 0 && e->type != SOCK_DGRAM)
		pl = usk_listener_named(u, usk_at(u, pp));
	if (pl >= 0 && e->type != SOCK_DGRAM)
		return usk_open_via_listener(u, pos, (size_t)pl);
	if (e->type != SOCK_DGRAM && (e->has_name || usk_at(u, pp)->has_name))
		return usk_open_pair_named(u, pos, (size_t)pp);
	return open_pair(u, pos, pp);
}

int usk_open(struct restore_ctx *ctx, size_t pos)
{
	struct usk_rst *u = usk_rst(ctx);
	const UnixSkEntry *e = usk_at(u, pos);
	long pl;
	int fd;

	/* Made with another socket already: hand it over (the caller moves it). */
	if (u->f->fds[pos] >= 0) {
		fd = u->f->fds[pos];
		u->f->fds[pos] = -1;
		return fd;
	}
	u->f->fds[pos] = FD_IN_PROGRESS;
	pl = e->state == TCP_LISTEN ? -1 : usk_listener_of(u, e->ino);
	if (e->state == TCP_LISTEN)
		fd = usk_open_listener(u, pos);
	else if (pl >= 0) /* in its backlog */
		fd = usk_open_via_listener(u, pos, (size_t)pl);
	else if (e->peer_closed)
		fd = open_pair(u, pos, -1);
	else if (e->has_peer)
		fd = open_connected(ctx, pos);
	else if (e->has_ext_peer_name)
		fd = open_dgram_to(ctx, pos, -1);
	else
		fd = open_alone(ctx, pos);
	u->f->fds[pos] = -1;
	return fd;
}

static int unix_check(const FileEntry *fe)
{
	return fe->unixsk ? 0 : rst_file_part_missing(fe);
}

/* The state of the late refills, before the first unix socket is opened. */
static int unix_prepare(struct restore_ctx *ctx)
{
	struct rst_kind *k = rst_kind_get(ctx, &unix_kind);
	struct usk_rst *u;

	if (!k->n)
		return 0; /* no unix socket */
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->f = ctx->files;
	u->k = k;
	k->priv = u;
	return usk_late_mark(u);
}

static void unix_fini(struct restore_ctx *ctx)
{
	struct rst_kind *k = rst_kind_get(ctx, &unix_kind);
	struct usk_rst *u = k->priv;

	if (!u)
		return;
	usk_late_fini(u);
	free(u->from);
	free(u->late);
	free(u);
	k->priv = NULL;
}

const struct file_kind unix_kind = {
	.name = "unix socket",
	.match = unix_match,
	.dump = unix_dump,
	.types = { FILE_TYPE__FILE_UNIXSK },
	.in_flight = true,
	.dump_finish = unix_check_peers,
	.dump_fini = unix_dump_fini,
	.check = unix_check,
	.prepare = unix_prepare,
	.open = usk_open,
	.opened = usk_late,
	.fini = unix_fini,
};
