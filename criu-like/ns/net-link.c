// SPDX-License-Identifier: GPL-2.0
/*
 * The links of a network namespace (Documentation/namespaces.md, "Network
 * namespaces"), for net.c: what the dump records of each link and how the
 * restore makes it again, kind by kind.
 */
#define LOG_PREFIX "ns: net: "

#include <errno.h>
#include <net/if.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <linux/veth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
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

/*
 * The options of each kind given back at restore: the IFLA_INFO_DATA
 * attributes (IFLA_INFO_SLAVE_DATA for a bridge port) copied from the image
 * into the creation request. The others of the dump are the kernel's state
 * (timers, ids, counters) or options left at their defaults.
 */
/* given back only when not 0: a kernel without the feature refuses even 0 (vlan filtering) */
#define KEEP_NONZERO 0x8000
static const uint16_t bridge_data[] = {
	IFLA_BR_FORWARD_DELAY,
	IFLA_BR_HELLO_TIME,
	IFLA_BR_MAX_AGE,
	IFLA_BR_AGEING_TIME,
	IFLA_BR_STP_STATE,
	IFLA_BR_PRIORITY,
	IFLA_BR_VLAN_FILTERING | KEEP_NONZERO,
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
static const uint16_t brport_data[] = {
	IFLA_BRPORT_COST,     IFLA_BRPORT_PRIORITY,	 IFLA_BRPORT_MODE,
	IFLA_BRPORT_GUARD,    IFLA_BRPORT_PROTECT,	 IFLA_BRPORT_FAST_LEAVE,
	IFLA_BRPORT_LEARNING, IFLA_BRPORT_UNICAST_FLOOD, 0,
};

/* The kinds of link the dump records, by IFLA_INFO_KIND. */
static const struct link_kind {
	const char *name;
	NetLinkKind kind;
	bool lower; /* made on a lower device (IFLA_LINK): macvlan, vlan... */
	const uint16_t *data; /* the IFLA_INFO_DATA attributes given back */
} link_kinds[] = {
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

static const struct link_kind *kind_of(NetLinkKind kind)
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

/* ---- restore ---------------------------------------------------------------------------------- */

const char *net_external_name(const char *const *ext, size_t n, const char *type, const char *in)
{
	size_t tlen = strlen(type), len = strlen(in), i;

	for (i = 0; ext && i < n; i++) {
		const char *x = ext[i];

		if (!strncmp(x, type, tlen) && x[tlen] == '[' && !strncmp(x + tlen + 1, in, len) &&
		    !strncmp(x + tlen + 1 + len, "]:", 2))
			return x + tlen + 1 + len + 2;
	}
	return NULL;
}

/* --external veth[IN]:OUT, or --veth-pair IN=OUT[@BRIDGE]: the outside name of veth @in. */
static int outside_name(const char *in, const char **out, const char **bridge)
{
	const struct cr_options *o = ns_options();
	size_t len = strlen(in);
	int i;

	*bridge = NULL;
	*out = o ? net_external_name(o->external, (size_t)o->n_external, "veth", in) : NULL;
	if (*out)
		return 0;
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

static long index_of(const NetnsEntry *ne, uint32_t ifindex)
{
	size_t i;

	for (i = 0; i < ne->n_links; i++)
		if (ne->links[i]->ifindex == ifindex)
			return (long)i;
	return -1;
}

/* A veth's outside end, named at restore. */
static int check_veth(const NetnsEntry *ne, size_t i, struct net_link_plan *p)
{
	const NetLinkEntry *l = ne->links[i];
	long j;
	int err;

	if (l->has_peer_ifindex) {
		j = index_of(ne, l->peer_ifindex);
		if (j < 0 || ne->links[j]->kind != NET_LINK_KIND__NET_LINK_VETH ||
		    ne->links[j]->peer_ifindex != l->ifindex || l->peer_ifindex == l->ifindex) {
			pr_err("veth %s: its peer inside (ifindex %u) is not a veth paired with "
			       "it\n",
			       l->name, l->peer_ifindex);
			return -EINVAL;
		}
		return 0;
	}
	err = outside_name(l->name, &p->outside[i], &p->bridge[i]);
	if (err == -EINVAL || (!err && (!*p->outside[i] || strlen(p->outside[i]) >= IFNAMSIZ))) {
		pr_err("the outside name given for veth %s is not a link name\n", l->name);
		return -EINVAL;
	}
	if (err) {
		pr_err("link %s is a veth whose outside end is not named: give --external "
		       "veth[%s]:NAME (at the dump it was %s%s%s)\n",
		       l->name, l->name,
		       l->peer_name && *l->peer_name ? l->peer_name : "not visible",
		       l->peer_master ? " on bridge " : "", l->peer_master ? l->peer_master : "");
		return -EINVAL;
	}
	if (!p->bridge[i] && l->peer_master)
		p->bridge[i] = l->peer_master;
	return 0;
}

/* A link on a lower device: inside, in the image; outside, named by --external macvlan[IN]:OUT. */
static int check_lower(const NetnsEntry *ne, size_t i, struct net_link_plan *p)
{
	const struct cr_options *o = ns_options();
	const NetLinkEntry *l = ne->links[i];
	const char *out;

	if (!l->link_outside) {
		if (index_of(ne, l->link) < 0 || l->link == l->ifindex) {
			pr_err("link %s: its lower link (ifindex %u) is not in the image\n",
			       l->name, l->link);
			return -EINVAL;
		}
		return 0;
	}
	out = o ? net_external_name(o->external, (size_t)o->n_external, "macvlan", l->name) : NULL;
	if (!out) {
		pr_err("link %s (%s) is on a link outside the container (%s at the dump): give "
		       "--external macvlan[%s]:NAME\n",
		       l->name, kind_of(l->kind)->name,
		       l->link_name && *l->link_name ? l->link_name : "not visible", l->name);
		return -EINVAL;
	}
	p->lower[i] = if_nametoindex(out);
	if (!p->lower[i]) {
		pr_err("--external macvlan[%s]:%s: there is no link %s here\n", l->name, out, out);
		return -ENOENT;
	}
	/* links are made on it from inside the new namespace: a socket of criu-like's */
	if (p->host_sk < 0)
		p->host_sk = rtnl_open();
	return p->host_sk < 0 ? p->host_sk : 0;
}

int net_links_check(const NetnsEntry *ne, uint32_t id, struct net_link_plan *p)
{
	size_t i;
	int err = 0;

	p->host_sk = -1;
	p->outside = calloc(ne->n_links + 1, sizeof(*p->outside));
	p->bridge = calloc(ne->n_links + 1, sizeof(*p->bridge));
	p->lower = calloc(ne->n_links + 1, sizeof(*p->lower));
	if (!p->outside || !p->bridge || !p->lower)
		return -ENOMEM;
	for (i = 0; !err && i < ne->n_links; i++) {
		const NetLinkEntry *l = ne->links[i];
		const struct link_kind *k = kind_of(l->kind);
		long m = l->has_master ? index_of(ne, l->master) : 0;

		if (!*l->name || strlen(l->name) >= IFNAMSIZ || strchr(l->name, '/') ||
		    (l->has_address && l->address.len > 32) || !l->ifindex ||
		    index_of(ne, l->ifindex) != (long)i || (l->alias && strlen(l->alias) >= 256) ||
		    (!k && l->kind != NET_LINK_KIND__NET_LINK_LOOPBACK) ||
		    (k && k->lower && !l->has_link) || m < 0 ||
		    (l->has_master && ne->links[m]->kind != NET_LINK_KIND__NET_LINK_BRIDGE)) {
			pr_err("netns-%u.img: link %zu: a bad name, address, index, kind, lower "
			       "link "
			       "or master\n",
			       id, i);
			return -EINVAL;
		}
		if (l->kind == NET_LINK_KIND__NET_LINK_VETH)
			err = check_veth(ne, i, p);
		else if (k && k->lower)
			err = check_lower(ne, i, p);
	}
	return err;
}

void net_link_plan_fini(struct net_link_plan *p)
{
	free(p->outside);
	free(p->bridge);
	free(p->lower);
	p->outside = p->bridge = NULL;
	p->lower = NULL;
	if (p->host_sk >= 0)
		close(p->host_sk);
	p->host_sk = -1;
}

#define LOWER_BUSY_WAIT_MS 5000

int link_set(int sk, int ifindex, unsigned int flags, unsigned int change, const NetLinkEntry *l,
	     uint32_t master, const char *what)
{
	uint8_t buf[NL_REQ_SIZE];
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC,
				 .ifi_index = ifindex,
				 .ifi_flags = flags,
				 .ifi_change = change };
	struct nlmsghdr *n = nl_req_init(buf, RTM_NEWLINK, 0, &ifi, sizeof(ifi));
	unsigned int waited;
	int err = 0;

	if (l && l->mtu)
		err = nl_put_u32(n, IFLA_MTU, l->mtu);
	if (!err && master)
		err = nl_put_u32(n, IFLA_MASTER, master);
	if (!err)
		err = rtnl_talk(sk, n);
	/*
	 * Up gives EADDRINUSE for a macvlan (macvtap, ipvlan) with the address of
	 * one still on the same lower link: the dumped tree's, whose namespace
	 * the kernel destroys in the background after the kill (a restore right
	 * after the dump).
	 */
	for (waited = 0; err == -EADDRINUSE && (flags & IFF_UP) && waited < LOWER_BUSY_WAIT_MS;
	     waited += 10) {
		usleep(10000);
		err = rtnl_talk(sk, n);
	}
	if (waited)
		pr_debug("%s: its address was busy on the lower link for %u ms\n", what, waited);
	if (err)
		pr_errno(err, "cannot set %s", what);
	return err;
}

static bool all_zero(const void *p, size_t len)
{
	const uint8_t *b = p;

	while (len && !*b)
		b++, len--;
	return !len;
}

/* The attributes of @saved (IFLA_INFO_DATA...) whose types are in @keep, into @n. */
static int put_kept(struct nlmsghdr *n, const ProtobufCBinaryData *saved, const uint16_t *keep)
{
	const struct rtattr *a = (const struct rtattr *)saved->data;
	int len = (int)saved->len, err = 0;
	size_t i;

	for (; !err && RTA_OK(a, len); a = RTA_NEXT(a, len))
		for (i = 0; keep && keep[i]; i++)
			if ((a->rta_type & NLA_TYPE_MASK) == (keep[i] & ~KEEP_NONZERO)) {
				if (!(keep[i] & KEEP_NONZERO) ||
				    !all_zero(RTA_DATA(a), RTA_PAYLOAD(a)))
					err = nl_put(n, a->rta_type, RTA_DATA(a), RTA_PAYLOAD(a));
				break;
			}
	return err;
}

/* Name, MTU, queue length and MAC of @l into a request (a link's or a veth peer's). */
static int put_common(struct nlmsghdr *n, const NetLinkEntry *l)
{
	int err = nl_put_str(n, IFLA_IFNAME, l->name);

	if (!err && l->mtu)
		err = nl_put_u32(n, IFLA_MTU, l->mtu);
	if (!err && l->has_txqlen)
		err = nl_put_u32(n, IFLA_TXQLEN, l->txqlen);
	if (!err && l->has_address)
		err = nl_put(n, IFLA_ADDRESS, l->address.data, l->address.len);
	return err;
}

/* The peer of a veth: outside (named @out, in @host) or inside (@in, with its own index). */
static int put_peer(struct nlmsghdr *n, const NetLinkEntry *l, const NetLinkEntry *in,
		    const char *out, int host)
{
	struct ifinfomsg pifi = { .ifi_family = AF_UNSPEC, .ifi_index = in ? (int)in->ifindex : 0 };
	struct rtattr *data, *peer;
	int err;

	data = nl_nest_start(n, IFLA_INFO_DATA);
	peer = data ? nl_nest_start(n, VETH_INFO_PEER) : NULL;
	if (!peer || n->nlmsg_len + sizeof(pifi) > NL_REQ_SIZE)
		return -E2BIG;
	memcpy((uint8_t *)n + n->nlmsg_len, &pifi, sizeof(pifi));
	n->nlmsg_len += NLMSG_ALIGN(sizeof(pifi));
	if (in) {
		err = put_common(n, in);
	} else {
		err = nl_put_str(n, IFLA_IFNAME, out);
		if (!err)
			err = nl_put_u32(n, IFLA_NET_NS_FD, (uint32_t)host);
		if (!err && l->has_peer_mtu && l->peer_mtu)
			err = nl_put_u32(n, IFLA_MTU, l->peer_mtu);
	}
	if (err)
		return err;
	nl_nest_end(n, peer);
	nl_nest_end(n, data);
	return 0;
}

/*
 * Link @i of @ne made by rtnetlink with its saved ifindex, name, MTU, MAC and
 * its kind's options. One on a lower device outside is made from criu-like's
 * namespace (where that device is) straight into the new one @nsfd.
 */
static int link_create(int sk, const NetnsEntry *ne, size_t i, const struct net_link_plan *p,
		       int host, int nsfd)
{
	const NetLinkEntry *l = ne->links[i];
	const struct link_kind *k = kind_of(l->kind);
	uint8_t buf[NL_REQ_SIZE];
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = (int)l->ifindex };
	struct nlmsghdr *n = nl_req_init(buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi,
					 sizeof(ifi));
	bool outside = k->lower && l->link_outside;
	struct rtattr *info, *data;
	int err;

	err = put_common(n, l);
	if (!err && k->lower)
		err = nl_put_u32(n, IFLA_LINK, outside ? p->lower[i] : l->link);
	if (!err && outside)
		err = nl_put_u32(n, IFLA_NET_NS_FD, (uint32_t)nsfd);
	info = err ? NULL : nl_nest_start(n, IFLA_LINKINFO);
	if (!info || nl_put_str(n, IFLA_INFO_KIND, k->name))
		return -E2BIG;
	if (l->kind == NET_LINK_KIND__NET_LINK_VETH) {
		err = put_peer(n, l,
			       l->has_peer_ifindex ? ne->links[index_of(ne, l->peer_ifindex)]
						   : NULL,
			       p->outside[i], host);
	} else if (k->data && l->has_info_data) {
		data = nl_nest_start(n, IFLA_INFO_DATA);
		err = data ? put_kept(n, &l->info_data, k->data) : -E2BIG;
		if (!err)
			nl_nest_end(n, data);
	}
	if (err)
		return err;
	nl_nest_end(n, info);
	err = rtnl_talk(outside ? p->host_sk : sk, n);
	if (err && l->kind == NET_LINK_KIND__NET_LINK_VETH)
		pr_errno(err, "cannot create veth %s (ifindex %u) with its %s end %s", l->name,
			 l->ifindex, l->has_peer_ifindex ? "inside" : "outside",
			 l->has_peer_ifindex ? ne->links[index_of(ne, l->peer_ifindex)]->name
					     : p->outside[i]);
	else if (err)
		pr_errno(err, "cannot create %s link %s (ifindex %u)%s%s", k->name, l->name,
			 l->ifindex, outside ? " on the outside link " : "",
			 outside ? l->link_name : "");
	return err;
}

/* Whether link @i can be made now (its lower link made), and whether it was made with another. */
static bool link_ready(const NetnsEntry *ne, size_t i, const bool *made, bool *with_peer)
{
	const NetLinkEntry *l = ne->links[i];
	long j;

	*with_peer = false;
	if (l->has_link && !l->link_outside && !made[index_of(ne, l->link)])
		return false;
	if (l->has_peer_ifindex && l->peer_ifindex < l->ifindex) {
		/* a veth pair is made once, by the end with the lower index */
		j = index_of(ne, l->peer_ifindex);
		*with_peer = true;
		return made[j];
	}
	return true;
}

static int link_make(int sk, const NetnsEntry *ne, size_t i, const struct net_link_plan *p,
		     int host, int nsfd)
{
	const NetLinkEntry *l = ne->links[i];
	char what[64];

	switch (l->kind) {
	case NET_LINK_KIND__NET_LINK_LOOPBACK:
		snprintf(what, sizeof(what), "the MTU of %s", l->name);
		return link_set(sk, (int)l->ifindex, 0, 0, l, 0, what);
	case NET_LINK_KIND__NET_LINK_TUN:
		return tun_link_create(sk, l);
	default:
		return link_create(sk, ne, i, p, host, nsfd);
	}
}

static int put_addr_gen_mode(struct nlmsghdr *n, uint8_t mode)
{
	struct rtattr *af = nl_nest_start(n, IFLA_AF_SPEC), *in6;
	int err;

	in6 = af ? nl_nest_start(n, AF_INET6) : NULL;
	if (!in6)
		return -E2BIG;
	err = nl_put(n, IFLA_INET6_ADDR_GEN_MODE, &mode, sizeof(mode));
	if (err)
		return err;
	nl_nest_end(n, in6);
	nl_nest_end(n, af);
	return 0;
}

/* A link's alias, IPv6 address generation mode, and a bridge port's bridge and port options: once every link exists. */
static int link_finish(int sk, const NetLinkEntry *l)
{
	uint8_t buf[NL_REQ_SIZE];
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = (int)l->ifindex };
	struct nlmsghdr *n;
	struct rtattr *info, *data;
	int err = 0;

	if (!l->alias && !l->has_master && !l->has_addr_gen_mode)
		return 0;
	n = nl_req_init(buf, RTM_NEWLINK, 0, &ifi, sizeof(ifi));
	if (l->alias)
		err = nl_put_str(n, IFLA_IFALIAS, l->alias);
	if (!err && l->has_addr_gen_mode)
		err = put_addr_gen_mode(n, (uint8_t)l->addr_gen_mode);
	if (!err && l->has_master)
		err = nl_put_u32(n, IFLA_MASTER, l->master);
	if (!err)
		err = rtnl_talk(sk, n);
	if (!err && l->has_master && l->has_slave_data) {
		/* the port's options, once it is one */
		n = nl_req_init(buf, RTM_NEWLINK, 0, &ifi, sizeof(ifi));
		info = nl_nest_start(n, IFLA_LINKINFO);
		err = info && !nl_put_str(n, IFLA_INFO_SLAVE_KIND, "bridge") ? 0 : -E2BIG;
		data = err ? NULL : nl_nest_start(n, IFLA_INFO_SLAVE_DATA);
		err = data ? put_kept(n, &l->slave_data, brport_data) : -E2BIG;
		if (!err) {
			nl_nest_end(n, data);
			nl_nest_end(n, info);
			err = rtnl_talk(sk, n);
		}
	}
	if (err)
		pr_errno(err,
			 "cannot set the alias, the bridge (ifindex %u) or the port options of "
			 "link %s",
			 l->master, l->name);
	return err;
}

