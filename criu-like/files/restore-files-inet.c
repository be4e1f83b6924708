// SPDX-License-Identifier: GPL-2.0
/*
 * TCP and UDP sockets of a restore (FILE_INETSK), created in the controller
 * like every description (Documentation/network.md): socket(), the options
 * that must come before bind() (SO_REUSEADDR forced on, so the port is
 * taken again even with connections of the dump in TIME_WAIT, SO_REUSEPORT,
 * IPV6_V6ONLY, SO_BINDTODEVICE), bind() to the saved address and port, then
 * listen() with the saved backlog, connect() of a connected UDP socket, or
 * the established TCP connection rebuilt in repair mode
 * (restore-files-tcp.c); then the other options, the saved SO_REUSEADDR
 * (for connections in repair mode: in rst_inet_repair_off()) and the
 * description's O_NONBLOCK. An option is set only where it differs from the
 * new socket's default, so a value the program never chose stays free to
 * follow the system's.
 */
#define LOG_PREFIX "restore-files: "

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "inet-int.h"
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

#define ENDS_LEN (2 * INET_ADDR_STRLEN + 8)

static const InetSkEntry *isk_at(const struct rst_files *f, size_t pos)
{
	return f->idx.by_id[pos]->inetsk;
}

int inet_sockaddr(const InetSkEntry *e, bool dst, struct sockaddr_storage *sa, socklen_t *len)
{
	const ProtobufCBinaryData *a = dst ? &e->dst_addr : &e->src_addr;
	uint32_t port = dst ? e->dst_port : e->src_port;

	memset(sa, 0, sizeof(*sa));
	if (port > 65535)
		return -EINVAL;
	if (e->family == AF_INET && a->len == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		memcpy(&in->sin_addr, a->data, 4);
		*len = sizeof(*in);
		return 0;
	}
	if (e->family == AF_INET6 && a->len == 16) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		memcpy(&in6->sin6_addr, a->data, 16);
		*len = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

/* Whether a TCP entry has what its state needs. */
static bool tcp_entry_ok(const InetSkEntry *e)
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

static int check_entry(const InetSkEntry *e, uint32_t id)
{
	bool tcp = e->type == SOCK_STREAM && e->proto == IPPROTO_TCP;
	bool udp = e->type == SOCK_DGRAM && e->proto == IPPROTO_UDP;
	bool ok = (e->family == AF_INET || e->family == AF_INET6) && (tcp || udp);

	if (ok && tcp)
		ok = tcp_entry_ok(e);
	if (ok && udp)
		ok = e->state == TCP_CLOSE || (e->state == TCP_ESTABLISHED && e->has_dst_port);
	if (!ok)
		pr_err("files.img: file %u: bad inet socket (family %u, type %u, protocol %u, "
		       "state %u)\n",
		       id, e->family, e->type, e->proto, e->state);
	return ok ? 0 : -EINVAL;
}

static int set_int(int sk, int level, int opt, int val)
{
	return setsockopt(sk, level, opt, &val, sizeof(val)) ? neg_errno() : 0;
}

/* The int options of the table, where they differ from the new socket's. */
static int restore_int_opts(int sk, const InetSkEntry *e, bool before_bind, uint32_t id)
{
	const struct inet_opt *o;

	for (o = inet_opts; o->name; o++) {
		uint32_t want = *(const uint32_t *)((const char *)e + o->val_off);
		int cur = 0, err;
		socklen_t len = sizeof(cur);

		if (!inet_opt_applies(o, (int)e->family, (int)e->proto) ||
		    !*(const protobuf_c_boolean *)((const char *)e + o->has_off) ||
		    !(o->flags & INET_OPT_BEFORE_BIND) != !before_bind)
			continue;
		/* A connection keeps larger buffers until rst_inet_repair_off() has refilled it. */
		if ((o->flags & INET_OPT_BUF) && e->tcp)
			continue;
		if (getsockopt(sk, o->level, o->opt, &cur, &len))
			return neg_errno();
		if ((uint32_t)cur == want)
			continue;
		if (o->flags & INET_OPT_BUF) /* the kernel doubles what it is given */
			err = set_int(sk, SOL_SOCKET,
				      o->opt == SO_SNDBUF ? SO_SNDBUFFORCE : SO_RCVBUFFORCE,
				      (int)(want / 2));
		else
			err = set_int(sk, o->level, o->opt, (int)want);
		if (err) {
			pr_errno(err, "file %u: cannot set %s to %u", id, o->name, want);
			return err;
		}
	}
	return 0;
}

static int restore_opts_before_bind(int sk, const InetSkEntry *e, uint32_t id)
{
	int err = set_int(sk, SOL_SOCKET, SO_REUSEADDR, 1);

	if (!err && e->family == AF_INET6 && e->has_v6only)
		err = set_int(sk, SOL_IPV6, IPV6_V6ONLY, e->v6only);
	if (err) {
		pr_errno(err, "file %u: cannot set SO_REUSEADDR or IPV6_V6ONLY", id);
		return err;
	}
	if (e->bindtodevice && setsockopt(sk, SOL_SOCKET, SO_BINDTODEVICE, e->bindtodevice,
					  (socklen_t)strlen(e->bindtodevice))) {
		pr_perror("file %u: cannot bind the socket to device %s", id, e->bindtodevice);
		return neg_errno();
	}
	return restore_int_opts(sk, e, true, id);
}

static int set_timeout(int sk, int opt, bool has, uint64_t us)
{
	struct timeval tv = { .tv_sec = (time_t)(us / 1000000),
			      .tv_usec = (suseconds_t)(us % 1000000) };

	return has ? setsockopt(sk, SOL_SOCKET, opt, &tv, sizeof(tv)) : 0;
}

/*
 * The classic BPF filter, locked if it was: after the queued datagrams are
 * back (a filter attached after they arrived must not drop them now).
 */
static int restore_filter(int sk, const InetSkEntry *e, uint32_t id)
{
	struct sock_fprog prog;

	if (!e->has_filter || !e->filter.len)
		return 0;
	if (e->filter.len % sizeof(struct sock_filter) ||
	    e->filter.len / sizeof(struct sock_filter) > INET_FILTER_MAX) {
		pr_err("files.img: file %u: a socket filter of %zu bytes\n", id, e->filter.len);
		return -EINVAL;
	}
	prog.len = (unsigned short)(e->filter.len / sizeof(struct sock_filter));
	prog.filter = (struct sock_filter *)e->filter.data;
	if (setsockopt(sk, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ||
	    (e->lock_filter &&
	     setsockopt(sk, SOL_SOCKET, SO_LOCK_FILTER, &(int){ 1 }, sizeof(int)))) {
		pr_perror("file %u: cannot attach its socket filter", id);
		return neg_errno();
	}
	return 0;
}

static int restore_opts_after(int sk, const InetSkEntry *e, uint32_t id)
{
	char cur[INET_CONG_MAX + 1] = "";
	socklen_t len = sizeof(cur) - 1;
	int err = restore_int_opts(sk, e, false, id);

	if (err)
		return err;
	if (set_timeout(sk, SO_RCVTIMEO, e->has_rcvtimeo_us, e->rcvtimeo_us) ||
	    set_timeout(sk, SO_SNDTIMEO, e->has_sndtimeo_us, e->sndtimeo_us)) {
		pr_perror("file %u: cannot set SO_RCVTIMEO/SO_SNDTIMEO", id);
		return neg_errno();
	}
	if (e->has_linger) {
		struct linger lg = { .l_onoff = 1, .l_linger = (int)e->linger };

		if (setsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg))) {
			pr_perror("file %u: cannot set SO_LINGER", id);
			return neg_errno();
		}
	}
	if (e->congestion &&
	    (getsockopt(sk, SOL_TCP, TCP_CONGESTION, cur, &len) || strcmp(cur, e->congestion)) &&
	    setsockopt(sk, SOL_TCP, TCP_CONGESTION, e->congestion,
		       (socklen_t)strlen(e->congestion))) {
		pr_perror("file %u: cannot set the congestion control %s", id, e->congestion);
		return neg_errno();
	}
	return 0;
}

