// SPDX-License-Identifier: GPL-2.0
/*
 * The links of a network namespace (Documentation/namespaces.md, "Network
 * namespaces"), for net.c: what the dump records of each link and how the
 * restore makes it again, kind by kind.
 */
#define LOG_PREFIX "ns: net: "

#include <errno.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <linux/veth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kind.h"
#include "log.h"
#include "net-link.h"
#include "net-nl.h"
#include "options.h"
#include "util.h"

/*
 * The outside ends of the tree's veths, as the dump found them in criu-like's
 * namespace: once the tree is killed they go with its namespace, which the
 * kernel destroys in the background (net_link_peers_wait()).
 */
static struct {
	int ifindex;
	char name[IFNAMSIZ];
} dump_peers[16];
static size_t n_dump_peers;

void net_link_peers_reset(void)
{
	n_dump_peers = 0;
}

/* ---- dump ------------------------------------------------------------------------------------- */

void link_info(const struct nlmsghdr *n, struct rtattr **tb, const char **name, const char **kind)
{
	struct rtattr *li[IFLA_INFO_MAX + 1];

	nl_parse(n, sizeof(struct ifinfomsg), tb, IFLA_MAX);
	*name = tb[IFLA_IFNAME] ? RTA_DATA(tb[IFLA_IFNAME]) : "?";
	*kind = NULL;
	if (tb[IFLA_LINKINFO]) {
		nl_parse_nested(tb[IFLA_LINKINFO], li, IFLA_INFO_MAX);
		if (li[IFLA_INFO_KIND])
			*kind = RTA_DATA(li[IFLA_INFO_KIND]);
	}
}

uint32_t attr_u32(const struct rtattr *a, uint32_t def)
{
	return a && RTA_PAYLOAD(a) >= sizeof(uint32_t) ? *(const uint32_t *)RTA_DATA(a) : def;
}

/* The tunnels every new namespace gets when their module is loaded: made again by the kernel. */
static bool fallback_tunnel(const char *name, const char *kind)
{
	static const char *const fb[] = { "tunl0",   "sit0",	"ip6tnl0", "gre0",    "gretap0",
					  "erspan0", "ip6gre0", "ip_vti0", "ip6_vti0" };
	size_t i;

	for (i = 0; kind && i < ARRAY_SIZE(fb); i++)
		if (!strcmp(name, fb[i]))
			return true;
	return false;
}

/* The veth of criu-like's namespace whose peer is @ifindex with peer index @peer, or NULL. */
static const struct nlmsghdr *find_peer(const struct nl_buf *host, uint32_t ifindex, uint32_t peer)
{
	const struct nlmsghdr *n;
	size_t off;

	for (off = 0; off < host->len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		const struct ifinfomsg *ifi;
		struct rtattr *tb[IFLA_MAX + 1];
		const char *name, *kind;

		n = (const struct nlmsghdr *)(host->data + off);
		ifi = NLMSG_DATA(n);
		link_info(n, tb, &name, &kind);
		if ((uint32_t)ifi->ifi_index == peer && kind && !strcmp(kind, "veth") &&
		    attr_u32(tb[IFLA_LINK], 0) == ifindex && tb[IFLA_LINK_NETNSID])
			return n;
	}
	return NULL;
}

static const char *host_link_name(const struct nl_buf *host, uint32_t ifindex)
{
	const struct nlmsghdr *n;
	size_t off;

	for (off = 0; off < host->len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		struct rtattr *tb[IFLA_MAX + 1];
		const char *name, *kind;

		n = (const struct nlmsghdr *)(host->data + off);
		link_info(n, tb, &name, &kind);
		if ((uint32_t)((const struct ifinfomsg *)NLMSG_DATA(n))->ifi_index == ifindex)
			return name;
	}
	return NULL;
}

static const char *const kind_why[][2] = {
	{ "bridge", "a bridge inside the container" },
	{ "macvlan", "a macvlan (its lower device is outside)" },
	{ "macvtap", "a macvtap" },
	{ "ipvlan", "an ipvlan" },
	{ "tun", "a tun/tap device (its queues are files of the tree)" },
	{ "vxlan", "a vxlan tunnel" },
	{ "wireguard", "a wireguard tunnel" },
	{ "bond", "a bond" },
	{ "vlan", "a vlan" },
};

