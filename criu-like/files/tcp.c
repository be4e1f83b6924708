// SPDX-License-Identifier: GPL-2.0
/*
 * TCP sockets (Documentation/network.md): what each state becomes at dump
 * and restore, the connections waiting in a backlog, and the network lock
 * around the connections read and rebuilt in repair mode (tcp-repair.c).
 *
 * A listening socket is listened on again with its backlog; an unconnected
 * one is bound again. Connections (ESTABLISHED, SYN_SENT, half-closed) are
 * dumped with --tcp-established only, in repair mode: before the first of
 * them the packets of every connection of the tree are dropped by the
 * network lock (one transaction), and at restore those of every connection
 * of the images, before the first is rebuilt; rst_inet_repair_off() takes
 * them out of repair mode once every task waits at the final barrier.
 * Connections waiting in the backlog of a listening socket of the tree are
 * not repaired: their clients connect again at restore.
 */
#define LOG_PREFIX "files: "

#include <dirent.h>
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "files-int.h"
#include "restore-files-int.h"
#include "inet.h"
#include "log.h"
#include "net-lock.h"
#include "ns.h"
#include "util.h"

/* loopback answers at once; a loaded machine may take a moment */
#define TCP_CONNECT_WAIT_MS 10000

const char *tcp_state_name(unsigned int state)
{
	static const char *const names[] = {
		[TCP_ESTABLISHED] = "ESTABLISHED",
		[TCP_SYN_SENT] = "SYN_SENT",
		[TCP_SYN_RECV] = "SYN_RECV",
		[TCP_FIN_WAIT1] = "FIN_WAIT1",
		[TCP_FIN_WAIT2] = "FIN_WAIT2",
		[TCP_TIME_WAIT] = "TIME_WAIT",
		[TCP_CLOSE] = "CLOSE",
		[TCP_CLOSE_WAIT] = "CLOSE_WAIT",
		[TCP_LAST_ACK] = "LAST_ACK",
		[TCP_LISTEN] = "LISTEN",
		[TCP_CLOSING] = "CLOSING",
	};

	return state < ARRAY_SIZE(names) && names[state] ? names[state] : "UNKNOWN";
}

/* ---- the dump, by state ---------------------------------------------------------------- */

/*
 * A socket in CLOSE whose connection ended, or whose connect() failed, has a
 * receive MSS (a new one has none): it comes back as a new socket.
 */
static void warn_ended(const struct fd_info *f, const InetSkEntry *e)
{
	char ends[INET_ENDS_STRLEN];
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(f->dfd, SOL_TCP, TCP_INFO, &ti, &len) || !ti.tcpi_rcv_mss)
		return;
	pr_warn("pid %d fd %d: TCP socket %s had a connection that ended (or a connect() that "
		"failed): restored as a new unconnected socket (a read gives ENOTCONN, not the end "
		"of file or the connection's error)\n",
		f->pid, f->fd, inet_entry_ends(e, ends, sizeof(ends)));
}

int tcp_dump(struct dump_ctx *ctx, const struct fd_info *f, const struct inet_sk_diag *dg,
	     InetSkEntry *e)
{
	char ends[INET_ENDS_STRLEN];
	int err;

	switch (dg->state) {
	case TCP_CLOSE:
		/*
		 * A connection that ended (reset, or closed both ways: a socket with an
		 * fd goes to CLOSE, not TIME_WAIT) may still hold data to read.
		 */
		if (ioctl(f->dfd, SIOCINQ, &err) || err <= 0) {
			warn_ended(f, e);
			return 0;
		}
		pr_err("pid %d fd %d: TCP socket %s was connected and is closed now (reset, or "
		       "closed both ways), with %d bytes not read: not supported\n",
		       f->pid, f->fd, inet_entry_ends(e, ends, sizeof(ends)), err);
		return -EOPNOTSUPP;
	case TCP_LISTEN:
		e->has_backlog = true;
		e->backlog = dg->wqueue; /* sk_max_ack_backlog */
		return dg->rqueue ? tcp_dump_backlog(ctx, f, dg, e) : 0;
	case TCP_ESTABLISHED:
		/* shutdown(SHUT_RD) only; SHUT_WR sends a FIN: FIN_WAIT1, below */
		e->has_shutdown = dg->shutdown != 0;
		e->shutdown = dg->shutdown;
		err = tcp_dump_backlog_client(ctx, f, dg, e);
		return err ? min(err, 0) : tcp_dump_established(ctx, f, e);
	case TCP_SYN_SENT: /* a connect() in flight */
	case TCP_FIN_WAIT1: /* shut down for writing: our FIN sent */
	case TCP_FIN_WAIT2:
	case TCP_CLOSE_WAIT: /* the peer's FIN received */
	case TCP_LAST_ACK: /* both, ours not acknowledged yet */
	case TCP_CLOSING:
		e->has_shutdown = dg->shutdown != 0;
		e->shutdown = dg->shutdown;
		return tcp_dump_established(ctx, f, e);
	default:
		pr_err("pid %d fd %d: TCP socket %s is in state %s: not supported (only LISTEN, "
		       "connected, half-closed and unconnected sockets are)\n",
		       f->pid, f->fd, inet_entry_ends(e, ends, sizeof(ends)),
		       tcp_state_name(dg->state));
		return -EOPNOTSUPP;
	}
}

