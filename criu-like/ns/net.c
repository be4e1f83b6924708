// SPDX-License-Identifier: GPL-2.0
/*
 * Network namespaces (Documentation/namespaces.md, "Network namespaces").
 *
 * Dump: the dumper's thread enters the tree's network namespace (setns is
 * per thread) and reads it through rtnetlink and /proc/sys/net: the links
 * (lo, dummy, veth; any other kind is refused by name), every address,
 * route and policy rule as the kernel's own messages, and the net sysctls
 * that matter. A veth's peer is looked for in criu-like's namespace: its
 * name, MTU, flags and the bridge it is on are recorded. Its netfilter
 * rules and conntrack table are dumped by netfilter.c and conntrack.c.
 *
 * Restore: the controller creates the namespace before the root exists
 * (unshare, kept by fd) and configures it from inside: links with their
 * ifindex, MTU, MAC, sysctls, flags, then addresses, routes and rules. A
 * veth's outside end (named by --external veth[IN]:OUT or --veth-pair) is
 * created in criu-like's namespace and put on its bridge. Then its netfilter
 * rules and conntrack entries, behind the lock. The controller
 * enters the namespace to open the tree's files (its sockets are created
 * there) and forks the root inside, which inherits it (no CLONE_NEWNET).
 *
 * The namespace is also the one where the sockets' sock_diag and the
 * network lock run: ns_net_enter_tree().
 */
#define LOG_PREFIX "ns: net: "

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/fib_rules.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <linux/veth.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/sockios.h>
#include <unistd.h>

#include "../net/net-lock-int.h"
#include "image.h"
#include "kind.h"
#include "log.h"
#include "net-lock.h"
#include "nfq-hold.h"
#include "net-nl.h"
#include "netfilter.h"
#include "options.h"
#include "util.h"

#include "netns.pb-c.h"

/* ---- the tree's namespace, for sock_diag and the network lock ------------------------------ */

static int tree_netns = -1;
static int ns_lock_kind = -1; /* the kind of lock installed in the tree's namespace, or -1 */

/*
 * The outside ends of the tree's veths, as the dump found them in criu-like's
 * namespace: once the tree is killed they go with its namespace, which the
 * kernel destroys in the background (ns_net_dump_done()).
 */
static struct {
	int ifindex;
	char name[IFNAMSIZ];
} dump_peers[16];
static size_t n_dump_peers;

static void tree_netns_set(int fd)
{
	if (tree_netns >= 0)
		close(tree_netns);
	tree_netns = fd;
}

int ns_net_tree_fd(void)
{
	return tree_netns;
}

/* The accept_dad sysctls to write back once the tree runs (ns_net_unlock_here()). */
static struct {
	char *path, *value;
} dad_later[64];
static size_t n_dad;

static void dad_later_free(void);

void ns_net_reset(void)
{
	n_dump_peers = 0;
	tree_netns_set(-1);
	ns_lock_kind = -1;
	dad_later_free();
}

/*
 * This thread's network namespace, without /proc: the restore's controller
 * may be in the container's mount namespace then, whose /proc (if mounted
 * yet) is another pid namespace's, without this thread.
 */
static int current_netns(void)
{
	int sk = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), fd;

	if (sk < 0)
		return -1;
	fd = ioctl(sk, SIOCGSKNS); /* 4.9; O_CLOEXEC */
	close(sk);
	return fd >= 0 ? fd : open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
}

