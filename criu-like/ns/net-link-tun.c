// SPDX-License-Identifier: GPL-2.0
/*
 * Tun and tap links of a network namespace (Documentation/namespaces.md,
 * "Network namespaces"). rtnetlink shows them (IFLA_INFO_DATA: type, packet
 * information, vnet header, multi-queue, persistence, owner, group) but
 * cannot make them: the restore makes each through /dev/net/tun with its
 * ifindex (TUNSETIFINDEX), name and flags, persistent so that it outlives
 * that fd. The tree's own /dev/net/tun fds (files/tun.c) attach to it later;
 * then net_tun_settle() takes the persistence back from the devices that did
 * not have it: one that no fd of the tree holds goes, as it would have gone
 * with the process outside the tree that held it.
 */
#define LOG_PREFIX "ns: net: "

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "log.h"
#include "net-link.h"
#include "ns.h"
#include "util.h"

/* The devices made persistent only for the restore, with the flags they were made with. */
static struct {
	char name[IFNAMSIZ];
	short flags;
} unpersist[64];
static size_t n_unpersist;

void net_tun_reset(void)
{
	n_unpersist = 0;
}

struct tun_link {
	short flags; /* TUNSETIFF's */
	bool persist;
	long owner, group; /* -1: none */
};

static uint8_t attr_u8(const struct rtattr *a)
{
	return RTA_PAYLOAD(a) >= 1 ? *(const uint8_t *)RTA_DATA(a) : 0;
}

/* The IFLA_INFO_DATA of a tun link into what TUNSETIFF and the other ioctls take. */
static void tun_link_parse(const NetLinkEntry *l, struct tun_link *t)
{
	const struct rtattr *a = (const struct rtattr *)l->info_data.data;
	int len = l->has_info_data ? (int)l->info_data.len : 0;

	t->flags = IFF_NO_PI;
	t->persist = false;
	t->owner = t->group = -1;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		switch (a->rta_type & NLA_TYPE_MASK) {
		case IFLA_TUN_TYPE:
			t->flags |= (short)(attr_u8(a) & (IFF_TUN | IFF_TAP));
			break;
		case IFLA_TUN_PI:
			if (attr_u8(a))
				t->flags &= (short)~IFF_NO_PI;
			break;
		case IFLA_TUN_VNET_HDR:
			t->flags |= attr_u8(a) ? IFF_VNET_HDR : 0;
			break;
		case IFLA_TUN_MULTI_QUEUE:
			t->flags |= attr_u8(a) ? IFF_MULTI_QUEUE : 0;
			break;
		case IFLA_TUN_PERSIST:
			t->persist = attr_u8(a);
			break;
		case IFLA_TUN_OWNER:
			t->owner = attr_u32(a, 0);
			break;
		case IFLA_TUN_GROUP:
			t->group = attr_u32(a, 0);
			break;
		}
	}
}

/* The MTU, queue length and (a tap's) MAC address, through rtnetlink once it exists. */
static int tun_link_attrs(int sk, const NetLinkEntry *l)
{
	uint8_t buf[NL_REQ_SIZE];
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = (int)l->ifindex };
	struct nlmsghdr *n = nl_req_init(buf, RTM_NEWLINK, 0, &ifi, sizeof(ifi));
	int err = 0;

	if (l->mtu)
		err = nl_put_u32(n, IFLA_MTU, l->mtu);
	if (!err && l->has_txqlen)
		err = nl_put_u32(n, IFLA_TXQLEN, l->txqlen);
	if (!err && l->has_address && l->address.len)
		err = nl_put(n, IFLA_ADDRESS, l->address.data, l->address.len);
	return err ?: rtnl_talk(sk, n);
}