/* ---- connections in the backlog of a listening socket ----------------------------------- */

static bool addr_same(int fa, const uint8_t *a, int fb, const uint8_t *b)
{
	if (fa == fb)
		return !memcmp(a, b, fa == AF_INET6 ? 16 : 4);
	/* an IPv4 socket and an IPv6 one holding its address v4-mapped */
	if (fa == AF_INET6)
		return !memcmp(a, inet_v4mapped, 12) && !memcmp(a + 12, b, 4);
	return !memcmp(b, inet_v4mapped, 12) && !memcmp(b + 12, a, 4);
}

static bool addr_any(int family, const uint8_t *a)
{
	static const uint8_t zero[16];

	return !memcmp(a, zero, family == AF_INET6 ? 16 : 4);
}

/* Whether @c is the other end of the connection @k. */
static bool is_peer(const struct inet_sk_diag *c, const struct inet_sk_diag *k)
{
	return c != k && c->proto == IPPROTO_TCP && c->sport == k->dport && c->dport == k->sport &&
	       addr_same(c->family, c->src, k->family, k->dst) &&
	       addr_same(c->family, c->dst, k->family, k->src);
}

/*
 * The established other end of @k: with an inode, or (@in_backlog) one
 * without, never accepted. The sockets are sorted by inode: those without
 * one come first, and only they are searched for a connection in a backlog
 * (this runs for every connection of the tree).
 */
static const struct inet_sk_diag *find_peer(const struct inet_dump *in,
					    const struct inet_sk_diag *k, bool in_backlog)
{
	size_t i;

	for (i = 0; i < in->nr_sks && (!in_backlog || !in->sks[i].ino); i++) {
		const struct inet_sk_diag *c = &in->sks[i];

		if (c->state == TCP_ESTABLISHED && !c->ino == in_backlog && is_peer(c, k))
			return c;
	}
	return NULL;
}

/* The listening socket a connection @c not yet accepted waits in. */
static const struct inet_sk_diag *find_listener(const struct inet_dump *in,
						const struct inet_sk_diag *c)
{
	size_t i;

	for (i = 0; i < in->nr_sks; i++) {
		const struct inet_sk_diag *l = &in->sks[i];

		if (l->proto == IPPROTO_TCP && l->state == TCP_LISTEN && l->ino &&
		    l->family == c->family && l->sport == c->sport &&
		    (addr_any(l->family, l->src) ||
		     addr_same(l->family, l->src, c->family, c->src)))
			return l;
	}
	return NULL;
}

/*
 * The connections waiting in the backlog of the listening socket @dg: each
 * must come from a socket of the tree (which the restore connects again)
 * and must not have received anything yet (it cannot be read before
 * accept(), so it could not be given back).
 */
