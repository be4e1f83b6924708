/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_NET_SYSCTL_H
#define CRIU_LIKE_NS_NET_SYSCTL_H

/*
 * The net sysctls of a network namespace (net-sysctl.c): every readable and
 * writable file of the per-link directories (ipv4/conf, ipv6/conf,
 * ipv4/neigh, ipv6/neigh: all, default, each link), and the other files of
 * /proc/sys/net whose value differs from a fresh namespace's.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "net-nl.h"

#include "netns.pb-c.h"

struct net_sysctls {
	NetSysctlEntry *e;
	size_t n, size;
};

void net_sysctls_fini(struct net_sysctls *s);
/* @path (under /proc/sys/net/) is in a per-link directory: read link by link. */
bool net_sysctl_per_link(const char *path);
/* @path is never saved nor written (a flush: write-only, an action rather than a value). */
bool net_sysctl_never(const char *path);
/* Is @path an ipv6/conf/LINK/mtu, which setting the link's MTU resets? */
bool net_sysctl_mtu6(const char *path);
/* The index of the tun or tap link of @ne whose ipv6/conf/LINK/mtu @path is, else 0. */
int net_sysctl_mtu6_tun(const NetnsEntry *ne, const char *path);
/* In the new namespace: the saved ipv6/conf/LINK/mtu of @ne written again. 0 or -errno. */
int net_sysctl_mtu6_restore(const NetnsEntry *ne);
/* The order of the per-link files of one directory: qsort comparison of two paths. */
int net_sysctl_cmp(const void *a, const void *b);
/*
 * At dump, in criu-like's thread: the global ones of a fresh namespace
 * (made for it and let go) into @fresh, sorted. 0 or -errno (logged).
 */
int net_sysctls_fresh(struct net_sysctls *fresh);
/* Those of a fresh namespace read before the freeze (ns/net-ahead.c) into @out: false if none. */
bool ns_net_fresh_take(struct net_sysctls *out);
/* The end of a dump: what was read or started before the freeze and not taken goes. */
void ns_net_ahead_done(void);
/*
 * In the tree's namespace (this thread): the global ones that differ from
 * @fresh, then those of all, default and each link of @links. 0 or -errno.
 */
int net_sysctls_read(pid_t pid, const struct nl_buf *links, const struct net_sysctls *fresh,
		     struct net_sysctls *out);
/*
 * At restore, in the new namespace: each sysctl of @ne written when it
 * differs from the current value (@mtu6_only: only the ipv6 MTUs). Without
 * @mtu6_only, the values known ahead (below) are used and dropped.
 */
int net_sysctls_restore(const NetnsEntry *ne, bool mtu6_only);
/*
 * In a namespace made ahead of its restore, once it is as the restore will
 * find it: every sysctl's value read and kept, so that the restore's
 * net_sysctls_restore() skips those of the image that are the same, up to
 * its first write. 0 or -errno (then nothing is kept). Dropped by
 * net_sysctls_known_drop() when the namespace changes before the restore.
 */
int net_sysctls_known_read(void);
void net_sysctls_known_drop(void);
/* Written whatever it is now. */
int net_sysctl_set(const char *path, const char *value);

#endif
