// SPDX-License-Identifier: GPL-2.0
/*
 * UDP sockets (Documentation/network.md): their shutdown bits and the
 * datagrams queued on them.
 *
 * Dump: the datagrams are read without being consumed: each MSG_PEEK starts
 * at SO_PEEK_OFF, set past the datagrams already seen (on the socket the
 * task shares: put back after). A datagram of no bytes is returned once at
 * its offset, then skipped (the kernel marks it peeked). Saved with their
 * senders; a socket bound to a multicast or broadcast address has them
 * counted and dropped (warned).
 *
 * Restore: each datagram must come from its sender's address and port,
 * which a socket bound there cannot always have (the sender itself may hold
 * the port, in the tree or outside), so each is sent from a raw socket
 * (IPPROTO_UDP: a raw socket binds an address but no port) with a UDP header
 * of our own, to the restored socket, bound and not yet connected. IPv4
 * goes without a checksum (allowed); IPv6 has the kernel compute it
 * (IPV6_CHECKSUM). UDP-Lite the same way with its own header (the coverage
 * field 0: the whole datagram), whose checksum is mandatory: computed here
 * for IPv4.
 *
 * Corked data (UDP_CORK, or a send with MSG_MORE) waits in the socket's
 * write queue for the rest of its datagram: nothing reads it back (SIOCOUTQ
 * gives its size only), so a socket holding some is refused; UDP_CORK
 * itself is an option of the table (inet-opts.c).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <stdint.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/sock_diag.h>
#include <unistd.h>

#include "files-int.h"
#include "inet.h"
#include "log.h"
#include "util.h"

#define UDP_MAX_DGRAM 65536
#define UDP_MAX_QUEUED 65536u /* datagrams: a queue is bounded by its buffer long before */

bool inet_addr_group(int family, const uint8_t *a)
{
	static const uint8_t bcast[4] = { 255, 255, 255, 255 };

	if (family == AF_INET6 && !memcmp(a, inet_v4mapped, 12))
		return inet_addr_group(AF_INET, a + 12);
	if (family == AF_INET6)
		return a[0] == 0xff;
	return (a[0] & 0xf0) == 0xe0 || !memcmp(a, bcast, 4);
}

void udp_queue_free(InetSkEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_dgrams; i++)
		free(e->dgrams[i]);
	free(e->dgrams);
	e->dgrams = NULL;
	e->n_dgrams = 0;
}