static int isk_bind(int sk, const InetSkEntry *e, uint32_t id)
{
	char ends[ENDS_LEN];
	struct sockaddr_storage sa;
	socklen_t len;

	if (!e->has_src_port)
		return 0;
	if (inet_sockaddr(e, false, &sa, &len)) {
		pr_err("files.img: file %u: bad local address\n", id);
		return -EINVAL;
	}
	if (bind(sk, (struct sockaddr *)&sa, len)) {
		int err = neg_errno();

		inet_entry_ends(e, ends, sizeof(ends));
		if (err == -EADDRINUSE)
			pr_err("file %u: cannot bind to %s: the address is in use by another "
			       "socket "
			       "(a process outside the dumped tree holding the same socket, or "
			       "another program that took the port)\n",
			       id, ends);
		else
			pr_errno(err, "file %u: cannot bind to %s", id, ends);
		return err;
	}
	return 0;
}

/*
 * A connected UDP socket, or a TCP connection that waited in the backlog of a
 * listening socket of the tree: a new connection to it, in its backlog again
 * (loopback: the handshake is done before any task runs; rst_inet_repair_off()
 * checks it).
 */
static int isk_connect(int sk, const InetSkEntry *e, uint32_t id)
{
	char ends[ENDS_LEN];
	struct sockaddr_storage sa;
	socklen_t len;

	if (inet_sockaddr(e, true, &sa, &len)) {
		pr_err("files.img: file %u: bad peer address\n", id);
		return -EINVAL;
	}
	if (connect(sk, (struct sockaddr *)&sa, len) && errno != EINPROGRESS) {
		pr_perror("file %u: cannot connect %s socket %s", id,
			  e->proto == IPPROTO_UDP ? "UDP" : "TCP",
			  inet_entry_ends(e, ends, sizeof(ends)));
		return neg_errno();
	}
	return 0;
}