int tun_link_create(int sk, const NetLinkEntry *l)
{
	struct ifreq ifr = { 0 };
	unsigned int idx = l->ifindex;
	struct tun_link t;
	int fd, err = 0;
	const char *step = "open /dev/net/tun";

	tun_link_parse(l, &t);
	if (!(t.flags & (IFF_TUN | IFF_TAP)) || n_unpersist == ARRAY_SIZE(unpersist)) {
		pr_err("tun link %s: no type in the image, or too many tun links\n", l->name);
		return -EINVAL;
	}
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", l->name);
	ifr.ifr_flags = t.flags;
	if (fd >= 0 && (step = "TUNSETIFINDEX", ioctl(fd, TUNSETIFINDEX, &idx)))
		err = neg_errno();
	if (fd >= 0 && !err && (step = "TUNSETIFF", ioctl(fd, TUNSETIFF, &ifr)))
		err = neg_errno();
	if (fd >= 0 && !err && t.owner >= 0 &&
	    (step = "TUNSETOWNER", ioctl(fd, TUNSETOWNER, (unsigned long)t.owner)))
		err = neg_errno();
	if (fd >= 0 && !err && t.group >= 0 &&
	    (step = "TUNSETGROUP", ioctl(fd, TUNSETGROUP, (unsigned long)t.group)))
		err = neg_errno();
	/* it must outlive this fd until the tree's own fds hold it */
	if (fd >= 0 && !err && (step = "TUNSETPERSIST", ioctl(fd, TUNSETPERSIST, 1UL)))
		err = neg_errno();
	if (fd < 0)
		err = neg_errno();
	else
		close(fd);
	if (!err && !t.persist) {
		snprintf(unpersist[n_unpersist].name, IFNAMSIZ, "%s", l->name);
		unpersist[n_unpersist++].flags = t.flags;
	}
	if (!err) {
		step = "set its MTU, queue length and address";
		err = tun_link_attrs(sk, l);
	}
	if (err)
		pr_errno(err, "cannot make %s device %s (ifindex %u): %s",
			 t.flags & IFF_TAP ? "tap" : "tun", l->name, l->ifindex, step);
	else
		pr_info("%s device %s (ifindex %u)%s%s made\n", t.flags & IFF_TAP ? "tap" : "tun",
			l->name, l->ifindex, t.flags & IFF_MULTI_QUEUE ? ", multi-queue" : "",
			t.persist ? ", persistent" : "");
	return err;
}

int net_tun_owner(const char *name, long *owner, long *group)
{
	struct nl_buf links = { 0 };
	const struct nlmsghdr *n;
	size_t off;
	int sk, err;

	*owner = *group = -1;
	sk = rtnl_open();
	if (sk < 0)
		return sk;
	err = rtnl_dump(sk, RTM_GETLINK, AF_UNSPEC, &links);
	close(sk);
	for (off = 0; !err && off < links.len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		struct rtattr *tb[IFLA_MAX + 1], *li[IFLA_INFO_MAX + 1];
		NetLinkEntry l = NET_LINK_ENTRY__INIT;
		struct tun_link t;
		const char *lname, *kind;

		n = (const struct nlmsghdr *)(links.data + off);
		link_info(n, tb, &lname, &kind);
		if (strcmp(lname, name) || !kind || strcmp(kind, "tun"))
			continue;
		nl_parse_nested(tb[IFLA_LINKINFO], li, IFLA_INFO_MAX);
		if (li[IFLA_INFO_DATA]) {
			l.has_info_data = true;
			l.info_data.data = RTA_DATA(li[IFLA_INFO_DATA]);
			l.info_data.len = RTA_PAYLOAD(li[IFLA_INFO_DATA]);
		}
		tun_link_parse(&l, &t);
		*owner = t.owner;
		*group = t.group;
		break;
	}
	nl_buf_fini(&links);
	return err;
}

int net_tun_settle(void)
{
	int saved, err;
	size_t i;

	if (!n_unpersist)
		return 0;
	err = ns_net_enter_tree(&saved);
	if (err)
		return err;
	for (i = 0; i < n_unpersist; i++) {
		struct ifreq ifr = { .ifr_flags = unpersist[i].flags };
		int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

		memcpy(ifr.ifr_name, unpersist[i].name, IFNAMSIZ);
		/* EBUSY: one queue, held by a file of the tree, which took the persistence back */
		if (fd >= 0 && !ioctl(fd, TUNSETIFF, &ifr) && ioctl(fd, TUNSETPERSIST, 0UL))
			pr_warn("tun device %s stays persistent: %m\n", unpersist[i].name);
		if (fd >= 0)
			close(fd);
	}
	n_unpersist = 0;
	ns_net_leave_tree(saved);
	return 0;
}