/* One block: the entry, then the sender's address, then the data. */
static int queue_add(InetSkEntry *e, size_t *cap, const struct sockaddr_storage *ss,
		     const uint8_t *buf, size_t len)
{
	UdpDgramEntry *d;
	const uint8_t *addr;
	size_t alen;
	uint16_t port;

	if (ss->ss_family == AF_INET6) {
		addr = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
		alen = 16;
		port = ((const struct sockaddr_in6 *)ss)->sin6_port;
	} else {
		addr = (const uint8_t *)&((const struct sockaddr_in *)ss)->sin_addr;
		alen = 4;
		port = ((const struct sockaddr_in *)ss)->sin_port;
	}
	if (e->n_dgrams == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		UdpDgramEntry **n = realloc(e->dgrams, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		e->dgrams = n;
		*cap = nc;
	}
	d = malloc(sizeof(*d) + 16 + len);
	if (!d)
		return -ENOMEM;
	udp_dgram_entry__init(d);
	d->from_addr.data = (uint8_t *)(d + 1);
	d->from_addr.len = alen;
	memcpy(d->from_addr.data, addr, alen);
	d->from_port = ntohs(port);
	d->data.data = d->from_addr.data + 16;
	d->data.len = len;
	if (len)
		memcpy(d->data.data, buf, len);
	e->dgrams[e->n_dgrams++] = d;
	return 0;
}

/* Every datagram of @f into e->dgrams, in order, each peeked whole at its offset into @buf. */
static int peek_loop(const struct fd_info *f, InetSkEntry *e, uint8_t *buf)
{
	size_t cap = 0;
	int off = 0, err;

	while (e->n_dgrams < UDP_MAX_QUEUED) {
		struct sockaddr_storage ss;
		struct iovec iov = { .iov_base = buf, .iov_len = UDP_MAX_DGRAM };
		struct msghdr mh = {
			.msg_name = &ss, .msg_namelen = sizeof(ss), .msg_iov = &iov, .msg_iovlen = 1
		};
		ssize_t n;

		if (setsockopt(f->dfd, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off)))
			return neg_errno();
		n = recvmsg(f->dfd, &mh, MSG_PEEK | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN ? 0 : neg_errno();
		if ((mh.msg_flags & MSG_TRUNC) || n > INT32_MAX - off)
			return -EFBIG;
		err = queue_add(e, &cap, &ss, buf, (size_t)n);
		if (err)
			return err;
		off += (int)n;
	}
	return -EFBIG;
}

static int peek_all(const struct fd_info *f, InetSkEntry *e)
{
	uint8_t *buf = malloc(UDP_MAX_DGRAM);
	int err;

	if (!buf)
		return -ENOMEM;
	err = peek_loop(f, e, buf);
	free(buf);
	return err;
}

/* The datagrams queued on @f into e->dgrams, or counted and dropped (udp_dump()). */
static int udp_dump_queue(const struct fd_info *f, InetSkEntry *e)
{
	char ends[INET_ENDS_STRLEN];
	int old = -1, err;
	socklen_t olen = sizeof(old);

	if (getsockopt(f->dfd, SOL_SOCKET, SO_PEEK_OFF, &old, &olen)) {
		pr_perror("pid %d fd %d: SO_PEEK_OFF of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	err = peek_all(f, e);
	if (setsockopt(f->dfd, SOL_SOCKET, SO_PEEK_OFF, &old, sizeof(old)) && !err)
		err = neg_errno();
	if (err) {
		pr_errno(err, "pid %d fd %d: cannot read the datagrams queued on %s", f->pid, f->fd,
			 f->link);
		udp_queue_free(e);
		return err;
	}
	/*
	 * Sent again to the socket's own address, a datagram reaches a socket
	 * bound to a multicast group only through memberships, which are not
	 * restored: the whole queue goes then, never a part of it.
	 */
	if (!e->n_dgrams || !e->has_src_addr || !inet_addr_group((int)e->family, e->src_addr.data))
		return 0;
	e->has_dropped_dgrams = true;
	e->dropped_dgrams = (uint32_t)e->n_dgrams;
	pr_warn("pid %d fd %d: UDP socket %s, bound to a multicast or broadcast address, has %zu "
		"datagrams queued: they are not saved, the restored socket starts with an empty "
		"queue\n",
		f->pid, f->fd, inet_entry_ends(e, ends, sizeof(ends)), e->n_dgrams);
	udp_queue_free(e);
	return 0;
}

/*
 * The bytes sent on @f and still held by it (SIOCOUTQ: its send memory).
 * Datagrams on their way out through a device free theirs once the device
 * took them: waited for, up to UDP_OUTQ_WAIT_MS. Corked ones stay.
 */
#define UDP_OUTQ_WAIT_MS 200

static int udp_check_corked(const struct fd_info *f, const InetSkEntry *e)
{
	char ends[INET_ENDS_STRLEN];
	int outq = 0, i;

	for (i = 0; i <= UDP_OUTQ_WAIT_MS; i++) {
		if (ioctl(f->dfd, SIOCOUTQ, &outq)) {
			pr_perror("pid %d fd %d: SIOCOUTQ of %s", f->pid, f->fd, f->link);
			return neg_errno();
		}
		if (outq <= 0)
			return 0;
		usleep(1000);
	}
	pr_err("pid %d fd %d: %s socket %s holds %d bytes of send memory not sent (corked data: "
	       "UDP_CORK is %s, or a send with MSG_MORE): corked data cannot be read back, the "
	       "socket is not dumped\n",
	       f->pid, f->fd, inet_kind_name((int)e->type, (int)e->proto),
	       inet_entry_ends(e, ends, sizeof(ends)), outq, e->udp_cork ? "on" : "off");
	return -EOPNOTSUPP;
}

int udp_dump(const struct fd_info *f, const struct inet_sk_diag *dg, InetSkEntry *e)
{
	int err = udp_check_corked(f, e);

	if (err)
		return err;
	/* shutdown() of a UDP socket only sets these bits (connected or not) */
	e->has_shutdown = dg->shutdown != 0;
	e->shutdown = dg->shutdown;
	return udp_dump_queue(f, e);
}

size_t udp_queue_size(const InetSkEntry *e)
{
	/* each entry aligned: up to 7 bytes of padding after the data before it */
	size_t i, sz = e->n_dgrams * (sizeof(UdpDgramEntry *) + sizeof(UdpDgramEntry) + 16 + 7);

	for (i = 0; i < e->n_dgrams; i++)
		sz += e->dgrams[i]->data.len;
	return sz;
}

/* Copy the datagrams of @src into @dst, in the block at @at (udp_queue_size() bytes). */
void udp_queue_pack(InetSkEntry *dst, const InetSkEntry *src, uint8_t *at)
{
	UdpDgramEntry **v = (UdpDgramEntry **)at;
	size_t i;

	at += src->n_dgrams * sizeof(*v);
	for (i = 0; i < src->n_dgrams; i++) {
		const UdpDgramEntry *s = src->dgrams[i];
		UdpDgramEntry *d = (UdpDgramEntry *)at;

		*d = *s;
		d->from_addr.data = (uint8_t *)(d + 1);
		memcpy(d->from_addr.data, s->from_addr.data, s->from_addr.len);
		d->data.data = d->from_addr.data + 16;
		if (s->data.len)
			memcpy(d->data.data, s->data.data, s->data.len);
		at = (uint8_t *)(((uintptr_t)(d->data.data + s->data.len) + 7) & ~(uintptr_t)7);
		v[i] = d;
	}
	dst->dgrams = src->n_dgrams ? v : NULL;
	dst->n_dgrams = src->n_dgrams;
}

/* ---- the restore (its messages keep their own prefix) ------------------------------------ */

/* @addr (4 or 16 bytes) and @port as a sockaddr, a v4-mapped address as IPv4. */
static socklen_t to_sockaddr(const uint8_t *addr, size_t len, uint16_t port,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (len == 16 && memcmp(addr, inet_v4mapped, 12)) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		memcpy(&in6->sin6_addr, addr, 16);
		return sizeof(*in6);
	}
	struct sockaddr_in *in = (struct sockaddr_in *)ss;

	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	memcpy(&in->sin_addr, len == 16 ? addr + 12 : addr, 4);
	return sizeof(*in);
}

/* Where a datagram from @fam reaches @sk: its own address, loopback for a wildcard. */
static int dgram_dst(int sk, int fam, struct sockaddr_storage *dst, socklen_t *len)
{
	static const uint8_t any[16], lo6[16] = { [15] = 1 }, lo4[4] = { 127, 0, 0, 1 };
	struct sockaddr_storage own;
	socklen_t olen = sizeof(own);
	const uint8_t *a;
	uint16_t port;

	if (getsockname(sk, (struct sockaddr *)&own, &olen))
		return neg_errno();
	if (own.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&own;

		a = (const uint8_t *)&in->sin_addr;
		port = ntohs(in->sin_port);
		*len = to_sockaddr(memcmp(a, any, 4) ? a : lo4, 4, port, dst);
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&own;

		a = in6->sin6_addr.s6_addr;
		port = ntohs(in6->sin6_port);
		if (!memcmp(a, any, 16))
			*len = fam == AF_INET ? to_sockaddr(lo4, 4, port, dst)
					      : to_sockaddr(lo6, 16, port, dst);
		else
			*len = to_sockaddr(a, 16, port, dst);
	}
	return dst->ss_family == fam ? 0 : -EAFNOSUPPORT;
}

/*
 * A raw socket of the sender's family, bound to its address: transparent
 * (CAP_NET_ADMIN), so an address of another machine is taken too; a packet
 * from it to a local address is delivered like one from loopback.
 */
static int raw_from(const struct sockaddr_storage *src, socklen_t slen, int proto)
{
	int fd = socket(src->ss_family, SOCK_RAW | SOCK_CLOEXEC, proto);
	int off = offsetof(struct udphdr, check), on = 1;
	bool v6 = src->ss_family == AF_INET6;

	if (fd < 0)
		return neg_errno();
	if ((v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_CHECKSUM, &off, sizeof(off))) ||
	    setsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_TRANSPARENT : IP_TRANSPARENT,
		       &on, sizeof(on)) ||
	    bind(fd, (const struct sockaddr *)src, slen)) {
		int err = neg_errno();

		close(fd);
		return err;
	}
	return fd;
}