int tcp_dump_backlog(struct dump_ctx *ctx, const struct fd_info *f, const struct inet_sk_diag *dg,
		     InetSkEntry *e)
{
	const struct inet_dump *in = inet_dump_get(ctx);
	char ends[INET_ENDS_STRLEN], from[INET_ADDR_STRLEN];
	unsigned int found = 0, skipped = 0;
	size_t i;

	inet_entry_ends(e, ends, sizeof(ends));
	for (i = 0; i < in->nr_sks; i++) {
		const struct inet_sk_diag *c = &in->sks[i], *cl, *l;

		if (c->ino || c->state != TCP_ESTABLISHED || !(l = find_listener(in, c)) ||
		    l->ino != dg->ino)
			continue;
		inet_fmt(c->family, c->dst, c->dport, from, sizeof(from));
		cl = find_peer(in, c, false);
		/* --skip-in-flight (CRIU's): left out; its client sees a reset and reconnects */
		if ((!cl || !sock_in_tree(ctx, f->st.st_dev, cl->ino)) && ctx->opts &&
		    ctx->opts->skip_in_flight) {
			pr_warn("pid %d fd %d: the connection from %s, not accepted yet by "
				"listening TCP socket %s, is left out (--skip-in-flight)\n",
				f->pid, f->fd, from, ends);
			skipped++;
			continue;
		}
		if (!cl || !sock_in_tree(ctx, f->st.st_dev, cl->ino)) {
			pr_err("pid %d fd %d: listening TCP socket %s has %u connections not yet "
			       "accepted, one from %s outside the dumped tree: not supported (the "
			       "kernel cannot put a connection back in an accept queue; only "
			       "clients "
			       "of the tree are connected again; --skip-in-flight leaves it "
			       "out)\n",
			       f->pid, f->fd, ends, dg->rqueue, from);
			return -EOPNOTSUPP;
		}
		if (c->rqueue) {
			pr_err("pid %d fd %d: the connection from %s in the backlog of listening "
			       "TCP "
			       "socket %s has received %u bytes before accept(): not supported "
			       "(they "
			       "cannot be read before accept())\n",
			       f->pid, f->fd, from, ends, c->rqueue);
			return -EOPNOTSUPP;
		}
		found++;
	}
	if (found + skipped != dg->rqueue) {
		pr_err("pid %d fd %d: listening TCP socket %s has %u connections not yet accepted, "
		       "sock_diag shows %u: not supported\n",
		       f->pid, f->fd, ends, dg->rqueue, found);
		return -EOPNOTSUPP;
	}
	e->has_backlog_pending = true;
	e->backlog_pending = found;
	pr_info("pid %d fd %d: listening TCP socket %s: %u connections of the tree not yet "
		"accepted, connected again at restore\n",
		f->pid, f->fd, ends, found);
	return 0;
}

int tcp_dump_backlog_client(struct dump_ctx *ctx, const struct fd_info *f,
			    const struct inet_sk_diag *dg, InetSkEntry *e)
{
	const struct inet_dump *in = inet_dump_get(ctx);
	const struct inet_sk_diag *c = find_peer(in, dg, true), *l;
	char ends[INET_ENDS_STRLEN];
	int q = 0;

	l = c ? find_listener(in, c) : NULL;
	if (!l || !sock_in_tree(ctx, f->st.st_dev, l->ino))
		return 0; /* an accepted peer, or a listening socket outside: repair mode */
	inet_entry_ends(e, ends, sizeof(ends));
	if (!ctx->opts->tcp_established) {
		pr_err("pid %d fd %d: %s is a TCP connection %s (ESTABLISHED, not accepted yet): "
		       "use --tcp-established to dump it\n",
		       f->pid, f->fd, f->link, ends);
		return -EOPNOTSUPP;
	}
	if (c->rqueue || ioctl(f->dfd, SIOCOUTQ, &q) || q) {
		pr_err("pid %d fd %d: TCP connection %s waits in the backlog of a listening socket "
		       "of the tree with %u bytes sent to it: not supported (they cannot be read "
		       "before accept())\n",
		       f->pid, f->fd, ends, c->rqueue ? c->rqueue : (unsigned int)q);
		return -EOPNOTSUPP;
	}
	e->has_connect_backlog = e->connect_backlog = true;
	pr_info("pid %d fd %d: TCP %s is not accepted yet: connected again at restore\n", f->pid,
		f->fd, ends);
	return 1;
}

