// SPDX-License-Identifier: GPL-2.0
/*
 * The veths of a network namespace made ahead of the restore (a migration's
 * destination, Documentation/migration.md): the process that will restore
 * makes, in the namespace it made ahead (ns_net_restore_ahead()), each veth
 * of the first pre-copy round's image with its outside end on its bridge,
 * before the final images come. At the restore, each made ahead is compared
 * with the final image's link of the same name (net_link_ahead_same()): the
 * same, it is not made again; another, it is removed and made from the final
 * image. Nothing of the first round's image that the final image does not
 * have stays. The image of the first round is the source's: its veths read
 * while the tree runs (ns_net_links_dump_ahead(), a pre-dump writes no
 * network namespace).
 */
#define LOG_PREFIX "ns: net: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "log.h"
#include "net-link.h"
#include "net-sysctl.h"
#include "ns.h"
#include "util.h"

/* ---- at the source ---- */

/* The veths of @links (an RTM_GETLINK dump of the tree's namespace) into @e. 0 or -ENOMEM. */
static int veths_fill(pid_t pid, const struct nl_buf *links, const struct nl_buf *host,
		      NetnsEntry *e, NetLinkEntry **one)
{
	const char *mtu;
	unsigned long ul;
	size_t off, i, n = 0;

	for (off = 0; off < links->len;
	     off += NLMSG_ALIGN(((const struct nlmsghdr *)(links->data + off))->nlmsg_len))
		n++;
	*one = calloc(n + 1, sizeof(**one));
	e->links = calloc(n + 1, sizeof(*e->links));
	if (!*one || !e->links)
		return -ENOMEM;
	for (off = 0; off < links->len;) {
		const struct nlmsghdr *m = (const struct nlmsghdr *)(links->data + off);
		struct rtattr *tb[IFLA_MAX + 1];
		const char *name, *kind;
		bool skip = true;

		off += NLMSG_ALIGN(m->nlmsg_len);
		link_info(m, tb, &name, &kind);
		/* only what may be made ahead: nothing refused here, the final dump says why */
		if (!kind || strcmp(kind, "veth") ||
		    link_fill(pid, m, host, &(*one)[e->n_links], &skip) || skip)
			continue;
		e->links[e->n_links] = &(*one)[e->n_links];
		e->n_links++;
	}
	/*
	 * For the test of a veth changed after the first round (migrate.sh):
	 * CRIU_LIKE_MIGRATE_AHEAD_MTU=N sends MTU N ahead, not the veths' own.
	 */
	mtu = getenv("CRIU_LIKE_MIGRATE_AHEAD_MTU");
	for (i = 0; mtu && !parse_ulong(mtu, &ul) && ul && ul < UINT32_MAX && i < e->n_links; i++)
		e->links[i]->mtu = (uint32_t)ul;
	return 0;
}

int ns_net_links_dump_ahead(pid_t pid, int dirfd)
{
	struct nl_buf host = { 0 }, links = { 0 };
	NetnsEntry e = NETNS_ENTRY__INIT;
	_cleanup_free_ NetLinkEntry *one = NULL;
	_cleanup_close_ int saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int fd = -1;
	char path[64];
	struct stat own, tree;
	int sk, err;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	if (saved < 0 || fstat(saved, &own) || stat(path, &tree))
		return neg_errno();
	if (own.st_ino == tree.st_ino)
		return 0; /* no namespace of its own */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	sk = rtnl_open();
	err = fd < 0 ? neg_errno() : sk < 0 ? sk : rtnl_dump(sk, RTM_GETLINK, AF_UNSPEC, &host);
	if (sk >= 0)
		close(sk);
	if (!err && setns(fd, CLONE_NEWNET))
		err = neg_errno();
	else if (!err) {
		sk = rtnl_open();
		err = sk < 0 ? sk : rtnl_dump(sk, RTM_GETLINK, AF_UNSPEC, &links);
		if (sk >= 0)
			close(sk);
		if (setns(saved, CLONE_NEWNET)) {
			pr_perror("cannot go back to criu-like's network namespace");
			abort(); /* criu-like in the wrong namespace would do harm: stop here */
		}
	}
	if (!err)
		err = veths_fill(pid, &links, &host, &e, &one);
	/* the id is the tree's at the final dump; the destination takes the only one there */
	if (!err && e.n_links)
		err = img_write_one(dirfd, CR_IMG_NETNS, 0, &e.base);
	if (!err)
		pr_info("pid %d: %zu veth(s) read for the destination to make ahead\n", pid,
			e.n_links);
	free(e.links);
	nl_buf_fini(&links);
	nl_buf_fini(&host);
	return err;
}

