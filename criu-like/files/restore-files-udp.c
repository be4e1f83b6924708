// SPDX-License-Identifier: GPL-2.0
/*
 * The datagrams queued on a UDP socket at the dump, given back at restore
 * (Documentation/network.md). Each must come from its sender's address and
 * port, which a socket bound there cannot always have (the sender itself
 * may hold the port, in the tree or outside), so each is sent from a raw
 * socket (IPPROTO_UDP: a raw socket binds an address but no port) with a
 * UDP header of our own, to the restored socket, bound and not yet
 * connected. IPv4 goes without a checksum (allowed); IPv6 has the kernel
 * compute it (IPV6_CHECKSUM).
 */
#define LOG_PREFIX "restore-files: "

#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "inet-int.h"
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

/* @addr (4 or 16 bytes) and @port as a sockaddr, a v4-mapped address as IPv4. */
static socklen_t to_sockaddr(const uint8_t *addr, size_t len, uint16_t port,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (len == 16 && memcmp(addr, v4mapped, 12)) {
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
static int raw_from(const struct sockaddr_storage *src, socklen_t slen)
{
	int fd = socket(src->ss_family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
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

static int send_one(int sk, const UdpDgramEntry *d, uint8_t *pkt)
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
	raw = raw_from(&src, slen);
	if (raw < 0)
		return raw;
	h->source = htons((uint16_t)d->from_port);
	h->dest = src.ss_family == AF_INET ? ((struct sockaddr_in *)&dst)->sin_port
					   : ((struct sockaddr_in6 *)&dst)->sin6_port;
	h->len = htons((uint16_t)len);
	h->check = 0;
	memcpy(pkt + sizeof(*h), d->data.data, d->data.len);
	/* a raw socket takes no port: the destination's is in our header */
	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&dst)->sin6_port = 0;
	if (sendto(raw, pkt, len, 0, (struct sockaddr *)&dst, dlen) != (ssize_t)len)
		return neg_errno();
	return 0;
}

/* How many datagrams @sk holds now (SO_PEEK_OFF is off again after). */
static unsigned int count_queued(int sk)
{
	unsigned int n = 0;
	int off = 0, none = -1;
	char c;

	while (n < 1000000 && !setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off))) {
		ssize_t r = recv(sk, &c, 1, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);

		if (r < 0)
			break;
		n++;
		off += (int)r;
	}
	setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &none, sizeof(none));
	return n;
}

int udp_refill(int sk, const InetSkEntry *e, uint32_t id)
{
	char ends[2 * INET_ADDR_STRLEN + 8];
	_cleanup_free_ uint8_t *pkt = malloc(65536);
	unsigned int got;
	size_t i;
	int err;

	if (!pkt)
		return -ENOMEM;
	inet_entry_ends(e, ends, sizeof(ends));
	for (i = 0; i < e->n_dgrams; i++) {
		err = send_one(sk, e->dgrams[i], pkt);
		if (err) {
			pr_errno(err, "file %u: cannot give UDP socket %s its datagram %zu back",
				 id, ends, i);
			return err;
		}
	}
	/* loopback delivers before sendto() returns; a full buffer would have dropped some */
	got = count_queued(sk);
	if (got != e->n_dgrams) {
		pr_err("file %u: UDP socket %s holds %u datagrams, %zu were queued at the dump\n",
		       id, ends, got, e->n_dgrams);
		return -EIO;
	}
	pr_debug("file %u: UDP %s: %zu datagrams queued again\n", id, ends, e->n_dgrams);
	return 0;
}
