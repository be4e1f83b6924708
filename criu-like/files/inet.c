// SPDX-License-Identifier: GPL-2.0
/*
 * Inet sockets (FILE_INETSK): TCP and UDP over IPv4 and IPv6
 * (Documentation/network.md), the kind's home: one socket dumped and
 * restored, its addresses, and the kind's table.
 *
 * Dump: state, addresses and ports come from sock_diag (inet-diag.c:
 * every inet socket of this network namespace, dumped once per dump and
 * found by inode); options are read with getsockopt on the duplicate the
 * parasite drained (inet-opts.c). Established and half-closed TCP
 * connections are read in repair mode (tcp-repair.c), connections waiting in
 * a backlog are matched with their clients (tcp.c); queued UDP datagrams are
 * read by udp.c (UDP-Lite too). Raw sockets (any protocol) and ping sockets
 * (ICMP echo over SOCK_DGRAM) keep their addresses and options; their
 * queue is not saved (refused when not empty). Refused: other protocols (SCTP,
 * MPTCP, ...), sockets of
 * another network namespace, the other TCP states, connections in a backlog
 * from outside the tree or with data, urgent data, a closed connection with
 * data still to read, a bound socket that a process outside the tree holds
 * too.
 *
 * Restore, in the controller like every description: socket(), the options
 * that must come before bind() (SO_REUSEADDR forced on, so the port is
 * taken again even with connections of the dump in TIME_WAIT, SO_REUSEPORT,
 * IPV6_V6ONLY, SO_BINDTODEVICE), bind() to the saved address and port, then
 * listen() with the saved backlog, connect() of a connected UDP socket, or
 * the established TCP connection rebuilt in repair mode (tcp-repair.c);
 * then the other options, the saved SO_REUSEADDR (for connections in repair
 * mode: in rst_inet_repair_off()) and the description's O_NONBLOCK. An
 * option is set only where it differs from the new socket's default, so a
 * value the program never chose stays free to follow the system's.
 */
#define LOG_PREFIX "files: "

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files-int.h"
#include "restore-files-int.h"
#include "inet.h"
#include "log.h"
#include "ns.h"
#include "net-lock.h"
#include "util.h"

#ifndef SIOCGSKNS
#define SIOCGSKNS 0x894C /* 4.10 */
#endif

/* ---- addresses ------------------------------------------------------------------------- */

const uint8_t inet_v4mapped[12] = { [10] = 0xff, [11] = 0xff };

