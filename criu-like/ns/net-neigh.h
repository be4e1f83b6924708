/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_NET_NEIGH_H
#define CRIU_LIKE_NS_NET_NEIGH_H

/*
 * The neighbours a network namespace was given (net-neigh.c): permanent and
 * noarp ARP/NDP entries, proxy entries, static and permanent bridge fdb
 * entries and the unicast addresses added to a link's own list. What the
 * kernel makes or learns by itself is left to it.
 */
#include <stdbool.h>
#include <sys/types.h>

#include "net-nl.h"

#include "netns.pb-c.h"

/*
 * Whether the neighbour message @n (RTM_NEWNEIGH of a dump) was configured
 * (kept), given @links, the RTM_GETLINK dump of the same namespace.
 */
bool neigh_configured(const struct nlmsghdr *n, const struct nl_buf *links);
/* In the tree's namespace: its configured neighbours appended to @out. 0 or -errno (logged). */
int net_neigh_read(pid_t pid, int sk, const struct nl_buf *links, struct nl_buf *out);
/* In the new namespace, after its links and addresses: each of @b again. 0 or -errno (logged). */
int net_neigh_restore(int sk, const ProtobufCBinaryData *b, const char *img);

#endif
