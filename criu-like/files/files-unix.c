// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets (FILE_UNIXSK): type, state, name, peer, shutdown state and
 * the backlog of a listening socket come from sock_diag (NETLINK_SOCK_DIAG
 * through libnl, one exact request per socket); the receive queue is read with MSG_PEEK
 * from the duplicate the parasite drained, never consumed, with its fds in
 * flight (SCM_RIGHTS) and the senders' credentials (SO_PASSCRED) by
 * files-unix-queue.c; files.c turns each fd in flight into a description at
 * the end of the dump. Peers are named by inode: a peer must be a socket of
 * the tree, a socket in flight, a connection waiting in the backlog of a
 * listening socket of the tree, or a socket that was closed; with
 * --ext-unix-sk, a bound socket outside, saved by name. Refused: datagrams
 * from bound sockets outside the tree, data a client sent before its
 * connection was accepted, relative path names, sockets of another network
 * namespace.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "files-unix-int.h"
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

#define TCP_ESTABLISHED 1
#define TCP_LISTEN 10

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

static void usk_diag_fini(struct usk_diag *d)
{
	free(d->icons);
	d->icons = NULL;
}

/* The attributes of one answer (nlmsg_parse() checked their place in the message). */
static int diag_parse_attrs(struct usk_diag *d, struct nlattr **tb)
{
	struct nlattr *a;

	if ((a = tb[UNIX_DIAG_NAME])) {
		d->name_len = min((unsigned int)nla_len(a), (unsigned int)USK_NAME_MAX);
		memcpy(d->name, nla_data(a), d->name_len);
	}
	if ((a = tb[UNIX_DIAG_VFS]) && nla_len(a) >= (int)sizeof(struct unix_diag_vfs)) {
		d->has_vfs = true;
		d->vfs_ino = ((struct unix_diag_vfs *)nla_data(a))->udiag_vfs_ino;
	}
	if ((a = tb[UNIX_DIAG_PEER]) && nla_len(a) >= (int)sizeof(uint32_t)) {
		d->has_peer = true;
		memcpy(&d->peer, nla_data(a), sizeof(uint32_t));
	}
	if ((a = tb[UNIX_DIAG_ICONS])) {
		d->nr_icons = (unsigned int)nla_len(a) / sizeof(uint32_t);
		d->icons = malloc((d->nr_icons ?: 1) * sizeof(uint32_t));
		if (!d->icons)
			return -ENOMEM;
		memcpy(d->icons, nla_data(a), d->nr_icons * sizeof(uint32_t));
	}
	if ((a = tb[UNIX_DIAG_RQLEN]) && nla_len(a) >= (int)sizeof(struct unix_diag_rqlen)) {
		d->rqueue = ((struct unix_diag_rqlen *)nla_data(a))->udiag_rqueue;
		d->wqueue = ((struct unix_diag_rqlen *)nla_data(a))->udiag_wqueue;
	}
	if ((a = tb[UNIX_DIAG_SHUTDOWN]) && nla_len(a) >= 1)
		d->shutdown = *(uint8_t *)nla_data(a);
	return 0;
}

static int diag_parse(struct nlmsghdr *h, struct usk_diag *d)
{
	struct nlattr *tb[UNIX_DIAG_MAX + 1];
	struct unix_diag_msg *m = nlmsg_data(h);

	memset(d, 0, sizeof(*d));
	if (!nlmsg_valid_hdr(h, sizeof(*m)) ||
	    nlmsg_parse(h, sizeof(*m), tb, UNIX_DIAG_MAX, NULL) < 0)
		return -EINVAL;
	d->ino = m->udiag_ino;
	d->type = m->udiag_type;
	d->state = m->udiag_state;
	return diag_parse_attrs(d, tb);
}

/* One sock_diag exchange: each answer goes to @fn until it returns non-zero. */
struct diag_query {
	int (*fn)(struct usk_diag *d, void *arg);
	void *arg;
	int ret; /* what @fn returned last (1: found), or -errno of a failure */
};

static int diag_valid_cb(struct nl_msg *msg, void *arg)
{
	struct diag_query *q = arg;
	struct usk_diag d;

	q->ret = diag_parse(nlmsg_hdr(msg), &d);
	if (!q->ret)
		q->ret = q->fn(&d, q->arg);
	usk_diag_fini(&d);
	return q->ret ? NL_STOP : NL_OK;
}