/* ---- at the destination ---- */

/* The first round's image and, per link, whether its veth was made ahead. */
static NetnsEntry *ahead_ne;
static bool *ahead_made;

static bool str_same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

bool net_link_ahead_same(const NetLinkEntry *a, const char *a_out, const char *a_br,
			 const NetLinkEntry *f, const char *f_out, const char *f_br)
{
	if (a->kind != NET_LINK_KIND__NET_LINK_VETH || f->kind != a->kind || a->has_peer_ifindex ||
	    f->has_peer_ifindex)
		return false;
	if (a->ifindex != f->ifindex || !str_same(a->name, f->name) || a->mtu != f->mtu)
		return false;
	if (a->has_txqlen != f->has_txqlen || (a->has_txqlen && a->txqlen != f->txqlen))
		return false;
	if (a->has_address != f->has_address ||
	    (a->has_address && (a->address.len != f->address.len ||
				memcmp(a->address.data, f->address.data, a->address.len))))
		return false;
	if ((a->has_peer_mtu ? a->peer_mtu : 0) != (f->has_peer_mtu ? f->peer_mtu : 0))
		return false;
	return str_same(a_out, f_out) && str_same(a_br, f_br);
}

/* Link @l of a first round's image can be made ahead: a veth with its other end outside. */
static bool ahead_kind(const NetLinkEntry *l)
{
	return l->kind == NET_LINK_KIND__NET_LINK_VETH && !l->has_peer_ifindex && !l->has_master &&
	       l->peer_name && *l->peer_name && strlen(l->peer_name) < IFNAMSIZ && *l->name &&
	       strlen(l->name) < IFNAMSIZ && l->ifindex > 1 &&
	       (!l->has_address || l->address.len <= 32);
}

/* The one netns-ID.img of @dirfd, or -ENOENT (none, or more than one). */
static int only_netns(int dirfd, NetnsEntry **ne)
{
	_cleanup_closedir_ DIR *d = fdopendir(fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
	struct dirent *de;
	unsigned int id, found = 0, n = 0;
	char tail;

	if (!d)
		return neg_errno();
	while ((de = readdir(d)))
		if (sscanf(de->d_name, "netns-%u.im%c", &id, &tail) == 2 && tail == 'g' && ++n)
			found = id;
	if (n != 1)
		return -ENOENT;
	return img_read_one(dirfd, CR_IMG_NETNS, found, (ProtobufCMessage **)ne);
}

static int del_link(int sk, uint32_t ifindex, const char *name)
{
	uint8_t buf[NL_REQ_SIZE];
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = (int)ifindex };
	int err = rtnl_talk(sk, nl_req_init(buf, RTM_DELLINK, 0, &ifi, sizeof(ifi)));

	if (err && err != -ENODEV)
		pr_errno(err, "cannot remove veth %s made ahead", name);
	return err == -ENODEV ? 0 : err;
}

/* In the namespace made ahead: every veth made ahead removed (with its outside end). */
static void ahead_remove(int sk)
{
	size_t i;

	for (i = 0; ahead_ne && i < ahead_ne->n_links; i++)
		if (ahead_made[i])
			del_link(sk, ahead_ne->links[i]->ifindex, ahead_ne->links[i]->name);
}

static void ahead_free(void)
{
	if (ahead_ne)
		protobuf_c_message_free_unpacked(&ahead_ne->base, NULL);
	ahead_ne = NULL;
	free(ahead_made);
	ahead_made = NULL;
}

