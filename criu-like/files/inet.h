/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_INET_H
#define CRIU_LIKE_FILES_INET_H

/*
 * TCP and UDP sockets (Documentation/network.md), the inet kind's own
 * header: inet.c (the kind: one socket dumped and restored, its addresses),
 * inet-diag.c (sock_diag, the kind's dump state), inet-opts.c (socket
 * options), tcp.c (TCP states, backlogs, the network lock), tcp-repair.c
 * (connections read and rebuilt in repair mode), udp.c (queued datagrams).
 */
#include <stdbool.h>
#include <stddef.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "sk-inet.pb-c.h"

/* inet.c: the kind (its descriptions, its dump state). */
extern const struct file_kind inet_kind;

struct nlmsghdr;
struct fd_info;
struct dump_ctx;
struct file_desc;
struct inet_tuple;
struct restore_ctx;

/* "1.2.3.4:80", "[::1]:80" or "[::ffff:1.2.3.4]:80" */
#define INET_ADDR_STRLEN 64
/* "SRC -> DST" of inet_entry_ends() */
#define INET_ENDS_STRLEN (2 * INET_ADDR_STRLEN + 8)

/* The first 12 bytes of an IPv4 address mapped into IPv6 (::ffff:a.b.c.d). */
extern const uint8_t inet_v4mapped[12];

/* What sock_diag says about one inet socket. */
struct inet_sk_diag {
	uint32_t ino; /* 0: a connection in the accept queue of a listening socket */
	uint8_t family, proto, state, shutdown;
	uint8_t src[16], dst[16]; /* network order; AF_INET in the first 4 bytes */
	uint16_t sport, dport; /* host order */
	uint32_t rqueue, wqueue; /* a listening socket: accept queue length, backlog */
};

/* Every TCP socket put in repair mode by the dump, to be taken out or closed. */
struct inet_repaired {
	int fd; /* the dumper's own duplicate */
	pid_t pid;
	int task_fd;
	int reuseaddr; /* SO_REUSEADDR to put back; -1: not in repair mode */
};

/* The kind's dump state (file_kind_dump_state(): inet_dump_get()). */
struct inet_scan;

struct inet_dump {
	struct inet_sk_diag *sks; /* every inet socket of this network namespace */
	size_t nr_sks;
	bool loaded;
	struct inet_repaired *rep;
	size_t nr_rep, cap_rep;
	/* the connections of the tree locked at once before the first repair (sorted inodes) */
	bool locked_tree;
	uint32_t *locked;
	size_t nr_locked;
	/* bound inet sockets that processes outside the tree hold too, by inode */
	bool outside_loaded;
	struct inet_holder *outside;
	size_t nr_outside;
	/* inet_dump_start(): every socket fd outside the tree, read by a thread */
	struct inet_scan *scan;
	/* bound sockets met while that thread ran: checked by inet_dump_sync() */
	struct inet_outside_check *pending;
	size_t nr_pending;
	/*
	 * inet_dump_start(): sock_diag and the lock, by a thread; inet_dump_get()
	 * waits until the connections are held (or locked), inet_dump_sync()
	 * until the lock is made too.
	 */
	struct inet_early *early;
	int early_err; /* tcp_lock_tree() failed before the connections were held */
	int lock_err; /* tcp_lock_tree() failed after (read once the thread is joined) */
};

struct inet_holder {
	uint32_t ino;
	pid_t pid;
};

/* BPF_MAXINSNS: the longest classic socket filter */
#define INET_FILTER_MAX 4096

/* TCP_CA_NAME_MAX of the kernel, without the NUL */
#define INET_CONG_MAX 16

#define INET_OPT_TCP (1u << 0) /* TCP sockets only */
#define INET_OPT_V4 (1u << 1) /* AF_INET only */
#define INET_OPT_V6 (1u << 2) /* AF_INET6 only */
#define INET_OPT_BUF (1u << 3) /* a buffer size: set as half, with the ..FORCE option */
#define INET_OPT_BEFORE_BIND (1u << 4)
#define INET_OPT_DGRAM (1u << 5) /* datagram sockets: UDP, UDP-Lite, raw, ping */
#define INET_OPT_RAW (1u << 6) /* raw sockets only */
#define INET_OPT_UDPLITE (1u << 7) /* UDP-Lite sockets only */
#define INET_OPT_ICMP (1u << 8) /* protocol IPPROTO_ICMP only */
#define INET_OPT_UDP (1u << 9) /* UDP and UDP-Lite sockets only */

