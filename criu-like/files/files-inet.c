// SPDX-License-Identifier: GPL-2.0
/*
 * Inet sockets (FILE_INETSK): TCP and UDP over IPv4 and IPv6
 * (Documentation/network.md). State, addresses and ports come from
 * sock_diag (NETLINK_SOCK_DIAG through libnl: every inet socket of this
 * network namespace, dumped once per dump and found by inode); options are
 * read with getsockopt on the duplicate the parasite drained. Established
 * and half-closed (FIN_WAIT1/2) TCP connections are read in repair mode,
 * connections waiting in a backlog are matched with their clients
 * (files-tcp.c); queued UDP datagrams are read by files-udp.c. Refused: raw
 * sockets and other protocols, sockets of another network namespace, the
 * other TCP states, connections in a backlog from outside the tree or with
 * data, urgent data, a closed connection with data still to read, a bound
 * socket that a process outside the tree holds too.
 */
#define LOG_PREFIX "files: "

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files-int.h"
#include "restore-files-int.h"
#include "inet-int.h"
#include "log.h"
#include "net-lock.h"
#include "util.h"

#ifndef SIOCGSKNS
#define SIOCGSKNS 0x894C /* 4.10 */
#endif

/* ---- pure helpers ---------------------------------------------------------------------- */

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

int inet_diag_parse(const struct nlmsghdr *h, uint8_t proto, struct inet_sk_diag *ret)
{
	struct nlattr *tb[INET_DIAG_MAX + 1];
	const struct inet_diag_msg *m;

	memset(ret, 0, sizeof(*ret));
	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return -EINVAL;
	m = NLMSG_DATA(h);
	if (m->idiag_family != AF_INET && m->idiag_family != AF_INET6)
		return -EINVAL;
	ret->ino = m->idiag_inode;
	ret->family = m->idiag_family;
	ret->proto = proto;
	ret->state = m->idiag_state;
	memcpy(ret->src, m->id.idiag_src, 16);
	memcpy(ret->dst, m->id.idiag_dst, 16);
	ret->sport = ntohs(m->id.idiag_sport);
	ret->dport = ntohs(m->id.idiag_dport);
	ret->rqueue = m->idiag_rqueue;
	ret->wqueue = m->idiag_wqueue;
	if (nlmsg_parse((struct nlmsghdr *)h, sizeof(*m), tb, INET_DIAG_MAX, NULL) < 0)
		return -EINVAL;
	if (tb[INET_DIAG_SHUTDOWN] && nla_len(tb[INET_DIAG_SHUTDOWN]) >= 1)
		ret->shutdown = nla_get_u8(tb[INET_DIAG_SHUTDOWN]);
	return 0;
}

static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

static size_t addr_len(int family)
{
	return family == AF_INET6 ? 16 : 4;
}

