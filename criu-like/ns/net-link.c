// SPDX-License-Identifier: GPL-2.0
/*
 * The links of a network namespace (Documentation/namespaces.md, "Network
 * namespaces"), for net.c: the kinds of link, and what the dump records of
 * each link; how the restore makes it again is in net-link-restore.c.
 */
#define LOG_PREFIX "ns: net: "

#include <errno.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "net-link.h"
#include "net-nl.h"
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

/*
 * The options of each kind given back at restore: the IFLA_INFO_DATA
 * attributes (IFLA_INFO_SLAVE_DATA for a bridge port) copied from the image
 * into the creation request. The others of the dump are the kernel's state
 * (timers, ids, counters) or options left at their defaults.
 */
static const uint16_t bridge_data[] = {
	IFLA_BR_FORWARD_DELAY,
	IFLA_BR_HELLO_TIME,
	IFLA_BR_MAX_AGE,
	IFLA_BR_AGEING_TIME,
	IFLA_BR_STP_STATE,
	IFLA_BR_PRIORITY,
	IFLA_BR_VLAN_FILTERING | LINK_KEEP_NONZERO,
	IFLA_BR_VLAN_PROTOCOL,
	IFLA_BR_VLAN_DEFAULT_PVID,
	IFLA_BR_GROUP_FWD_MASK,
	IFLA_BR_MCAST_SNOOPING,
	0,
};
static const uint16_t macvlan_data[] = { IFLA_MACVLAN_MODE, IFLA_MACVLAN_FLAGS, 0 };
static const uint16_t vlan_data[] = { IFLA_VLAN_ID,	     IFLA_VLAN_PROTOCOL,   IFLA_VLAN_FLAGS,
				      IFLA_VLAN_INGRESS_QOS, IFLA_VLAN_EGRESS_QOS, 0 };
static const uint16_t ipvlan_data[] = { IFLA_IPVLAN_MODE, IFLA_IPVLAN_FLAGS, 0 };
const uint16_t net_link_brport_data[] = {
	IFLA_BRPORT_COST,     IFLA_BRPORT_PRIORITY,	 IFLA_BRPORT_MODE,
	IFLA_BRPORT_GUARD,    IFLA_BRPORT_PROTECT,	 IFLA_BRPORT_FAST_LEAVE,
	IFLA_BRPORT_LEARNING, IFLA_BRPORT_UNICAST_FLOOD, 0,
};

/* The kinds of link the dump records, by IFLA_INFO_KIND. */
static const struct link_kind link_kinds[] = {
	{ "dummy", NET_LINK_KIND__NET_LINK_DUMMY, false, NULL },
	{ "veth", NET_LINK_KIND__NET_LINK_VETH, false, NULL },
	{ "bridge", NET_LINK_KIND__NET_LINK_BRIDGE, false, bridge_data },
	{ "macvlan", NET_LINK_KIND__NET_LINK_MACVLAN, true, macvlan_data },
	{ "macvtap", NET_LINK_KIND__NET_LINK_MACVTAP, true, macvlan_data },
	{ "vlan", NET_LINK_KIND__NET_LINK_VLAN, true, vlan_data },
	{ "ipvlan", NET_LINK_KIND__NET_LINK_IPVLAN, true, ipvlan_data },
	{ "tun", NET_LINK_KIND__NET_LINK_TUN, false, NULL }, /* net-link-tun.c */
};

static const struct link_kind *kind_by_name(const char *name)
{
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(link_kinds); i++)
		if (!strcmp(link_kinds[i].name, name))
			return &link_kinds[i];
	return NULL;
}

const struct link_kind *net_link_kind_of(NetLinkKind kind)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(link_kinds); i++)
		if (link_kinds[i].kind == kind)
			return &link_kinds[i];
	return NULL;
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

/* A veth: its peer outside (in criu-like's namespace: name, MTU, flags, bridge) or inside. */
static void veth_fill(pid_t pid, struct rtattr **tb, const struct nl_buf *host, NetLinkEntry *e)
{
	const struct nlmsghdr *p;
	uint32_t peer = attr_u32(tb[IFLA_LINK], 0);
	struct rtattr *pt[IFLA_MAX + 1];
	const char *pname, *pkind, *master;

	e->peer_name = "";
	if (!tb[IFLA_LINK_NETNSID]) {
		/* both ends inside: made again as a pair */
		e->has_peer_ifindex = true;
		e->peer_ifindex = peer;
		pr_info("pid %d: veth %s, its peer (ifindex %u) inside\n", pid, e->name, peer);
		return;
	}
	p = find_peer(host, e->ifindex, peer);
	if (!p) {
		pr_warn("pid %d: the peer of veth %s is not in criu-like's network namespace: "
			"name its outside end at restore (--external veth[%s]:NAME)\n",
			pid, e->name, e->name);
		return;
	}
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
	master = pt[IFLA_MASTER] ? host_link_name(host, attr_u32(pt[IFLA_MASTER], 0)) : NULL;
	if (master)
		e->peer_master = (char *)master;
	pr_info("pid %d: veth %s, its peer %s outside%s%s\n", pid, e->name, pname,
		master ? " on " : "", master ? master : "");
}