/* In the namespace made ahead, @host criu-like's: the veths of @ahead_ne and their outside ends. */
static int make_all(int sk, int host, int nsfd)
{
	struct net_link_plan p = { .host_sk = -1 };
	size_t i, n = ahead_ne->n_links;
	int err = 0;

	p.outside = calloc(n + 1, sizeof(*p.outside));
	p.bridge = calloc(n + 1, sizeof(*p.bridge));
	p.lower = calloc(n + 1, sizeof(*p.lower));
	if (!p.outside || !p.bridge || !p.lower)
		err = -ENOMEM;
	for (i = 0; !err && i < n; i++) {
		const NetLinkEntry *l = ahead_ne->links[i];

		if (!ahead_kind(l))
			continue;
		p.outside[i] = l->peer_name;
		p.bridge[i] = l->peer_master;
		err = net_link_make(sk, ahead_ne, i, &p, host, nsfd);
		ahead_made[i] = !err;
	}
	if (!err) {
		if (setns(host, CLONE_NEWNET)) {
			pr_perror("cannot go back to criu-like's network namespace");
			abort(); /* criu-like in the wrong namespace would do harm: stop here */
		}
		/* their outside ends on their bridges, up: no carrier while the inside is down */
		err = net_links_outside(ahead_ne, &p);
		if (setns(nsfd, CLONE_NEWNET)) {
			pr_perror("cannot enter the network namespace made ahead");
			abort();
		}
	}
	net_link_plan_fini(&p);
	return err;
}

int net_links_make_ahead(int dirfd, int nsfd)
{
	_cleanup_close_ int host = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int sk = -1, err;
	size_t i, n_made = 0;

	ahead_free();
	if (host < 0)
		return neg_errno();
	err = only_netns(dirfd, &ahead_ne);
	if (err)
		return err;
	ahead_made = calloc(ahead_ne->n_links + 1, sizeof(*ahead_made));
	if (!ahead_made) {
		ahead_free();
		return -ENOMEM;
	}
	if (setns(nsfd, CLONE_NEWNET)) {
		err = neg_errno();
		ahead_free();
		return err;
	}
	sk = rtnl_open();
	err = sk < 0 ? sk : make_all(sk, host, nsfd);
	if (err && sk >= 0)
		ahead_remove(sk);
	/* the namespace as the restore will find it: its sysctls, for the restore to skip */
	if (!err && net_sysctls_known_read())
		pr_debug("the sysctls of the namespace made ahead not read: read at the restore\n");
	if (sk >= 0)
		close(sk);
	if (setns(host, CLONE_NEWNET)) {
		pr_perror("cannot go back to criu-like's network namespace");
		abort();
	}
	for (i = 0; !err && i < ahead_ne->n_links; i++)
		n_made += ahead_made[i];
	if (err || !n_made) {
		ahead_free();
		return err;
	}
	pr_info("%zu veth(s) of the first round made ahead of the restore\n", n_made);
	return 0;
}

int net_links_ahead_settle(int sk, const NetnsEntry *ne, struct net_link_plan *p)
{
	size_t i, j;
	int err = 0;

	if (!ahead_ne)
		return 0;
	if (!ne) { /* --empty-ns net: none stays */
		net_sysctls_known_drop();
		ahead_remove(sk);
		ahead_free();
		return 0;
	}
	p->ahead = calloc(ne->n_links + 1, sizeof(*p->ahead));
	if (!p->ahead) {
		ahead_remove(sk);
		ahead_free();
		return -ENOMEM;
	}
	for (i = 0; !err && i < ahead_ne->n_links; i++) {
		const NetLinkEntry *a = ahead_ne->links[i];
		bool same = false;

		if (!ahead_made[i])
			continue;
		for (j = 0; j < ne->n_links; j++)
			if (!strcmp(ne->links[j]->name, a->name))
				break;
		if (j < ne->n_links && !p->ahead[j])
			same = net_link_ahead_same(a, a->peer_name, a->peer_master, ne->links[j],
						   p->outside[j], p->bridge[j]);
		if (same) {
			p->ahead[j] = true;
			pr_debug("veth %s made ahead is the final image's\n", a->name);
			continue;
		}
		pr_info("veth %s changed since the first round: made again\n", a->name);
		/* its sysctls as read ahead are not the new link's */
		net_sysctls_known_drop();
		err = del_link(sk, a->ifindex, a->name);
	}
	ahead_free();
	return err;
}

void net_links_ahead_drop(int nsfd)
{
	_cleanup_close_ int host = -1;
	int sk;

	net_sysctls_known_drop();
	if (!ahead_ne)
		return;
	host = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (nsfd >= 0 && host >= 0 && !setns(nsfd, CLONE_NEWNET)) {
		sk = rtnl_open();
		if (sk >= 0) {
			ahead_remove(sk);
			close(sk);
		}
		if (setns(host, CLONE_NEWNET)) {
			pr_perror("cannot go back to criu-like's network namespace");
			abort();
		}
	}
	ahead_free();
}
