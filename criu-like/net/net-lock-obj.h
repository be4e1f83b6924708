/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NET_LOCK_OBJ_H
#define CRIU_LIKE_NET_LOCK_OBJ_H

/* One lock (net-lock.c), for the cleanup (net-lock-cleanup.c) and a tree's (net-lock-tree.c). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net-lock.h"

struct netlock {
	enum netlock_kind kind;
	char name[NETLOCK_NAME_MAX];
	bool installed; /* nftables: the table exists */
	bool chain[2]; /* iptables: the chain exists for IPv4 [0], IPv6 [1] */
	bool kept; /* name is a kept name */
	bool reused; /* restore: the images' kept lock holds every connection already */
	struct inet_tuple *tuples; /* everything locked, to rebuild the table under a new name */
	size_t nr, cap;
	struct nft_runner *nft; /* nftables: kept open, so each connection costs no new start */
	char kept_name[NETLOCK_NAME_MAX]; /* dump: the kept name chosen up front (the holder's) */
	char *dir; /* nftables, created under its kept name: the images it names */
};

/* The start time of this process, read once (while /proc is criu-like's). 0 or -errno. */
int netlock_self_start_time(uint64_t *ret);
/* A lock of ours by name, whatever installed it: every family it exists in (NULL, errno set). */
struct netlock *netlock_by_name(const char *name);
/* Does @nl (netlock_by_name()) exist on this machine? Asked of the kernel, else through its runner. */
bool netlock_exists(struct netlock *nl);
/* Its libnftables runner opened now (nftables), not at its first change. */
void netlock_prepare(struct netlock *nl);

#endif
