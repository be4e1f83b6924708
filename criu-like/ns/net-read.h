/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_NET_READ_H
#define CRIU_LIKE_NS_NET_READ_H

/*
 * What the dump of a tree's network namespace reads there (net-read.c): its
 * rtnetlink dumps by the dumper's thread, its sysctls by a thread of their
 * own beside the rest of the freeze, and the image written once both are in
 * (ns_net_dump_finish()).
 */
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "net-nl.h"
#include "net-sysctl.h"

#include "netns.pb-c.h"

struct net_read {
	struct nl_buf links, addrs, routes, rules, neighs, qdiscs;
	struct net_sysctls fresh; /* the global ones of a fresh namespace */
	struct net_sysctls sysctls;
	NetSysctlEntry **sysctlp;
};

/* A namespace's dump, its image written by ns_net_dump_finish(). */
struct net_dump {
	NetnsEntry e; /* all but the sysctls */
	NetLinkEntry *links, **linkp;
	struct nl_buf host; /* criu-like's links: the veths' outside ends */
	struct net_read r;
	pid_t pid;
	int dirfd; /* the dump's, not owned */
	uint32_t id;
	int netns; /* owned: the sysctls' thread enters it */
	pthread_t th;
	bool th_started;
	int th_err;
};

/* In the tree's namespace (this thread): every rtnetlink dump of it into @r. 0 or -errno. */
int net_read_rtnl(pid_t pid, struct net_read *r);
/* Routes that need objects not dumped (nexthop objects) are refused: 0 or -EOPNOTSUPP. */
int net_read_check_routes(pid_t pid, const struct nl_buf *routes);
/*
 * The sysctls of the namespace @d->netns into @d->r, by a thread that enters
 * it, started now (or read now when no thread can be made: then its result).
 */
int net_read_sysctls_start(struct net_dump *d);
void net_dump_free(struct net_dump *d);
/* @d (allocated, NULL: none) is the dump whose image ns_net_dump_finish() writes. */
void net_dump_pending_set(struct net_dump *d);

#endif