static bool same_ns(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int ns_net_enter_tree(int *saved)
{
	*saved = -1;
	if (tree_netns < 0)
		return 0;
	*saved = current_netns();
	/* already there (the restore's controller opening the tree's sockets) */
	if (*saved >= 0 && same_ns(*saved, tree_netns)) {
		close(*saved);
		*saved = -1;
		return 0;
	}
	if (*saved < 0 || setns(tree_netns, CLONE_NEWNET)) {
		pr_perror("cannot enter the tree's network namespace");
		if (*saved >= 0)
			close(*saved);
		*saved = -1;
		return -EIO;
	}
	return 0;
}

void ns_net_leave_tree(int saved)
{
	if (saved < 0)
		return;
	if (setns(saved, CLONE_NEWNET)) {
		pr_perror("cannot go back to criu-like's network namespace");
		abort(); /* criu-like in the wrong namespace would do harm: stop here */
	}
	close(saved);
}

/* ---- the lock of the whole namespace ------------------------------------------------------------ */

/*
 * From the freeze (dump) or its creation (restore) until the tree runs,
 * nothing goes in or out of the tree's namespace but over lo (whose
 * connections have both ends in the tree and are locked one by one): a
 * client outside sees silence, never a reset from a listening socket that
 * exists before its connection is back. The table lives in the namespace.
 */
static const char ns_lock_nft[] =
	"table inet criu_like_netns {\n"
	"	chain input { type filter hook input priority -160; policy accept; "
	"iifname != \"lo\" drop; }\n"
	"	chain output { type filter hook output priority -160; policy accept; "
	"oifname != \"lo\" drop; }\n"
	"}\n";
/* the comment tells netfilter.c they are not the container's own */
#define NS_LOCK_IPT_RULES(op)                                                             \
	"*filter\n" op " INPUT ! -i lo -m comment --comment criu-like-netns -j DROP\n" op \
	" OUTPUT ! -o lo -m comment --comment criu-like-netns -j DROP\nCOMMIT\n"
static const char ns_lock_ipt[] = NS_LOCK_IPT_RULES("-I");
static const char ns_unlock_ipt[] = NS_LOCK_IPT_RULES("-D");

static bool ns_lock_skipped; /* a pre-dump: ns_net_lock_skip() */

void ns_net_lock_skip(bool skip)
{
	ns_lock_skipped = skip;
}

/* In the tree's namespace (this thread): lock it as --network-lock says. */
static int ns_lock(void)
{
	const struct cr_options *o = ns_options();
	enum netlock_kind kind;
	struct nfq_hold *h;
	int err;

	if (ns_lock_skipped)
		return 0;
	if (netlock_parse_kind(o ? o->network_lock : NULL, &kind) || kind == NETLOCK_SKIP)
		return 0;
	/* held rather than only dropped: the namespace's holder, ahead of the lock */
	h = nfq_hold_here(NULL, true);
	if (h)
		nfq_hold_add_netns(h);
	if (kind == NETLOCK_NFTABLES)
		err = nft_exec(NULL, ns_lock_nft, NULL, false);
	else
		err = ipt_restore(AF_INET, ns_lock_ipt, false)
			      ?: ipt_restore(AF_INET6, ns_lock_ipt, false);
	if (err) {
		pr_errno(err, "cannot lock the tree's network namespace (--network-lock %s)",
			 netlock_kind_name(kind));
		return err;
	}
	ns_lock_kind = (int)kind;
	pr_info("the tree's network namespace is locked (%s): only lo carries packets\n",
		netlock_kind_name(kind));
	return 0;
}

static int write_sysctl(const NetSysctlEntry *s);

void ns_net_open_here(void)
{
	int err;

	/* emptied, not deleted: deleting a base chain would drop what the holder holds */
	if (ns_lock_kind == NETLOCK_NFTABLES)
		err = nft_exec(NULL,
			       "flush chain inet criu_like_netns input\n"
			       "flush chain inet criu_like_netns output\n",
			       NULL, false);
	else if (ns_lock_kind == NETLOCK_IPTABLES)
		err = ipt_restore(AF_INET, ns_unlock_ipt, false)
			      ?: ipt_restore(AF_INET6, ns_unlock_ipt, false);
	else
		return;
	if (err)
		pr_warn("cannot open the tree's network namespace before the held packets go: "
			"they are dropped\n");
	else if (ns_lock_kind == NETLOCK_IPTABLES)
		ns_lock_kind = -1; /* the rules are gone: nothing is left to unlock */
}

void ns_net_unlock_here(void)
{
	size_t i;
	int err;

	for (i = 0; i < n_dad; i++) {
		NetSysctlEntry e = NET_SYSCTL_ENTRY__INIT;

		e.path = dad_later[i].path;
		e.value = dad_later[i].value;
		if (e.path && e.value)
			write_sysctl(&e);
	}
	dad_later_free();
	if (ns_lock_kind < 0)
		return;
	if (ns_lock_kind == NETLOCK_NFTABLES)
		err = nft_exec(NULL, "delete table inet criu_like_netns\n", NULL, false);
	else
		err = ipt_restore(AF_INET, ns_unlock_ipt, false)
			      ?: ipt_restore(AF_INET6, ns_unlock_ipt, false);
	if (!err)
		pr_info("the tree's network namespace is unlocked\n");
	ns_lock_kind = -1;
}

/* ---- what is read from a namespace ------------------------------------------------------- */

/* The flags given back at restore (ifi_change): the others are the kernel's to set. */
#define LINK_FLAGS (IFF_UP | IFF_NOARP | IFF_PROMISC | IFF_ALLMULTI | IFF_MULTICAST | IFF_DEBUG)

/* Under /proc/sys/net/: for the namespace, then for "all", "default" and each link. */
static const char *const sysctls_global[] = {
	"ipv4/ip_forward",
	"ipv4/ip_local_port_range",
	"ipv4/ip_local_reserved_ports",
	"ipv4/ping_group_range",
	"ipv4/ip_unprivileged_port_start",
	"ipv4/ip_nonlocal_bind",
	"ipv4/ip_default_ttl",
	"ipv4/ip_no_pmtu_disc",
	"ipv4/tcp_syncookies",
	"ipv4/tcp_keepalive_time",
	"ipv4/tcp_keepalive_intvl",
	"ipv4/tcp_keepalive_probes",
	"ipv4/tcp_fin_timeout",
	"ipv4/icmp_echo_ignore_all",
	"ipv6/ip_nonlocal_bind",
	"core/somaxconn",
};
static const char *const sysctls_conf4[] = {
	"forwarding",	       "rp_filter",    "accept_redirects", "send_redirects",
	"accept_source_route", "proxy_arp",    "arp_ignore",	   "arp_announce",
	"arp_filter",	       "log_martians", "route_localnet",
};
static const char *const sysctls_conf6[] = {
	"disable_ipv6", "forwarding", "accept_ra", "accept_redirects",
	"autoconf",	"accept_dad", "hop_limit", "use_tempaddr",
};

struct net_read {
	struct nl_buf links, addrs, routes, rules;
	NetSysctlEntry *sysctls;
	NetSysctlEntry **sysctlp;
	size_t n_sysctls, sysctls_size;
};

static void net_read_fini(struct net_read *r)
{
	size_t i;

	nl_buf_fini(&r->links);
	nl_buf_fini(&r->addrs);
	nl_buf_fini(&r->routes);
	nl_buf_fini(&r->rules);
	for (i = 0; i < r->n_sysctls; i++) {
		free(r->sysctls[i].path);
		free(r->sysctls[i].value);
	}
	free(r->sysctls);
	free(r->sysctlp);
}

static int read_sysctl(struct net_read *r, const char *path)
{
	char full[256], value[1024];
	NetSysctlEntry *e;
	ssize_t len;
	int fd;

	snprintf(full, sizeof(full), "/proc/sys/net/%s", path);
	fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == EACCES ? 0 : neg_errno();
	len = read(fd, value, sizeof(value) - 1);
	close(fd);
	if (len < 0)
		return errno == EIO || errno == EPERM ? 0 : neg_errno();
	while (len > 0 && value[len - 1] == '\n')
		len--;
	value[len] = 0;
	if (r->n_sysctls == r->sysctls_size) {
		size_t n = r->sysctls_size * 2 + 32;
		NetSysctlEntry *s = realloc(r->sysctls, n * sizeof(*s));

		if (!s)
			return -ENOMEM;
		r->sysctls = s;
		r->sysctls_size = n;
	}
	e = &r->sysctls[r->n_sysctls];
	net_sysctl_entry__init(e);
	e->path = strdup(path);
	e->value = strdup(value);
	if (!e->path || !e->value) {
		free(e->path);
		free(e->value);
		return -ENOMEM;
	}
	r->n_sysctls++;
	return 0;
}

static int read_conf(struct net_read *r, const char *dev)
{
	char path[128];
	size_t i;
	int err = 0;

	for (i = 0; !err && i < ARRAY_SIZE(sysctls_conf4); i++) {
		snprintf(path, sizeof(path), "ipv4/conf/%s/%s", dev, sysctls_conf4[i]);
		err = read_sysctl(r, path);
	}
	for (i = 0; !err && i < ARRAY_SIZE(sysctls_conf6); i++) {
		snprintf(path, sizeof(path), "ipv6/conf/%s/%s", dev, sysctls_conf6[i]);
		err = read_sysctl(r, path);
	}
	return err;
}

/* The name and kind of a link message, NULL kind for none (lo, a fallback tunnel...). */
static void link_info(const struct nlmsghdr *n, struct rtattr **tb, const char **name,
		      const char **kind)
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

static uint32_t attr_u32(const struct rtattr *a, uint32_t def)
{
	return a && RTA_PAYLOAD(a) >= sizeof(uint32_t) ? *(const uint32_t *)RTA_DATA(a) : def;
}

/* In the tree's namespace (this thread): everything that is read there. */
static int read_inside(pid_t pid, struct net_read *r)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	const struct nlmsghdr *n;
	size_t i, off;
	int sk, err = 0;

	sk = rtnl_open();
	if (sk < 0)
		return sk;
	err = rtnl_dump(sk, RTM_GETLINK, AF_UNSPEC, &r->links);
	for (i = 0; !err && i < ARRAY_SIZE(fams); i++) {
		err = rtnl_dump(sk, RTM_GETADDR, fams[i], &r->addrs);
		if (!err)
			err = rtnl_dump(sk, RTM_GETROUTE, fams[i], &r->routes);
		if (!err)
			err = rtnl_dump(sk, RTM_GETRULE, fams[i], &r->rules);
	}
	close(sk);
	if (err) {
		pr_errno(err, "pid %d: cannot read its network namespace through rtnetlink", pid);
		return err;
	}
	for (i = 0; !err && i < ARRAY_SIZE(sysctls_global); i++)
		err = read_sysctl(r, sysctls_global[i]);
	if (!err)
		err = read_conf(r, "all");
	if (!err)
		err = read_conf(r, "default");
	for (off = 0; !err && off < r->links.len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		struct rtattr *tb[IFLA_MAX + 1];
		const char *name, *kind;

		n = (const struct nlmsghdr *)(r->links.data + off);
		link_info(n, tb, &name, &kind);
		if (strchr(name, '/') || !strcmp(name, "all") || !strcmp(name, "default"))
			continue;
		err = read_conf(r, name);
	}
	if (err) {
		pr_errno(err, "pid %d: cannot read the sysctls of its network namespace", pid);
		return err;
	}
	return 0;
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

/* One link of the namespace into @e: 0, or -EOPNOTSUPP naming it. */
static int link_fill(pid_t pid, const struct nlmsghdr *n, const struct nl_buf *host,
		     NetLinkEntry *e, bool *skip)
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

/* Routes that need objects not dumped (nexthop objects) are refused; cached ones dropped. */
static int check_routes(pid_t pid, const struct nl_buf *routes)
{
	const struct nlmsghdr *n;
	size_t off;

	for (off = 0; off < routes->len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		struct rtattr *tb[RTA_MAX + 1];

		n = (const struct nlmsghdr *)(routes->data + off);
		nl_parse(n, sizeof(struct rtmsg), tb, RTA_MAX);
		if (tb[RTA_NH_ID]) {
			pr_err("pid %d: a route of its network namespace uses nexthop object %u: "
			       "nexthop objects are not dumped yet\n",
			       pid, attr_u32(tb[RTA_NH_ID], 0));
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

static int net_dump(pid_t pid, int dirfd, uint32_t id)
{
	NetnsEntry e = NETNS_ENTRY__INIT;
	struct net_read r = { 0 };
	struct nl_buf host = { 0 };
	NetLinkEntry *links = NULL, **linkp = NULL;
	char path[64];
	size_t off, i;
	int fd, saved, hsk, err;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("cannot open %s", path);
		return neg_errno();
	}
	tree_netns_set(fd);
	hsk = rtnl_open();
	if (hsk < 0)
		return hsk;
	err = rtnl_dump(hsk, RTM_GETLINK, AF_UNSPEC, &host);
	close(hsk);
	if (!err)
		err = ns_net_enter_tree(&saved);
	if (!err) {
		err = read_inside(pid, &r);
		ns_net_leave_tree(saved);
	}
	if (!err)
		err = check_routes(pid, &r.routes);
	if (err)
		goto out;
	for (off = 0; off < r.links.len;
	     off += NLMSG_ALIGN(((struct nlmsghdr *)(r.links.data + off))->nlmsg_len))
		e.n_links++;
	links = calloc(e.n_links + 1, sizeof(*links));
	linkp = calloc(e.n_links + 1, sizeof(*linkp));
	r.sysctlp = calloc(r.n_sysctls + 1, sizeof(*r.sysctlp));
	if (!links || !linkp || !r.sysctlp) {
		err = -ENOMEM;
		goto out;
	}
	e.n_links = 0;
	for (off = 0; !err && off < r.links.len;) {
		const struct nlmsghdr *n = (const struct nlmsghdr *)(r.links.data + off);
		bool skip;

		err = link_fill(pid, n, &host, &links[e.n_links], &skip);
		if (!err && !skip) {
			linkp[e.n_links] = &links[e.n_links];
			e.n_links++;
		}
		off += NLMSG_ALIGN(n->nlmsg_len);
	}
	if (err)
		goto out;
	e.links = linkp;
	for (i = 0; i < r.n_sysctls; i++)
		r.sysctlp[i] = &r.sysctls[i];
	e.sysctls = r.sysctlp;
	e.n_sysctls = r.n_sysctls;
	e.addrs.data = r.addrs.data;
	e.addrs.len = r.addrs.len;
	e.routes.data = r.routes.data;
	e.routes.len = r.routes.len;
	e.rules.data = r.rules.data;
	e.rules.len = r.rules.len;
	pr_info("pid %d: %zu links, %zu sysctls, %zu bytes of addresses, %zu of routes, %zu of "
		"rules\n",
		pid, e.n_links, e.n_sysctls, r.addrs.len, r.routes.len, r.rules.len);
	err = img_write_one(dirfd, CR_IMG_NETNS, id, &e.base);
	if (!err)
		err = ns_net_enter_tree(&saved);
	if (!err) {
		/*
		 * The rules before the lock (not in them); then from now on nothing
		 * reaches it; the conntrack table after it: no packet from outside
		 * confirms a new entry any more. A pre-dump (the lock skipped) needs
		 * neither: only the final dump's images are restored.
		 */
		err = ns_lock_skipped ? 0 : nf_rules_dump(pid, dirfd, id);
		if (!err)
			err = ns_lock();
		if (!err && !ns_lock_skipped)
			err = ct_dump(pid, dirfd, id);
		ns_net_leave_tree(saved);
	}
out:
	free(links);
	free(linkp);
	nl_buf_fini(&host);
	net_read_fini(&r);
	return err;
}

#define PEERS_GONE_WAIT_MS 5000

/*
 * The end of a dump. The namespace is let go; when the tree was killed, wait
 * until the kernel has destroyed it, which it does in the background once the
 * last reference goes: until then the outside ends of its veths still exist
 * in criu-like's namespace, and a restore right after the dump (a migration,
 * `dump; restore`) would find their names taken.
 */
void ns_net_dump_done(bool killed)
{
	char name[IF_NAMESIZE];
	unsigned int waited = 0;
	size_t i = 0;

	tree_netns_set(-1);
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

/*
 * An external namespace (--external net[INO]:KEY): its caller's, not dumped.
 * The tree's sockets are still read there, and it is locked like one of the
 * tree's own: nothing in or out but over lo until the tree runs again.
 */
static int net_dump_external(pid_t pid)
{
	char path[64];
	int fd, saved, err;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("cannot open %s", path);
		return neg_errno();
	}
	tree_netns_set(fd);
	err = ns_net_enter_tree(&saved);
	if (!err) {
		err = ns_lock();
		ns_net_leave_tree(saved);
	}
	return err;
}

/* ---- restore ---------------------------------------------------------------------------------- */

struct net_restore {
	NetnsEntry *ne; /* NULL: an empty namespace (--empty-ns net) */
	int nsfd; /* the new namespace */
	int host; /* criu-like's, while the controller is in the new one */
	const char **outside; /* per link: the name of a veth's outside end */
	const char **bridge; /* per link: the bridge to put it on, or NULL */
	NfRulesEntry *nf; /* its netfilter rules, NULL: none */
	ConntrackTable *ct; /* its conntrack entries, NULL: none */
};

static void net_fini(void *priv);

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

static int check_image(struct net_restore *nr, uint32_t id)
{
	const NetnsEntry *ne = nr->ne;
	size_t i;

	nr->outside = calloc(ne->n_links + 1, sizeof(*nr->outside));
	nr->bridge = calloc(ne->n_links + 1, sizeof(*nr->bridge));
	if (!nr->outside || !nr->bridge)
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
		err = outside_name(l->name, &nr->outside[i], &nr->bridge[i]);
		if (err == -EINVAL ||
		    (!err && (!*nr->outside[i] || strlen(nr->outside[i]) >= IFNAMSIZ))) {
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
		if (!nr->bridge[i] && l->peer_master)
			nr->bridge[i] = l->peer_master;
	}
	for (i = 0; i < ne->n_sysctls; i++)
		if (strstr(ne->sysctls[i]->path, "..") || ne->sysctls[i]->path[0] == '/') {
			pr_err("netns-%u.img: sysctl %s refused: a path going up\n", id,
			       ne->sysctls[i]->path);
			return -EINVAL;
		}
	return 0;
}

static int link_set(int sk, int ifindex, unsigned int flags, unsigned int change,
		    const NetLinkEntry *l, uint32_t master, const char *what)
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

static int write_sysctl(const NetSysctlEntry *s)
{
	char path[256];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/sys/net/%s", s->path);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		pr_warn("sysctl net/%s does not exist here: not set\n", s->path);
		return 0;
	}
	if (fd < 0 || write(fd, s->value, strlen(s->value)) < 0)
		err = neg_errno();
	if (fd >= 0)
		close(fd);
	if (err)
		pr_errno(err, "cannot set sysctl net/%s to \"%s\"", s->path, s->value);
	return err;
}

static void describe(const struct nlmsghdr *n, char *buf, size_t size)
{
	struct rtattr *tb[RTA_MAX + 1];
	char a[INET6_ADDRSTRLEN] = "default";
	int fam, type = IFA_ADDRESS, len = 0;

	if (n->nlmsg_type == RTM_NEWADDR) {
		const struct ifaddrmsg *ifa = NLMSG_DATA(n);

		nl_parse(n, sizeof(*ifa), tb, IFA_MAX);
		fam = ifa->ifa_family;
		len = ifa->ifa_prefixlen;
		if (!tb[IFA_ADDRESS])
			type = IFA_LOCAL;
	} else if (n->nlmsg_type == RTM_NEWROUTE) {
		const struct rtmsg *rt = NLMSG_DATA(n);

		nl_parse(n, sizeof(*rt), tb, RTA_MAX);
		fam = rt->rtm_family;
		len = rt->rtm_dst_len;
		type = RTA_DST;
	} else {
		const struct fib_rule_hdr *fr = NLMSG_DATA(n);

		nl_parse(n, sizeof(*fr), tb, FRA_MAX);
		fam = fr->family;
		len = fr->src_len;
		type = FRA_SRC;
		snprintf(a, sizeof(a), "all");
	}
	if (tb[type])
		inet_ntop(fam, RTA_DATA(tb[type]), a, sizeof(a));
	snprintf(buf, size, "%s %s/%d",
		 n->nlmsg_type == RTM_NEWADDR	 ? "address"
		 : n->nlmsg_type == RTM_NEWROUTE ? "route to"
						 : "rule from",
		 a, len);
}

/* Each message of @b again, as a new object; the ones the kernel made already are skipped. */
static int replay(int sk, const ProtobufCBinaryData *b, const char *img)
{
	uint8_t buf[NL_REQ_SIZE];
	size_t off = 0;

	while (off + sizeof(struct nlmsghdr) <= b->len) {
		const struct nlmsghdr *src = (const struct nlmsghdr *)(b->data + off);
		struct nlmsghdr *n = (struct nlmsghdr *)buf;
		char what[96];
		int err;

		if (src->nlmsg_len < NLMSG_HDRLEN || src->nlmsg_len > NL_REQ_SIZE ||
		    off + src->nlmsg_len > b->len ||
		    (src->nlmsg_type != RTM_NEWADDR && src->nlmsg_type != RTM_NEWROUTE &&
		     src->nlmsg_type != RTM_NEWRULE)) {
			pr_err("%s: offset %zu: not an rtnetlink message of an address, a route "
			       "or a rule\n",
			       img, off);
			return -EINVAL;
		}
		off += NLMSG_ALIGN(src->nlmsg_len);
		memcpy(buf, src, src->nlmsg_len);
		n->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
		if (n->nlmsg_type == RTM_NEWROUTE) {
			const struct rtmsg *rt = NLMSG_DATA(n);

			/* made by the kernel with the addresses and links */
			if (rt->rtm_protocol == RTPROT_KERNEL || (rt->rtm_flags & RTM_F_CLONED))
				continue;
		}
		err = rtnl_talk(sk, n);
		if (err == -EEXIST)
			continue;
		if (err) {
			describe(n, what, sizeof(what));
			pr_errno(err, "cannot restore %s", what);
			return err;
		}
	}
	return 0;
}

/* The rules a new namespace starts with go: the saved ones replace them, in order. */
static int rules_flush(int sk)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	struct nl_buf b = { 0 };
	size_t i, off;
	int err = 0;

	for (i = 0; !err && i < ARRAY_SIZE(fams); i++)
		err = rtnl_dump(sk, RTM_GETRULE, fams[i], &b);
	for (off = 0; !err && off < b.len;) {
		struct nlmsghdr *n = (struct nlmsghdr *)(b.data + off);

		off += NLMSG_ALIGN(n->nlmsg_len);
		n->nlmsg_type = RTM_DELRULE;
		n->nlmsg_flags = 0;
		err = rtnl_talk(sk, n);
	}
	nl_buf_fini(&b);
	if (err)
		pr_errno(err, "cannot remove the default policy rules of the new namespace");
	return err;
}

static void dad_later_free(void)
{
	size_t i;

	for (i = 0; i < n_dad; i++) {
		free(dad_later[i].path);
		free(dad_later[i].value);
	}
	n_dad = 0;
}

static int set_accept_dad(const char *link, const char *value)
{
	NetSysctlEntry e = NET_SYSCTL_ENTRY__INIT;
	char path[96];

	snprintf(path, sizeof(path), "ipv6/conf/%s/accept_dad", link);
	e.path = path;
	e.value = (char *)value;
	return write_sysctl(&e);
}

/* In the new namespace: everything of the image, in an order the kernel accepts. */
static int configure(struct net_restore *nr, int sk, uint32_t id)
{
	const NetnsEntry *ne = nr->ne;
	char img[32], what[64];
	size_t i;
	int err = 0;

	snprintf(img, sizeof(img), "netns-%u.img", id);
	for (i = 0; !err && i < ne->n_links; i++) {
		const NetLinkEntry *l = ne->links[i];

		if (l->kind == NET_LINK_KIND__NET_LINK_LOOPBACK) {
			snprintf(what, sizeof(what), "the MTU of %s", l->name);
			err = link_set(sk, (int)l->ifindex, 0, 0, l, 0, what);
		} else {
			err = link_create(sk, l, nr->outside[i], nr->host);
		}
	}
	for (i = 0; !err && i < ne->n_sysctls; i++)
		err = write_sysctl(ne->sysctls[i]);
	for (i = 0; !err && i < ne->n_links; i++) {
		const NetLinkEntry *l = ne->links[i];

		snprintf(what, sizeof(what), "the flags of %s", l->name);
		err = link_set(sk, (int)l->ifindex, l->flags & LINK_FLAGS, LINK_FLAGS, NULL, 0,
			       what);
	}
	/*
	 * The addresses were the container's already: no duplicate address
	 * detection, which would leave IPv6 ones tentative (no bind) for a while.
	 */
	for (i = 0; !err && i < ne->n_links; i++)
		err = set_accept_dad(ne->links[i]->name, "0");
	if (!err)
		err = replay(sk, &ne->addrs, img);
	/* their saved values once the tree runs: a carrier coming up restarts DAD */
	for (i = 0; !err && i < ne->n_sysctls; i++)
		if (strstr(ne->sysctls[i]->path, "/accept_dad") && n_dad < ARRAY_SIZE(dad_later)) {
			dad_later[n_dad].path = strdup(ne->sysctls[i]->path);
			dad_later[n_dad].value = strdup(ne->sysctls[i]->value);
			if (!dad_later[n_dad].path || !dad_later[n_dad].value)
				err = -ENOMEM;
			n_dad++;
		}
	if (!err)
		err = replay(sk, &ne->routes, img);
	if (!err)
		err = rules_flush(sk);
	if (!err)
		err = replay(sk, &ne->rules, img);
	return err;
}

/* In criu-like's namespace: the outside ends of the veths, on their bridges, up. */
static int configure_outside(struct net_restore *nr)
{
	const NetnsEntry *ne = nr->ne;
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
		idx = if_nametoindex(nr->outside[i]);
		if (nr->bridge[i]) {
			master = if_nametoindex(nr->bridge[i]);
			if (!master) {
				pr_err("veth %s: the bridge %s its outside end %s was on is not "
				       "here\n",
				       l->name, nr->bridge[i], nr->outside[i]);
				err = -ENOENT;
				break;
			}
		}
		if (!idx) {
			err = -ENOENT;
			break;
		}
		snprintf(what, sizeof(what), "the outside end %s of veth %s%s%s", nr->outside[i],
			 l->name, master ? " on bridge " : "", master ? nr->bridge[i] : "");
		err = link_set(sk, (int)idx,
			       l->has_peer_flags ? l->peer_flags & LINK_FLAGS : IFF_UP, LINK_FLAGS,
			       NULL, master, what);
		if (!err)
			pr_info("veth %s: outside end %s%s%s\n", l->name, nr->outside[i],
				master ? " on " : "", master ? nr->bridge[i] : "");
	}
	close(sk);
	return err;
}