/* A link on a lower device: inside the namespace (its ifindex) or outside (its name there). */
static void lower_fill(pid_t pid, struct rtattr **tb, const struct nl_buf *host, NetLinkEntry *e)
{
	const char *name;

	e->has_link = true;
	e->link = attr_u32(tb[IFLA_LINK], 0);
	if (!tb[IFLA_LINK_NETNSID])
		return;
	e->has_link_outside = e->link_outside = true;
	name = host_link_name(host, e->link);
	e->link_name = name ? (char *)name : "";
	pr_info("pid %d: link %s is on %s outside its namespace: name it at restore "
		"(--external macvlan[%s]:NAME)\n",
		pid, e->name, name ? name : "a link not in criu-like's namespace", e->name);
}

/* The options of the kind and of the bridge port, as the kernel sent them. */
static void data_fill(struct rtattr **tb, NetLinkEntry *e)
{
	struct rtattr *li[IFLA_INFO_MAX + 1];

	if (!tb[IFLA_LINKINFO])
		return;
	nl_parse_nested(tb[IFLA_LINKINFO], li, IFLA_INFO_MAX);
	if (li[IFLA_INFO_DATA]) {
		e->has_info_data = true;
		e->info_data.data = RTA_DATA(li[IFLA_INFO_DATA]);
		e->info_data.len = RTA_PAYLOAD(li[IFLA_INFO_DATA]);
	}
	if (li[IFLA_INFO_SLAVE_DATA] && li[IFLA_INFO_SLAVE_KIND] &&
	    !strcmp(RTA_DATA(li[IFLA_INFO_SLAVE_KIND]), "bridge")) {
		e->has_slave_data = true;
		e->slave_data.data = RTA_DATA(li[IFLA_INFO_SLAVE_DATA]);
		e->slave_data.len = RTA_PAYLOAD(li[IFLA_INFO_SLAVE_DATA]);
	}
}

/* How the link makes its IPv6 link-local address, in IFLA_AF_SPEC. */
static void addr_gen_mode_fill(struct rtattr **tb, NetLinkEntry *e)
{
	struct rtattr *af[AF_MAX + 1], *in6[IFLA_INET6_MAX + 1];

	if (!tb[IFLA_AF_SPEC])
		return;
	nl_parse_nested(tb[IFLA_AF_SPEC], af, AF_MAX);
	if (!af[AF_INET6])
		return;
	nl_parse_nested(af[AF_INET6], in6, IFLA_INET6_MAX);
	if (in6[IFLA_INET6_ADDR_GEN_MODE] && RTA_PAYLOAD(in6[IFLA_INET6_ADDR_GEN_MODE]) >= 1) {
		e->has_addr_gen_mode = true;
		e->addr_gen_mode = *(const uint8_t *)RTA_DATA(in6[IFLA_INET6_ADDR_GEN_MODE]);
	}
}

/* What every link has: index, name, flags, MTU, MAC, queue length, alias, master. */
static void common_fill(const struct nlmsghdr *n, struct rtattr **tb, const char *name,
			NetLinkEntry *e)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(n);

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
	if (tb[IFLA_IFALIAS] && RTA_PAYLOAD(tb[IFLA_IFALIAS]) > 1)
		e->alias = RTA_DATA(tb[IFLA_IFALIAS]);
	addr_gen_mode_fill(tb, e);
	if (tb[IFLA_MASTER]) {
		e->has_master = true;
		e->master = attr_u32(tb[IFLA_MASTER], 0);
		/* a bridge makes its ports promiscuous itself: not a flag of the user's */
		if (attr_u32(tb[IFLA_PROMISCUITY], 0) <= 1)
			e->flags &= ~IFF_PROMISC;
	}
}