const char *inet_fmt(int family, const uint8_t *addr, uint16_t port, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(family, addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	if (family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", a, port);
	else
		snprintf(buf, len, "%s:%u", a, port);
	return buf;
}

static size_t addr_len(int family)
{
	return family == AF_INET6 ? 16 : 4;
}

void inet_entry_addrs(InetSkEntry *e, struct inet_sk_diag *dg)
{
	/* a raw socket may be connected to port 0 */
	bool connected = dg->dport != 0 || dg->state == TCP_ESTABLISHED;

	e->has_src_addr = e->has_src_port = dg->sport != 0;
	e->src_addr.data = dg->src;
	e->src_addr.len = addr_len(dg->family);
	e->src_port = dg->sport;
	e->has_dst_addr = e->has_dst_port = connected;
	e->dst_addr.data = dg->dst;
	e->dst_addr.len = addr_len(dg->family);
	e->dst_port = dg->dport;
}

int inet_entry_tuple(const InetSkEntry *e, struct inet_tuple *t)
{
	size_t len = addr_len((int)e->family);

	memset(t, 0, sizeof(*t));
	if (!e->has_src_addr || !e->has_dst_addr || e->src_addr.len != len ||
	    e->dst_addr.len != len || e->src_port > 65535 || e->dst_port > 65535)
		return -EINVAL;
	t->family = (int)e->family;
	memcpy(t->src, e->src_addr.data, len);
	memcpy(t->dst, e->dst_addr.data, len);
	/* a dual-stack socket talking IPv4: its packets are IPv4, the lock must match those */
	if (len == 16 && !memcmp(t->src, inet_v4mapped, 12) && !memcmp(t->dst, inet_v4mapped, 12)) {
		t->family = AF_INET;
		memmove(t->src, t->src + 12, 4);
		memmove(t->dst, t->dst + 12, 4);
		memset(t->src + 4, 0, 12);
		memset(t->dst + 4, 0, 12);
	}
	t->sport = (uint16_t)e->src_port;
	t->dport = (uint16_t)e->dst_port;
	return 0;
}

const char *inet_entry_ends(const InetSkEntry *e, char *buf, size_t len)
{
	static const uint8_t any[16];
	char s[INET_ADDR_STRLEN], d[INET_ADDR_STRLEN];
	size_t alen = addr_len((int)e->family);

	inet_fmt((int)e->family,
		 e->has_src_addr && e->src_addr.len == alen ? e->src_addr.data : any,
		 (uint16_t)e->src_port, s, sizeof(s));
	if (!e->has_dst_addr || e->dst_addr.len != alen) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	inet_fmt((int)e->family, e->dst_addr.data, (uint16_t)e->dst_port, d, sizeof(d));
	snprintf(buf, len, "%s -> %s", s, d);
	return buf;
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

/* ---- checks ---------------------------------------------------------------------------- */

const char *inet_kind_name(int type, int proto)
{
	if (type == SOCK_STREAM)
		return "TCP";
	if (type == SOCK_RAW)
		return "raw";
	if (inet_is_ping(type, proto))
		return "ping";
	return proto == IPPROTO_UDPLITE ? "UDP-Lite" : "UDP";
}

/*
 * Type and protocol: TCP over SOCK_STREAM, UDP and UDP-Lite over SOCK_DGRAM,
 * ping sockets (SOCK_DGRAM, ICMP of the socket's family), raw sockets.
 */
static int check_proto(const struct fd_info *f, int *type, int *proto)
{
	int icmp = f->sk_family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	int err = inet_sk_getint(f, SOL_SOCKET, SO_TYPE, type);

	if (!err)
		err = inet_sk_getint(f, SOL_SOCKET, SO_PROTOCOL, proto);
	if (err)
		return err;
	if ((*type == SOCK_STREAM && *proto == IPPROTO_TCP) || inet_is_udp(*type, *proto) ||
	    (*type == SOCK_DGRAM && *proto == icmp) || *type == SOCK_RAW)
		return 0;
	pr_err("pid %d fd %d: %s is an %s %s socket of protocol %d: only TCP, UDP, UDP-Lite, "
	       "ping and raw sockets are supported\n",
	       f->pid, f->fd, f->link, f->sk_family == AF_INET ? "inet" : "inet6",
	       *type == SOCK_RAW      ? "raw"
	       : *type == SOCK_STREAM ? "stream"
				      : "datagram",
	       *proto);
	return -EOPNOTSUPP;
}

/* ---- the dump -------------------------------------------------------------------------- */

/* One block (file_desc.priv is freed with free()): the entry and everything it points to. */
struct inet_priv {
	InetSkEntry e;
	TcpStreamEntry t;
	uint8_t src[16], dst[16];
	char cong[INET_CONG_MAX + 1], dev[IFNAMSIZ + 1];
	uint8_t icmp6_filter[32]; /* struct icmp6_filter */
	uint8_t data[];
};

static int inet_pack(struct file_desc *d, const InetSkEntry *e)
{
	const TcpStreamEntry *t = e->tcp;
	size_t qlen = t ? t->in_queue.len + t->out_queue.len : udp_queue_size(e);
	/* the filter after the queues, 8-byte aligned */
	size_t foff = (qlen + 7) & ~(size_t)7;
	struct inet_priv *p = malloc(sizeof(*p) + foff + e->filter.len);

	if (!p)
		return -ENOMEM;
	p->e = *e;
	memcpy(p->src, e->src_addr.data, e->src_addr.len);
	p->e.src_addr.data = p->src;
	memcpy(p->dst, e->dst_addr.data, e->dst_addr.len);
	p->e.dst_addr.data = p->dst;
	snprintf(p->cong, sizeof(p->cong), "%s", e->congestion ?: "");
	p->e.congestion = e->congestion ? p->cong : NULL;
	snprintf(p->dev, sizeof(p->dev), "%s", e->bindtodevice ?: "");
	p->e.bindtodevice = e->bindtodevice ? p->dev : NULL;
	if (e->icmp6_filter.len > sizeof(p->icmp6_filter)) {
		free(p);
		return -EINVAL;
	}
	memcpy(p->icmp6_filter, e->icmp6_filter.data, e->icmp6_filter.len);
	p->e.icmp6_filter.data = p->icmp6_filter;
	if (t) {
		p->t = *t;
		if (t->in_queue.len)
			memcpy(p->data, t->in_queue.data, t->in_queue.len);
		p->t.in_queue.data = p->data;
		if (t->out_queue.len)
			memcpy(p->data + t->in_queue.len, t->out_queue.data, t->out_queue.len);
		p->t.out_queue.data = p->data + t->in_queue.len;
		p->e.tcp = &p->t;
	} else {
		udp_queue_pack(&p->e, e, p->data);
	}
	if (e->filter.len)
		memcpy(p->data + foff, e->filter.data, e->filter.len);
	p->e.filter.data = p->data + foff;
	free(d->priv);
	d->priv = p;
	d->fe.inetsk = &p->e;
	d->fe.type = FILE_TYPE__FILE_INETSK;
	return 0;
}

static int inet_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	/* files.c sets sk_family of sockets; the rest is checked once drained */
	return f->sk_family == AF_INET || f->sk_family == AF_INET6;
}

/*
 * A raw or ping socket's queue is not saved: the packets would have to come
 * again from their senders, with their headers. Refused when it holds any.
 */
static int check_queue_empty(const struct fd_info *f, int type, int proto)
{
	char c;
	/* raw and ping sockets have no SO_PEEK_OFF: a peek moves nothing */
	ssize_t n = recv(f->dfd, &c, 1, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);

	if (n < 0 && errno != EAGAIN) {
		pr_perror("pid %d fd %d: peek at %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	if (n >= 0) {
		pr_err("pid %d fd %d: %s (%s socket, protocol %d) has packets queued (the next of "
		       "%zd bytes): the queue of a raw or ping socket is not saved\n",
		       f->pid, f->fd, f->link, inet_kind_name(type, proto), proto, n);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int inet_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	InetSkEntry e = INET_SK_ENTRY__INIT;
	char cong[INET_CONG_MAX + 1], dev[IFNAMSIZ + 1], ends[INET_ENDS_STRLEN];
	struct inet_sk_diag dg;
	int type, proto, err;

	err = sock_check_netns(f, f->sk_family == AF_INET ? "an inet" : "an inet6");
	if (!err)
		err = check_proto(f, &type, &proto);
	if (!err)
		err = inet_diag_of(ctx, f, type, proto, &dg);
	if (err)
		return err;
	e.family = (uint32_t)f->sk_family;
	e.type = (uint32_t)type;
	e.proto = (uint32_t)proto;
	e.state = dg.state;
	e.flags = f->flags;
	e.has_ino = true;
	e.ino = f->st.st_ino;
	inet_entry_addrs(&e, &dg);
	err = inet_check_outside(ctx, f, &e);
	if (!err)
		err = inet_dump_opts(f, &e, cong, dev);
	if (!err)
		err = inet_dump_filter(f, &e);
	if (!err && type == SOCK_STREAM)
		err = tcp_dump(ctx, f, &dg, &e);
	else if (!err && inet_is_udp(type, proto))
		err = udp_dump(f, &dg, &e);
	else if (!err)
		err = check_queue_empty(f, type, proto);
	if (!err)
		err = inet_pack(d, &e);
	if (!err)
		pr_debug("pid %d fd %d: %s %s %s\n", f->pid, f->fd, inet_kind_name(type, proto),
			 inet_entry_ends(&e, ends, sizeof(ends)),
			 type == SOCK_STREAM ? tcp_state_name(e.state) : "");
	tcp_stream_free(e.tcp);
	udp_queue_free(&e);
	if (e.has_filter)
		free(e.filter.data);
	return err;
}

/* ---- the restore (its messages keep their own prefix) ------------------------------------ */

static const InetSkEntry *isk_at(const struct rst_files *f, size_t pos)
{
	return f->idx.by_id[pos]->inetsk;
}

static int inet_check(const FileEntry *fe)
{
	return fe->inetsk ? 0 : rst_file_part_missing(fe);
}

static int check_entry(const InetSkEntry *e, uint32_t id)
{
	bool tcp = e->type == SOCK_STREAM && e->proto == IPPROTO_TCP;
	bool dgram = inet_is_udp((int)e->type, (int)e->proto) ||
		     inet_is_ping((int)e->type, (int)e->proto) || e->type == SOCK_RAW;
	bool ok = (e->family == AF_INET || e->family == AF_INET6) && (tcp || dgram) &&
		  e->proto <= 255;

	if (ok && tcp)
		ok = tcp_entry_ok(e);
	if (ok && dgram)
		ok = e->state == TCP_CLOSE || (e->state == TCP_ESTABLISHED && e->has_dst_port);
	if (!ok)
		pr_err("files.img: file %u: bad inet socket (family %u, type %u, protocol %u, "
		       "state %u)\n",
		       id, e->family, e->type, e->proto, e->state);
	return ok ? 0 : -EINVAL;
}

/* Whether the IPv6 address @a is on a link of this namespace (tentative ones too). */
static bool addr6_here(const struct in6_addr *a)
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next)
		found = i->ifa_addr && i->ifa_addr->sa_family == AF_INET6 &&
			!memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, a, sizeof(*a));
	freeifaddrs(ifa);
	return found;
}

/*
 * bind(), and for an IPv6 address that is on a link here but still tentative
 * (a restored namespace: the veth's carrier comes up once the kernel's link
 * watch runs, up to a second later, and only then is the address usable) the
 * same with IP_FREEBIND for that call only: the option is put back as it was,
 * and the socket works once the address is.
 */
int inet_bind_tentative(int sk, const struct sockaddr_storage *sa, socklen_t len)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	int on = 1, off = 0;

	if (!bind(sk, (const struct sockaddr *)sa, len))
		return 0;
	if (errno != EADDRNOTAVAIL || sa->ss_family != AF_INET6 || !addr6_here(&s6->sin6_addr))
		return neg_errno();
	if (setsockopt(sk, SOL_IP, IP_FREEBIND, &on, sizeof(on)))
		return -EADDRNOTAVAIL;
	if (bind(sk, (const struct sockaddr *)sa, len)) {
		int err = neg_errno();

		setsockopt(sk, SOL_IP, IP_FREEBIND, &off, sizeof(off));
		return err;
	}
	pr_debug("bound to a tentative IPv6 address with IP_FREEBIND for the bind only\n");
	return setsockopt(sk, SOL_IP, IP_FREEBIND, &off, sizeof(off)) ? neg_errno() : 0;
}