void inet_entry_addrs(InetSkEntry *e, struct inet_sk_diag *dg)
{
	bool connected = dg->dport != 0;

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
	if (len == 16 && !memcmp(t->src, v4mapped, 12) && !memcmp(t->dst, v4mapped, 12)) {
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

int tcp_sendq_split(const TcpStreamEntry *t, size_t *sent, size_t *unsent)
{
	if (t->unsent > t->out_queue.len)
		return -EINVAL;
	*unsent = t->unsent;
	*sent = t->out_queue.len - t->unsent;
	return 0;
}

/* ---- sock_diag through libnl ----------------------------------------------------------- */

struct diag_load {
	struct inet_dump *in;
	uint8_t proto;
	size_t cap;
	int err;
};

static int diag_cb(struct nl_msg *msg, void *arg)
{
	struct diag_load *l = arg;
	struct inet_dump *in = l->in;
	struct inet_sk_diag dg;

	if (inet_diag_parse(nlmsg_hdr(msg), l->proto, &dg))
		return NL_OK; /* not an inet socket: nothing of ours */
	if (in->nr_sks == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct inet_sk_diag *n = realloc(in->sks, cap * sizeof(*n));

		if (!n) {
			l->err = -ENOMEM;
			return NL_STOP;
		}
		in->sks = n;
		l->cap = cap;
	}
	in->sks[in->nr_sks++] = dg;
	return NL_OK;
}

static int diag_dump_one(struct nl_sock *sk, struct diag_load *l, uint8_t family, uint8_t proto)
{
	struct inet_diag_req_v2 req = {
		.sdiag_family = family,
		.sdiag_protocol = proto,
		.idiag_states = ~0u,
	};
	struct nl_msg *msg = nlmsg_alloc_simple(SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP);
	int err;

	if (!msg)
		return -ENOMEM;
	err = nlmsg_append(msg, &req, sizeof(req), NLMSG_ALIGNTO);
	if (!err)
		err = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (err < 0) {
		pr_err("sock_diag request (family %u, protocol %u): %s\n", family, proto,
		       nl_geterror(err));
		return -EIO;
	}
	l->proto = proto;
	err = nl_recvmsgs_default(sk);
	if (l->err)
		return l->err;
	if (err < 0) {
		pr_err("sock_diag dump (family %u, protocol %u): %s\n", family, proto,
		       nl_geterror(err));
		return -EIO;
	}
	return 0;
}

static int cmp_diag_ino(const void *a, const void *b)
{
	uint32_t x = ((const struct inet_sk_diag *)a)->ino,
		 y = ((const struct inet_sk_diag *)b)->ino;

	return (x > y) - (x < y);
}

/* Every TCP and UDP socket of this network namespace, once per dump, sorted by inode. */
static int diag_load(struct inet_dump *in)
{
	static const uint8_t families[] = { AF_INET, AF_INET6 };
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP };
	struct diag_load l = { .in = in };
	struct nl_sock *sk;
	unsigned int i, k;
	int err;

	if (in->loaded)
		return 0;
	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	/* A dump's parts may be larger than libnl's default buffer: peek at their size. */
	nl_socket_enable_msg_peek(sk);
	err = nl_connect(sk, NETLINK_SOCK_DIAG);
	if (err < 0) {
		pr_err("cannot connect to sock_diag: %s\n", nl_geterror(err));
		nl_socket_free(sk);
		return -EIO;
	}
	err = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, diag_cb, &l);
	for (i = 0; !err && i < ARRAY_SIZE(families); i++)
		for (k = 0; !err && k < ARRAY_SIZE(protos); k++)
			err = diag_dump_one(sk, &l, families[i], protos[k]);
	nl_socket_free(sk);
	if (err)
		return err < 0 ? err : -EIO;
	if (in->nr_sks)
		qsort(in->sks, in->nr_sks, sizeof(*in->sks), cmp_diag_ino);
	in->loaded = true;
	pr_debug("sock_diag: %zu inet sockets\n", in->nr_sks);
	return 0;
}

static struct inet_dump *inet_dump_get(struct dump_ctx *ctx)
{
	if (!ctx->inet)
		ctx->inet = calloc(1, sizeof(*ctx->inet));
	return ctx->inet;
}

static const struct inet_sk_diag *diag_find(const struct inet_dump *in, uint32_t ino)
{
	struct inet_sk_diag key = { .ino = ino };

	if (!ino || !in->nr_sks)
		return NULL;
	return bsearch(&key, in->sks, in->nr_sks, sizeof(key), cmp_diag_ino);
}

/* ---- checks ---------------------------------------------------------------------------- */

