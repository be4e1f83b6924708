// SPDX-License-Identifier: GPL-2.0
/*
 * Socket options of TCP and UDP sockets (Documentation/network.md): the
 * table of int options, SO_REUSEADDR, IPV6_V6ONLY, SO_LINGER, the timeouts,
 * the device and congestion control names, and a classic BPF filter. The
 * dump reads them all with getsockopt on the duplicate the parasite
 * drained: nothing of the task's socket changes. The restore sets each
 * where it differs from a new socket's default (inet.c calls it around
 * bind()).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <linux/filter.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <netinet/icmp6.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "compat.h"
#include "files-int.h"
#include "inet.h"
#include "log.h"
#include "util.h"

int inet_sk_getint(const struct fd_info *f, int level, int name, int *val)
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

/* Options read as an int into a 32-bit field of the entry (bools are 32-bit too). */
#define SKOPT(lvl, opt, fld, fl)                                                                 \
	{                                                                                        \
		lvl, opt, offsetof(InetSkEntry, has_##fld), offsetof(InetSkEntry, fld), fl, #opt \
	}

const struct inet_opt inet_opts[] = {
	SKOPT(SOL_SOCKET, SO_REUSEPORT, reuseport, INET_OPT_BEFORE_BIND),
	SKOPT(SOL_SOCKET, SO_KEEPALIVE, keepalive, 0),
	SKOPT(SOL_TCP, TCP_KEEPIDLE, keepidle, INET_OPT_TCP),
	SKOPT(SOL_TCP, TCP_KEEPINTVL, keepintvl, INET_OPT_TCP),
	SKOPT(SOL_TCP, TCP_KEEPCNT, keepcnt, INET_OPT_TCP),
	SKOPT(SOL_TCP, TCP_NODELAY, nodelay, INET_OPT_TCP),
	SKOPT(SOL_TCP, TCP_CORK, cork, INET_OPT_TCP),
	SKOPT(SOL_TCP, TCP_USER_TIMEOUT, user_timeout, INET_OPT_TCP),
	SKOPT(SOL_SOCKET, SO_MARK, mark, 0),
	SKOPT(SOL_SOCKET, SO_BROADCAST, broadcast, 0),
	SKOPT(SOL_SOCKET, SO_OOBINLINE, oobinline, 0),
	SKOPT(SOL_IP, IP_TOS, tos, INET_OPT_V4),
	SKOPT(SOL_IPV6, IPV6_TCLASS, tos, INET_OPT_V6),
	SKOPT(SOL_IP, IP_TTL, ttl, INET_OPT_V4),
	SKOPT(SOL_IPV6, IPV6_UNICAST_HOPS, ttl, INET_OPT_V6),
	/* after IP_TOS, which sets the priority that goes with the TOS */
	SKOPT(SOL_SOCKET, SO_PRIORITY, priority, 0),
	SKOPT(SOL_SOCKET, SO_SNDBUF, sndbuf, INET_OPT_BUF),
	SKOPT(SOL_SOCKET, SO_RCVBUF, rcvbuf, INET_OPT_BUF),
	SKOPT(SOL_IP, IP_FREEBIND, freebind, INET_OPT_V4 | INET_OPT_BEFORE_BIND),
	SKOPT(SOL_IPV6, IPV6_FREEBIND, freebind, INET_OPT_V6 | INET_OPT_BEFORE_BIND),
	SKOPT(SOL_IP, IP_TRANSPARENT, transparent, INET_OPT_V4 | INET_OPT_BEFORE_BIND),
	SKOPT(SOL_IPV6, IPV6_TRANSPARENT, transparent, INET_OPT_V6 | INET_OPT_BEFORE_BIND),
	SKOPT(SOL_IP, IP_PKTINFO, pktinfo, INET_OPT_V4),
	SKOPT(SOL_IPV6, IPV6_RECVPKTINFO, pktinfo, INET_OPT_V6),
	SKOPT(SOL_IP, IP_RECVERR, recverr, INET_OPT_V4),
	SKOPT(SOL_IPV6, IPV6_RECVERR, recverr, INET_OPT_V6),
	SKOPT(SOL_IP, IP_MTU_DISCOVER, mtu_discover, INET_OPT_V4),
	SKOPT(SOL_IPV6, IPV6_MTU_DISCOVER, mtu_discover, INET_OPT_V6),
	SKOPT(SOL_IP, IP_RECVTOS, recvtos, INET_OPT_V4),
	SKOPT(SOL_IPV6, IPV6_RECVTCLASS, recvtos, INET_OPT_V6),
	SKOPT(SOL_IP, IP_MULTICAST_TTL, mc_ttl, INET_OPT_V4 | INET_OPT_DGRAM),
	SKOPT(SOL_IPV6, IPV6_MULTICAST_HOPS, mc_ttl, INET_OPT_V6 | INET_OPT_DGRAM),
	SKOPT(SOL_IP, IP_MULTICAST_LOOP, mc_loop, INET_OPT_V4 | INET_OPT_DGRAM),
	SKOPT(SOL_IPV6, IPV6_MULTICAST_LOOP, mc_loop, INET_OPT_V6 | INET_OPT_DGRAM),
	SKOPT(SOL_SOCKET, SO_TIMESTAMP, timestamp, 0),
	SKOPT(SOL_SOCKET, SO_RCVLOWAT, rcvlowat, 0),
	SKOPT(SOL_TCP, TCP_NOTSENT_LOWAT, notsent_lowat, INET_OPT_TCP),
	SKOPT(SOL_TCP, TCP_DEFER_ACCEPT, defer_accept, INET_OPT_TCP),
	SKOPT(SOL_TCP, TCP_FASTOPEN, fastopen, INET_OPT_TCP),
	SKOPT(SOL_TCP, TCP_SYNCNT, syncnt, INET_OPT_TCP),
	SKOPT(SOL_TCP, TCP_LINGER2, linger2, INET_OPT_TCP),
	SKOPT(SOL_IP, IP_HDRINCL, hdrincl, INET_OPT_V4 | INET_OPT_RAW),
	SKOPT(SOL_IPV6, IPV6_HDRINCL, hdrincl, INET_OPT_V6 | INET_OPT_RAW),
	SKOPT(SOL_IP, IP_NODEFRAG, nodefrag, INET_OPT_V4 | INET_OPT_RAW),
	SKOPT(SOL_RAW, ICMP_FILTER, icmp_filter, INET_OPT_V4 | INET_OPT_RAW | INET_OPT_ICMP),
	SKOPT(SOL_IPV6, IPV6_CHECKSUM, checksum, INET_OPT_V6 | INET_OPT_RAW),
	SKOPT(SOL_UDPLITE, UDPLITE_SEND_CSCOV, udplite_send_cscov, INET_OPT_UDPLITE),
	SKOPT(SOL_UDPLITE, UDPLITE_RECV_CSCOV, udplite_recv_cscov, INET_OPT_UDPLITE),
	/* SOL_UDP for UDP-Lite too: both take the UDP level */
	SKOPT(SOL_UDP, UDP_CORK, udp_cork, INET_OPT_UDP),
	{ 0 },
};

bool inet_opt_applies(const struct inet_opt *o, int family, int type, int proto)
{
	if ((o->flags & INET_OPT_TCP) && (type != SOCK_STREAM || proto != IPPROTO_TCP))
		return false;
	if ((o->flags & INET_OPT_DGRAM) && type == SOCK_STREAM)
		return false;
	if ((o->flags & INET_OPT_RAW) && type != SOCK_RAW)
		return false;
	if ((o->flags & INET_OPT_UDPLITE) && (type != SOCK_DGRAM || proto != IPPROTO_UDPLITE))
		return false;
	if ((o->flags & INET_OPT_UDP) &&
	    (type != SOCK_DGRAM || (proto != IPPROTO_UDP && proto != IPPROTO_UDPLITE)))
		return false;
	if ((o->flags & INET_OPT_ICMP) && proto != IPPROTO_ICMP)
		return false;
	if ((o->flags & INET_OPT_V4) && family != AF_INET)
		return false;
	if ((o->flags & INET_OPT_V6) && family != AF_INET6)
		return false;
	return true;
}

static int dump_str_opt(const struct fd_info *f, int level, int name, char *buf, size_t size,
			char **ret)
{
	socklen_t len = (socklen_t)size - 1;

	memset(buf, 0, size);
	if (getsockopt(f->dfd, level, name, buf, &len)) {
		pr_perror("pid %d fd %d: getsockopt(%d, %d) of %s", f->pid, f->fd, level, name,
			  f->link);
		return neg_errno();
	}
	buf[min((size_t)len, size - 1)] = '\0';
	*ret = buf[0] ? buf : NULL;
	return 0;
}

/*
 * A socket filter (SO_ATTACH_FILTER) into *@filter (malloc'ed, for the
 * caller to free; left empty when there is none): SO_GET_FILTER gives back
 * the classic program as it was attached, counted in instructions. An eBPF
 * program (SO_ATTACH_BPF) has none to give: EACCES.
 */
int sk_dump_filter(const struct fd_info *f, ProtobufCBinaryData *filter, bool *locked)
{
	struct sock_filter *buf;
	socklen_t n = 0;
	int lock = 0;

	filter->data = NULL;
	filter->len = 0;
	*locked = false;
	if (getsockopt(f->dfd, SOL_SOCKET, SO_GET_FILTER, NULL, &n) == 0 && !n)
		return 0;
	if (errno == EACCES) {
		pr_err("pid %d fd %d: %s has an eBPF socket filter (SO_ATTACH_BPF): not "
		       "supported\n",
		       f->pid, f->fd, f->link);
		return -EOPNOTSUPP;
	}
	buf = calloc(INET_FILTER_MAX, sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	n = INET_FILTER_MAX;
	if (getsockopt(f->dfd, SOL_SOCKET, SO_GET_FILTER, buf, &n)) {
		pr_perror("pid %d fd %d: SO_GET_FILTER of %s", f->pid, f->fd, f->link);
		free(buf);
		return neg_errno();
	}
	filter->data = (uint8_t *)buf;
	filter->len = n * sizeof(*buf);
	n = sizeof(lock);
	if (getsockopt(f->dfd, SOL_SOCKET, SO_LOCK_FILTER, &lock, &n)) {
		pr_perror("pid %d fd %d: SO_LOCK_FILTER of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	*locked = lock != 0;
	return 0;
}

int inet_dump_filter(const struct fd_info *f, InetSkEntry *e)
{
	bool locked;
	int err = sk_dump_filter(f, &e->filter, &locked);

	e->has_filter = e->filter.data != NULL;
	e->has_lock_filter = e->lock_filter = locked;
	return err;
}

/* ICMP6_FILTER of an ICMPv6 raw socket: saved when it lets less than everything through. */
static int dump_icmp6_filter(const struct fd_info *f, InetSkEntry *e)
{
	static struct icmp6_filter flt;
	socklen_t len = sizeof(flt);
	struct icmp6_filter all;

	if (getsockopt(f->dfd, IPPROTO_ICMPV6, ICMP6_FILTER, &flt, &len)) {
		pr_perror("pid %d fd %d: ICMP6_FILTER of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	ICMP6_FILTER_SETPASSALL(&all);
	if (len != sizeof(flt) || !memcmp(&flt, &all, sizeof(all)))
		return 0;
	e->has_icmp6_filter = true;
	e->icmp6_filter.data = (uint8_t *)&flt;
	e->icmp6_filter.len = sizeof(flt);
	return 0;
}

static int dump_timeouts(const struct fd_info *f, InetSkEntry *e)
{
	struct timeval rto, sto;
	socklen_t l1 = sizeof(rto), l2 = sizeof(sto);

	if (getsockopt(f->dfd, SOL_SOCKET, SO_RCVTIMEO, &rto, &l1) ||
	    getsockopt(f->dfd, SOL_SOCKET, SO_SNDTIMEO, &sto, &l2)) {
		pr_perror("pid %d fd %d: SO_RCVTIMEO/SO_SNDTIMEO of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	e->rcvtimeo_us = (uint64_t)rto.tv_sec * 1000000 + (uint64_t)rto.tv_usec;
	e->has_rcvtimeo_us = e->rcvtimeo_us != 0;
	e->sndtimeo_us = (uint64_t)sto.tv_sec * 1000000 + (uint64_t)sto.tv_usec;
	e->has_sndtimeo_us = e->sndtimeo_us != 0;
	return 0;
}

/* Every option of the table, SO_REUSEADDR, SO_LINGER, the congestion control and device. */
int inet_dump_opts(const struct fd_info *f, InetSkEntry *e, char *cong, char *dev)
{
	int proto = (int)e->proto;
	const struct inet_opt *o;
	struct linger lg = { 0 };
	socklen_t len = sizeof(lg);
	int val, err;

	for (o = inet_opts; o->name; o++) {
		if (!inet_opt_applies(o, f->sk_family, (int)e->type, proto))
			continue;
		err = inet_sk_getint(f, o->level, o->opt, &val);
		if (err)
			return err;
		*(protobuf_c_boolean *)((char *)e + o->has_off) = true;
		*(uint32_t *)((char *)e + o->val_off) = (uint32_t)val;
	}
	err = dump_timeouts(f, e);
	if (!err)
		err = inet_sk_getint(f, SOL_SOCKET, SO_REUSEADDR, &val);
	if (err)
		return err;
	e->has_reuseaddr = true;
	e->reuseaddr = val != 0;
	if (f->sk_family == AF_INET6) {
		err = inet_sk_getint(f, SOL_IPV6, IPV6_V6ONLY, &val);
		if (err)
			return err;
		e->has_v6only = true;
		e->v6only = val != 0;
	}
	if (getsockopt(f->dfd, SOL_SOCKET, SO_LINGER, &lg, &len)) {
		pr_perror("pid %d fd %d: SO_LINGER of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	e->has_linger = lg.l_onoff != 0;
	e->linger = (uint32_t)lg.l_linger;
	/* SO_BUF_LOCK: a kernel without it (before 5.14) tunes no differently */
	if (!getsockopt(f->dfd, SOL_SOCKET, SO_BUF_LOCK, &val, &(socklen_t){ sizeof(val) })) {
		e->has_buf_lock = true;
		e->buf_lock = (uint32_t)val;
	}
	err = dump_str_opt(f, SOL_SOCKET, SO_BINDTODEVICE, dev, IFNAMSIZ + 1, &e->bindtodevice);
	if (!err && e->type == SOCK_RAW && proto == IPPROTO_ICMPV6)
		err = dump_icmp6_filter(f, e);
	if (!err && e->type == SOCK_STREAM)
		err = dump_str_opt(f, SOL_TCP, TCP_CONGESTION, cong, INET_CONG_MAX + 1,
				   &e->congestion);
	return err;
}

/* ---- the restore (its messages keep their own prefix) ------------------------------------ */

int inet_sk_setint(int sk, int level, int opt, int val)
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

		if (!inet_opt_applies(o, (int)e->family, (int)e->type, (int)e->proto) ||
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
			err = inet_sk_setint(sk, SOL_SOCKET,
					     o->opt == SO_SNDBUF ? SO_SNDBUFFORCE : SO_RCVBUFFORCE,
					     (int)(want / 2));
		else
			err = inet_sk_setint(sk, o->level, o->opt, (int)want);
		if (err) {
			pr_errno(err, "file %u: cannot set %s to %u", id, o->name, want);
			return err;
		}
	}
	return 0;
}

int inet_restore_opts_before_bind(int sk, const InetSkEntry *e, uint32_t id)
{
	int err = inet_sk_setint(sk, SOL_SOCKET, SO_REUSEADDR, 1);

	/* a raw socket has its protocol as port from the start: IPV6_V6ONLY is fixed */
	if (!err && e->family == AF_INET6 && e->has_v6only && e->type != SOCK_RAW)
		err = inet_sk_setint(sk, SOL_IPV6, IPV6_V6ONLY, e->v6only);
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

int sk_restore_filter(int sk, const ProtobufCBinaryData *filter, bool lock, uint32_t id)
{
	struct sock_fprog prog;

	if (!filter->len)
		return 0;
	if (filter->len % sizeof(struct sock_filter) ||
	    filter->len / sizeof(struct sock_filter) > INET_FILTER_MAX) {
		pr_err("files.img: file %u: a socket filter of %zu bytes\n", id, filter->len);
		return -EINVAL;
	}
	prog.len = (unsigned short)(filter->len / sizeof(struct sock_filter));
	prog.filter = (struct sock_filter *)filter->data;
	if (setsockopt(sk, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ||
	    (lock && setsockopt(sk, SOL_SOCKET, SO_LOCK_FILTER, &(int){ 1 }, sizeof(int)))) {
		pr_perror("file %u: cannot attach its socket filter", id);
		return neg_errno();
	}
	return 0;
}

/*
 * The classic BPF filter, locked if it was: after the queued datagrams are
 * back (a filter attached after they arrived must not drop them now).
 */
int inet_restore_filter(int sk, const InetSkEntry *e, uint32_t id)
{
	return e->has_filter ? sk_restore_filter(sk, &e->filter, e->lock_filter, id) : 0;
}

int inet_restore_buf_lock(int sk, const InetSkEntry *e, uint32_t id)
{
	int err = e->has_buf_lock ? inet_sk_setint(sk, SOL_SOCKET, SO_BUF_LOCK, (int)e->buf_lock)
				  : 0;

	if (err)
		pr_errno(err, "file %u: cannot set SO_BUF_LOCK to %u", id, e->buf_lock);
	return err;
}

int inet_restore_opts_after(int sk, const InetSkEntry *e, uint32_t id)
{
	char cur[INET_CONG_MAX + 1] = "";
	socklen_t len = sizeof(cur) - 1;
	int err = restore_int_opts(sk, e, false, id);

	if (err)
		return err;
	if (e->has_icmp6_filter &&
	    (e->icmp6_filter.len != sizeof(struct icmp6_filter) ||
	     setsockopt(sk, IPPROTO_ICMPV6, ICMP6_FILTER, e->icmp6_filter.data,
			sizeof(struct icmp6_filter)))) {
		pr_perror("file %u: cannot set ICMP6_FILTER", id);
		return -EINVAL;
	}
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
