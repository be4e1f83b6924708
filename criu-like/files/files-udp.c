// SPDX-License-Identifier: GPL-2.0
/*
 * The datagrams queued on a UDP socket at dump time (Documentation/network.md).
 * They are read without being consumed: each MSG_PEEK starts at SO_PEEK_OFF,
 * set past the datagrams already seen (on the socket the task shares: put
 * back after). A datagram of no bytes is returned once at its offset, then
 * skipped (the kernel marks it peeked). Saved with their senders, whom the
 * restore sends them from again (restore-files-udp.c); a socket bound to a
 * multicast or broadcast address has them counted and dropped (warned).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <stdint.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "files-int.h"
#include "inet-int.h"
#include "log.h"
#include "util.h"

#define UDP_MAX_DGRAM 65536
#define UDP_MAX_QUEUED 65536u /* datagrams: a queue is bounded by its buffer long before */

bool inet_addr_group(int family, const uint8_t *a)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t bcast[4] = { 255, 255, 255, 255 };

	if (family == AF_INET6 && !memcmp(a, mapped, 12))
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

int udp_dump_queue(const struct fd_info *f, InetSkEntry *e)
{
	char ends[2 * INET_ADDR_STRLEN + 8];
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
