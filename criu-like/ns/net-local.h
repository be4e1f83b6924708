/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_NET_LOCAL_H
#define CRIU_LIKE_NS_NET_LOCAL_H

/*
 * The addresses of a dumped tree's own network namespace (net-local.c): which
 * of its connections go over lo, and so are not held by the lock of the
 * whole namespace (ns_net_conn_outside(), ns.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net-nl.h"

struct local_addr {
	int family; /* AF_INET (4 bytes of a) or AF_INET6 */
	uint8_t a[16];
};

/* The addresses of the RTM_NEWADDR messages @addrs, kept: 0 or -ENOMEM (none kept). */
int net_local_set(const struct nl_buf *addrs);
void net_local_reset(void);
/*
 * Whether @a (@family; IPv4 in its first 4 bytes) is reached over lo: a
 * loopback or unspecified address, or one of @l[0..@n) (an IPv4-mapped IPv6
 * address compared as IPv4).
 */
bool net_local_addr(int family, const uint8_t *a, const struct local_addr *l, size_t n);

/* net_local_addr() against the addresses net_local_set() kept. */
bool net_local_kept(int family, const uint8_t *a);

#endif
