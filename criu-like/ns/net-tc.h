/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_NET_TC_H
#define CRIU_LIKE_NS_NET_TC_H

/*
 * The queueing disciplines of a network namespace (net-tc.c): those the
 * kernel gives a link by itself are left to it; a root or ingress qdisc of a
 * simple kind (no class, child qdisc or filter of the user's) is saved as
 * the kernel's message and made again, then read back and compared; any
 * other qdisc, and any filter, is refused at dump by name.
 */
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <stdbool.h>
#include <sys/types.h>

#include "net-nl.h"

#include "netns.pb-c.h"

/* The kernel made qdisc @t itself: a new link's default (handle 0:). */
bool tc_qdisc_default(const struct tcmsg *t);
/* Why qdisc @t of kind @kind (NULL: none) cannot be made again, or NULL when it can. */
const char *tc_qdisc_refusal(const struct tcmsg *t, const char *kind, bool has_stab);
/* In the tree's namespace: its qdiscs that are not defaults into @out, or -EOPNOTSUPP naming one. */
int net_tc_read(pid_t pid, int sk, const struct nl_buf *links, struct nl_buf *out);
/* In the new namespace, its links made: each qdisc of @b made again and checked. 0 or -errno. */
int net_tc_restore(int sk, const ProtobufCBinaryData *b, const char *img);

#endif