int link_fill(pid_t pid, const struct nlmsghdr *n, const struct nl_buf *host, NetLinkEntry *e,
	      bool *skip)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(n);
	struct rtattr *tb[IFLA_MAX + 1];
	const char *name, *kind;
	size_t i;

	link_info(n, tb, &name, &kind);
	*skip = false;
	net_link_entry__init(e);
	e->ifindex = (uint32_t)ifi->ifi_index;
	e->name = (char *)name;
	e->flags = ifi->ifi_flags;
	e->mtu = attr_u32(tb[IFLA_MTU], 0);
	e->has_txqlen = !!tb[IFLA_TXQLEN];
	e->txqlen = attr_u32(tb[IFLA_TXQLEN], 0);
	if (tb[IFLA_ADDRESS]) {
		e->has_address = true;
		e->address.data = RTA_DATA(tb[IFLA_ADDRESS]);
		e->address.len = RTA_PAYLOAD(tb[IFLA_ADDRESS]);
	}
	if (fallback_tunnel(name, kind)) {
		pr_info("pid %d: link %s (%s) is made by the kernel in every namespace: not "
			"dumped\n",
			pid, name, kind);
		*skip = true;
		return 0;
	}
	if (!kind && (ifi->ifi_flags & IFF_LOOPBACK)) {
		e->kind = NET_LINK_KIND__NET_LINK_LOOPBACK;
		return 0;
	}
	if (tb[IFLA_MASTER]) {
		pr_err("pid %d: link %s is enslaved to another link of the container (ifindex "
		       "%u): not supported\n",
		       pid, name, attr_u32(tb[IFLA_MASTER], 0));
		return -EOPNOTSUPP;
	}
	if (kind && !strcmp(kind, "dummy")) {
		e->kind = NET_LINK_KIND__NET_LINK_DUMMY;
		return 0;
	}
	if (kind && !strcmp(kind, "veth")) {
		const struct nlmsghdr *p;
		uint32_t peer = attr_u32(tb[IFLA_LINK], 0);

		e->kind = NET_LINK_KIND__NET_LINK_VETH;
		if (!tb[IFLA_LINK_NETNSID]) {
			pr_err("pid %d: link %s is a veth whose peer is inside the container too: "
			       "not supported\n",
			       pid, name);
			return -EOPNOTSUPP;
		}
		p = find_peer(host, e->ifindex, peer);
		e->peer_name = "";
		if (!p) {
			pr_warn("pid %d: the peer of veth %s is not in criu-like's network "
				"namespace: name its outside end at restore (--external "
				"veth[%s]:NAME)\n",
				pid, name, name);
		} else {
			struct rtattr *pt[IFLA_MAX + 1];
			const char *pname, *pkind, *master;

			link_info(p, pt, &pname, &pkind);
			e->peer_name = (char *)pname;
			if (n_dump_peers < ARRAY_SIZE(dump_peers)) {
				dump_peers[n_dump_peers].ifindex =
					((const struct ifinfomsg *)NLMSG_DATA(p))->ifi_index;
				snprintf(dump_peers[n_dump_peers].name, IFNAMSIZ, "%s", pname);
				n_dump_peers++;
			}
			e->has_peer_mtu = e->has_peer_flags = true;
			e->peer_mtu = attr_u32(pt[IFLA_MTU], 0);
			e->peer_flags = ((const struct ifinfomsg *)NLMSG_DATA(p))->ifi_flags;
			master = pt[IFLA_MASTER]
					 ? host_link_name(host, attr_u32(pt[IFLA_MASTER], 0))
					 : NULL;
			if (master)
				e->peer_master = (char *)master;
			pr_info("pid %d: veth %s, its peer %s outside%s%s\n", pid, name, pname,
				master ? " on " : "", master ? master : "");
		}
		return 0;
	}
	for (i = 0; kind && i < ARRAY_SIZE(kind_why); i++)
		if (!strcmp(kind, kind_why[i][0]))
			break;
	pr_err("pid %d: link %s of its network namespace is %s%s%s: only lo, veth and dummy "
	       "links are dumped\n",
	       pid, name, kind && i < ARRAY_SIZE(kind_why) ? kind_why[i][1] : "of kind ",
	       kind && i < ARRAY_SIZE(kind_why) ? ""
	       : kind				? kind
						: "(none)",
	       kind && i < ARRAY_SIZE(kind_why) ? "" : "");
	return -EOPNOTSUPP;
}

#define PEERS_GONE_WAIT_MS 5000

/*
 * The kernel destroys a namespace in the background once its last reference
 * goes: until then the outside ends of its veths still exist in criu-like's
 * namespace, and a restore right after the dump (a migration, `dump;
 * restore`) would find their names taken.
 */
void net_link_peers_wait(bool killed)
{
	char name[IF_NAMESIZE];
	unsigned int waited = 0;
	size_t i = 0;

	while (killed && i < n_dump_peers) {
		/* gone, or the index given to another link since */
		if (!if_indextoname((unsigned int)dump_peers[i].ifindex, name) ||
		    strcmp(name, dump_peers[i].name)) {
			i++;
			continue;
		}
		if (waited >= PEERS_GONE_WAIT_MS) {
			pr_warn("veth %s is still there %u ms after the tree was killed: its "
				"network namespace is not destroyed yet\n",
				dump_peers[i].name, waited);
			break;
		}
		usleep(10000);
		waited += 10;
	}
	if (waited)
		pr_debug("the tree's veths were gone %u ms after it was killed\n", waited);
	n_dump_peers = 0;
}

