// SPDX-License-Identifier: GPL-2.0
/*
 * TCP connections at dump time (--tcp-established), ESTABLISHED or shut
 * down for writing (FIN_WAIT1/2): before the first of them, the packets of
 * every connection of the tree are dropped by the network lock (one
 * transaction), then each socket is put in repair mode (TCP_REPAIR, 3.5), where the kernel neither
 * sends nor times out anything and lets its state be read: the sequence
 * numbers of both queues (TCP_QUEUE_SEQ), their contents (MSG_PEEK of the
 * queue chosen with TCP_REPAIR_QUEUE), the options negotiated at the
 * handshake (TCP_INFO, TCP_MAXSEG), the windows (TCP_REPAIR_WINDOW, 4.8)
 * and the timestamp clock (TCP_TIMESTAMP). It stays in repair mode until
 * the end of the dump: a socket closed in repair mode sends neither FIN nor
 * RST (tcp_disconnect()), so killing the tree leaves the peer waiting for
 * the restore; inet_dump_fini() takes it out again when the tree goes on.
 * Connections waiting in the backlog of a listening socket of the tree are
 * not repaired: their clients connect again at restore.
 */
#define LOG_PREFIX "files: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "files-int.h"
#include "inet-int.h"
#include "log.h"
#include "net-lock.h"
#include "util.h"

#ifndef SIOCOUTQNSD
#define SIOCOUTQNSD 0x894B /* 2.6.38 */
#endif

#define ENDS_LEN (2 * INET_ADDR_STRLEN + 8)

void tcp_stream_free(TcpStreamEntry *t)
{
	free(t);
}

/* Keep a duplicate of @f's socket, to take it out of repair mode or close it at the end. */
static int repaired_add(struct dump_ctx *ctx, const struct fd_info *f, int *ret_fd)
{
	struct inet_dump *in = ctx->inet;
	int fd;

	if (in->nr_rep == in->cap_rep) {
		size_t cap = in->cap_rep ? in->cap_rep * 2 : 16;
		struct inet_repaired *n = realloc(in->rep, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		in->rep = n;
		in->cap_rep = cap;
	}
	fd = fcntl(f->dfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return neg_errno();
	in->rep[in->nr_rep].fd = fd;
	in->rep[in->nr_rep].pid = f->pid;
	in->rep[in->nr_rep].task_fd = f->fd;
	in->rep[in->nr_rep].reuseaddr = -1;
	in->nr_rep++;
	*ret_fd = fd;
	return 0;
}

struct tcp_sizes {
	int inq, outq, unsent;
};

static int tcp_queue_sizes(int sk, struct tcp_sizes *s)
{
	if (ioctl(sk, SIOCINQ, &s->inq) || ioctl(sk, SIOCOUTQ, &s->outq) ||
	    ioctl(sk, SIOCOUTQNSD, &s->unsent))
		return neg_errno();
	if (s->inq < 0 || s->outq < 0 || s->unsent < 0 || s->unsent > s->outq)
		return -EINVAL;
	return 0;
}

/*
 * The sequence number and the @len bytes of queue @q into @buf. One byte more
 * is asked for: getting it would mean the queue grew, which it cannot in
 * repair mode.
 */
static int tcp_read_queue(int sk, int q, uint32_t *seq, uint8_t *buf, size_t len)
{
	socklen_t sl = sizeof(*seq);
	ssize_t n;

	if (setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) ||
	    getsockopt(sk, SOL_TCP, TCP_QUEUE_SEQ, seq, &sl))
		return neg_errno();
	if (!len)
		return 0;
	n = recv(sk, buf, len + 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0)
		return neg_errno();
	return (size_t)n == len ? 0 : -EAGAIN;
}

static int tcp_read_opts(int sk, unsigned int state, TcpStreamEntry *t)
{
	struct tcp_repair_window w;
	struct tcp_info ti;
	socklen_t len = sizeof(ti), wl = sizeof(w), ml = sizeof(int), tl = sizeof(uint32_t);
	int mss;

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(sk, SOL_TCP, TCP_INFO, &ti, &len) ||
	    getsockopt(sk, SOL_TCP, TCP_MAXSEG, &mss, &ml))
		return neg_errno();
	if (ti.tcpi_state != state)
		return -EAGAIN;
	t->opt_mask = ti.tcpi_options & (TCPI_OPT_SACK | TCPI_OPT_TIMESTAMPS | TCPI_OPT_WSCALE);
	if (ti.tcpi_options & TCPI_OPT_WSCALE) {
		t->snd_wscale = ti.tcpi_snd_wscale;
		t->rcv_wscale = ti.tcpi_rcv_wscale;
	}
	t->mss_clamp = (uint32_t)mss;
	if (ti.tcpi_options & TCPI_OPT_TIMESTAMPS) {
		if (getsockopt(sk, SOL_TCP, TCP_TIMESTAMP, &t->timestamp, &tl))
			return neg_errno();
		t->has_timestamp = true;
	}
	if (getsockopt(sk, SOL_TCP, TCP_REPAIR_WINDOW, &w, &wl))
		return neg_errno();
	t->has_snd_wl1 = t->has_snd_wnd = t->has_max_window = t->has_rcv_wnd = t->has_rcv_wup =
		true;
	t->snd_wl1 = w.snd_wl1;
	t->snd_wnd = w.snd_wnd;
	t->max_window = w.max_window;
	t->rcv_wnd = w.rcv_wnd;
	t->rcv_wup = w.rcv_wup;
	return 0;
}