/* The end of the restore of one socket: shutdown, SO_REUSEADDR, O_NONBLOCK. */
static int isk_finish(int sk, const InetSkEntry *e, uint32_t id)
{
	unsigned int shut = e->has_shutdown ? e->shutdown : 0;
	int err = 0;

	/*
	 * shutdown() sends no packet for SHUT_RD, nor for a UDP socket: it only
	 * sets sk_shutdown (an unconnected UDP socket says ENOTCONN, but sets it
	 * too). A TCP connection's FIN is the repair code's (it follows the
	 * unsent data). The peer's FIN received is given back as SHUT_RD: reads
	 * give the end of file after the queue, and the peer, whose FIN was
	 * acknowledged, sends nothing more.
	 */
	if (e->proto == IPPROTO_TCP)
		shut = (shut & 1) | (e->tcp && e->tcp->peer_fin);
	if (shut && shut <= 3 && shutdown(sk, (int)shut - 1) && errno != ENOTCONN)
		err = neg_errno();
	/* A connection in repair mode gets its SO_REUSEADDR with rst_inet_repair_off(). */
	if (!err && !e->tcp)
		err = set_int(sk, SOL_SOCKET, SO_REUSEADDR, e->has_reuseaddr && e->reuseaddr);
	if (!err && !(e->flags & O_NONBLOCK) && fcntl(sk, F_SETFL, e->flags & ~O_NONBLOCK))
		err = neg_errno();
	if (err)
		pr_errno(err, "file %u: cannot finish the inet socket", id);
	return err;
}