/* ---- the network lock: every connection of the tree at once ------------------------------ */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The inodes of every socket open in a task of the tree (all frozen), sorted. */
static int tree_sockets(const struct dump_ctx *ctx, uint32_t **ret, size_t *ret_n)
{
	_cleanup_free_ uint32_t *v = NULL;
	size_t n = 0, cap = 0;
	unsigned int i;

	for (i = 0; i < ctx->nr_tasks; i++) {
		_cleanup_closedir_ DIR *dir = NULL;
		struct dirent *de;
		char path[64], link[64];

		snprintf(path, sizeof(path), "/proc/%d/fd", ctx->tasks[i].t->pid);
		dir = opendir(path);
		while (dir && (de = readdir(dir))) {
			unsigned int ino;
			ssize_t l = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);

			if (l <= 0 || (link[l] = '\0', sscanf(link, "socket:[%u]", &ino) != 1))
				continue;
			if (n == cap) {
				uint32_t *nv = realloc(v, (cap = cap ? cap * 2 : 256) * sizeof(*v));

				if (!nv)
					return -ENOMEM;
				v = nv;
			}
			v[n++] = ino;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_u32);
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

static bool ino_in(const uint32_t *v, size_t n, uint32_t ino)
{
	return n && bsearch(&ino, v, n, sizeof(*v), cmp_u32);
}

/* Whether the connection @c of the tree is dumped in repair mode (not a client in a backlog). */
static bool repaired_conn(const struct inet_dump *in, const struct inet_sk_diag *c,
			  const uint32_t *tree, size_t n)
{
	const struct inet_sk_diag *child, *l;

	if (c->proto != IPPROTO_TCP || !ino_in(tree, n, c->ino))
		return false;
	if (c->state != TCP_ESTABLISHED && ((1u << c->state) & TCPF_REPAIRED))
		return true;
	if (c->state != TCP_ESTABLISHED)
		return false;
	child = find_peer(in, c, true);
	l = child ? find_listener(in, child) : NULL;
	return !l || !ino_in(tree, n, l->ino);
}

/*
 * Lock every connection of the tree that the dump puts in repair mode in one
 * transaction, before the first of them: one run of the lock's tool instead
 * of one per connection, all of it frozen time. The inodes locked are kept.
 */
int tcp_lock_tree(struct dump_ctx *ctx, struct inet_dump *in, void (*held)(void *), void *arg)
{
	_cleanup_free_ struct inet_tuple *t = NULL;
	_cleanup_free_ uint32_t *tree = NULL;
	size_t nt = 0, n = 0, nl = 0, i;
	int err, hold;

	in->locked_tree = true;
	err = tree_sockets(ctx, &tree, &nt);
	if (err)
		return err;
	t = calloc(nt ?: 1, sizeof(*t));
	in->locked = calloc(nt ?: 1, sizeof(*in->locked));
	if (!t || !in->locked)
		return -ENOMEM;
	for (i = 0; i < in->nr_sks; i++) {
		struct inet_sk_diag c = in->sks[i];
		InetSkEntry e = INET_SK_ENTRY__INIT;

		if (!repaired_conn(in, &c, tree, nt))
			continue;
		e.family = c.family;
		inet_entry_addrs(&e, &c);
		if (inet_entry_tuple(&e, &t[nl]))
			continue;
		in->locked[n++] = c.ino;
		/* the lock of the tree's own namespace holds it already: not over lo */
		if (!ns_net_conn_outside(&t[nl]))
			nl++;
	}
	if (nl < n)
		pr_debug("network lock: %zu of %zu connections held by the lock of the tree's "
			 "network namespace\n",
			 n - nl, n);
	/* held: the connections are safe, the caller goes on while the lock is made */
	hold = held ? netlock_dump_conns_hold(ctx, t, nl) : 0;
	if (hold < 0)
		return hold;
	if (!hold) {
		err = netlock_dump_conns(ctx, t, nl);
		if (err)
			return err;
	}
	in->nr_locked = n;
	if (n)
		qsort(in->locked, n, sizeof(*in->locked), cmp_u32);
	if (hold) {
		held(arg);
		err = netlock_dump_conns_lock(ctx, t, nl, true);
		if (err)
			return err;
	}
	pr_debug("network lock: %zu connections of the tree locked at once\n", n);
	return 0;
}

/* The connection @e of @f locked: with the whole tree's on first use, else alone. */
int tcp_lock_conn(struct dump_ctx *ctx, const struct fd_info *f, const InetSkEntry *e)
{
	struct inet_dump *in = inet_dump_get(ctx);
	struct inet_tuple tup;
	char ends[INET_ENDS_STRLEN];
	int err;

	/* held or locked by the early lock's thread already (inet_dump_start()), or now */
	if (in->early_err)
		return in->early_err;
	if (!in->locked_tree) {
		err = tcp_lock_tree(ctx, in, NULL, NULL);
		if (err)
			return err;
	}
	if (ino_in(in->locked, in->nr_locked, (uint32_t)f->st.st_ino))
		return 0;
	/* alone: after the early lock's transaction, if any */
	err = inet_dump_sync(ctx);
	if (err)
		return err;
	if (inet_entry_tuple(e, &tup)) {
		pr_err("pid %d fd %d: TCP connection %s: bad addresses\n", f->pid, f->fd,
		       inet_entry_ends(e, ends, sizeof(ends)));
		return -EINVAL;
	}
	return ns_net_conn_outside(&tup) ? 0 : netlock_dump_conn(ctx, &tup);
}

/* ---- the restore (its messages keep their own prefix) ------------------------------------ */

/* Whether a TCP entry has what its state needs. */
bool tcp_entry_ok(const InetSkEntry *e)
{
	bool ends = e->has_dst_port && e->has_src_port;
	uint32_t bit = e->state < 32 ? 1u << e->state : 0;

	switch (e->state) {
	case TCP_CLOSE:
	case TCP_LISTEN:
		return true;
	case TCP_SYN_SENT:
		return ends && e->has_syn_seq && !e->tcp;
	case TCP_ESTABLISHED:
		return ends && (e->tcp || e->connect_backlog);
	default:
		return ends && (bit & (TCPF_OUR_FIN | TCPF_PEER_FIN)) && e->tcp &&
		       e->tcp->fin == !!(bit & TCPF_OUR_FIN) &&
		       e->tcp->peer_fin == !!(bit & TCPF_PEER_FIN);
	}
}

/*
 * Whether the network lock holds @e at restore: a connection with its
 * queues, and a connect() in flight, whose SYN, sent at open, must not meet
 * a port whose listener (restored too, by another task) is not there yet and
 * answers with a reset; held, it goes once the tree runs. (On one host the
 * dump's lock, reused, holds it already; not when the tree has a network
 * namespace of its own, which went with the dumped tree.)
 */
bool tcp_entry_locked(const InetSkEntry *e)
{
	return e && (e->tcp || (e->proto == IPPROTO_TCP && e->state == TCP_SYN_SENT));
}

int rst_tcp_lock_all(struct restore_ctx *ctx)
{
	const struct rst_kind *k = rst_kind_get(ctx, &inet_kind);
	const struct rst_files *f = ctx->files;
	_cleanup_free_ struct inet_tuple *t = calloc(k->n ?: 1, sizeof(*t));
	size_t i, n = 0;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < k->n; i++) {
		const FileEntry *fe = f->idx.by_id[k->pos[i]];

		if (!tcp_entry_locked(fe->inetsk))
			continue;
		if (inet_entry_tuple(fe->inetsk, &t[n])) {
			pr_err("files.img: file %u: bad addresses of a TCP connection\n", fe->id);
			return -EINVAL;
		}
		/* the lock of the tree's new namespace holds it already: not over lo */
		if (!ns_net_conn_outside(&t[n]))
			n++;
	}
	return netlock_restore_conns(ctx, t, n);
}