/* A new network namespace held by nr->nsfd, made and configured from inside. */
static int make_ns(struct net_restore *nr, uint32_t id)
{
	int sk, err = 0;

	nr->host = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (nr->host < 0) {
		pr_perror("cannot open criu-like's network namespace");
		return neg_errno();
	}
	/* owned by the tree's user namespace when it has one */
	err = ns_user_unshare(CLONE_NEWNET);
	if (err) {
		pr_errno(err, "cannot create a network namespace");
		return err;
	}
	nr->nsfd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (nr->nsfd < 0)
		err = neg_errno();
	sk = err ? err : rtnl_open();
	if (sk < 0)
		err = sk;
	/* before any link is up or any socket of the tree exists */
	if (!err)
		err = ns_lock();
	if (!err && nr->ne) {
		err = configure(nr, sk, id);
		/* behind the lock, which stays until the tree runs: the rules, then the
		 * entries (the rules' ct expressions turn conntrack on in the namespace) */
		if (!err)
			err = nf_rules_restore(nr->nf);
		if (!err)
			err = ct_restore(nr->ct);
	} else if (!err) {
		/* --empty-ns net: lo up, the rest is the setup-namespaces hook's */
		err = link_set(sk, 1, IFF_UP, IFF_UP, NULL, 0, "lo up");
	}
	if (sk >= 0)
		close(sk);
	if (setns(nr->host, CLONE_NEWNET)) {
		pr_perror("cannot go back to criu-like's network namespace");
		abort();
	}
	if (!err && nr->ne)
		err = configure_outside(nr);
	if (err)
		pr_errno(err, "cannot restore the tree's network namespace");
	return err;
}

