/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_NET_LINK_H
#define CRIU_LIKE_NS_NET_LINK_H

/*
 * The links of a network namespace, for net.c: one link message of
 * RTM_GETLINK into a NetLinkEntry at dump (net-link.c), the links made again
 * (inside the new namespace and, for a veth, its outside end) at restore
 * (net-link-restore.c).
 */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "net-nl.h"

#include "netns.pb-c.h"

/* The flags given back at restore (ifi_change): the others are the kernel's to set. */
#define LINK_FLAGS (IFF_UP | IFF_NOARP | IFF_PROMISC | IFF_ALLMULTI | IFF_MULTICAST | IFF_DEBUG)

/* A kind of link the dump records (net-link.c), by IFLA_INFO_KIND. */
struct link_kind {
	const char *name;
	NetLinkKind kind;
	bool lower; /* made on a lower device (IFLA_LINK): macvlan, vlan... */
	const uint16_t *data; /* the IFLA_INFO_DATA attributes given back, 0 last */
};
/* In link_kind.data: given back only when not 0 (a kernel without the feature refuses even 0). */
#define LINK_KEEP_NONZERO 0x8000

/* The kind @kind, NULL for one not in the table (the loopback). */
const struct link_kind *net_link_kind_of(NetLinkKind kind);
/* The options of a bridge port given back (IFLA_INFO_SLAVE_DATA), 0 last. */
extern const uint16_t net_link_brport_data[];

/* The name and kind of a link message, NULL kind for none (lo, a fallback tunnel...). */
void link_info(const struct nlmsghdr *n, struct rtattr **tb, const char **name, const char **kind);
/* The u32 of attribute @a, @def when it is missing or short. */
uint32_t attr_u32(const struct rtattr *a, uint32_t def);

/* ---- dump ---- */
/*
 * One link @n of the namespace of @pid into @e (pointing into @n and @host,
 * criu-like's own links): 0 (*@skip when the kernel makes it again by
 * itself), or -EOPNOTSUPP naming it.
 */
int link_fill(pid_t pid, const struct nlmsghdr *n, const struct nl_buf *host, NetLinkEntry *e,
	      bool *skip);
/* @l is a bridge with vlan filtering on (IFLA_BR_VLAN_FILTERING of its options). */
bool net_link_vlan_filtering(const NetLinkEntry *l);
/* Each port's master a bridge of the namespace, each lower link inside dumped: 0 or -EOPNOTSUPP. */
int net_links_dump_check(pid_t pid, NetLinkEntry *const *links, size_t n);
void net_link_peers_reset(void);
/* The end of a dump: when the tree was @killed, wait until its veths' outside ends are gone. */
void net_link_peers_wait(bool killed);

/* ---- restore ---- */
/* What the restore gives each link of the image besides the image (net_links_check()). */
struct net_link_plan {
	const char **outside; /* per link: the name of a veth's outside end */
	const char **bridge; /* per link: the bridge to put it on, or NULL */
	unsigned int
		*lower; /* per link: its lower link outside (ifindex in criu-like's namespace) */
	int host_sk; /* rtnetlink in criu-like's namespace, for the links on a lower link outside */
	bool *ahead; /* per link: made ahead, the same as in the image (NULL: none) */
};

/*
 * In @ext[0..@n) (--external values), "TYPE[IN]:OUT" for @type and @in: OUT,
 * or NULL when there is none.
 */
const char *net_external_name(const char *const *ext, size_t n, const char *type, const char *in);

/* The links of @ne sane, their outside names given: 0, -ENOMEM or -EINVAL (logged). */
int net_links_check(const NetnsEntry *ne, uint32_t id, struct net_link_plan *p);
void net_link_plan_fini(struct net_link_plan *p);
/* Set @flags (of @change), @l's MTU and @master on link @ifindex; @what names it in errors. */
int link_set(int sk, int ifindex, unsigned int flags, unsigned int change, const NetLinkEntry *l,
	     uint32_t master, const char *what);
/*
 * In the new namespace @nsfd: every link with its ifindex, name, MTU, MAC,
 * kind's options, alias and bridge (veths' outside ends in @host).
 */
int net_links_create(int sk, const NetnsEntry *ne, const struct net_link_plan *p, int host,
		     int nsfd);
/* Link @i of @ne made in the new namespace @nsfd (this thread's), as net_links_create() does. */
int net_link_make(int sk, const NetnsEntry *ne, size_t i, const struct net_link_plan *p, int host,
		  int nsfd);
/*
 * In the new namespace: every link's flags, and the carrier changes they
 * made passed on by the kernel (linkwatch) before it returns.
 */
int net_links_flags(int sk, const NetnsEntry *ne);
/*
 * In the new namespace: the carrier changes of its links that linkwatch has
 * not passed on yet passed on now (an RTM_GETLINK of each link).
 */
int net_links_sync(int sk, const NetnsEntry *ne);
/*
 * An RTM_GETLINK of one link (@name for the message): a carrier change of
 * it waiting in linkwatch's work is passed on first (6.8). 0 or -errno.
 */
int net_link_sync(int sk, int ifindex, const char *name);
/*
 * In criu-like's namespace: the outside ends of the veths, on their bridges,
 * up (their inside ends get their carrier: net_links_sync() from inside).
 */
int net_links_outside(const NetnsEntry *ne, const struct net_link_plan *p);

/* ---- veths made ahead of the restore (net-link-ahead.c) ---- */
/*
 * From criu-like's namespace: the veths of the one netns-ID.img of @dirfd
 * (a first pre-copy round's) made in the namespace @nsfd, their outside ends
 * on their bridges. 0 (none may be made), or -errno with none left.
 */
int net_links_make_ahead(int dirfd, int nsfd);
/*
 * In the new namespace (the one made ahead), once @p is checked: each veth
 * made ahead the same as @ne's link of its name is marked in @p->ahead, each
 * other one removed (net_links_create() makes it from @ne); @ne NULL (an
 * empty namespace): every one removed. 0 or -errno.
 */
int net_links_ahead_settle(int sk, const NetnsEntry *ne, struct net_link_plan *p);
/* The veths made ahead in @nsfd removed, when the namespace is dropped. */
void net_links_ahead_drop(int nsfd);
/*
 * Veth @a made ahead (outside end @a_out on bridge @a_br) is the final
 * image's link @f (outside end @f_out on @f_br): what making it sets is the
 * same (index, name, MTU, queue length, MAC, the outside end's name, MTU
 * and bridge).
 */
bool net_link_ahead_same(const NetLinkEntry *a, const char *a_out, const char *a_br,
			 const NetLinkEntry *f, const char *f_out, const char *f_br);

/* ---- tun and tap links (net-link-tun.c) ---- */
/* In the new namespace: the tun/tap device @l, through /dev/net/tun, persistent until settled. */
int tun_link_create(int sk, const NetLinkEntry *l);
void net_tun_reset(void);

#endif