/* The kinds of inet socket: TCP, UDP and UDP-Lite, raw (any protocol), ping. */
static inline bool inet_is_udp(int type, int proto)
{
	return type == SOCK_DGRAM && (proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE);
}

static inline bool inet_is_ping(int type, int proto)
{
	return type == SOCK_DGRAM && (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6);
}

/*
 * inet-diag.c: @n bytes of address from the hex words of /proc/net/raw or
 * icmp ("0100007F:0001": each __be32 printed as a u32; ':' must follow). 0
 * or -EINVAL.
 */
int inet_proc_addr(const char *hex, uint8_t *addr, size_t n);
/* udp.c: the checksum of UDP-Lite datagram @pkt (@len bytes) over IPv4, all of it covered. */
struct sockaddr_in;
uint16_t udplite_csum4(const struct sockaddr_in *src, const struct sockaddr_in *dst,
		       const uint8_t *pkt, size_t len);

/* "TCP", "UDP", "UDP-Lite", "raw", "ping" */
const char *inet_kind_name(int type, int proto);

/* One int option, saved into a 32-bit field of InetSkEntry and its has_ flag. */
struct inet_opt {
	int level, opt;
	size_t has_off, val_off;
	unsigned int flags;
	const char *name; /* NULL ends the table */
};

/* TCP states dumped in repair mode: with our FIN sent, with the peer's received. */
#define TCPF_OUR_FIN \
	((1u << TCP_FIN_WAIT1) | (1u << TCP_FIN_WAIT2) | (1u << TCP_LAST_ACK) | (1u << TCP_CLOSING))
#define TCPF_PEER_FIN ((1u << TCP_CLOSE_WAIT) | (1u << TCP_LAST_ACK) | (1u << TCP_CLOSING))
#define TCPF_REPAIRED \
	((1u << TCP_ESTABLISHED) | (1u << TCP_SYN_SENT) | TCPF_OUR_FIN | TCPF_PEER_FIN)

/* ---- inet.c: addresses (pure helpers, unit-tested in test/unit/test-inet.c) ---- */

/* @addr as @family's address (4 or 16 bytes) and @port into @buf. */
const char *inet_fmt(int family, const uint8_t *addr, uint16_t port, char *buf, size_t len);
/* The addresses and ports of @dg into @e (pointing into @dg: keep @dg alive). */
void inet_entry_addrs(InetSkEntry *e, struct inet_sk_diag *dg);
/* The tuple of an entry, for the network lock; -EINVAL for a bad entry. */
int inet_entry_tuple(const InetSkEntry *e, struct inet_tuple *t);
/* Both ends of @e as text, "SRC -> DST", for messages. */
const char *inet_entry_ends(const InetSkEntry *e, char *buf, size_t len);
/* @e's addresses as a sockaddr; -EINVAL for a bad entry. */
int inet_sockaddr(const InetSkEntry *e, bool dst, struct sockaddr_storage *sa, socklen_t *len);

/* ---- inet-diag.c: what sock_diag says, the kind's dump state ---- */

/*
 * One SOCK_DIAG_BY_FAMILY answer into @ret; @proto is the one asked for
 * (inet_diag_msg does not carry it). -EINVAL for a short message.
 */
int inet_diag_parse(const struct nlmsghdr *h, uint8_t proto, struct inet_sk_diag *ret);
/* The kind's dump state, made on first use; NULL when out of memory. */
struct inet_dump *inet_dump_get(struct dump_ctx *ctx);
/*
 * What sock_diag knows of @f (every socket of the namespace loaded once per
 * dump), or what getsockname tells of a socket it does not list.
 */
int inet_diag_of(struct dump_ctx *ctx, const struct fd_info *f, int type, int proto,
		 struct inet_sk_diag *dg);
/*
 * -EOPNOTSUPP (logged) when the bound socket @f (entry @e) is also held by a
 * process outside the tree: the restore could not take its address again.
 * While the scan's thread (inet_dump_start()) still walks /proc, 0: the
 * check is kept, and made by inet_dump_sync() (the kind's dump_finish, the
 * tree still frozen), which refuses the same way.
 */
int inet_check_outside(struct dump_ctx *ctx, const struct fd_info *f, const InetSkEntry *e);
/*
 * The kind's dump_start: with --tcp-established, the scan of every process
 * outside the tree for the sockets it holds (inet_check_outside()) starts
 * in a thread as soon as the tree is frozen, while its tasks are infected,
 * instead of at the first bound socket, inside the files pass (3 ms here,
 * more on a host with more processes).
 */