int link_fill(pid_t pid, const struct nlmsghdr *n, const struct nl_buf *host, NetLinkEntry *e,
	      bool *skip)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(n);
	struct rtattr *tb[IFLA_MAX + 1];
	const struct link_kind *k;
	const char *name, *kind;

	link_info(n, tb, &name, &kind);
	common_fill(n, tb, name, e);
	*skip = fallback_tunnel(name, kind);
	if (*skip) {
		pr_info("pid %d: link %s (%s) is made by the kernel in every namespace: not "
			"dumped\n",
			pid, name, kind);
		return 0;
	}
	if (!kind && (ifi->ifi_flags & IFF_LOOPBACK)) {
		e->kind = NET_LINK_KIND__NET_LINK_LOOPBACK;
		return 0;
	}
	k = kind_by_name(kind);
	if (!k) {
		pr_err("pid %d: link %s of its network namespace is of kind %s: not dumped (only "
		       "lo, dummy, veth, bridge, macvlan, macvtap, vlan, ipvlan and tun/tap links "
		       "are)\n",
		       pid, name, kind ? kind : "(none)");
		return -EOPNOTSUPP;
	}
	e->kind = k->kind;
	data_fill(tb, e);
	if (k->kind == NET_LINK_KIND__NET_LINK_VETH)
		veth_fill(pid, tb, host, e);
	else if (k->lower)
		lower_fill(pid, tb, host, e);
	return 0;
}

static const NetLinkEntry *entry_by_index(NetLinkEntry *const *links, size_t n, uint32_t ifindex)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (links[i]->ifindex == ifindex)
			return links[i];
	return NULL;
}

bool net_link_vlan_filtering(const NetLinkEntry *l)
{
	const struct rtattr *a;
	int len;

	if (l->kind != NET_LINK_KIND__NET_LINK_BRIDGE || !l->has_info_data)
		return false;
	a = (const struct rtattr *)l->info_data.data;
	len = (int)l->info_data.len;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if ((a->rta_type & NLA_TYPE_MASK) == IFLA_BR_VLAN_FILTERING)
			return RTA_PAYLOAD(a) >= 1 && *(const uint8_t *)RTA_DATA(a);
	return false;
}

int net_links_dump_check(pid_t pid, NetLinkEntry *const *links, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const NetLinkEntry *l = links[i], *m;

		/*
		 * Its vlan table (bridge vlan: each port's vids, pvid, untagged) is not
		 * read, and a kernel without CONFIG_BRIDGE_VLAN_FILTERING (this
		 * project's) cannot test it being made again.
		 */
		if (net_link_vlan_filtering(l)) {
			pr_err("pid %d: bridge %s of its network namespace has vlan filtering on: "
			       "its vlan table (bridge vlan) is not dumped\n",
			       pid, l->name);
			return -EOPNOTSUPP;
		}

		if (l->has_master) {
			m = entry_by_index(links, n, l->master);
			if (!m || m->kind != NET_LINK_KIND__NET_LINK_BRIDGE) {
				pr_err("pid %d: link %s is enslaved to %s%s (ifindex %u): only "
				       "bridge ports are dumped\n",
				       pid, l->name, m ? "link " : "a link not dumped",
				       m ? m->name : "", l->master);
				return -EOPNOTSUPP;
			}
		}
		if (l->has_link && !l->link_outside && !entry_by_index(links, n, l->link)) {
			pr_err("pid %d: link %s is on a lower link (ifindex %u) that is not "
			       "dumped\n",
			       pid, l->name, l->link);
			return -EOPNOTSUPP;
		}
		if (l->has_peer_ifindex && !entry_by_index(links, n, l->peer_ifindex)) {
			pr_err("pid %d: the peer (ifindex %u) of veth %s is not dumped\n", pid,
			       l->peer_ifindex, l->name);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

#define PEERS_GONE_WAIT_MS 5000

/* Delete the outside ends of the killed tree's veths (the inside ends go with them). */
static void peers_delete(void)
{
	char name[IF_NAMESIZE];
	size_t i;
	int sk = rtnl_open();

	for (i = 0; sk >= 0 && i < n_dump_peers; i++) {
		uint8_t buf[NL_REQ_SIZE];
		struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC,
					 .ifi_index = dump_peers[i].ifindex };
		struct nlmsghdr *n = nl_req_init(buf, RTM_DELLINK, 0, &ifi, sizeof(ifi));
		int err;

		/* gone, or the index given to another link since */
		if (!if_indextoname((unsigned int)dump_peers[i].ifindex, name) ||
		    strcmp(name, dump_peers[i].name))
			continue;
		err = rtnl_talk(sk, n);
		if (err && err != -ENODEV)
			pr_warn("cannot delete veth %s of the killed tree: %s\n", name,
				strerror(-err));
	}
	if (sk >= 0)
		close(sk);
}

/*
 * The kernel destroys a namespace in the background once its last reference
 * goes: until then the outside ends of its veths still exist in criu-like's
 * namespace, and a restore right after the dump (a migration, `dump;
 * restore`) would find their names taken. A killed tree's veths are deleted
 * (at once: the namespace's own teardown took 50 ms here), then waited for.
 */
void net_link_peers_wait(bool killed)
{
	char name[IF_NAMESIZE];
	unsigned int waited = 0;
	size_t i = 0;

	if (killed)
		peers_delete();
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