static int diag_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	(void)nla;
	((struct diag_query *)arg)->ret = e->error < 0 ? e->error : -EIO;
	return NL_STOP;
}

static int diag_request(struct nl_sock *sk, uint32_t ino, bool dump)
{
	struct unix_diag_req req = {
		.sdiag_family = AF_UNIX,
		.udiag_states = ~0u,
		.udiag_ino = ino,
		.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_VFS | UDIAG_SHOW_PEER |
			      UDIAG_SHOW_ICONS | UDIAG_SHOW_RQLEN,
		/*
		 * sk_shutdown comes always (UNIX_DIAG_SHUTDOWN). An exact request
		 * checks the cookie unless it is INET_DIAG_NOCOOKIE (~0).
		 */
		.udiag_cookie = { ~0u, ~0u },
	};
	struct nl_msg *msg = nlmsg_alloc_simple(SOCK_DIAG_BY_FAMILY,
						NLM_F_REQUEST | (dump ? NLM_F_DUMP : 0));
	int err;

	if (!msg)
		return -ENOMEM;
	err = nlmsg_append(msg, &req, sizeof(req), NLMSG_ALIGNTO);
	if (!err)
		err = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	return err;
}

/*
 * Ask sock_diag (through libnl) about the unix socket @ino, or with @dump
 * about every unix socket of the dumper's network namespace, passing each
 * answer to @fn until it returns non-zero (1: found, stop). 0 when @fn never
 * stopped it, -ENOENT when sock_diag does not know @ino, or -errno.
 */
static int diag_query(uint32_t ino, bool dump, int (*fn)(struct usk_diag *d, void *arg), void *arg)
{
	struct diag_query q = { .fn = fn, .arg = arg };
	struct nl_sock *sk = nl_socket_alloc();
	int err;

	if (!sk)
		return -ENOMEM;
	/* A dump's parts (the backlog of a listening socket) may exceed libnl's default buffer. */
	nl_socket_enable_msg_peek(sk);
	/* Only the answers: no NLM_F_ACK, so an exact request ends with its one answer. */
	nl_socket_disable_auto_ack(sk);
	err = nl_connect(sk, NETLINK_SOCK_DIAG);
	if (!err)
		err = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, diag_valid_cb, &q);
	if (!err)
		err = nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, diag_err_cb, &q);
	if (!err)
		err = diag_request(sk, ino, dump);
	if (err >= 0)
		err = nl_recvmsgs_default(sk);
	nl_socket_free(sk);
	if (q.ret)
		return q.ret;
	if (err < 0) {
		pr_debug("sock_diag of unix socket %u: %s\n", ino, nl_geterror(err));
		return err == -NLE_NOMEM ? -ENOMEM : -EIO;
	}
	return 0;
}

static int take_exact(struct usk_diag *d, void *arg)
{
	*(struct usk_diag *)arg = *d;
	d->icons = NULL;
	return 1;
}

/* sock_diag of the unix socket @ino into @ret (usk_diag_fini() it); -ENOENT if none. */
static int usk_diag_get(uint32_t ino, struct usk_diag *ret)
{
	int err = diag_query(ino, false, take_exact, ret);

	return err == 0 ? -ENOENT : err < 0 ? err : 0;
}

struct listener_search {
	uint32_t client, listener;
};

static int match_icon(struct usk_diag *d, void *arg)
{
	struct listener_search *s = arg;
	unsigned int i;

	for (i = 0; i < d->nr_icons; i++)
		if (d->icons[i] == s->client) {
			s->listener = d->ino;
			return 1;
		}
	return 0;
}

/*
 * The listening socket with a connection from @client not yet accepted; 0 if
 * none. UNIX_DIAG_ICONS lists the clients of those connections (the peers
 * of the sockets in the backlog, 0 for a client closed since).
 */
static int usk_find_listener(uint32_t client, uint32_t *ret)
{
	struct listener_search s = { .client = client };
	int err = diag_query(0, true, match_icon, &s);

	*ret = s.listener;
	return err < 0 ? err : 0;
}

struct name_search {
	const struct usk_from *name;
	uint8_t type;
	uint32_t ino;
};