static int net_load(int dirfd, uint32_t id, void **priv)
{
	struct net_restore *nr = calloc(1, sizeof(*nr));
	const struct cr_options *o = ns_options();
	int err;

	if (!nr)
		return -ENOMEM;
	nr->nsfd = nr->host = -1;
	if (o && o->empty_ns_net) {
		pr_info("--empty-ns net: the tree gets a new network namespace with lo only\n");
		id = 0;
	} else {
		err = img_read_one(dirfd, CR_IMG_NETNS, id, (ProtobufCMessage **)&nr->ne);
		if (!err)
			err = check_image(nr, id);
		if (!err)
			err = nf_rules_load(dirfd, id, &nr->nf);
		if (!err)
			err = ct_load(dirfd, id, &nr->ct);
		if (err) {
			net_fini(nr);
			return err;
		}
	}
	err = make_ns(nr, id);
	if (err) {
		net_fini(nr);
		return err;
	}
	tree_netns_set(fcntl(nr->nsfd, F_DUPFD_CLOEXEC, 0));
	*priv = nr;
	return 0;
}

/*
 * The tree joins the network namespace of @fd (its caller's: an external one,
 * or --join-ns net:), configured by its owner: only locked until the tree runs.
 */
static int net_join(int fd, void **priv)
{
	struct net_restore *nr = calloc(1, sizeof(*nr));
	int err = 0;

	if (!nr)
		return -ENOMEM;
	nr->host = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	nr->nsfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nr->host < 0 || nr->nsfd < 0) {
		err = neg_errno();
		pr_perror("cannot join the network namespace of fd %d", fd);
		net_fini(nr);
		return err;
	}
	if (setns(nr->nsfd, CLONE_NEWNET)) {
		err = neg_errno();
		pr_perror("fd %d is not a network namespace criu-like can join", fd);
		close(nr->nsfd);
		nr->nsfd = -1;
		net_fini(nr);
		return err;
	}
	/* before any socket of the tree exists there */
	err = ns_lock();
	if (setns(nr->host, CLONE_NEWNET)) {
		pr_perror("cannot go back to criu-like's network namespace");
		abort();
	}
	if (err) {
		net_fini(nr);
		return err;
	}
	tree_netns_set(fcntl(nr->nsfd, F_DUPFD_CLOEXEC, 0));
	*priv = nr;
	return 0;
}