int inet_dump_start(struct dump_ctx *ctx);
/*
 * The kind's dump_fini: at the end of a dump, with the tree still frozen:
 * when @resume (the tree goes on: -R or a failure), take every socket the
 * dump put in repair mode out of it (tcp_repair_undo()); then free the
 * kind's dump state.
 */
void inet_dump_fini(struct dump_ctx *ctx, bool resume);

/* ---- inet-opts.c: socket options, dump and restore ---- */

/* The options saved and restored, and which sockets they apply to. */
extern const struct inet_opt inet_opts[];
bool inet_opt_applies(const struct inet_opt *o, int family, int type, int proto);
/* getsockopt() of an int option of the drained socket @f (logged on failure). */
int inet_sk_getint(const struct fd_info *f, int level, int name, int *val);
/*
 * inet.c: bind(), with IP_FREEBIND for that call only when the address is an
 * IPv6 one of this namespace still tentative (a restored veth without its
 * carrier yet). 0 or -errno, not logged.
 */
int inet_bind_tentative(int sk, const struct sockaddr_storage *sa, socklen_t len);
/* setsockopt() of an int option: 0 or -errno (not logged). */
int inet_sk_setint(int sk, int level, int opt, int val);
/*
 * The options of @f into @e (@cong and @dev: room for the names,
 * INET_CONG_MAX + 1 and IFNAMSIZ + 1 bytes), its classic BPF filter into
 * e->filter (malloc'ed when there is one: the caller frees e->filter.data).
 * 0 or -errno (logged).
 */
int inet_dump_opts(const struct fd_info *f, InetSkEntry *e, char *cong, char *dev);
int inet_dump_filter(const struct fd_info *f, InetSkEntry *e);
/* Any socket: its classic BPF filter into *@filter (malloc'ed; empty: none), and SO_LOCK_FILTER. */
int sk_dump_filter(const struct fd_info *f, ProtobufCBinaryData *filter, bool *locked);
/* ...and back on @sk (nothing when @filter is empty). */
int sk_restore_filter(int sk, const ProtobufCBinaryData *filter, bool lock, uint32_t id);
/*
 * At restore, on the new socket @sk of file @id: the options that must come
 * before bind() (SO_REUSEADDR forced on, IPV6_V6ONLY, SO_BINDTODEVICE and
 * the table's), the others after it, and the socket filter (after the queued
 * datagrams are back). 0 or -errno (logged).
 */
int inet_restore_opts_before_bind(int sk, const InetSkEntry *e, uint32_t id);
int inet_restore_opts_after(int sk, const InetSkEntry *e, uint32_t id);
int inet_restore_filter(int sk, const InetSkEntry *e, uint32_t id);
/* SO_BUF_LOCK as saved, after the last buffer size is set (those set it). */
int inet_restore_buf_lock(int sk, const InetSkEntry *e, uint32_t id);

/* ---- tcp.c: TCP states, connections in a backlog, the network lock ---- */

const char *tcp_state_name(unsigned int state);
/* The TCP part of @f's dump, by the state sock_diag gives in @dg. */
int tcp_dump(struct dump_ctx *ctx, const struct fd_info *f, const struct inet_sk_diag *dg,
	     InetSkEntry *e);
/*
 * Connections not yet accepted. tcp_dump_backlog(): the listening socket @f
 * with @dg->rqueue of them: each must come from a client of the tree and
 * have received nothing, else -EOPNOTSUPP (logged).
 * tcp_dump_backlog_client(): 1 when the established @f is such a client
 * (e->connect_backlog set), 0 when it is an ordinary connection, or -errno.
 */
int tcp_dump_backlog(struct dump_ctx *ctx, const struct fd_info *f, const struct inet_sk_diag *dg,
		     InetSkEntry *e);
int tcp_dump_backlog_client(struct dump_ctx *ctx, const struct fd_info *f,
			    const struct inet_sk_diag *dg, InetSkEntry *e);
/* The connection @e of @f locked: with the whole tree's on first use, else alone. */
int tcp_lock_conn(struct dump_ctx *ctx, const struct fd_info *f, const InetSkEntry *e);
/*
 * tcp.c: lock every connection of the tree that the dump puts in repair
 * mode, in one transaction (@in: sock_diag loaded). Any thread: it touches
 * @in, the lock and the holder only. With @held, when the holder made ahead
 * holds them (netlock_dump_conns_hold()), @held(@arg) is called once
 * in->locked is complete, before the lock's own transaction (the caller's
 * other thread may go on: the connections are safe). 0 or -errno.
 */
int tcp_lock_tree(struct dump_ctx *ctx, struct inet_dump *in, void (*held)(void *), void *arg);
/*
 * inet-diag.c, the kind's dump_finish: the early lock's thread done (its lock
 * made); its error, or 0. Main thread.
 */
