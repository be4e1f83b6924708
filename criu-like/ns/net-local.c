// SPDX-License-Identifier: GPL-2.0
/*
 * Which connections of a tree in a network namespace of its own the lock of
 * the whole namespace (net.c) already holds, so that the connections' lock
 * (Documentation/network-lock.md) need not: those whose packets leave by a
 * link other than lo. A connection to an address of the namespace itself
 * (loopback, or an address of one of its links) goes over lo, which that
 * lock lets through: it is locked one by one as before. The addresses are
 * those the dump of the namespace read (net_dump()), or those of its image
 * at restore (net_load()), kept until the next command (ns_net_reset()).
 */
#define LOG_PREFIX "ns: net: "

#include <errno.h>
#include <linux/if_addr.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "net-local.h"
#include "net-lock.h"
#include "ns.h"

static struct local_addr *locals;
static size_t nr_locals;
static bool locals_known;

void net_local_reset(void)
{
	free(locals);
	locals = NULL;
	nr_locals = 0;
	locals_known = false;
}

static int local_add(int family, const void *a, size_t len)
{
	struct local_addr *l = realloc(locals, (nr_locals + 1) * sizeof(*locals));

	if (!l)
		return -ENOMEM;
	locals = l;
	memset(&l[nr_locals], 0, sizeof(*l));
	l[nr_locals].family = family;
	memcpy(l[nr_locals].a, a, len);
	nr_locals++;
	return 0;
}

int net_local_set(const struct nl_buf *addrs)
{
	const struct nlmsghdr *n;
	size_t off;
	int err = 0;

	net_local_reset();
	for (off = 0; !err && off + sizeof(*n) <= addrs->len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		const struct ifaddrmsg *ifa;
		struct rtattr *tb[IFA_MAX + 1];
		const struct rtattr *a;
		size_t len;

		n = (const struct nlmsghdr *)(addrs->data + off);
		if (n->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
			break;
		ifa = NLMSG_DATA(n);
		len = ifa->ifa_family == AF_INET ? 4 : ifa->ifa_family == AF_INET6 ? 16 : 0;
		if (!len)
			continue;
		nl_parse(n, sizeof(*ifa), tb, IFA_MAX);
		/* IFA_LOCAL: this end of a point-to-point link; else IFA_ADDRESS */
		a = tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
		if (a && RTA_PAYLOAD(a) >= len)
			err = local_add(ifa->ifa_family, RTA_DATA(a), len);
	}
	if (err)
		net_local_reset();
	else
		locals_known = true;
	return err;
}

/* @a of @family as IPv4 when it is one (an IPv4-mapped IPv6 address too): 4 bytes into @v4. */
static bool as_v4(int family, const uint8_t *a, uint8_t *v4)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (family == AF_INET) {
		memcpy(v4, a, 4);
		return true;
	}
	if (family == AF_INET6 && !memcmp(a, mapped, sizeof(mapped))) {
		memcpy(v4, a + 12, 4);
		return true;
	}
	return false;
}

bool net_local_addr(int family, const uint8_t *a, const struct local_addr *l, size_t n)
{
	static const uint8_t lo6[16] = { [15] = 1 };
	uint8_t v4[4], w4[4];
	bool is4 = as_v4(family, a, v4);
	size_t i;

	if (is4 && (v4[0] == 127 || !memcmp(v4, "\0\0\0\0", 4)))
		return true;
	if (!is4 && (!memcmp(a, lo6, 16) || !memcmp(a, in6addr_any.s6_addr, 16)))
		return true;
	for (i = 0; i < n; i++) {
		if (is4 && as_v4(l[i].family, l[i].a, w4) && !memcmp(v4, w4, 4))
			return true;
		if (!is4 && l[i].family == AF_INET6 && !memcmp(a, l[i].a, 16))
			return true;
	}
	return false;
}

bool net_local_kept(int family, const uint8_t *a)
{
	return net_local_addr(family, a, locals, nr_locals);
}

bool ns_net_conn_outside(const struct inet_tuple *t)
{
	if (!locals_known || !ns_net_tree_locked())
		return false;
	/* to itself, or to any address of the namespace: over lo */
	if (!memcmp(t->src, t->dst, t->family == AF_INET ? 4 : 16))
		return false;
	return !net_local_kept(t->family, t->dst);
}