#define BIND_RETRIES 50 /* an address in use, tried again up to 100 ms */
#define BIND_RETRY_US 2000

static int isk_bind(int sk, const InetSkEntry *e, uint32_t id)
{
	char ends[INET_ENDS_STRLEN];
	struct sockaddr_storage sa;
	socklen_t len;
	int err, tries = 0;

	if (!e->has_src_port)
		return 0;
	if (inet_sockaddr(e, false, &sa, &len)) {
		pr_err("files.img: file %u: bad local address\n", id);
		return -EINVAL;
	}
	err = inet_bind_tentative(sk, &sa, len);
	/*
	 * The dumped tree was just killed: its sockets' last packets (a FIN, the
	 * RST of a listener's unaccepted children) may still be on their way
	 * over loopback, the port held by an orphan that goes within a moment.
	 */
	for (; err == -EADDRINUSE && tries < BIND_RETRIES; tries++) {
		usleep(BIND_RETRY_US);
		err = inet_bind_tentative(sk, &sa, len);
	}
	if (tries) {
		inet_entry_ends(e, ends, sizeof(ends));
		pr_info("file %u: %s in use, bound after %d tries %d us apart\n", id, ends, tries,
			BIND_RETRY_US);
	}
	if (err) {
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
	char ends[INET_ENDS_STRLEN];
	struct sockaddr_storage sa;
	socklen_t len;

	if (inet_sockaddr(e, true, &sa, &len)) {
		pr_err("files.img: file %u: bad peer address\n", id);
		return -EINVAL;
	}
	if (connect(sk, (struct sockaddr *)&sa, len) && errno != EINPROGRESS) {
		pr_perror("file %u: cannot connect %s socket %s", id,
			  inet_kind_name((int)e->type, (int)e->proto),
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
	if (e->type == SOCK_STREAM)
		shut = (shut & 1) | (e->tcp && e->tcp->peer_fin);
	if (shut && shut <= 3 && shutdown(sk, (int)shut - 1) && errno != ENOTCONN)
		err = neg_errno();
	/* A connection in repair mode gets its SO_REUSEADDR with rst_inet_repair_off(). */
	if (!err && !e->tcp)
		err = inet_sk_setint(sk, SOL_SOCKET, SO_REUSEADDR,
				     e->has_reuseaddr && e->reuseaddr);
	if (!err && !(e->flags & O_NONBLOCK) && fcntl(sk, F_SETFL, e->flags & ~O_NONBLOCK))
		err = neg_errno();
	if (err)
		pr_errno(err, "file %u: cannot finish the inet socket", id);
	return err;
}

/*
 * The socket of @e. A ping socket can be made only by a group of
 * net.ipv4.ping_group_range (root too): when the controller's is not, it takes
 * the first group of the range for the socket() call. -errno on failure.
 */
static int inet_socket(const InetSkEntry *e)
{
	int flags = (int)e->type | SOCK_NONBLOCK | SOCK_CLOEXEC;
	int sk = socket((int)e->family, flags, (int)e->proto), err;
	unsigned long lo = 1, hi = 0;
	gid_t saved = getegid();
	FILE *f;

	if (sk >= 0)
		return sk;
	if (errno != EACCES || !inet_is_ping((int)e->type, (int)e->proto))
		return neg_errno();
	/* the range of the namespace the socket is made in: through criu-like's /proc */
	f = rst_proc_fopen("sys/net/ipv4/ping_group_range");
	if (f) {
		if (fscanf(f, "%lu %lu", &lo, &hi) != 2)
			lo = 1, hi = 0;
		fclose(f);
	}
	if (lo > hi || lo > UINT32_MAX || setegid((gid_t)lo))
		return -EACCES;
	sk = socket((int)e->family, flags, (int)e->proto);
	err = sk < 0 ? neg_errno() : 0;
	if (setegid(saved)) {
		err = neg_errno();
		pr_perror("cannot take the group %u back", saved);
		if (sk >= 0)
			close(sk);
		return err;
	}
	return sk < 0 ? err : sk;
}

static int isk_open_one(const InetSkEntry *e, uint32_t id)
{
	char ends[INET_ENDS_STRLEN];
	_cleanup_close_ int sk = -1;
	int err;

	err = check_entry(e, id);
	if (err)
		return err;
	/* Non-blocking while restoring, so nothing in the controller waits on the network. */
	sk = inet_socket(e);
	if (sk < 0) {
		pr_errno(sk, "file %u: cannot create an inet socket", id);
		return sk;
	}
	err = inet_restore_opts_before_bind(sk, e, id);
	if (!err && e->tcp)
		err = tcp_restore_established(sk, e, id);
	else if (!err && e->type == SOCK_STREAM && e->state == TCP_SYN_SENT)
		err = tcp_restore_syn_sent(sk, e, id);
	else if (!err)
		err = isk_bind(sk, e, id);
	if (!err && e->type == SOCK_STREAM && e->state == TCP_LISTEN &&
	    listen(sk, (int)(e->has_backlog ? e->backlog : SOMAXCONN))) {
		pr_perror("file %u: cannot listen on %s", id,
			  inet_entry_ends(e, ends, sizeof(ends)));
		err = neg_errno();
	}
	if (!err)
		err = inet_restore_opts_after(sk, e, id);
	/* with the saved receive buffer, and before connect(), which filters senders */
	if (!err && e->n_dgrams)
		err = udp_refill(sk, e, id);
	if (!err)
		err = inet_restore_filter(sk, e, id);
	/* a connection's buffers change until it goes live (rst_inet_repair_off()) */
	if (!err && !e->tcp)
		err = inet_restore_buf_lock(sk, e, id);
	if (!err && e->state == TCP_ESTABLISHED && (e->type != SOCK_STREAM || e->connect_backlog))
		err = isk_connect(sk, e, id);
	if (!err)
		err = isk_finish(sk, e, id);
	if (err)
		return err;
	pr_debug("file %u: %s %s restored\n", id, inet_kind_name((int)e->type, (int)e->proto),
		 inet_entry_ends(e, ends, sizeof(ends)));
	return TAKE_FD(sk);
}

/*
 * The listening sockets on @port, opened first and parked at their slot: a
 * connection taken again in repair mode binds its port without any check
 * (SK_FORCE_REUSE), a listening socket after it would have to pass them; a
 * connection that waited in a backlog connects to its listening socket.
 */
static int open_listeners_of(struct restore_ctx *ctx, uint32_t port)
{
	const struct rst_kind *k = rst_kind_get(ctx, &inet_kind);
	struct rst_files *f = ctx->files;
	size_t i;

	for (i = 0; i < k->n; i++) {
		size_t pos = k->pos[i];
		const InetSkEntry *l;
		int fd;

		if (f->fds[pos] >= 0)
			continue;
		l = isk_at(f, pos);
		if (l->proto != IPPROTO_TCP || l->state != TCP_LISTEN || !l->has_src_port ||
		    l->src_port != port)
			continue;
		fd = isk_open_one(l, f->idx.by_id[pos]->id);
		if (fd < 0)
			return fd;
		f->fds[pos] = fd;
	}
	return 0;
}

/* The position of the first connection restored in repair mode (idx.n: none). */
static size_t first_tcp(const struct restore_ctx *ctx)
{
	const struct rst_kind *k = rst_kind_get(ctx, &inet_kind);
	const struct rst_files *f = ctx->files;
	size_t i;

	for (i = 0; i < k->n; i++)
		if (tcp_entry_locked(isk_at(f, k->pos[i])))
			return k->pos[i];
	return f->idx.n;
}

/*
 * --tcp-close (CRIU's): a TCP connection comes back as the socket a reset
 * leaves, closed and unbound, with its options: the program's next read or
 * write on it fails, as after the peer reset it. Nothing is locked or
 * repaired for it.
 */
static int isk_open_closed(const InetSkEntry *e, uint32_t id)
{
	InetSkEntry c = *e;

	c.tcp = NULL;
	c.state = TCP_CLOSE;
	c.has_src_port = c.has_dst_port = false;
	c.has_syn_seq = false;
	c.connect_backlog = false;
	pr_debug("file %u: a TCP connection restored closed (--tcp-close)\n", id);
	return isk_open_one(&c, id);
}

static bool isk_closed_by_option(const struct restore_ctx *ctx, const InetSkEntry *e)
{
	return ctx->opts && ctx->opts->tcp_close && e && e->proto == IPPROTO_TCP &&
	       (e->tcp || e->has_syn_seq);
}

static int inet_open(struct restore_ctx *ctx, size_t pos)
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
	if (isk_closed_by_option(ctx, e))
		return isk_open_closed(e, f->idx.by_id[pos]->id);
	/* the first connection locked (they are opened in this order): lock them all */
	if (tcp_entry_locked(e) && first_tcp(ctx) == pos) {
		err = rst_tcp_lock_all(ctx);
		if (err)
			return err;
	}
	/* a connection on a listening socket's port, or one to connect to it again */
	if (e->tcp || e->connect_backlog) {
		err = open_listeners_of(ctx, e->tcp ? e->src_port : e->dst_port);
		if (err)
			return err;
	}
	return isk_open_one(e, f->idx.by_id[pos]->id);
}

const struct file_kind inet_kind = {
	.name = "inet",
	.match = inet_match,
	.dump = inet_dump,
	.types = { FILE_TYPE__FILE_INETSK },
	.dump_start = inet_dump_start,
	.dump_finish = inet_dump_sync,
	.dump_fini = inet_dump_fini,
	.check = inet_check,
	.open = inet_open,
	.resume = rst_inet_repair_off,
};
