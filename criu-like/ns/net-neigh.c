// SPDX-License-Identifier: GPL-2.0
/*
 * Neighbours of a network namespace (Documentation/namespaces.md, "Network
 * namespaces"): net-neigh.h.
 *
 * Dump: RTM_GETNEIGH of AF_INET and AF_INET6 (and their proxy entries) and
 * of AF_BRIDGE (the fdb of the bridges and the address lists of the links),
 * inside the namespace. Only what was configured is kept (permanent, noarp,
 * proxy and managed entries, static fdb entries...): the kernel makes
 * again the entries of multicast and broadcast addresses, of links without
 * ARP, a link's own address in its bridge's fdb, and learns the rest.
 *
 * Restore: RTM_NEWNEIGH of each, after the links and their addresses, from
 * its family header, destination, link-layer address, vlan, protocol and
 * extended flags only (the dump's cache information and counters are the
 * kernel's). A managed entry (NTF_EXT_MANAGED) is resolved again.
 */
#define LOG_PREFIX "ns: net: "

#include <arpa/inet.h>
#include <errno.h>
#include <linux/neighbour.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "net-link.h"
#include "net-neigh.h"
#include "util.h"

/* The link message of @ifindex in @links, or NULL. */
static const struct nlmsghdr *find_link(const struct nl_buf *links, int ifindex)
{
	const struct nlmsghdr *n;
	size_t off;

	for (off = 0; off + sizeof(*n) <= links->len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		n = (const struct nlmsghdr *)(links->data + off);
		if (n->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
			break;
		if (((const struct ifinfomsg *)NLMSG_DATA(n))->ifi_index == ifindex)
			return n;
	}
	return NULL;
}

static bool lladdr_multicast(const struct rtattr *a)
{
	return a && RTA_PAYLOAD(a) >= 1 && (*(const uint8_t *)RTA_DATA(a) & 1);
}

/* A bridge fdb entry of a link's own address: the kernel's (a "permanent" local entry). */
static bool fdb_own_address(const struct ndmsg *ndm, struct rtattr **tb, const struct nl_buf *links)
{
	const struct nlmsghdr *l = find_link(links, ndm->ndm_ifindex);
	struct rtattr *ltb[IFLA_MAX + 1];

	if (!l || !tb[NDA_LLADDR])
		return false;
	nl_parse(l, sizeof(struct ifinfomsg), ltb, IFLA_MAX);
	return ltb[IFLA_ADDRESS] && RTA_PAYLOAD(ltb[IFLA_ADDRESS]) == RTA_PAYLOAD(tb[NDA_LLADDR]) &&
	       !memcmp(RTA_DATA(ltb[IFLA_ADDRESS]), RTA_DATA(tb[NDA_LLADDR]),
		       RTA_PAYLOAD(tb[NDA_LLADDR]));
}

static bool fdb_configured(const struct ndmsg *ndm, struct rtattr **tb, const struct nl_buf *links)
{
	/* learnt by the bridge or a driver, or aged: the kernel's */
	if (!(ndm->ndm_state & (NUD_PERMANENT | NUD_NOARP)) || (ndm->ndm_flags & NTF_EXT_LEARNED))
		return false;
	/* a link's own list: its multicast addresses are joined by its users (IPv6, IGMP) */
	if (ndm->ndm_flags & NTF_SELF)
		return !lladdr_multicast(tb[NDA_LLADDR]);
	return !((ndm->ndm_state & NUD_PERMANENT) && fdb_own_address(ndm, tb, links));
}

bool neigh_configured(const struct nlmsghdr *n, const struct nl_buf *links)
{
	struct rtattr *tb[NDA_MAX + 1];
	const struct ndmsg *ndm = NLMSG_DATA(n);
	const struct nlmsghdr *l;

	if (n->nlmsg_type != RTM_NEWNEIGH || n->nlmsg_len < NLMSG_LENGTH(sizeof(*ndm)))
		return false;
	nl_parse(n, sizeof(*ndm), tb, NDA_MAX);
	if (ndm->ndm_family == AF_BRIDGE)
		return fdb_configured(ndm, tb, links);
	if (ndm->ndm_family != AF_INET && ndm->ndm_family != AF_INET6)
		return false;
	if (ndm->ndm_flags & NTF_PROXY)
		return true; /* `ip neigh add proxy`: the kernel never makes one */
	if (attr_u32(tb[NDA_FLAGS_EXT], 0) & NTF_EXT_MANAGED)
		return true; /* `ip neigh add ... managed`: resolved by the kernel, kept by the user */
	if (ndm->ndm_state & NUD_PERMANENT)
		return true;
	if (!(ndm->ndm_state & NUD_NOARP))
		return false; /* learnt */
	/* the kernel's noarp entries: multicast, broadcast, links without ARP */
	l = find_link(links, ndm->ndm_ifindex);
	if (!l ||
	    (((const struct ifinfomsg *)NLMSG_DATA(l))->ifi_flags & (IFF_NOARP | IFF_LOOPBACK)))
		return false;
	return !lladdr_multicast(tb[NDA_LLADDR]);
}

int net_neigh_read(pid_t pid, int sk, const struct nl_buf *links, struct nl_buf *out)
{
	static const struct {
		uint8_t family, flags;
	} dumps[] = { { AF_INET, 0 },
		      { AF_INET6, 0 },
		      { AF_INET, NTF_PROXY },
		      { AF_INET6, NTF_PROXY },
		      { AF_BRIDGE, 0 } };
	struct nl_buf all = { 0 };
	const struct nlmsghdr *n;
	size_t i, off, kept = 0;
	int err = 0;

	for (i = 0; !err && i < ARRAY_SIZE(dumps); i++) {
		struct ndmsg ndm = { .ndm_family = dumps[i].family, .ndm_flags = dumps[i].flags };

		/* ndmsg is shorter than the ifinfomsg an AF_BRIDGE dump may parse: padded */
		err = rtnl_dump_hdr(sk, RTM_GETNEIGH, &ndm,
				    dumps[i].family == AF_BRIDGE ? sizeof(struct ifinfomsg)
								 : sizeof(ndm),
				    &all);
	}
	if (err) {
		pr_errno(err, "pid %d: cannot read the neighbours of its network namespace", pid);
		nl_buf_fini(&all);
		return err;
	}
	for (off = 0; !err && off < all.len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		n = (const struct nlmsghdr *)(all.data + off);
		if (neigh_configured(n, links)) {
			err = nl_buf_append(out, n, NLMSG_ALIGN(n->nlmsg_len));
			kept++;
		}
	}
	pr_info("pid %d: %zu configured neighbours\n", pid, kept);
	nl_buf_fini(&all);
	return err;
}

static void describe(const struct ndmsg *ndm, struct rtattr **tb, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "", ll[3 * 32] = "";
	size_t i, len = tb[NDA_LLADDR] ? min(RTA_PAYLOAD(tb[NDA_LLADDR]), (size_t)32) : 0;

	if (tb[NDA_DST] && ndm->ndm_family != AF_BRIDGE)
		inet_ntop(ndm->ndm_family, RTA_DATA(tb[NDA_DST]), a, sizeof(a));
	for (i = 0; i < len; i++)
		snprintf(ll + 3 * i, sizeof(ll) - 3 * i, "%s%02x", i ? ":" : "",
			 ((const uint8_t *)RTA_DATA(tb[NDA_LLADDR]))[i]);
	snprintf(buf, size, "%s %s%s%s on link %d (state 0x%x, flags 0x%x)",
		 ndm->ndm_family == AF_BRIDGE ? "fdb entry" : "neighbour", a,
		 *a && *ll ? " lladdr " : "", ll, ndm->ndm_ifindex, ndm->ndm_state, ndm->ndm_flags);
}

/* The request making @src again: its header and the attributes that say what it is. */
static int build(const struct nlmsghdr *src, struct nlmsghdr *n)
{
	static const int keep[] = { NDA_DST, NDA_LLADDR, NDA_VLAN, NDA_PROTOCOL, NDA_FLAGS_EXT };
	struct rtattr *tb[NDA_MAX + 1];
	struct ndmsg ndm = *(const struct ndmsg *)NLMSG_DATA(src);
	size_t i;
	int err = 0;

	nl_parse(src, sizeof(ndm), tb, NDA_MAX);
	ndm.ndm_flags &= NTF_PROXY | NTF_ROUTER | NTF_SELF | NTF_MASTER | NTF_STICKY;
	/* a bridge's entry: made by the bridge, through its port or (its own) itself */
	if (ndm.ndm_family == AF_BRIDGE && !(ndm.ndm_flags & NTF_SELF))
		ndm.ndm_flags |= tb[NDA_MASTER] && attr_u32(tb[NDA_MASTER], 0) ==
							   (uint32_t)ndm.ndm_ifindex
					 ? NTF_SELF
					 : NTF_MASTER;
	/* a managed one is resolved again by the kernel: it takes no state of the user's */
	if (attr_u32(tb[NDA_FLAGS_EXT], 0) & NTF_EXT_MANAGED)
		ndm.ndm_state = NUD_NONE;
	nl_req_init(n, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_EXCL, &ndm, sizeof(ndm));
	for (i = 0; !err && i < ARRAY_SIZE(keep); i++)
		if (tb[keep[i]])
			err = nl_put(n, keep[i], RTA_DATA(tb[keep[i]]), RTA_PAYLOAD(tb[keep[i]]));
	return err;
}

int net_neigh_restore(int sk, const ProtobufCBinaryData *b, const char *img)
{
	uint8_t buf[NL_REQ_SIZE];
	size_t off = 0;

	while (off + sizeof(struct nlmsghdr) <= b->len) {
		const struct nlmsghdr *src = (const struct nlmsghdr *)(b->data + off);
		struct nlmsghdr *n = (struct nlmsghdr *)buf;
		struct rtattr *tb[NDA_MAX + 1];
		char what[160];
		int err;

		if (src->nlmsg_len < NLMSG_LENGTH(sizeof(struct ndmsg)) ||
		    src->nlmsg_len > NL_REQ_SIZE || off + src->nlmsg_len > b->len ||
		    src->nlmsg_type != RTM_NEWNEIGH) {
			pr_err("%s: offset %zu: not an rtnetlink message of a neighbour\n", img,
			       off);
			return -EINVAL;
		}
		off += NLMSG_ALIGN(src->nlmsg_len);
		err = build(src, n);
		/* made already by the kernel: a macvlan's address in its lower link's list */
		if (!err)
			err = rtnl_talk(sk, n);
		if (err == -EEXIST)
			continue;
		if (err) {
			nl_parse(src, sizeof(struct ndmsg), tb, NDA_MAX);
			describe(NLMSG_DATA(src), tb, what, sizeof(what));
			pr_errno(err, "cannot restore %s", what);
			return err;
		}
	}
	return 0;
}