/*
 * Whether the connection still is what was read: a packet that passed the
 * lock's hooks just before it was installed is still processed, and may have
 * moved a window or a sequence number after it was read (the window and the
 * sequence numbers must agree at restore: TCP_REPAIR_WINDOW checks them).
 * -EAGAIN if anything moved.
 */
static int tcp_unchanged(int sk, unsigned int state, const TcpStreamEntry *t)
{
	struct tcp_repair_window w;
	struct tcp_info ti;
	socklen_t wl = sizeof(w), tl = sizeof(ti), sl = sizeof(uint32_t);
	uint32_t rseq, sseq;
	int rq = TCP_RECV_QUEUE, sq = TCP_SEND_QUEUE;

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(sk, SOL_TCP, TCP_INFO, &ti, &tl) ||
	    getsockopt(sk, SOL_TCP, TCP_REPAIR_WINDOW, &w, &wl) ||
	    setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &rq, sizeof(rq)) ||
	    getsockopt(sk, SOL_TCP, TCP_QUEUE_SEQ, &rseq, &sl) ||
	    setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &sq, sizeof(sq)) ||
	    getsockopt(sk, SOL_TCP, TCP_QUEUE_SEQ, &sseq, &sl))
		return neg_errno();
	if (ti.tcpi_state != state || rseq != t->inq_seq || sseq != t->outq_seq ||
	    w.snd_wl1 != t->snd_wl1 || w.snd_wnd != t->snd_wnd || w.max_window != t->max_window ||
	    w.rcv_wnd != t->rcv_wnd || w.rcv_wup != t->rcv_wup)
		return -EAGAIN;
	return 0;
}

/*
 * Everything of the connection on @sk (in @state), in repair mode, into one
 * block: the entry, then the queues. After shutdown(SHUT_WR) our FIN holds a
 * sequence number at the end of the send queue: counted by SIOCOUTQ until
 * it is acknowledged (FIN_WAIT2: everything is), by SIOCOUTQNSD until sent.
 */