int inet_dump_sync(struct dump_ctx *ctx);
/* Whether a TCP entry has what its state needs. */
bool tcp_entry_ok(const InetSkEntry *e);
/* Whether the network lock holds @e at restore (a connection, a SYN_SENT socket); NULL: no. */
bool tcp_entry_locked(const InetSkEntry *e);
/*
 * At restore: every connection of the images restored in repair mode, and
 * every connect() in flight (SYN_SENT), locked at once
 * (netlock_restore_conns()), before the first of them.
 */
int rst_tcp_lock_all(struct restore_ctx *ctx);
/*
 * The kind's resume hook, in the controller, every task waiting at the
 * barrier: take every TCP socket restored in repair mode out of it. 0 or
 * -errno.
 */
int rst_inet_repair_off(struct restore_ctx *ctx);

/* ---- tcp-repair.c: connections read and rebuilt in repair mode ---- */

/*
 * A TCP connection @f (TCPF_REPAIRED states; e->state is set to the one it
 * is read in) locked, put in repair mode and read into e->tcp (malloc'ed,
 * freed by the caller with tcp_stream_free()), or into e->syn_seq for a
 * connect() in flight. Refused without --tcp-established. The socket stays
 * in repair mode until inet_dump_fini().
 */
int tcp_dump_established(struct dump_ctx *ctx, const struct fd_info *f, InetSkEntry *e);
void tcp_stream_free(TcpStreamEntry *t);
/*
 * The send queue of @t: the first *@sent bytes were sent and wait for their
 * acknowledgement, the *@unsent after them never left. -EINVAL when the
 * entry does not add up.
 */
int tcp_sendq_split(const TcpStreamEntry *t, size_t *sent, size_t *unsent);
/*
 * The send queue of @t at restore: the first *@as_sent bytes queued as sent
 * in repair mode, the *@written after them written after repair. The part that
 * had been sent is written again when at most TCP_RESEND_MAX bytes (it goes
 * at once instead of after the retransmission timer). -EINVAL as above.
 */
#define TCP_RESEND_MAX (4 * 1024)
int tcp_sendq_restore_split(const TcpStreamEntry *t, size_t *as_sent, size_t *written);
/* The TCP_TIMESTAMP to restore: @ts read at @read_ms, moved on to @now_ms (CLOCK_REALTIME). */
uint32_t tcp_ts_restored(uint32_t ts, uint64_t read_ms, uint64_t now_ms);
/*
 * For inet_dump_fini(): when @resume, every socket the dump put in repair
 * mode taken out of it; the dumper's duplicates closed, in->rep freed.
 */
void tcp_repair_undo(struct inet_dump *in, bool resume);
/*
 * At restore: the established connection @e into the new socket @sk
 * (created, options set, in repair mode), for file @id.
 */
int tcp_restore_established(int sk, const InetSkEntry *e, uint32_t id);
/* The connect() in flight of @e (SYN_SENT) made again on @sk. */
int tcp_restore_syn_sent(int sk, const InetSkEntry *e, uint32_t id);
/*
 * The connection @e restored on @sk taken out of repair mode (with a window
 * probe), its never-sent data written, its buffer sizes and SO_REUSEADDR
 * set. For rst_inet_repair_off(). 0 or -errno.
 */
int tcp_go_live(int sk, const InetSkEntry *e);

/* ---- udp.c: the datagrams queued on a UDP socket ---- */

/*
 * The UDP part of @f's dump: its shutdown bits and the datagrams queued
 * into e->dgrams (malloc'ed: udp_queue_free()), or, for a socket bound to a
 * multicast or broadcast address, counted into e->dropped_dgrams (warned).
 * udp_queue_size() and udp_queue_pack(): the datagrams copied into one
 * block of that size.
 */
int udp_dump(const struct fd_info *f, const struct inet_sk_diag *dg, InetSkEntry *e);
void udp_queue_free(InetSkEntry *e);
size_t udp_queue_size(const InetSkEntry *e);
void udp_queue_pack(InetSkEntry *dst, const InetSkEntry *src, uint8_t *at);
/* A multicast or the broadcast address (224.0.0.0/4, 255.255.255.255, ff00::/8, v4-mapped). */
bool inet_addr_group(int family, const uint8_t *a);
/*
 * At restore: the datagrams of @e sent again to @sk (bound, not yet
 * connected), each from its sender's address and port. 0 or -errno (logged).
 */
int udp_refill(int sk, const InetSkEntry *e, uint32_t id);

#endif