/* The internet checksum of a UDP-Lite datagram over IPv4, all of it covered. */
uint16_t udplite_csum4(const struct sockaddr_in *src, const struct sockaddr_in *dst,
		       const uint8_t *pkt, size_t len)
{
	const uint8_t *s = (const uint8_t *)&src->sin_addr, *d = (const uint8_t *)&dst->sin_addr;
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < 4; i += 2)
		sum += (uint32_t)(s[i] << 8 | s[i + 1]) + (uint32_t)(d[i] << 8 | d[i + 1]);
	sum += IPPROTO_UDPLITE + len;
	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(pkt[i] << 8 | pkt[i + 1]);
	if (len & 1)
		sum += (uint32_t)pkt[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	return htons(sum ? (uint16_t)sum : 0xffff);
}

static int send_one(int sk, int proto, const UdpDgramEntry *d, uint8_t *pkt)
{
	struct sockaddr_storage src, dst;
	socklen_t slen, dlen;
	struct udphdr *h = (struct udphdr *)pkt;
	size_t len = sizeof(*h) + d->data.len;
	_cleanup_close_ int raw = -1;
	int err;

	if ((d->from_addr.len != 4 && d->from_addr.len != 16) || d->from_port > 65535 ||
	    len > 65535)
		return -EINVAL;
	slen = to_sockaddr(d->from_addr.data, d->from_addr.len, 0, &src);
	err = dgram_dst(sk, src.ss_family, &dst, &dlen);
	if (err)
		return err;
	raw = raw_from(&src, slen, proto);
	if (raw < 0)
		return raw;
	h->source = htons((uint16_t)d->from_port);
	h->dest = src.ss_family == AF_INET ? ((struct sockaddr_in *)&dst)->sin_port
					   : ((struct sockaddr_in6 *)&dst)->sin6_port;
	/* UDP-Lite: the checksum coverage in place of the length, 0 for all */
	h->len = proto == IPPROTO_UDPLITE ? 0 : htons((uint16_t)len);
	h->check = 0;
	memcpy(pkt + sizeof(*h), d->data.data, d->data.len);
	if (proto == IPPROTO_UDPLITE && src.ss_family == AF_INET)
		h->check = udplite_csum4((struct sockaddr_in *)&src, (struct sockaddr_in *)&dst,
					 pkt, len);
	/* a raw socket takes no port: the destination's is in our header */
	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&dst)->sin6_port = 0;
	if (sendto(raw, pkt, len, 0, (struct sockaddr *)&dst, dlen) != (ssize_t)len)
		return neg_errno();
	return 0;
}