static int tcp_read(int sk, unsigned int state, TcpStreamEntry **ret)
{
	bool fin = (1u << state) & TCPF_OUR_FIN;
	struct tcp_sizes s;
	TcpStreamEntry *t;
	int err, none = TCP_NO_QUEUE;

	err = tcp_queue_sizes(sk, &s);
	if (err)
		return err;
	if (fin && s.outq) {
		s.outq--;
		s.unsent -= s.unsent > 0;
	}
	t = malloc(sizeof(*t) + (size_t)s.inq + (size_t)s.outq + 1);
	if (!t)
		return -ENOMEM;
	tcp_stream_entry__init(t);
	t->in_queue.data = (uint8_t *)(t + 1);
	t->in_queue.len = (size_t)s.inq;
	t->out_queue.data = t->in_queue.data + s.inq;
	t->out_queue.len = (size_t)s.outq;
	t->unsent = (uint32_t)s.unsent;
	t->has_fin = t->fin = fin;
	/* SIOCINQ leaves the peer's FIN out; TCP_QUEUE_SEQ (rcv_nxt) counts it */
	t->has_peer_fin = t->peer_fin = ((1u << state) & TCPF_PEER_FIN) != 0;
	err = tcp_read_opts(sk, state, t);
	if (!err)
		err = tcp_read_queue(sk, TCP_RECV_QUEUE, &t->inq_seq, t->in_queue.data,
				     t->in_queue.len);
	if (!err)
		err = tcp_read_queue(sk, TCP_SEND_QUEUE, &t->outq_seq, t->out_queue.data,
				     t->out_queue.len);
	if (!err)
		err = tcp_unchanged(sk, state, t);
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &none, sizeof(none)) && !err)
		err = neg_errno();
	if (err) {
		free(t);
		return err;
	}
	*ret = t;
	return 0;
}

static int lock_conn(struct dump_ctx *ctx, const struct fd_info *f, const InetSkEntry *e);
static int tcp_read_any(int sk, const struct fd_info *f, InetSkEntry *e);

/*
 * A connect() in flight (SYN_SENT): its initial sequence number, which the
 * restore sends again. Only the SYN may be queued (no TCP Fast Open data).
 */
static int tcp_read_syn_sent(int sk, InetSkEntry *e)
{
	int q = TCP_SEND_QUEUE, none = TCP_NO_QUEUE, outq = 0;
	struct tcp_info ti;
	socklen_t len = sizeof(ti), sl = sizeof(e->syn_seq);

	memset(&ti, 0, sizeof(ti));
	if (ioctl(sk, SIOCOUTQ, &outq) || getsockopt(sk, SOL_TCP, TCP_INFO, &ti, &len) ||
	    setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) ||
	    getsockopt(sk, SOL_TCP, TCP_QUEUE_SEQ, &e->syn_seq, &sl) ||
	    setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &none, sizeof(none)))
		return neg_errno();
	if (ti.tcpi_state != TCP_SYN_SENT)
		return -EAGAIN;
	if (outq > 1)
		return -EOPNOTSUPP; /* data sent with the SYN */
	e->syn_seq -= 1; /* the SYN took one: write_seq is one past it */
	e->has_syn_seq = true;
	return 0;
}

static bool has_urgent(int sk)
{
	char c;

	return recv(sk, &c, 1, MSG_OOB | MSG_PEEK | MSG_DONTWAIT) >= 0 || errno == EAGAIN;
}

