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
 * created in criu-like's namespace and put on its bridge (up, which resets
 * its inside end's ipv6 MTU: written again from inside). Then its netfilter
 * rules and conntrack entries, behind the lock. The controller
 * enters the namespace to open the tree's files (its sockets are created
 * there) and forks the root inside, which inherits it (no CLONE_NEWNET).
 *
 * The namespace is also the one where the sockets' sock_diag and the
 * network lock run: ns_net_enter_tree(). The links, kind by kind, are
 * net-link.c's.
 */
#define LOG_PREFIX "ns: net: "

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/fib_rules.h>
#include <linux/if_link.h>
#include <linux/netfilter.h>
#include <linux/sockios.h>
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
#include "notify.h"
#include "net-link.h"
#include "net-local.h"
#include "net-neigh.h"
#include "net-nl.h"
#include "net-read.h"
#include "net-sysctl.h"
#include "net-tc.h"
#include "netfilter.h"
#include "options.h"
#include "stats.h"
#include "util.h"

#include "netns.pb-c.h"

/* ---- the tree's namespace, for sock_diag and the network lock ------------------------------ */

static int tree_netns = -1;
static int ns_lock_kind = -1; /* the kind of lock installed in the tree's namespace, or -1 */
static bool ns_lock_told; /* network-lock was told (notify.h): network-unlock is due */

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

/*
 * The sysctls to write back once the tree runs (ns_net_unlock_here()): the
 * accept_dad ones, and the ipv6/conf/LINK/mtu of a tun or tap link (@ifindex
 * not 0), whose carrier comes when the restored task's descriptor attaches
 * to it, which resets that MTU: its link read back first, so the reset
 * comes before the write.
 */
static struct {
	char *path, *value;
	int ifindex;
} dad_later[64];
static size_t n_dad;

static void dad_later_free(void);

void ns_net_reset(void)
{
	net_link_peers_reset();
	net_tun_reset();
	tree_netns_set(-1);
	ns_lock_kind = -1;
	ns_lock_told = false;
	dad_later_free();
	net_local_reset();
	net_dump_pending_set(NULL);
}