int ns_net_load_empty(void **priv)
{
	return net_load(-1, 0, priv);
}

static int net_enter(void *priv)
{
	struct net_restore *nr = priv;

	if (setns(nr->nsfd, CLONE_NEWNET)) {
		pr_perror("cannot enter the tree's network namespace");
		return neg_errno();
	}
	return 0;
}

static void net_leave(void *priv)
{
	struct net_restore *nr = priv;

	if (nr->host >= 0 && setns(nr->host, CLONE_NEWNET)) {
		pr_perror("cannot go back to criu-like's network namespace");
		abort();
	}
}

static void net_fini(void *priv)
{
	struct net_restore *nr = priv;

	if (!nr)
		return;
	if (nr->nsfd >= 0)
		net_leave(nr);
	if (nr->nsfd >= 0)
		close(nr->nsfd);
	if (nr->host >= 0)
		close(nr->host);
	if (nr->ne)
		protobuf_c_message_free_unpacked(&nr->ne->base, NULL);
	if (nr->nf)
		protobuf_c_message_free_unpacked(&nr->nf->base, NULL);
	if (nr->ct)
		protobuf_c_message_free_unpacked(&nr->ct->base, NULL);
	free(nr->outside);
	free(nr->bridge);
	free(nr);
}

const struct ns_type net_ns_type = {
	.kind = NS_NET,
	.clone_flag = 0, /* the root is forked inside the namespace made by load() */
	.dump = net_dump,
	.load = net_load,
	.enter = net_enter,
	.leave = net_leave,
	.fini = net_fini,
	.dump_external = net_dump_external,
	.join = net_join,
};
