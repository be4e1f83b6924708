/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NET_LOCK_H
#define CRIU_LIKE_NET_LOCK_H

/*
 * The network lock (net-lock.c, --network-lock nftables|iptables|skip): from
 * the moment a dump puts a TCP connection of the tree in repair mode until
 * the restored task runs again, every packet of that connection is dropped
 * both ways, so the peer sees neither a reset nor an answer and simply
 * retransmits. Rules are per connection (4-tuple), in a table or chain of
 * the tool's own, named after the dump; nothing permanent is installed.
 */
#include <stdbool.h>
#include <stdint.h>

struct dump_ctx;
struct restore_ctx;

/* One TCP connection: addresses in network byte order, ports in host order. */
struct inet_tuple {
	int family; /* AF_INET (addresses in the first 4 bytes) or AF_INET6 */
	uint8_t src[16], dst[16]; /* local and remote address */
	uint16_t sport, dport; /* local and remote port */
};

/*
 * Dump: drop every packet of @t from now on, installing the lock on first
 * use (ctx->netlock). Called before the socket is put in repair mode. 0 or
 * -errno (logged); with --network-lock skip, 0 and nothing done.
 */
int netlock_dump_conn(struct dump_ctx *ctx, const struct inet_tuple *t);

/*
 * Restore: make sure the packets of @t are dropped before its socket is
 * restored (the lock of the dump is still there on the same machine; on
 * another one it is installed). 0 or -errno (logged).
 */
int netlock_restore_conn(struct restore_ctx *ctx, const struct inet_tuple *t);

#endif