/* ---- restore ---------------------------------------------------------------------------------- */

/* --external veth[IN]:OUT, or --veth-pair IN=OUT[@BRIDGE]: the outside name of veth @in. */
static int outside_name(const char *in, const char **out, const char **bridge)
{
	const struct cr_options *o = ns_options();
	size_t len = strlen(in);
	int i;

	*out = *bridge = NULL;
	for (i = 0; o && i < o->n_external; i++) {
		const char *x = o->external[i];

		if (!strncmp(x, "veth[", 5) && !strncmp(x + 5, in, len) &&
		    !strncmp(x + 5 + len, "]:", 2)) {
			*out = x + 5 + len + 2;
			return 0;
		}
	}
	for (i = 0; o && i < o->n_veth_pairs; i++) {
		const char *x = o->veth_pairs[i], *at;
		static char names[16][2][IFNAMSIZ];

		if (strncmp(x, in, len) || x[len] != '=')
			continue;
		at = strchr(x + len + 1, '@');
		if (i >= 16 ||
		    (at ? (size_t)(at - (x + len + 1)) : strlen(x + len + 1)) >= IFNAMSIZ)
			return -EINVAL;
		snprintf(names[i][0], IFNAMSIZ, "%.*s",
			 at ? (int)(at - (x + len + 1)) : IFNAMSIZ - 1, x + len + 1);
		*out = names[i][0];
		if (at) {
			snprintf(names[i][1], IFNAMSIZ, "%s", at + 1);
			*bridge = names[i][1];
		}
		return 0;
	}
	return -ENOENT;
}

int net_links_check(const NetnsEntry *ne, uint32_t id, struct net_link_plan *p)
{
	size_t i;

	p->outside = calloc(ne->n_links + 1, sizeof(*p->outside));
	p->bridge = calloc(ne->n_links + 1, sizeof(*p->bridge));
	if (!p->outside || !p->bridge)
		return -ENOMEM;
	for (i = 0; i < ne->n_links; i++) {
		const NetLinkEntry *l = ne->links[i];
		int err;

		if (!*l->name || strlen(l->name) >= IFNAMSIZ || strchr(l->name, '/') ||
		    (l->has_address && l->address.len > 32) || !l->ifindex) {
			pr_err("netns-%u.img: link %zu: a bad name, address or index\n", id, i);
			return -EINVAL;
		}
		if (l->kind != NET_LINK_KIND__NET_LINK_VETH)
			continue;
		err = outside_name(l->name, &p->outside[i], &p->bridge[i]);
		if (err == -EINVAL ||
		    (!err && (!*p->outside[i] || strlen(p->outside[i]) >= IFNAMSIZ))) {
			pr_err("the outside name given for veth %s is not a link name\n", l->name);
			return -EINVAL;
		}
		if (err) {
			pr_err("link %s is a veth whose outside end is not named: give --external "
			       "veth[%s]:NAME (at the dump it was %s%s%s)\n",
			       l->name, l->name,
			       l->peer_name && *l->peer_name ? l->peer_name : "not visible",
			       l->peer_master ? " on bridge " : "",
			       l->peer_master ? l->peer_master : "");
			return -EINVAL;
		}
		if (!p->bridge[i] && l->peer_master)
			p->bridge[i] = l->peer_master;
	}
	return 0;
}

void net_link_plan_fini(struct net_link_plan *p)
{
	free(p->outside);
	free(p->bridge);
	p->outside = p->bridge = NULL;
}

int link_set(int sk, int ifindex, unsigned int flags, unsigned int change, const NetLinkEntry *l,
	     uint32_t master, const char *what)
{
	uint8_t buf[NL_REQ_SIZE];
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC,
				 .ifi_index = ifindex,
				 .ifi_flags = flags,
				 .ifi_change = change };
	struct nlmsghdr *n = nl_req_init(buf, RTM_NEWLINK, 0, &ifi, sizeof(ifi));
	int err = 0;

	if (l && l->mtu)
		err = nl_put_u32(n, IFLA_MTU, l->mtu);
	if (!err && master)
		err = nl_put_u32(n, IFLA_MASTER, master);
	if (!err)
		err = rtnl_talk(sk, n);
	if (err)
		pr_errno(err, "cannot set %s", what);
	return err;
}

