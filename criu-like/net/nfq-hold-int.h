// SPDX-License-Identifier: GPL-2.0
/*
 * Private to the packet holder's files: the controller (nfq-hold.c), the
 * holder process (nfq-holder.c) and its rules (nfq-hold-rules.c).
 */
#ifndef CRIU_LIKE_NFQ_HOLD_INT_H
#define CRIU_LIKE_NFQ_HOLD_INT_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "nfq-hold.h"

struct tool_run;

struct nfq_hold {
	int fd; /* connected to the holder */
	int queue;
	pid_t pid; /* the holder: its rules are chains CRLH_<pid>_I and _O of table raw */
	bool chains[2]; /* created, for IPv4 [0] and IPv6 [1] */
	bool found; /* started by another criu-like: its chains are not known */
	struct tool_run *primed[2]; /* ip(6)tables-restore started ahead (nfq_hold_prime()) */
	/*
	 * Table raw of the family (an nftables table under iptables-nft) was
	 * made by our first rules: removed again once it holds nothing else.
	 * raw_known: looked at (before the freeze when primed).
	 */
	bool raw_made[2], raw_known[2];
	char name[96];
};

#define HOLD_CHAIN_FMT "CRLH_%d"

/* nfq-holder.c: the abstract address of the holder @name; -ENAMETOOLONG. */
int sock_addr(const char *name, struct sockaddr_un *a, socklen_t *len);

/* nfq-hold.c: a controller's handle on the holder @name, connected by @fd; NULL: no memory. */
struct nfq_hold *hold_new(const char *name, int fd, int queue);
/* nfq-hold.c: a command and its answer (an int); -errno when the holder is gone. */
int hold_ask(struct nfq_hold *h, char c);

/* nfq-hold-rules.c: the chains of holder @pid removed, in both families (quiet). */
void holder_rules_remove(pid_t pid);
/* nfq-hold-rules.c: table raw of family @fi removed if it holds only its bare base chains. */
void raw_drop_bare(int fi);
/* nfq-hold-rules.c: the tools started ahead: their input ended, waited for. */
void hold_unprime(struct nfq_hold *h);

#endif