int net_links_create(int sk, const NetnsEntry *ne, const struct net_link_plan *p, int host,
		     int nsfd)
{
	_cleanup_free_ bool *made = calloc(ne->n_links + 1, sizeof(*made));
	size_t i, n_made = 0, progress;
	bool with_peer;
	int err = 0;

	if (!made)
		return -ENOMEM;
	/* lower links before the links on them; a veth pair once */
	do {
		progress = 0;
		for (i = 0; !err && i < ne->n_links; i++) {
			if (made[i] || !link_ready(ne, i, made, &with_peer))
				continue;
			if (!with_peer)
				err = link_make(sk, ne, i, p, host, nsfd);
			made[i] = true;
			progress++;
		}
		n_made += progress;
	} while (!err && progress);
	if (!err && n_made < ne->n_links) {
		pr_err("the links of the image depend on each other in a cycle\n");
		err = -EINVAL;
	}
	for (i = 0; !err && i < ne->n_links; i++)
		err = link_finish(sk, ne->links[i]);
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

/*
 * The kernel passes a link's carrier change on (its operstate, the bridge's
 * port state) through linkwatch, which may defer it up to a second: at once
 * only for a link whose ifindex differs from its peer's, and a restored
 * veth's inside end keeps its index, which the outside end here often gets
 * too. Until then a bridge drops what comes in through that port
 * (BRIDGE_INGRESS_STP_STATE): a migrated tree's announcements, its first
 * ARP request. ETHTOOL_GLINK (ethtool_op_get_link(), linkwatch_sync_dev())
 * applies the pending change of @name now.
 */
static void link_sync_carrier(const char *name)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GLINK };
	struct ifreq ifr = { .ifr_data = (char *)&ev };
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (fd < 0 || ioctl(fd, SIOCETHTOOL, &ifr))
		pr_debug("%s: no link state from ethtool: %s\n", name, strerror(errno));
	else
		pr_debug("%s: link %s\n", name, ev.data ? "up" : "down");
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

		if (l->kind != NET_LINK_KIND__NET_LINK_VETH || !p->outside[i])
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
		if (!err) {
			link_sync_carrier(p->outside[i]);
			pr_info("veth %s: outside end %s%s%s\n", l->name, p->outside[i],
				master ? " on " : "", master ? p->bridge[i] : "");
		}
	}
	close(sk);
	return err;
}