bool ns_net_tree_locked(void)
{
	return ns_lock_kind >= 0;
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
		return neg_errno();
	fd = ioctl(sk, SIOCGSKNS); /* 4.9; O_CLOEXEC */
	close(sk);
	if (fd < 0)
		fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	return fd < 0 ? neg_errno() : fd;
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
#define NS_LOCK_TABLE "criu_like_netns"
#define NS_LOCK_PRIO_S "-160"
/* made by one netlink batch (nft_lo_only()); this text where the kernel refuses it */
static const char ns_lock_nft[] =
	"table inet " NS_LOCK_TABLE " {\n"
	"	chain input { type filter hook input priority " NS_LOCK_PRIO_S "; policy accept; "
	"iifname != \"lo\" drop; }\n"
	"	chain output { type filter hook output priority " NS_LOCK_PRIO_S "; policy accept; "
	"oifname != \"lo\" drop; }\n"
	"}\n";
/* the comment tells netfilter.c they are not the container's own */
#define NS_LOCK_IPT_RULES(op)                                                             \
	"*filter\n" op " INPUT ! -i lo -m comment --comment criu-like-netns -j DROP\n" op \
	" OUTPUT ! -o lo -m comment --comment criu-like-netns -j DROP\nCOMMIT\n"
static const char ns_lock_ipt[] = NS_LOCK_IPT_RULES("-I");
static const char ns_unlock_ipt[] = NS_LOCK_IPT_RULES("-D");

static bool ns_lock_skipped; /* a pre-dump: ns_net_lock_skip() */
/*
 * The context of the lock's opening, kept until its deletion: freeing a
 * libnftables context after a transaction that flushed something waits for
 * an RCU grace period (10-40 ms here), which came before the let-go. At a
 * dump, the one the lock was made with (made before the freeze).
 */
static struct nft_runner *ns_open_nft;
/*
 * The netlink socket that empties the lock's chains at the let-go, kept until
 * the lock's deletion: its close after the flush waits for an RCU grace
 * period (net/nft-netlink.c), which the let-go's path does not.
 */
static int ns_open_nl = -1;

void ns_net_lock_skip(bool skip)
{
	ns_lock_skipped = skip;
}

/*
 * In the tree's namespace (this thread): lock it as --network-lock says. @own:
 * the tree's own namespace, whose lock CRIU announces at a dump (network-lock,
 * before it, whatever the mode: the hook may lock it itself) and whose unlock
 * it announces at both ends (network-unlock once it is let go). At a restore
 * CRIU's lock goes on from the dump's (its rules are in the images): no
 * network-lock, as there. An external namespace is its owner's business.
 */
static int ns_lock(bool own, bool restore)
{
	const struct cr_options *o = ns_options();
	enum netlock_kind kind;
	struct nfq_hold *h;
	uint64_t t0;
	int err;

	if (ns_lock_skipped)
		return 0;
	if (own && o && !ns_lock_told) {
		err = restore ? 0 : cr_notify(o, CR_ACT_NET_LOCK, o->tree > 0 ? o->tree : 0, -1);
		if (err)
			return err;
		ns_lock_told = true;
	}
	if (netlock_parse_kind(o ? o->network_lock : NULL, &kind) || kind == NETLOCK_SKIP)
		return 0;
	/*
	 * Held rather than only dropped: the namespace's holder, ahead of the
	 * lock. Its two tools started at once (a restore's new namespace; a
	 * dump's were ahead, ns/net-ahead.c), each one's start not after the
	 * other's end.
	 */
	t0 = stats_now_ns();
	h = nfq_hold_here(NULL, true);
	if (h) {
		nfq_hold_prime(h);
		nfq_hold_add_netns(h);
		pr_debug("the packet holder's rules in %llu us\n",
			 (unsigned long long)((stats_now_ns() - t0) / 1000));
	}
	if (kind == NETLOCK_NFTABLES) {
		/*
		 * One netlink batch on a new socket (one an earlier tree's lock left is
		 * that namespace's), kept for the let-go; else a libnftables context,
		 * kept for the opening (its close after a transaction waits for RCU).
		 */
		t0 = stats_now_ns();
		closep(&ns_open_nl);
		ns_open_nl = nft_nl_open();
		err = ns_open_nl < 0 ? ns_open_nl
				     : nft_lo_only(ns_open_nl, NS_LOCK_TABLE, atoi(NS_LOCK_PRIO_S));
		if (err) {
			pr_debug("the lock not made by netlink (%s): by libnftables\n",
				 strerror(-err));
			if (!ns_open_nft)
				ns_open_nft = nft_runner_open();
			err = nft_exec(ns_open_nft, ns_lock_nft, NULL, false);
		}
		pr_debug("the lock's transaction in %llu us\n",
			 (unsigned long long)((stats_now_ns() - t0) / 1000));
	} else
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

void ns_net_open_here(void)
{
	int err;

	/* emptied, not deleted: deleting a base chain would drop what the holder holds */
	if (ns_lock_kind == NETLOCK_NFTABLES) {
		static const char *const chains[] = { "input", "output" };

		/* one netlink batch (0.1 ms); libnftables' context when the kernel refuses it */
		if (ns_open_nl < 0)
			ns_open_nl = nft_nl_open();
		err = ns_open_nl < 0 ? ns_open_nl
				     : nft_chains_flush(ns_open_nl, NFPROTO_INET, NS_LOCK_TABLE,
							chains, ARRAY_SIZE(chains));
		if (err) {
			pr_debug("the lock's chains not flushed by netlink (%s): by libnftables\n",
				 strerror(-err));
			if (!ns_open_nft)
				ns_open_nft = nft_runner_open();
			err = nft_exec(ns_open_nft,
				       "flush chain inet " NS_LOCK_TABLE " input\n"
				       "flush chain inet " NS_LOCK_TABLE " output\n",
				       NULL, false);
		}
	} else if (ns_lock_kind == NETLOCK_IPTABLES)
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

/* The network-unlock hook, once the lock told of is gone (a failure is only logged). */
static void ns_unlock_tell(void)
{
	const struct cr_options *o = ns_options();

	if (!ns_lock_told)
		return;
	ns_lock_told = false;
	if (o && cr_notify(o, CR_ACT_NET_UNLOCK, o->tree > 0 ? o->tree : 0, -1))
		pr_warn("the hook network-unlock failed; the namespace is unlocked\n");
}

void ns_net_unlock_here(void)
{
	size_t i;
	int err, sk = -1;

	for (i = 0; i < n_dad; i++) {
		if (!dad_later[i].path || !dad_later[i].value)
			continue;
		if (dad_later[i].ifindex && sk < 0)
			sk = rtnl_open();
		if (dad_later[i].ifindex && sk >= 0)
			net_link_sync(sk, dad_later[i].ifindex, dad_later[i].path);
		net_sysctl_set(dad_later[i].path, dad_later[i].value);
	}
	if (sk >= 0)
		close(sk);
	dad_later_free();
	if (ns_lock_kind < 0) {
		nft_runner_close(TAKE_PTR(ns_open_nft));
		closep(&ns_open_nl);
		ns_open_nl = -1;
		ns_unlock_tell();
		return;
	}
	if (ns_lock_kind == NETLOCK_NFTABLES) {
		if (ns_open_nl < 0)
			ns_open_nl = nft_nl_open();
		err = ns_open_nl < 0 ? ns_open_nl
				     : nft_table_delete(ns_open_nl, NFPROTO_INET, NS_LOCK_TABLE);
		if (err)
			err = nft_exec(ns_open_nft, "delete table inet " NS_LOCK_TABLE "\n", NULL,
				       false);
	} else
		err = ipt_restore(AF_INET, ns_unlock_ipt, false)
			      ?: ipt_restore(AF_INET6, ns_unlock_ipt, false);
	if (!err)
		pr_info("the tree's network namespace is unlocked\n");
	nft_runner_close(TAKE_PTR(ns_open_nft));
	closep(&ns_open_nl);
	ns_open_nl = -1;
	ns_lock_kind = -1;
	ns_unlock_tell();
}

/* ---- the dump ------------------------------------------------------------------------------- */

/*
 * Its links, addresses, routes, rules and neighbours read now (net-read.c),
 * its sysctls by a thread beside the rest of the freeze; the namespace then
 * locked; the image written by ns_net_dump_finish() once the sysctls are in.
 */
static int net_dump(pid_t pid, int dirfd, uint32_t id)
{
	struct net_dump *d = calloc(1, sizeof(*d));
	NetnsEntry *e;
	char path[64];
	size_t off;
	int saved, hsk, err;

	if (!d)
		return -ENOMEM;
	d->e = (NetnsEntry)NETNS_ENTRY__INIT;
	e = &d->e;
	d->pid = pid;
	d->dirfd = dirfd;
	d->id = id;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	d->netns = open(path, O_RDONLY | O_CLOEXEC);
	if (d->netns < 0) {
		pr_perror("cannot open %s", path);
		err = neg_errno();
		goto out;
	}
	tree_netns_set(fcntl(d->netns, F_DUPFD_CLOEXEC, 0));
	if (ns_net_tree_fd() < 0) {
		pr_perror("cannot keep %s", path);
		err = neg_errno();
		goto out;
	}
	hsk = rtnl_open();
	if (hsk < 0) {
		err = hsk;
		goto out;
	}
	err = rtnl_dump(hsk, RTM_GETLINK, AF_UNSPEC, &d->host);
	close(hsk);
	/* read before the freeze, or now */
	if (!err && !ns_net_fresh_take(&d->r.fresh))
		err = net_sysctls_fresh(&d->r.fresh);
	if (!err)
		err = ns_net_enter_tree(&saved);
	if (!err) {
		err = net_read_rtnl(pid, &d->r);
		ns_net_leave_tree(saved);
	}
	if (!err)
		err = net_read_check_routes(pid, &d->r.routes);
	/* which connections go over lo: tcp.c locks only those in a locked namespace */
	if (!err)
		err = net_local_set(&d->r.addrs);
	if (!err)
		err = net_read_sysctls_start(d);
	if (err)
		goto out;
	for (off = 0; off < d->r.links.len;
	     off += NLMSG_ALIGN(((struct nlmsghdr *)(d->r.links.data + off))->nlmsg_len))
		e->n_links++;
	d->links = calloc(e->n_links + 1, sizeof(*d->links));
	d->linkp = calloc(e->n_links + 1, sizeof(*d->linkp));
	if (!d->links || !d->linkp) {
		err = -ENOMEM;
		goto out;
	}
	e->n_links = 0;
	for (off = 0; !err && off < d->r.links.len;) {
		const struct nlmsghdr *n = (const struct nlmsghdr *)(d->r.links.data + off);
		bool skip;

		err = link_fill(pid, n, &d->host, &d->links[e->n_links], &skip);
		if (!err && !skip) {
			d->linkp[e->n_links] = &d->links[e->n_links];
			e->n_links++;
		}
		off += NLMSG_ALIGN(n->nlmsg_len);
	}
	if (!err)
		err = net_links_dump_check(pid, d->linkp, e->n_links);
	if (err)
		goto out;
	e->links = d->linkp;
	e->has_neighs = true;
	e->neighs.data = d->r.neighs.data;
	e->neighs.len = d->r.neighs.len;
	e->has_qdiscs = true;
	e->qdiscs.data = d->r.qdiscs.data;
	e->qdiscs.len = d->r.qdiscs.len;
	e->addrs.data = d->r.addrs.data;
	e->addrs.len = d->r.addrs.len;
	e->routes.data = d->r.routes.data;
	e->routes.len = d->r.routes.len;
	e->rules.data = d->r.rules.data;
	e->rules.len = d->r.rules.len;
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
			err = ns_lock(true, false);
		if (!err && !ns_lock_skipped)
			err = ct_dump(pid, dirfd, id);
		ns_net_leave_tree(saved);
	}
out:
	if (err) {
		net_dump_free(d);
		return err;
	}
	net_dump_pending_set(d);
	return 0;
}

/* The end of a dump: the namespace is let go, and waited for when the tree was killed. */
void ns_net_dump_done(bool killed)
{
	ns_net_dump_finish(false);
	ns_net_ahead_done();
	tree_netns_set(-1);
	net_link_peers_wait(killed);
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
		err = ns_lock(false, false);
		ns_net_leave_tree(saved);
	}
	return err;
}

/* ---- restore ---------------------------------------------------------------------------------- */

struct net_restore {
	NetnsEntry *ne; /* NULL: an empty namespace (--empty-ns net) */
	int nsfd; /* the new namespace */
	int host; /* criu-like's, while the controller is in the new one */
	struct net_link_plan links; /* the outside names of its links */
	NfRulesEntry *nf; /* its netfilter rules, NULL: none */
	ConntrackTable *ct; /* its conntrack entries, NULL: none */
};

static void net_fini(void *priv);
static int net_enter(void *priv);
static void net_leave(void *priv);

/* The links, and the sysctls' paths, sane: 0 or -errno (logged). */
static int check_image(struct net_restore *nr, uint32_t id)
{
	const NetnsEntry *ne = nr->ne;
	size_t i;
	int err;

	err = net_links_check(ne, id, &nr->links);
	if (err)
		return err;
	for (i = 0; i < ne->n_sysctls; i++)
		if (net_sysctl_never(ne->sysctls[i]->path)) {
			pr_err("netns-%u.img: sysctl %s refused: a path going up, or a flush\n", id,
			       ne->sysctls[i]->path);
			return -EINVAL;
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
	char path[96];

	snprintf(path, sizeof(path), "ipv6/conf/%s/accept_dad", link);
	return net_sysctl_set(path, value);
}

/*
 * After net_links_outside(), from inside the new namespace: a veth's inside
 * end got its carrier when its outside end went up, and linkwatch passing
 * that on (later) sets its ipv6/conf/LINK/mtu back to the link's MTU. Passed
 * on now (net_links_sync()), then the saved ipv6 MTUs written once more.
 */
static int mtu6_after_outside(struct net_restore *nr)
{
	int sk, err = net_enter(nr);

	if (err)
		return err;
	sk = rtnl_open();
	err = sk < 0 ? sk : net_links_sync(sk, nr->ne);
	if (sk >= 0)
		close(sk);
	if (!err)
		err = net_sysctl_mtu6_restore(nr->ne);
	net_leave(nr);
	return err;
}

/* In the new namespace: everything of the image, in an order the kernel accepts. */
static int configure(struct net_restore *nr, int sk, uint32_t id)
{
	const NetnsEntry *ne = nr->ne;
	char img[32];
	size_t i;
	int err = 0;

	uint64_t t[4];

	snprintf(img, sizeof(img), "netns-%u.img", id);
	t[0] = stats_now_ns();
	err = net_links_create(sk, ne, &nr->links, nr->host, nr->nsfd);
	t[1] = stats_now_ns();
	if (!err)
		err = net_sysctls_restore(ne, false);
	t[2] = stats_now_ns();
	if (!err)
		err = net_links_flags(sk, ne);
	/*
	 * again where a link's MTU, its going up or its carrier coming (all passed
	 * on by now: net_links_flags()) reset ipv6/conf/LINK/mtu to the link's MTU
	 */
	if (!err)
		err = net_sysctl_mtu6_restore(ne);
	if (!err && ne->has_qdiscs)
		err = net_tc_restore(sk, &ne->qdiscs, img);
	/*
	 * The addresses were the container's already: no duplicate address
	 * detection, which would leave IPv6 ones tentative (no bind) for a while.
	 */
	for (i = 0; !err && i < ne->n_links; i++)
		err = set_accept_dad(ne->links[i]->name, "0");
	if (!err)
		err = rtnl_replay(sk, ne->addrs.data, ne->addrs.len, img);
	/* their saved values once the tree runs: a carrier coming up restarts DAD */
	for (i = 0; !err && i < ne->n_sysctls; i++) {
		int tun = net_sysctl_mtu6_tun(ne, ne->sysctls[i]->path);

		if ((strstr(ne->sysctls[i]->path, "/accept_dad") || tun) &&
		    n_dad < ARRAY_SIZE(dad_later)) {
			dad_later[n_dad].path = strdup(ne->sysctls[i]->path);
			dad_later[n_dad].value = strdup(ne->sysctls[i]->value);
			dad_later[n_dad].ifindex = tun;
			if (!dad_later[n_dad].path || !dad_later[n_dad].value)
				err = -ENOMEM;
			n_dad++;
		}
	}
	/* after the links' addresses: a neighbour's link must be there, and up for some */
	if (!err && ne->has_neighs)
		err = net_neigh_restore(sk, &ne->neighs, img);
	if (!err)
		err = rtnl_replay(sk, ne->routes.data, ne->routes.len, img);
	if (!err)
		err = rules_flush(sk);
	if (!err)
		err = rtnl_replay(sk, ne->rules.data, ne->rules.len, img);
	t[3] = stats_now_ns();
	if (!err)
		pr_debug("configured in %llu us: links %llu, %zu sysctls %llu, the rest %llu\n",
			 (unsigned long long)(t[3] - t[0]) / 1000,
			 (unsigned long long)(t[1] - t[0]) / 1000, ne->n_sysctls,
			 (unsigned long long)(t[2] - t[1]) / 1000,
			 (unsigned long long)(t[3] - t[2]) / 1000);
	return err;
}

/* ---- a namespace made ahead of the restore ---------------------------------------------------- */

/*
 * ns_net_restore_ahead(): a new network namespace with its packet holder
 * and its lock, made by the process that will restore before the images
 * are there (a migration's destination, during the pre-copy); make_ns()
 * takes it instead of making one. Nothing of the images is in it: a fresh
 * namespace, locked, as make_ns() makes before it configures it.
 */
static int made_fd = -1;
static int made_kind = -1; /* ns_lock_kind once it was locked */

int ns_net_restore_ahead(const struct cr_options *o)
{
	int saved, err;

	ns_net_ahead_drop();
	err = ns_set_options(o);
	if (err)
		return err;
	saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved < 0)
		return neg_errno();
	if (unshare(CLONE_NEWNET)) {
		err = neg_errno();
		close(saved);
		pr_errno(err, "cannot create a network namespace ahead of the restore");
		return err;
	}
	made_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	err = made_fd < 0 ? neg_errno() : ns_lock(true, true);
	made_kind = ns_lock_kind;
	if (setns(saved, CLONE_NEWNET)) {
		pr_perror("cannot go back to criu-like's network namespace");
		abort(); /* criu-like in the wrong namespace would do harm: stop here */
	}
	close(saved);
	ns_lock_kind = -1;
	if (err) {
		ns_net_ahead_drop();
		return err;
	}
	pr_info("a network namespace made and locked ahead of the restore\n");
	return 0;
}

int ns_net_links_ahead(int dirfd)
{
	return made_fd < 0 ? -ENOENT : net_links_make_ahead(dirfd, made_fd);
}

void ns_net_ahead_drop(void)
{
	if (made_fd < 0)
		return;
	/* its veths go (at once, not with the namespace), its holder stops, then the namespace */
	net_links_ahead_drop(made_fd);
	ns_net_hold_stop_in(made_fd);
	close(made_fd);
	made_fd = -1;
	made_kind = -1;
}

/*
 * This thread into the namespace made ahead, held by nr->nsfd, its lock the
 * tree's: true; false when there is none, or the tree has a user namespace
 * of its own (which must own its network namespace: that one is dropped).
 */
static bool ahead_take(struct net_restore *nr)
{
	if (made_fd < 0)
		return false;
	if (ns_user_own() || setns(made_fd, CLONE_NEWNET)) {
		ns_net_ahead_drop();
		return false;
	}
	nr->nsfd = made_fd;
	ns_lock_kind = made_kind;
	/* as ns_lock() at a restore: no network-lock, a network-unlock once it runs */
	ns_lock_told = ns_options() != NULL;
	made_fd = -1;
	made_kind = -1;
	pr_debug("the network namespace made ahead is the tree's\n");
	return true;
}

/* A new network namespace held by nr->nsfd, made and configured from inside. */
static int make_ns(struct net_restore *nr, uint32_t id)
{
	bool ahead;
	int sk, err = 0;

	nr->host = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (nr->host < 0) {
		pr_perror("cannot open criu-like's network namespace");
		return neg_errno();
	}
	ahead = ahead_take(nr);
	if (!ahead) /* what was read in a namespace made ahead is not this one's */
		net_sysctls_known_drop();
	/* owned by the tree's user namespace when it has one */
	err = ahead ? 0 : ns_user_unshare(CLONE_NEWNET);
	if (err) {
		pr_errno(err, "cannot create a network namespace");
		return err;
	}
	if (!ahead)
		nr->nsfd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (nr->nsfd < 0)
		err = neg_errno();
	sk = err ? err : rtnl_open();
	if (sk < 0)
		err = sk;
	/* before any link is up or any socket of the tree exists */
	if (!err && !ahead)
		err = ns_lock(true, true);
	/* the veths made ahead: kept where the final image has them the same */
	if (!err && ahead)
		err = net_links_ahead_settle(sk, nr->ne, &nr->links);
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
		err = net_links_outside(nr->ne, &nr->links);
	if (!err && nr->ne)
		err = mtu6_after_outside(nr);
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
	nr->nsfd = nr->host = nr->links.host_sk = -1;
	if (o && o->empty_ns_net) {
		pr_info("--empty-ns net: the tree gets a new network namespace with lo only\n");
		id = 0;
	} else {
		err = img_read_one(dirfd, CR_IMG_NETNS, id, (ProtobufCMessage **)&nr->ne);
		if (!err)
			err = check_image(nr, id);
		/* which connections go over lo: tcp.c locks only those (ns_net_conn_outside()) */
		if (!err)
			err = net_local_set(&(struct nl_buf){ .data = nr->ne->addrs.data,
							      .len = nr->ne->addrs.len });
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
	nr->links.host_sk = -1;
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
	err = ns_lock(false, true);
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
	net_link_plan_fini(&nr->links);
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
