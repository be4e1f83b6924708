/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NFQ_HOLD_H
#define CRIU_LIKE_NFQ_HOLD_H

/*
 * The packet holder (net/nfq-hold*.c, nfq-holder.c, Documentation/network-lock.md "Holding
 * packets"): a small process of its own that listens on an NFQUEUE of one
 * network namespace and gives no verdict to what the lock's rules queue
 * there, until it is told to accept it all (the restored sockets exist) or
 * to drop it (the tree is gone). Its death, or a full queue, drops: the
 * kernel drops what a queue without a listener is given and what a dead
 * listener held, so nothing reaches the tree before it runs again.
 *
 * It is found again by name (an abstract unix socket of its network
 * namespace, "criu-like-hold:NAME"): a kill-mode dump leaves it running
 * under the name of its kept lock, and the restore of the images asks it to
 * let the packets go.
 */
#include <stdbool.h>
#include <stdint.h>

/* The holder of the network namespace this thread is in, NULL without one. */
struct nfq_hold;

/*
 * Start a holder in this thread's network namespace named @name, listening
 * before this returns. 0 or -errno (logged as a warning: the caller falls
 * back to dropping packets).
 */
int nfq_hold_start(const char *name, struct nfq_hold **ret);
/* The holder named @name in this namespace, if one runs. 0, -ENOENT, -errno. */
int nfq_hold_find(const char *name, struct nfq_hold **ret);
/* Its queue number (`-j NFQUEUE --queue-num N`). */
int nfq_hold_queue(const struct nfq_hold *h);
/*
 * Hold the packets of @t[0..@n) both ways (nfq_hold_add()), or every packet
 * of the namespace not on lo (nfq_hold_add_netns()): rules of the holder's
 * own in table raw, ahead of the lock, which still drops underneath (the
 * kernel here has no nftables queue expression, only the xtables NFQUEUE
 * target). 0 or -errno, a warning: the lock then only drops.
 */
struct inet_tuple;
int nfq_hold_add(struct nfq_hold *h, const struct inet_tuple *t, size_t n);
int nfq_hold_add_netns(struct nfq_hold *h);
const char *nfq_hold_name(const struct nfq_hold *h);
/* A packet held, as the holder gives it (g); then its bytes from the network header on. */
struct hold_pkt {
	uint16_t proto; /* ETH_P_IP, ETH_P_IPV6; 0: the end */
	uint16_t len;
	uint32_t indev; /* the ifindex it came in on, in the holder's namespace */
};
/* A packet nfq_hold_give() passes on: 0 when it went, or -errno. */
typedef int (*nfq_hold_give_fn)(void *priv, const struct hold_pkt *p, const void *data);
/*
 * Take every packet held that came in from outside (up to 16 MiB of them),
 * in the order they came, to @fn, and drop them all from the queue: a
 * migration's source gives them to the destination. How many went, or -errno.
 */
int nfq_hold_give(struct nfq_hold *h, nfq_hold_give_fn fn, void *priv);
/*
 * Before the freeze: an iptables-restore and an ip6tables-restore started
 * now, waiting on their input, for the first nfq_hold_add() of each family,
 * which then only gives them its rules (their start is 2-3 ms each here, more
 * under load, out of the frozen time). nfq_hold_prime_end(): the ones not
 * used are killed now, having read nothing (no wait; nfq_hold_stop() and
 * nfq_hold_detach() reap them).
 * Best effort: a tool that does not start leaves nfq_hold_add() as it was.
 */
void nfq_hold_prime(struct nfq_hold *h);
void nfq_hold_prime_end(struct nfq_hold *h);
/*
 * Accept every held packet, in the order they came, and whatever comes from
 * now on: before the rules are removed (removing a base chain drops every
 * queued packet of the namespace). How many were held, or -errno.
 */
int nfq_hold_release(struct nfq_hold *h);
/*
 * After nfq_hold_release(): remove its rules, and wait until what was queued
 * meanwhile has passed; only then may the lock's tables go. 0 or -errno.
 */
int nfq_hold_unhold(struct nfq_hold *h);
/* Stop it: @drop, what it holds is dropped (the kernel does it as it exits); frees @h. */
void nfq_hold_stop(struct nfq_hold *h, bool drop);
/* Leave it running (a kill-mode dump: the restore finds it); frees @h. */
void nfq_hold_detach(struct nfq_hold *h);
/*
 * Remove the rules of holders that are gone (killed: a holder removes its own
 * as it exits): they would drop their connections' packets for good. How
 * many, after a warning each. Two tool runs: `iptables -t raw -S`, ip6tables.
 */
int nfq_hold_cleanup(void);
/* Stop the holder @name of this namespace if one runs (its lock is removed). */
void nfq_hold_stop_name(const char *name);

/*
 * The holder of this thread's network namespace, one per namespace: the lock
 * of the connections and the lock of a container's whole namespace share it.
 * nfq_hold_here() starts it (named @name) on first use when @start; NULL when
 * holding is off or unavailable (warned once per namespace).
 */
/*
 * Table raw of IPv4 [0] and IPv6 [1] is the tree's own (its restored rules
 * have one): the holder never removes it, even when its rules made it first.
 */
extern bool nfq_hold_raw_theirs[2];
/*
 * Look now (before the freeze) at the tables raw of this thread's network
 * namespace, for the next holder started there (its first rules).
 */
void nfq_hold_raw_probe(void);
struct nfq_hold *nfq_hold_here(const char *name, bool start);
/* Take this namespace's holder out of the table (the caller releases, stops or detaches it). */
struct nfq_hold *nfq_hold_take_here(void);
/* Holding off (--no-packet-hold, or the lock is skipped): nfq_hold_here() returns NULL. */
void nfq_hold_disable(bool off);

#endif
