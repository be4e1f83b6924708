// SPDX-License-Identifier: GPL-2.0
/*
 * The links of a network namespace (Documentation/namespaces.md, "Network
 * namespaces"), for net.c: how the restore makes each link again, kind by
 * kind (the kinds and the dump: net-link.c), and the outside ends of its
 * veths and links on a lower link outside.
 */
#define LOG_PREFIX "ns: net: "

#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <linux/if_ether.h>
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

#include "log.h"
#include "net-link.h"
#include "net-nl.h"
#include "ns.h"
#include "options.h"
#include "util.h"

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

/* The index of link @ifindex in @ne, -ENOENT when it is not there. */
static long index_of(const NetnsEntry *ne, uint32_t ifindex)
{
	size_t i;

	for (i = 0; i < ne->n_links; i++)
		if (ne->links[i]->ifindex == ifindex)
			return (long)i;
	return -ENOENT;
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
		       l->name, net_link_kind_of(l->kind)->name,
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
		const struct link_kind *k = net_link_kind_of(l->kind);
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
	free(p->ahead);
	p->outside = p->bridge = NULL;
	p->lower = NULL;
	p->ahead = NULL;
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
			if ((a->rta_type & NLA_TYPE_MASK) == (keep[i] & ~LINK_KEEP_NONZERO)) {
				if (!(keep[i] & LINK_KEEP_NONZERO) ||
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
	const struct link_kind *k = net_link_kind_of(l->kind);
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

int net_link_make(int sk, const NetnsEntry *ne, size_t i, const struct net_link_plan *p, int host,
		  int nsfd)
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
		err = data ? put_kept(n, &l->slave_data, net_link_brport_data) : -E2BIG;
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
			if (!with_peer && !(p->ahead && p->ahead[i]))
				err = net_link_make(sk, ne, i, p, host, nsfd);
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

/*
 * The carrier change of link @l that linkwatch has not passed on yet passed
 * on now: a single RTM_GETLINK runs it under the RTNL (linkwatch_sync_dev()
 * in rtnl_getlink(), Linux 6.8), or waits for the linkwatch work running it.
 */
int net_link_sync(int sk, int ifindex, const char *name)
{
	uint8_t buf[NL_REQ_SIZE];
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };
	int err = rtnl_talk(sk, nl_req_init(buf, RTM_GETLINK, 0, &ifi, sizeof(ifi)));

	if (err)
		pr_errno(err, "cannot read link %s back", name);
	return err;
}

int net_links_sync(int sk, const NetnsEntry *ne)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < ne->n_links; i++)
		err = net_link_sync(sk, (int)ne->links[i]->ifindex, ne->links[i]->name);
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
	/*
	 * A veth's ends get their carrier when the second one goes up, and the
	 * kernel passes it on later, from linkwatch's work: a link "becoming
	 * ready" then has its ipv6/conf/LINK/mtu set back to its MTU, after the
	 * caller wrote the saved one again unless it happens here first.
	 */
	return err ? err : net_links_sync(sk, ne);
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

/*
 * A bridge whose MAC no one set has the lowest of its ports' (the kernel's
 * br_stp_recalculate_bridge_id()), and takes its own back when that port
 * goes. A veth's outside end gets a random MAC from the kernel: lower than
 * the bridge's, it would be the host's MAC on that bridge for as long as the
 * veth is there (made ahead of a migration that then fails, a restore that
 * fails, a tree that leaves again), and a neighbour that learned it in
 * between could not reach the host until its entry failed (some 10 s on
 * Linux: a migration to that host times out). So such an outside end gets
 * its MAC with the first byte 0xfe, the highest locally administered unicast
 * one, as libvirt and Xen give the host's end of a guest's device.
 */
static int outside_mac_above(int fd, const char *out, const char *bridge)
{
	struct ifreq o = { 0 }, b = { 0 };

	snprintf(o.ifr_name, sizeof(o.ifr_name), "%s", out);
	snprintf(b.ifr_name, sizeof(b.ifr_name), "%s", bridge);
	if (ioctl(fd, SIOCGIFHWADDR, &o) || ioctl(fd, SIOCGIFHWADDR, &b))
		return neg_errno();
	if (b.ifr_hwaddr.sa_family != ARPHRD_ETHER ||
	    memcmp(o.ifr_hwaddr.sa_data, b.ifr_hwaddr.sa_data, ETH_ALEN) >= 0)
		return 0;
	o.ifr_hwaddr.sa_data[0] = (char)0xfe;
	if (memcmp(o.ifr_hwaddr.sa_data, b.ifr_hwaddr.sa_data, ETH_ALEN) < 0)
		pr_warn("bridge %s takes the MAC of %s while it is on it: its own is higher even "
			"with fe first\n",
			bridge, out);
	if (ioctl(fd, SIOCSIFHWADDR, &o))
		return neg_errno();
	pr_debug("%s: its MAC above bridge %s's, which it would have become\n", out, bridge);
	return 0;
}

int net_links_outside(const NetnsEntry *ne, const struct net_link_plan *p)
{
	char what[96];
	size_t i;
	int sk, err = 0;
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return neg_errno();
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
		err = master ? outside_mac_above(fd, p->outside[i], p->bridge[i]) : 0;
		if (err) {
			pr_errno(err, "cannot give %s a MAC above its bridge's", what);
			break;
		}
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