/*
 * The memory @sk's receive queue holds (SO_MEMINFO): it grows with each
 * datagram queued, one of no bytes too. Not a peek: a datagram of no bytes
 * once peeked is skipped by every later peek at an offset, the next dump's.
 */
static int rmem_of(int sk, uint32_t *ret)
{
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mem);

	if (getsockopt(sk, SOL_SOCKET, SO_MEMINFO, mem, &len))
		return neg_errno();
	*ret = mem[SK_MEMINFO_RMEM_ALLOC];
	return 0;
}

int udp_refill(int sk, const InetSkEntry *e, uint32_t id)
{
	char ends[INET_ENDS_STRLEN];
	_cleanup_free_ uint8_t *pkt = malloc(65536);
	uint32_t before, after;
	size_t i;
	int err;

	if (!pkt)
		return -ENOMEM;
	inet_entry_ends(e, ends, sizeof(ends));
	for (i = 0; i < e->n_dgrams; i++) {
		err = rmem_of(sk, &before);
		if (!err)
			err = send_one(sk, (int)e->proto, e->dgrams[i], pkt);
		/* loopback delivers before sendto() returns; a full buffer would drop it */
		if (!err)
			err = rmem_of(sk, &after);
		if (!err && after <= before) {
			pr_err("file %u: %s socket %s did not take its datagram %zu back (its "
			       "queue holds %u bytes)\n",
			       id, inet_kind_name((int)e->type, (int)e->proto), ends, i, before);
			return -EIO;
		}
		if (err) {
			pr_errno(err, "file %u: cannot give %s socket %s its datagram %zu back", id,
				 inet_kind_name((int)e->type, (int)e->proto), ends, i);
			return err;
		}
	}
	pr_debug("file %u: UDP %s: %zu datagrams queued again\n", id, ends, e->n_dgrams);
	return 0;
}