/* Whether the socket @f lives in the dumper's network namespace (sock_diag sees only that). */
static int check_netns(const struct fd_info *f)
{
	struct stat self, sk;
	int ns = ioctl(f->dfd, SIOCGSKNS);

	if (ns < 0) {
		pr_perror("pid %d fd %d: SIOCGSKNS of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	if (fstat(ns, &sk) || stat("/proc/self/ns/net", &self)) {
		pr_perror("pid %d fd %d: cannot compare network namespaces", f->pid, f->fd);
		close(ns);
		return neg_errno();
	}
	close(ns);
	if (sk.st_ino != self.st_ino || sk.st_dev != self.st_dev) {
		pr_err("pid %d fd %d: %s is an inet socket of another network namespace "
		       "(net:[%lu]): "
		       "not supported yet\n",
		       f->pid, f->fd, f->link, (unsigned long)sk.st_ino);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int sk_getint(const struct fd_info *f, int level, int name, int *val)
{
	socklen_t len = sizeof(*val);

	*val = 0;
	if (getsockopt(f->dfd, level, name, val, &len)) {
		pr_perror("pid %d fd %d: getsockopt(%d, %d) of %s", f->pid, f->fd, level, name,
			  f->link);
		return neg_errno();
	}
	return 0;
}

/* Type and protocol: TCP over SOCK_STREAM and UDP over SOCK_DGRAM only. */
static int check_proto(const struct fd_info *f, int *type, int *proto)
{
	int err = sk_getint(f, SOL_SOCKET, SO_TYPE, type);

	if (!err)
		err = sk_getint(f, SOL_SOCKET, SO_PROTOCOL, proto);
	if (err)
		return err;
	if ((*type == SOCK_STREAM && *proto == IPPROTO_TCP) ||
	    (*type == SOCK_DGRAM && *proto == IPPROTO_UDP))
		return 0;
	pr_err("pid %d fd %d: %s is an %s %s socket of protocol %d: only TCP and UDP sockets are "
	       "supported\n",
	       f->pid, f->fd, f->link, f->sk_family == AF_INET ? "inet" : "inet6",
	       *type == SOCK_RAW      ? "raw"
	       : *type == SOCK_STREAM ? "stream"
				      : "datagram",
	       *proto);
	return -EOPNOTSUPP;
}

/*
 * A socket sock_diag does not list: an unbound (or bound-only, before 6.6)
 * TCP socket in CLOSE, or an unbound UDP socket. Its name from getsockname.
 */
static int diag_fallback(const struct fd_info *f, int proto, struct inet_sk_diag *dg)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct tcp_info ti;
	socklen_t tlen = sizeof(ti);

	memset(dg, 0, sizeof(*dg));
	dg->ino = (uint32_t)f->st.st_ino;
	dg->family = (uint8_t)f->sk_family;
	dg->proto = (uint8_t)proto;
	dg->state = TCP_CLOSE;
	if (proto == IPPROTO_TCP && !getsockopt(f->dfd, SOL_TCP, TCP_INFO, &ti, &tlen) &&
	    ti.tcpi_state != TCP_CLOSE) {
		pr_err("pid %d fd %d: %s (TCP, %s) is not known to sock_diag\n", f->pid, f->fd,
		       f->link, tcp_state_name(ti.tcpi_state));
		return -ENOENT;
	}
	if (getsockname(f->dfd, (struct sockaddr *)&ss, &len)) {
		pr_perror("pid %d fd %d: getsockname of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		memcpy(dg->src, &in->sin_addr, 4);
		dg->sport = ntohs(in->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		memcpy(dg->src, &in6->sin6_addr, 16);
		dg->sport = ntohs(in6->sin6_port);
	}
	return 0;
}

/* ---- sockets held outside the tree ---------------------------------------------------- */

static int cmp_holder(const void *a, const void *b)
{
	uint32_t x = ((const struct inet_holder *)a)->ino, y = ((const struct inet_holder *)b)->ino;

	return (x > y) - (x < y);
}

static bool in_tree(const struct dump_ctx *ctx, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < ctx->nr_tasks; i++)
		if (ctx->tasks[i].t->pid == pid)
			return true;
	return pid == getpid(); /* the dumper, holding what the parasite drained */
}

/* The bound inet sockets (of sock_diag) the process @pid holds, into in->outside. */
static int holders_of(struct inet_dump *in, pid_t pid, size_t *cap)
{
	_cleanup_closedir_ DIR *dir = NULL;
	struct dirent *de;
	char path[64], link[64];

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	while (dir && (de = readdir(dir))) {
		const struct inet_sk_diag *dg;
		unsigned int ino;
		ssize_t n = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);

		if (n <= 0 || (link[n] = '\0', sscanf(link, "socket:[%u]", &ino) != 1))
			continue;
		dg = diag_find(in, ino);
		if (!dg || !dg->sport)
			continue;
		if (in->nr_outside == *cap) {
			size_t nc = *cap ? *cap * 2 : 16;
			struct inet_holder *v = realloc(in->outside, nc * sizeof(*v));

			if (!v)
				return -ENOMEM;
			in->outside = v;
			*cap = nc;
		}
		in->outside[in->nr_outside++] = (struct inet_holder){ .ino = ino, .pid = pid };
	}
	return 0;
}

/*
 * Every process outside the tree, once per dump: which bound TCP and UDP
 * sockets it holds (a process that vanishes meanwhile holds none).
 */
static int holders_load(const struct dump_ctx *ctx, struct inet_dump *in)
{
	_cleanup_closedir_ DIR *proc = opendir("/proc");
	struct dirent *de;
	size_t cap = 0;
	int err = 0;

	in->outside_loaded = true;
	if (!proc)
		return neg_errno();
	while (!err && (de = readdir(proc))) {
		long pid;

		if (parse_long(de->d_name, &pid) || pid <= 0 || in_tree(ctx, (pid_t)pid))
			continue;
		err = holders_of(in, (pid_t)pid, &cap);
	}
	if (!err && in->nr_outside)
		qsort(in->outside, in->nr_outside, sizeof(*in->outside), cmp_holder);
	return err;
}

/*
 * A bound socket of the tree that a process outside holds too stays open
 * there, with its address, when the tree is killed: the restore could not
 * take the address again (a listening socket inherited by a child outside,
 * a socket passed to another program). Refused before anything is killed.
 */
static int check_outside(const struct dump_ctx *ctx, const struct fd_info *f, const InetSkEntry *e)
{
	struct inet_dump *in = ctx->inet;
	struct inet_holder key = { .ino = (uint32_t)f->st.st_ino }, *h;
	char ends[2 * INET_ADDR_STRLEN + 8], path[64], comm[32] = "?";
	_cleanup_close_ int cfd = -1;
	ssize_t n;
	int err;

	if (!e->has_src_port)
		return 0;
	if (!in->outside_loaded) {
		err = holders_load(ctx, in);
		if (err) {
			pr_errno(err,
				 "cannot look for the inet sockets of processes outside the tree");
			return err;
		}
	}
	h = in->nr_outside ? bsearch(&key, in->outside, in->nr_outside, sizeof(key), cmp_holder)
			   : NULL;
	if (!h)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", h->pid);
	cfd = open(path, O_RDONLY | O_CLOEXEC);
	n = cfd >= 0 ? read(cfd, comm, sizeof(comm) - 1) : -1;
	if (n > 0)
		comm[n - (comm[n - 1] == '\n')] = '\0';
	pr_err("pid %d fd %d: %s (%s) is also open in pid %d (%s), outside the dumped tree: it "
	       "would stay open there with its address, which the restore could not take again; "
	       "dump that process too, or close the socket there\n",
	       f->pid, f->fd, f->link, inet_entry_ends(e, ends, sizeof(ends)), h->pid, comm);
	return -EOPNOTSUPP;
}

/* ---- the dump -------------------------------------------------------------------------- */

static int dump_udp(const struct fd_info *f, const struct inet_sk_diag *dg, InetSkEntry *e)
{
	/* shutdown() of a UDP socket only sets these bits (connected or not) */
	e->has_shutdown = dg->shutdown != 0;
	e->shutdown = dg->shutdown;
	return udp_dump_queue(f, e);
}

/*
 * A socket in CLOSE whose connection ended, or whose connect() failed, has a
 * receive MSS (a new one has none): it comes back as a new socket.
 */
static void warn_ended(const struct fd_info *f, const InetSkEntry *e)
{
	char ends[2 * INET_ADDR_STRLEN + 8];
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

static int dump_tcp(struct dump_ctx *ctx, const struct fd_info *f, const struct inet_sk_diag *dg,
		    InetSkEntry *e)
{
	char ends[2 * INET_ADDR_STRLEN + 8];
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
		/* shutdown(SHUT_RD) only; SHUT_WR sends a FIN: FIN_WAIT1, refused below */
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

/* One block (file_desc.priv is freed with free()): the entry and everything it points to. */
struct inet_priv {
	InetSkEntry e;
	TcpStreamEntry t;
	uint8_t src[16], dst[16];
	char cong[INET_CONG_MAX + 1], dev[IFNAMSIZ + 1];
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

/* What sock_diag knows of @f, or what getsockname tells of a socket it does not list. */
static int inet_diag_of(struct dump_ctx *ctx, const struct fd_info *f, int proto,
			struct inet_sk_diag *dg)
{
	struct inet_dump *in = inet_dump_get(ctx);
	const struct inet_sk_diag *found;
	int err;

	if (!in)
		return -ENOMEM;
	if (f->st.st_ino > UINT32_MAX) {
		pr_err("pid %d fd %d: %s: inode beyond sock_diag's 32 bits\n", f->pid, f->fd,
		       f->link);
		return -EOVERFLOW;
	}
	err = diag_load(in);
	if (err) {
		pr_errno(err, "pid %d fd %d: sock_diag of %s", f->pid, f->fd, f->link);
		return err;
	}
	found = diag_find(in, (uint32_t)f->st.st_ino);
	if (found && found->proto == proto && found->family == f->sk_family) {
		*dg = *found;
		return 0;
	}
	return diag_fallback(f, proto, dg);
}

static int inet_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	InetSkEntry e = INET_SK_ENTRY__INIT;
	char cong[INET_CONG_MAX + 1], dev[IFNAMSIZ + 1], ends[2 * INET_ADDR_STRLEN + 8];
	struct inet_sk_diag dg;
	int type, proto, err;

	err = check_netns(f);
	if (!err)
		err = check_proto(f, &type, &proto);
	if (!err)
		err = inet_diag_of(ctx, f, proto, &dg);
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
	err = check_outside(ctx, f, &e);
	if (!err)
		err = inet_dump_opts(f, proto, &e, cong, dev);
	if (!err)
		err = inet_dump_filter(f, &e);
	if (!err && proto == IPPROTO_TCP)
		err = dump_tcp(ctx, f, &dg, &e);
	else if (!err)
		err = dump_udp(f, &dg, &e);
	if (!err)
		err = inet_pack(d, &e);
	if (!err)
		pr_debug("pid %d fd %d: %s %s %s\n", f->pid, f->fd,
			 proto == IPPROTO_TCP ? "TCP" : "UDP",
			 inet_entry_ends(&e, ends, sizeof(ends)),
			 proto == IPPROTO_TCP ? tcp_state_name(e.state) : "");
	tcp_stream_free(e.tcp);
	udp_queue_free(&e);
	if (e.has_filter)
		free(e.filter.data);
	return err;
}

static int inet_check(const FileEntry *fe)
{
	return fe->inetsk ? 0 : rst_file_part_missing(fe);
}

const struct file_kind inet_kind = {
	.name = "inet",
	.match = inet_match,
	.dump = inet_dump,
	.types = { FILE_TYPE__FILE_INETSK },
	.dump_fini = inet_dump_fini,
	.check = inet_check,
	.open = rst_inet_open,
	.resume = rst_inet_repair_off,
};