/* A connection that waited in a backlog, connected again at open: the handshake done. */
static int tcp_check_connected(int sk, const InetSkEntry *e, uint32_t id)
{
	char ends[INET_ENDS_STRLEN];
	struct pollfd p = { .fd = sk, .events = POLLOUT };
	int soerr = 0;
	socklen_t len = sizeof(soerr);

	if (poll(&p, 1, TCP_CONNECT_WAIT_MS) == 1 &&
	    !getsockopt(sk, SOL_SOCKET, SO_ERROR, &soerr, &len) && !soerr)
		return 0;
	pr_err("file %u: the connection %s to a listening socket of the tree was not made again: "
	       "%s\n",
	       id, inet_entry_ends(e, ends, sizeof(ends)), soerr ? strerror(soerr) : "no answer");
	return soerr ? -soerr : -ETIMEDOUT;
}

int rst_inet_repair_off(struct restore_ctx *ctx)
{
	const struct rst_files *f = ctx->files;
	const struct rst_kind *k;
	char ends[INET_ENDS_STRLEN];
	size_t i;
	int err;

	if (!f)
		return 0;
	k = rst_kind_get(ctx, &inet_kind);
	for (i = 0; i < k->n; i++) {
		size_t pos = k->pos[i];
		const FileEntry *fe = f->idx.by_id[pos];

		if (!fe->inetsk)
			continue;
		if (fe->inetsk->connect_backlog) {
			err = tcp_check_connected(f->fds[pos], fe->inetsk, fe->id);
			if (err)
				return err;
		}
		/* --tcp-close: restored closed, never in repair mode */
		if (!fe->inetsk->tcp || (ctx->opts && ctx->opts->tcp_close))
			continue;
		err = tcp_go_live(f->fds[pos], fe->inetsk);
		if (!err)
			err = inet_restore_buf_lock(f->fds[pos], fe->inetsk, fe->id);
		if (err) {
			pr_errno(err, "file %u: cannot take TCP connection %s out of repair mode",
				 fe->id, inet_entry_ends(fe->inetsk, ends, sizeof(ends)));
			return err;
		}
	}
	return 0;
}