static int match_name(struct usk_diag *d, void *arg)
{
	struct name_search *s = arg;

	/* An accepted socket shares its listener's name; only datagram sockets send from one. */
	if (d->type != s->type || d->name_len != s->name->len ||
	    memcmp(d->name, s->name->name, d->name_len))
		return 0;
	s->ino = d->ino;
	return 1;
}

/* The datagram socket bound to @name; 0 if none. */
static int usk_sender_ino(const struct usk_from *name, uint32_t *ret)
{
	struct name_search s = { .name = name, .type = SOCK_DGRAM };
	int err = diag_query(0, true, match_name, &s);

	*ret = s.ino;
	return err < 0 ? err : 0;
}

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
		s[i].pid = c->creds.pid;
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
	     e->n_icons_peer * sizeof(uint64_t) + e->name.len + e->ext_peer_name.len + q->len +
	     names + sizeof(uint64_t);
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
	p->e.ext_peer_name.data = at;
	memcpy(at, e->ext_peer_name.data, e->ext_peer_name.len);
	at += e->ext_peer_name.len;
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

/*
 * The name of a bound socket. A path is relative to the task's root; the
 * socket file is looked up there: gone (or another file) means unlinked
 * after bind(), which restore repeats.
 */
static int usk_dump_name(const struct fd_info *f, const struct usk_diag *dg, UnixSkEntry *e)
{
	char path[PATH_MAX];
	struct stat st;

	if (!dg->name_len)
		return 0;
	e->has_name = true;
	e->name.data = (uint8_t *)dg->name;
	e->name.len = dg->name_len;
	if (dg->name[0] == '\0')
		return 0; /* abstract */
	if (dg->name[0] != '/') {
		pr_err("pid %d fd %d: %s is bound to the relative path %.*s: not supported yet\n",
		       f->pid, f->fd, f->link, (int)dg->name_len, dg->name);
		return -EOPNOTSUPP;
	}
	snprintf(path, sizeof(path), "/proc/%d/root%.*s", f->pid, (int)dg->name_len, dg->name);
	e->has_name_ino = dg->has_vfs;
	e->name_ino = dg->vfs_ino;
	e->has_name_unlinked = true;
	e->name_unlinked = stat(path, &st) || !S_ISSOCK(st.st_mode) ||
			   (dg->has_vfs && st.st_ino != dg->vfs_ino);
	return 0;
}

static int refuse_outside(const struct fd_info *f, uint32_t peer, const char *what)
{
	pr_err("pid %d fd %d: %s is %s socket %u outside the dumped tree: dump it with "
	       "--ext-unix-sk (sockets connected to a bound socket only)\n",
	       f->pid, f->fd, f->link, what, peer);
	return -EOPNOTSUPP;
}

static int usk_check_later(struct dump_ctx *ctx, const struct fd_info *f, uint32_t peer)
{
	struct file_table *ft = file_table_get(ctx);
	struct usk_peer_check *c;

	if (!ft || file_table_grow((void **)&ft->peer_checks, &ft->cap_peer_checks,
				   ft->nr_peer_checks, sizeof(*c)))
		return -ENOMEM;
	c = &ft->peer_checks[ft->nr_peer_checks++];
	c->pid = f->pid;
	c->fd = f->fd;
	c->dev = f->st.st_dev;
	c->ino = f->st.st_ino;
	c->peer = peer;
	return 0;
}

int unix_check_peers(struct dump_ctx *ctx)
{
	struct file_table *ft = file_table_get(ctx);
	unsigned int i;

	for (i = 0; ft && i < ft->nr_peer_checks; i++) {
		const struct usk_peer_check *c = &ft->peer_checks[i];
		char link[48];
		struct fd_info f = { .pid = c->pid, .fd = c->fd, .link = link };

		if (file_desc_next(ft, c->dev, c->peer, NULL))
			continue; /* in flight */
		snprintf(link, sizeof(link), "socket:[%llu]", (unsigned long long)c->ino);
		return refuse_outside(&f, c->peer, "connected to");
	}
	return ft ? 0 : -ENOMEM;
}

