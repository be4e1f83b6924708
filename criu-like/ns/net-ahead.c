// SPDX-License-Identifier: GPL-2.0
/*
 * What the dump of a tree's network namespace does before the freeze
 * (ns_net_dump_prefetch()), none of it read from the tree's state: the
 * sysctls of a fresh namespace, to compare the tree's with; a look at the
 * tables raw of its namespace; and the packet holder of the namespace's
 * lock, started there with its iptables-restore tools waiting on their input
 * (nfq_hold_prime()), as netlock_dump_ahead() does for a tree in criu-like's
 * namespace: inside the freeze the lock then only gives them its rules; and
 * libnetfilter_conntrack, loaded at its first use, for the conntrack table;
 * and the libnftables context of the ruleset's listing, made there (a
 * context's netlink socket is its namespace's; the lock is made by netlink).
 * Documentation/network-lock.md, "A container's network namespace".
 */
#define LOG_PREFIX "ns: net: "

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../net/net-lock-int.h"
#include "log.h"
#include "net-lock.h"
#include "net-sysctl.h"
#include "netfilter.h"
#include "nfq-hold.h"
#include "ns.h"
#include "options.h"
#include "util.h"

static struct net_sysctls fresh_early;
static bool fresh_early_ok;
/* the namespace whose holder was started ahead, until the end of the dump */
static int ahead_fd = -1;
/* the libnftables context made ahead in the tree's namespace (inode nft_ino) */
static struct nft_runner *nft_list;
static ino_t nft_ino;

/* In the tree's namespace (@fd): the context of its ruleset's listing. */
static void nft_ahead(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return;
	nft_ino = st.st_ino;
	nft_list = nft_runner_open();
}

static bool nft_here(void)
{
	struct stat st;

	return !stat("/proc/thread-self/ns/net", &st) && st.st_ino == nft_ino;
}

struct nft_runner *ns_net_nft_list(void)
{
	return nft_list && nft_here() ? nft_list : NULL;
}

/* In the tree's namespace: the holder its lock will use, started now. */
static void hold_ahead(int fd)
{
	const struct cr_options *o = ns_options();
	enum netlock_kind kind;
	struct nfq_hold *h;

	if (!o || netlock_parse_kind(o->network_lock, &kind) || kind == NETLOCK_SKIP)
		return;
	h = nfq_hold_here(NULL, true);
	if (!h)
		return;
	nfq_hold_prime(h);
	ahead_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	pr_debug("the packet holder of the tree's namespace ready before the freeze\n");
}

void ns_net_dump_prefetch(pid_t pid)
{
	struct stat own, tree;
	char path[64];
	int fd, saved;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	if (stat("/proc/self/ns/net", &own) || stat(path, &tree) || own.st_ino == tree.st_ino)
		return; /* none to dump, or ns_check_tree() says why */
	fresh_early_ok = !net_sysctls_fresh(&fresh_early);
	/* its conntrack table is read inside the freeze: the library loaded now */
	ct_prefetch();
	fd = open(path, O_RDONLY | O_CLOEXEC);
	saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && saved >= 0 && !setns(fd, CLONE_NEWNET)) {
		/* the tables raw the lock's packet holder would make there (nfq-hold.h) */
		nfq_hold_raw_probe();
		hold_ahead(fd);
		nft_ahead(fd);
		if (setns(saved, CLONE_NEWNET)) {
			pr_perror("cannot go back to criu-like's network namespace");
			abort(); /* criu-like in the wrong namespace would do harm: stop here */
		}
	}
	if (fd >= 0)
		close(fd);
	if (saved >= 0)
		close(saved);
}

bool ns_net_fresh_take(struct net_sysctls *out)
{
	if (!fresh_early_ok)
		return false;
	*out = fresh_early;
	fresh_early = (struct net_sysctls){ 0 };
	fresh_early_ok = false;
	return true;
}

void ns_net_ahead_done(void)
{
	net_sysctls_fini(&fresh_early); /* not taken: the dump failed before its network */
	fresh_early = (struct net_sysctls){ 0 };
	fresh_early_ok = false;
	nft_runner_close(TAKE_PTR(nft_list));
	nft_ino = 0;
	if (ahead_fd < 0)
		return;
	/* the lock took its holder, or the dump failed before: stopped, nothing held */
	ns_net_hold_stop_in(ahead_fd);
	close(ahead_fd);
	ahead_fd = -1;
}

void ns_net_hold_stop_in(int fd)
{
	int saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);

	if (saved >= 0 && !setns(fd, CLONE_NEWNET)) {
		nfq_hold_stop(nfq_hold_take_here(), true);
		if (setns(saved, CLONE_NEWNET)) {
			pr_perror("cannot go back to criu-like's network namespace");
			abort(); /* criu-like in the wrong namespace would do harm: stop here */
		}
	}
	if (saved >= 0)
		close(saved);
}