static int isk_open_one(const InetSkEntry *e, uint32_t id)
{
	char ends[ENDS_LEN];
	_cleanup_close_ int sk = -1;
	int err;

	err = check_entry(e, id);
	if (err)
		return err;
	/* Non-blocking while restoring, so nothing in the controller waits on the network. */
	sk = socket((int)e->family, (int)e->type | SOCK_NONBLOCK | SOCK_CLOEXEC, (int)e->proto);
	if (sk < 0) {
		pr_perror("file %u: cannot create an inet socket", id);
		return neg_errno();
	}
	err = restore_opts_before_bind(sk, e, id);
	if (!err && e->tcp)
		err = tcp_restore_established(sk, e, id);
	else if (!err && e->proto == IPPROTO_TCP && e->state == TCP_SYN_SENT)
		err = tcp_restore_syn_sent(sk, e, id);
	else if (!err)
		err = isk_bind(sk, e, id);
	if (!err && e->proto == IPPROTO_TCP && e->state == TCP_LISTEN &&
	    listen(sk, (int)(e->has_backlog ? e->backlog : SOMAXCONN))) {
		pr_perror("file %u: cannot listen on %s", id,
			  inet_entry_ends(e, ends, sizeof(ends)));
		err = neg_errno();
	}
	if (!err)
		err = restore_opts_after(sk, e, id);
	/* with the saved receive buffer, and before connect(), which filters senders */
	if (!err && e->n_dgrams)
		err = udp_refill(sk, e, id);
	if (!err)
		err = restore_filter(sk, e, id);
	if (!err && e->state == TCP_ESTABLISHED && (e->proto == IPPROTO_UDP || e->connect_backlog))
		err = isk_connect(sk, e, id);
	if (!err)
		err = isk_finish(sk, e, id);
	if (err)
		return err;
	pr_debug("file %u: %s %s restored\n", id, e->proto == IPPROTO_TCP ? "TCP" : "UDP",
		 inet_entry_ends(e, ends, sizeof(ends)));
	return TAKE_FD(sk);
}

/*
 * The listening sockets on @port, opened first and parked at their slot: a
 * connection taken again in repair mode binds its port without any check
 * (SK_FORCE_REUSE), a listening socket after it would have to pass them; a
 * connection that waited in a backlog connects to its listening socket.
 */
static int open_listeners_of(struct rst_files *f, uint32_t port)
{
	size_t i;

	for (i = 0; i < f->idx.n; i++) {
		const InetSkEntry *l;
		int fd;

		if (f->idx.by_id[i]->type != FILE_TYPE__FILE_INETSK || f->fds[i] >= 0)
			continue;
		l = isk_at(f, i);
		if (l->proto != IPPROTO_TCP || l->state != TCP_LISTEN || !l->has_src_port ||
		    l->src_port != port)
			continue;
		fd = isk_open_one(l, f->idx.by_id[i]->id);
		if (fd < 0)
			return fd;
		f->fds[i] = fd;
	}
	return 0;
}

/* The position of the first connection restored in repair mode. */
static size_t first_tcp(const struct rst_files *f)
{
	size_t i;

	for (i = 0; i < f->idx.n; i++)
		if (f->idx.by_id[i]->type == FILE_TYPE__FILE_INETSK && isk_at(f, i) &&
		    isk_at(f, i)->tcp)
			break;
	return i;
}

int rst_inet_open(struct restore_ctx *ctx, size_t pos)
{
	struct rst_files *f = ctx->files;
	const InetSkEntry *e = isk_at(f, pos);
	int fd, err;

	/* Opened already, before a connection on its port: hand it over (the caller moves it). */
	if (f->fds[pos] >= 0) {
		fd = f->fds[pos];
		f->fds[pos] = -1;
		return fd;
	}
	if (!e) {
		pr_err("files.img: file %u has no inet socket entry\n", f->idx.by_id[pos]->id);
		return -EINVAL;
	}
	/* the first connection in repair mode (they are opened in this order): lock them all */
	if (e->tcp && first_tcp(f) == pos) {
		err = rst_tcp_lock_all(ctx);
		if (err)
			return err;
	}
	/* a connection on a listening socket's port, or one to connect to it again */
	if (e->tcp || e->connect_backlog) {
		err = open_listeners_of(f, e->tcp ? e->src_port : e->dst_port);
		if (err)
			return err;
	}
	return isk_open_one(e, f->idx.by_id[pos]->id);
}