/* A dummy or a veth (its peer in @host named @out) with the saved ifindex, name, MTU, MAC. */
static int link_create(int sk, const NetLinkEntry *l, const char *out, int host)
{
	uint8_t buf[NL_REQ_SIZE];
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = (int)l->ifindex };
	struct nlmsghdr *n = nl_req_init(buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi,
					 sizeof(ifi));
	struct rtattr *info, *data, *peer;
	bool veth = l->kind == NET_LINK_KIND__NET_LINK_VETH;
	int err;

	err = nl_put_str(n, IFLA_IFNAME, l->name);
	if (!err && l->mtu)
		err = nl_put_u32(n, IFLA_MTU, l->mtu);
	if (!err && l->has_txqlen)
		err = nl_put_u32(n, IFLA_TXQLEN, l->txqlen);
	if (!err && l->has_address)
		err = nl_put(n, IFLA_ADDRESS, l->address.data, l->address.len);
	info = err ? NULL : nl_nest_start(n, IFLA_LINKINFO);
	if (!info || nl_put_str(n, IFLA_INFO_KIND, veth ? "veth" : "dummy"))
		return -E2BIG;
	if (veth) {
		struct ifinfomsg pifi = { .ifi_family = AF_UNSPEC };

		data = nl_nest_start(n, IFLA_INFO_DATA);
		peer = data ? nl_nest_start(n, VETH_INFO_PEER) : NULL;
		if (!peer || n->nlmsg_len + sizeof(pifi) > NL_REQ_SIZE)
			return -E2BIG;
		memcpy((uint8_t *)n + n->nlmsg_len, &pifi, sizeof(pifi));
		n->nlmsg_len += NLMSG_ALIGN(sizeof(pifi));
		err = nl_put_str(n, IFLA_IFNAME, out);
		if (!err)
			err = nl_put_u32(n, IFLA_NET_NS_FD, (uint32_t)host);
		if (!err && l->has_peer_mtu && l->peer_mtu)
			err = nl_put_u32(n, IFLA_MTU, l->peer_mtu);
		if (err)
			return err;
		nl_nest_end(n, peer);
		nl_nest_end(n, data);
	}
	nl_nest_end(n, info);
	err = rtnl_talk(sk, n);
	if (err && veth)
		pr_errno(err, "cannot create veth %s (ifindex %u) with its outside end %s", l->name,
			 l->ifindex, out);
	else if (err)
		pr_errno(err, "cannot create dummy link %s (ifindex %u)", l->name, l->ifindex);
	return err;
}

int net_links_create(int sk, const NetnsEntry *ne, const struct net_link_plan *p, int host)
{
	char what[64];
	size_t i;
	int err = 0;

	for (i = 0; !err && i < ne->n_links; i++) {
		const NetLinkEntry *l = ne->links[i];

		if (l->kind == NET_LINK_KIND__NET_LINK_LOOPBACK) {
			snprintf(what, sizeof(what), "the MTU of %s", l->name);
			err = link_set(sk, (int)l->ifindex, 0, 0, l, 0, what);
		} else {
			err = link_create(sk, l, p->outside[i], host);
		}
	}
	return err;
}

int net_links_flags(int sk, const NetnsEntry *ne)
{
	char what[64];
	size_t i;
	int err = 0;

	for (i = 0; !err && i < ne->n_links; i++) {
		const NetLinkEntry *l = ne->links[i];

		snprintf(what, sizeof(what), "the flags of %s", l->name);
		err = link_set(sk, (int)l->ifindex, l->flags & LINK_FLAGS, LINK_FLAGS, NULL, 0,
			       what);
	}
	return err;
}

int net_links_outside(const NetnsEntry *ne, const struct net_link_plan *p)
{
	char what[96];
	size_t i;
	int sk, err = 0;

	sk = rtnl_open();
	if (sk < 0)
		return sk;
	for (i = 0; !err && i < ne->n_links; i++) {
		const NetLinkEntry *l = ne->links[i];
		unsigned int idx, master = 0;

		if (l->kind != NET_LINK_KIND__NET_LINK_VETH)
			continue;
		idx = if_nametoindex(p->outside[i]);
		if (p->bridge[i]) {
			master = if_nametoindex(p->bridge[i]);
			if (!master) {
				pr_err("veth %s: the bridge %s its outside end %s was on is not "
				       "here\n",
				       l->name, p->bridge[i], p->outside[i]);
				err = -ENOENT;
				break;
			}
		}
		if (!idx) {
			err = -ENOENT;
			break;
		}
		snprintf(what, sizeof(what), "the outside end %s of veth %s%s%s", p->outside[i],
			 l->name, master ? " on bridge " : "", master ? p->bridge[i] : "");
		err = link_set(sk, (int)idx,
			       l->has_peer_flags ? l->peer_flags & LINK_FLAGS : IFF_UP, LINK_FLAGS,
			       NULL, master, what);
		if (!err)
			pr_info("veth %s: outside end %s%s%s\n", l->name, p->outside[i],
				master ? " on " : "", master ? p->bridge[i] : "");
	}
	close(sk);
	return err;
}