int tcp_dump_established(struct dump_ctx *ctx, const struct fd_info *f, InetSkEntry *e)
{
	char ends[ENDS_LEN];
	int on = TCP_REPAIR_ON, atmark = 0, sk, err;

	inet_entry_ends(e, ends, sizeof(ends));
	if (!ctx->opts->tcp_established) {
		pr_err("pid %d fd %d: %s is a TCP connection %s (%s): use --tcp-established to "
		       "dump it\n",
		       f->pid, f->fd, f->link, ends, tcp_state_name(e->state));
		return -EOPNOTSUPP;
	}
	/*
	 * Urgent data would be read as normal data after restore: at the read
	 * mark, or announced and not read yet (a MSG_OOB peek gives it, or says
	 * EAGAIN while it has not arrived; EINVAL when there is none, or inline).
	 */
	if ((!ioctl(f->dfd, SIOCATMARK, &atmark) && atmark) || has_urgent(f->dfd)) {
		pr_err("pid %d fd %d: TCP connection %s has urgent data waiting to be read: not "
		       "supported\n",
		       f->pid, f->fd, ends);
		return -EOPNOTSUPP;
	}
	/* The peer must see nothing from here on: neither a reset nor an answer. */
	err = lock_conn(ctx, f, e);
	if (err)
		return err;
	err = repaired_add(ctx, f, &sk);
	if (err)
		return err;
	/* TCP_REPAIR overwrites sk_reuse; turning it off clears it: kept to put back. */
	ctx->inet->rep[ctx->inet->nr_rep - 1].reuseaddr = e->reuseaddr;
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR, &on, sizeof(on))) {
		pr_perror("pid %d fd %d: cannot put TCP connection %s in repair mode", f->pid,
			  f->fd, ends);
		ctx->inet->rep[ctx->inet->nr_rep - 1].reuseaddr = -1; /* never in repair mode */
		return neg_errno();
	}
	err = tcp_read_any(sk, f, e);
	if (err == -EAGAIN)
		pr_err("pid %d fd %d: TCP connection %s changed while it was read in repair mode\n",
		       f->pid, f->fd, ends);
	else if (err && err != -EOPNOTSUPP) /* refusals are logged where they are known */
		pr_errno(err, "pid %d fd %d: cannot read TCP connection %s in repair mode", f->pid,
			 f->fd, ends);
	else if (e->tcp)
		pr_info("pid %d fd %d: TCP %s: %zu bytes to read, %zu in the send queue (%u "
			"unsent)\n",
			f->pid, f->fd, ends, e->tcp->in_queue.len, e->tcp->out_queue.len,
			e->tcp->unsent);
	return err;
}

void inet_dump_fini(struct dump_ctx *ctx, bool resume)
{
	struct inet_dump *in = ctx->inet;
	size_t i;

	if (!in)
		return;
	for (i = 0; i < in->nr_rep; i++) {
		struct inet_repaired *r = &in->rep[i];
		/* No window probe: nothing changed while the connection was paused. */
		int off = TCP_REPAIR_OFF_NO_WP;

		if (resume && r->reuseaddr >= 0) {
			if (setsockopt(r->fd, SOL_TCP, TCP_REPAIR, &off, sizeof(off)) ||
			    setsockopt(r->fd, SOL_SOCKET, SO_REUSEADDR, &r->reuseaddr,
				       sizeof(r->reuseaddr)))
				pr_perror("pid %d fd %d: cannot take the TCP connection out of "
					  "repair mode",
					  r->pid, r->task_fd);
		}
		/* Closing our duplicate does nothing to the connection: the task holds it. */
		close(r->fd);
	}
	free(in->rep);
	free(in->sks);
	free(in->locked);
	free(in->outside);
	free(in);
	ctx->inet = NULL;
}

/* ---- connections in the backlog of a listening socket ----------------------------------- */

