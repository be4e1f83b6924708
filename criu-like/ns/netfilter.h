/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_NETFILTER_H
#define CRIU_LIKE_NS_NETFILTER_H

/*
 * The netfilter state of a container's network namespace
 * (Documentation/netfilter.md): its rules (netfilter.c) and its conntrack
 * table (conntrack.c). Dump: called by net.c with the dumper's thread in
 * the tree's namespace. Restore: in the new namespace, after its lock and
 * its links, addresses and routes, before any task of the tree exists.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "conntrack.pb-c.h"
#include "nfrules.pb-c.h"

/* ---- netfilter.c: nftables, iptables (legacy and nft back ends) ---- */

/*
 * Read the rules of this thread's namespace, check that they come back the
 * same in a scratch namespace, write nfrules-@id.img when there are any.
 * A rule the tools cannot give back is refused naming it: -EOPNOTSUPP.
 */
int nf_rules_dump(pid_t pid, int dirfd, uint32_t id);
/* The image of @id, or *@ret NULL when the dump wrote none. */
int nf_rules_load(int dirfd, uint32_t id, NfRulesEntry **ret);
/* Install @e (NULL: nothing) in this thread's namespace, next to the lock. */
int nf_rules_restore(const NfRulesEntry *e);

/* `nft list ruleset` split by who gives each table back (nf_nft_split()). */
struct nf_split {
	char *nft; /* the tables nft gives back */
	char *ipt; /* the tables iptables-nft-save gives back, as nft lists them */
	char *ipt4, *ipt6; /* their names ("filter nat") per family */
	char *xt; /* "FAMILY NAME\n" of the other tables with xt expressions: refused */
};

/*
 * Pure, for the tests. Split `nft list ruleset` @text: criu-like's own
 * tables (criu_like_*), chains (CRLK_*, CRLH_*) and rules (jumps to them, the
 * "criu-like-netns" comment) go, and so do the empty tables iptables-nft
 * leaves; a table of ip or ip6 that iptables-nft claims (@claimed4,
 * @claimed6: the tables its save lists) and holds nothing but chains is
 * iptables-nft's. 0 or -ENOMEM.
 */
int nf_nft_split(const char *text, const char *claimed4, const char *claimed6, struct nf_split *s);
void nf_split_fini(struct nf_split *s);
/* @text with its tables sorted, without blank lines and empty accepting base chains. */
char *nf_nft_canon(const char *text);
/*
 * iptables-save @text without comments, criu-like's chains and rules, and
 * the tables left with nothing of their own (no rule, no chain of theirs,
 * every policy ACCEPT); with @only (a list of table names separated by
 * spaces) only those tables. "" when nothing is left; NULL, errno.
 */
char *nf_ipt_strip(const char *text, const char *only);
/* The first line where @a and @b differ (1-based) and its text in @a into @buf; 0 if equal. */
size_t nf_text_diff(const char *a, const char *b, char *buf, size_t size);

/* ---- conntrack.c: the conntrack table (libnetfilter-conntrack) ---- */

/* Read this thread's namespace's conntrack table into conntrack-@id.img; refuse expectations and helpers. */
int ct_dump(pid_t pid, int dirfd, uint32_t id);
/* libnetfilter_conntrack loaded ahead of ct_dump(), before the freeze; best effort. */
void ct_prefetch(void);
int ct_load(int dirfd, uint32_t id, ConntrackTable **ret);
/* Create every entry of @t (NULL: nothing) in this thread's namespace. */
int ct_restore(const ConntrackTable *t);
/* One entry, as `conntrack -L` prints its first part, for messages. */
void ct_describe(const ConntrackEntry *e, char *buf, size_t size);

#endif