/* The connections in the backlog of the listening socket @dg: their clients, in order. */
static int usk_dump_icons(const struct dump_ctx *ctx, const struct fd_info *f,
			  const struct usk_diag *dg, UnixSkEntry *e)
{
	unsigned int i;

	e->has_backlog = true;
	e->backlog = dg->wqueue;
	e->n_icons_peer = dg->nr_icons;
	e->icons_peer = calloc(dg->nr_icons ?: 1, sizeof(uint64_t));
	if (!e->icons_peer)
		return -ENOMEM;
	for (i = 0; i < dg->nr_icons; i++) {
		struct usk_diag cl;
		int err;

		e->icons_peer[i] = dg->icons[i];
		if (!dg->icons[i])
			continue; /* a closed client: its socket in the backlog is not found */
		if (!sock_in_tree(ctx, f->st.st_dev, dg->icons[i]))
			return refuse_outside(f, dg->icons[i], "listening with a connection from");
		/*
		 * The socket waiting in the backlog has no inode before accept(), so
		 * sock_diag cannot show it; what its client sent is still charged to
		 * the client's send buffer (wqueue).
		 */
		err = usk_diag_get(dg->icons[i], &cl);
		if (err) {
			pr_errno(err,
				 "pid %d fd %d: sock_diag of the client %u in the backlog of %s",
				 f->pid, f->fd, dg->icons[i], f->link);
			return err;
		}
		usk_diag_fini(&cl);
		if (cl.wqueue) {
			pr_err("pid %d fd %d: the client %u in the backlog of %s sent %u bytes "
			       "before accept(): not supported yet\n",
			       f->pid, f->fd, dg->icons[i], f->link, cl.wqueue);
			return -EOPNOTSUPP;
		}
	}
	return 0;
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
			return refuse_outside(f, listener, "waiting in the backlog of");
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

/*
 * Datagrams from bound senders are sent again by those sockets, so the
 * receiver sees the same address: each must be a socket of the tree.
 */
static int usk_check_senders(const struct dump_ctx *ctx, const struct fd_info *f,
			     const struct usk_queue *q)
{
	uint32_t ino = 0;
	unsigned int i;
	int err;

	for (i = 0; i < q->n; i++) {
		const struct usk_from *from = &q->from[i];

		if (!from->len || (i && from->len == q->from[i - 1].len &&
				   !memcmp(from->name, q->from[i - 1].name, from->len)))
			continue; /* unbound, or the sender checked just before */
		err = usk_sender_ino(from, &ino);
		if (err)
			return err;
		if (!ino || !sock_in_tree(ctx, f->st.st_dev, ino)) {
			pr_err("pid %d fd %d: %s holds a datagram from %s%.*s, a socket %s: not "
			       "supported yet\n",
			       f->pid, f->fd, f->link, from->name[0] ? "" : "@", (int)from->len - 1,
			       from->name + !from->name[0],
			       ino ? "outside the tree" : "closed since");
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

static int usk_fill(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d,
		    const struct usk_diag *dg, struct usk_diag *pd)
{
	UnixSkEntry e = UNIX_SK_ENTRY__INIT;
	struct usk_queue q = { 0 };
	int err, peek_off = -1;

	e.ino = dg->ino;
	e.type = dg->type;
	e.state = dg->state;
	e.flags = f->flags;
	e.has_shutdown = dg->shutdown != 0;
	e.shutdown = dg->shutdown;
	err = usk_dump_name(f, dg, &e);
	if (!err)
		err = usk_sockopts(f, &e);
	if (!err && dg->state == TCP_LISTEN)
		err = usk_dump_icons(ctx, f, dg, &e);
	else if (!err)
		err = usk_dump_peer(ctx, f, dg, &e, pd);
	if (!err && dg->state != TCP_LISTEN)
		err = usk_peek_queue(f, dg->type, dg->shutdown & 1, &q, &peek_off);
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

static int unix_check(const FileEntry *fe)
{
	return fe->unixsk ? 0 : rst_file_part_missing(fe);
}

static void unix_fini(struct restore_ctx *ctx)
{
	rst_unix_late_fini(ctx->files);
}

const struct file_kind unix_kind = {
	.name = "unix socket",
	.match = unix_match,
	.dump = unix_dump,
	.types = { FILE_TYPE__FILE_UNIXSK },
	.in_flight = true,
	.dump_finish = unix_check_peers,
	.check = unix_check,
	.open = rst_unix_open,
	.opened = rst_unix_late,
	.fini = unix_fini,
};