static bool addr_same(int fa, const uint8_t *a, int fb, const uint8_t *b)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (fa == fb)
		return !memcmp(a, b, fa == AF_INET6 ? 16 : 4);
	/* an IPv4 socket and an IPv6 one holding its address v4-mapped */
	if (fa == AF_INET6)
		return !memcmp(a, mapped, 12) && !memcmp(a + 12, b, 4);
	return !memcmp(b, mapped, 12) && !memcmp(b + 12, a, 4);
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
	const struct inet_dump *in = ctx->inet;
	char ends[ENDS_LEN], from[INET_ADDR_STRLEN];
	unsigned int found = 0;
	size_t i;

	inet_entry_ends(e, ends, sizeof(ends));
	for (i = 0; i < in->nr_sks; i++) {
		const struct inet_sk_diag *c = &in->sks[i], *cl, *l;

		if (c->ino || c->state != TCP_ESTABLISHED || !(l = find_listener(in, c)) ||
		    l->ino != dg->ino)
			continue;
		inet_fmt(c->family, c->dst, c->dport, from, sizeof(from));
		cl = find_peer(in, c, false);
		if (!cl || !sock_in_tree(ctx, f->st.st_dev, cl->ino)) {
			pr_err("pid %d fd %d: listening TCP socket %s has %u connections not yet "
			       "accepted, one from %s outside the dumped tree: not supported (the "
			       "kernel cannot put a connection back in an accept queue; only "
			       "clients "
			       "of the tree are connected again)\n",
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
	if (found != dg->rqueue) {
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
	const struct inet_dump *in = ctx->inet;
	const struct inet_sk_diag *c = find_peer(in, dg, true), *l;
	char ends[ENDS_LEN];
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
static int lock_tree_conns(struct dump_ctx *ctx)
{
	struct inet_dump *in = ctx->inet;
	_cleanup_free_ struct inet_tuple *t = NULL;
	_cleanup_free_ uint32_t *tree = NULL;
	size_t nt = 0, n = 0, i;
	int err;

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
		if (inet_entry_tuple(&e, &t[n]))
			continue;
		in->locked[n++] = c.ino;
	}
	err = netlock_dump_conns(ctx, t, n);
	if (err)
		return err;
	in->nr_locked = n;
	if (n)
		qsort(in->locked, n, sizeof(*in->locked), cmp_u32);
	pr_debug("network lock: %zu connections of the tree locked at once\n", n);
	return 0;
}

/* The connection @e of @f locked: with the whole tree's on first use, else alone. */
static int lock_conn(struct dump_ctx *ctx, const struct fd_info *f, const InetSkEntry *e)
{
	struct inet_dump *in = ctx->inet;
	struct inet_tuple tup;
	char ends[ENDS_LEN];
	int err;

	if (!in->locked_tree) {
		err = lock_tree_conns(ctx);
		if (err)
			return err;
	}
	if (ino_in(in->locked, in->nr_locked, (uint32_t)f->st.st_ino))
		return 0;
	if (inet_entry_tuple(e, &tup)) {
		pr_err("pid %d fd %d: TCP connection %s: bad addresses\n", f->pid, f->fd,
		       inet_entry_ends(e, ends, sizeof(ends)));
		return -EINVAL;
	}
	return netlock_dump_conn(ctx, &tup);
}

/*
 * The connection on @sk, in repair mode, read in the state TCP_INFO gives
 * now: sock_diag was read before the lock held its packets, and one already
 * on its way may have moved it since (an ACK of our FIN: FIN_WAIT1 to
 * FIN_WAIT2; the peer's FIN: ESTABLISHED to CLOSE_WAIT). Read again if it
 * moved while it was read (-EAGAIN after three tries).
 */
static int tcp_read_any(int sk, const struct fd_info *f, InetSkEntry *e)
{
	char ends[ENDS_LEN];
	struct tcp_info ti;
	unsigned int i;
	int err = -EAGAIN;

	for (i = 0; i < 3 && err == -EAGAIN; i++) {
		socklen_t len = sizeof(ti);

		memset(&ti, 0, sizeof(ti));
		if (getsockopt(sk, SOL_TCP, TCP_INFO, &ti, &len))
			return neg_errno();
		if (ti.tcpi_state >= 32 || !((1u << ti.tcpi_state) & TCPF_REPAIRED)) {
			pr_err("pid %d fd %d: TCP connection %s went to state %s while it was "
			       "dumped: not supported\n",
			       f->pid, f->fd, inet_entry_ends(e, ends, sizeof(ends)),
			       tcp_state_name(ti.tcpi_state));
			return -EOPNOTSUPP;
		}
		e->state = ti.tcpi_state;
		if (ti.tcpi_state == TCP_SYN_SENT)
			err = tcp_read_syn_sent(sk, e);
		else
			err = tcp_read(sk, ti.tcpi_state, &e->tcp);
	}
	if (err == -EOPNOTSUPP)
		pr_err("pid %d fd %d: TCP connection %s sent data with its SYN (TCP Fast Open) and "
		       "is not answered yet: not supported\n",
		       f->pid, f->fd, inet_entry_ends(e, ends, sizeof(ends)));
	return err;
}
