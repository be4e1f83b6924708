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
 * Documentation/network-lock.md has the names and the cleanup rule.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cr_options;
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

/*
 * The same for @n connections at once: one transaction, one run of the tool
 * (per family with iptables) instead of one per connection. Per connection,
 * libnftables takes about 0.15 ms, the nft tool (no libnftables) 4-8 ms and
 * iptables-restore 2.5 ms: a dump that knows several connections before
 * putting any in repair mode saves that much frozen time per connection.
 */
int netlock_dump_conns(struct dump_ctx *ctx, const struct inet_tuple *t, size_t n);
/*
 * netlock_dump_conns() in two halves, for a caller that goes on while the
 * lock is made (the early lock, files/inet-diag.c): with the lock and the
 * holder made ahead (netlock_dump_ahead()), netlock_dump_conns_hold() has the
 * holder queue @t's packets both ways: 1 when they are held (nothing of them
 * reaches or leaves their sockets from now on: the caller may go on, and must
 * call netlock_dump_conns_lock(..., true) before anything else touches the
 * lock), 0 when they are not (no lock made ahead, no holder, or its rules
 * failed: netlock_dump_conns_lock(..., false) locks them the usual way before
 * the caller goes on), or -errno. netlock_dump_conns_lock(): 0 or -errno.
 */
int netlock_dump_conns_hold(struct dump_ctx *ctx, const struct inet_tuple *t, size_t n);
int netlock_dump_conns_lock(struct dump_ctx *ctx, const struct inet_tuple *t, size_t n, bool held);
int netlock_restore_conns(struct restore_ctx *ctx, const struct inet_tuple *t, size_t n);

/* ---- the hooks of dump.c and restore.c ---------------------------------------------------- */

/*
 * Any dump or restore, first: remove the locks that crashed runs left
 * behind, and kept locks whose images no longer record them (one `nft list
 * tables`, or `iptables -S` and `ip6tables -S`; one more look per kept
 * lock). Failures are warnings: a leftover lock never stops a dump or a
 * restore.
 */
void netlock_cleanup_stale(const struct cr_options *o);
/*
 * What netlock_cleanup_stale() does first, alone, for a run that cleans up
 * later: the restore, whose cleanup waits until the tree runs (nothing it
 * removes is a lock the restore needs: the images' own kept lock is never
 * stale while they record it), out of the time its connections are held.
 */
void netlock_run_start(const struct cr_options *o);

/*
 * dump.c, before the freeze, with --tcp-established and packets held, for a
 * tree in criu-like's network namespace: what the first locked connection
 * needs is made while the tree still runs, out of its frozen time: the
 * lock's nftables context and its name, the packet holder (listening, no
 * rule yet: nothing is held) and an iptables-restore per family waiting for
 * the holder's rules. A tree with no connection ends with nothing installed
 * and the holder stopped (netlock_dump_fini()). 0 or -errno (logged).
 */
int netlock_dump_ahead(struct dump_ctx *ctx);

/*
 * dump.c, once the images are complete and the tree is about to be killed,
 * before the final inventory: give the lock (if any) its kept name, naming
 * the image directory, in one transaction, so that later runs leave it
 * alone while those images record it. 0 or -errno (logged).
 */
int netlock_dump_keep(struct dump_ctx *ctx);
/* The kept name for the inventory (InventoryEntry.network_lock); NULL: none. */
const char *netlock_dump_kept_name(const struct dump_ctx *ctx);
/* dump.c, at the very end: @remove (the tree runs on) drops the lock; frees ctx->netlock. */
void netlock_dump_fini(struct dump_ctx *ctx, bool remove);

/*
 * restore.c, while the restorer fills the memory (the controller only
 * waits): the dump's packet holder of the images' kept lock, in criu-like's
 * network namespace, is found now (a connect and three questions, each a
 * wake-up of the holder) rather than at the let-go. Nothing else changes:
 * netlock_restore_fini() uses it as it would have found it.
 */
void netlock_restore_ahead(struct restore_ctx *ctx);

/*
 * restore.c, at the end. @restored (the tree runs): remove the lock of the
 * images (InventoryEntry.network_lock) and any lock this restore installed.
 * A failed restore keeps the lock under the images' name, so that another
 * restore of the same images still finds the peers waiting; images that
 * record no lock get theirs removed. Frees ctx->netlock.
 */
void netlock_restore_fini(struct restore_ctx *ctx, bool restored);

/* The `criu-like net-lock` command (list, cleanup, unlock NAME, lock TUPLE...). */
int cr_net_lock(const struct cr_options *o, int argc, char **argv);

/* ---- the lock itself ------------------------------------------------------------------------ */

enum netlock_kind {
	NETLOCK_NFTABLES, /* table inet NAME, its own input and output chains (the default) */
	NETLOCK_IPTABLES, /* chain NAME of table filter, jumped to from INPUT and OUTPUT */
	NETLOCK_SKIP, /* nothing: the caller locks the network itself */
};

/* nftables table names; kept ones are recorded in an inventory. */
#define NETLOCK_NFT_PREFIX "criu_like_"
#define NETLOCK_NFT_KEPT_PREFIX "criu_like_kept_"
/* iptables chain names (at most 28 characters). */
#define NETLOCK_IPT_PREFIX "CRLK_"
#define NETLOCK_IPT_KEPT_PREFIX "CRLK_K"
#define NETLOCK_NAME_MAX 64

struct netlock;

/* A lock of @kind (not SKIP) named after this process; nothing installed yet. NULL, errno. */
struct netlock *netlock_new(enum netlock_kind kind);
/* Drop the packets of @t[0..@n); the first call installs the table or chain. 0 or -errno (logged). */
int netlock_add(struct netlock *nl, const struct inet_tuple *t, size_t n);
/*
 * Move the lock to @name (NULL: a new kept name), atomically per family,
 * naming the image directory @dir (absolute; NULL: none) that records it.
 * 0 or -errno (logged).
 */
int netlock_keep(struct netlock *nl, const char *name, const char *dir);
/*
 * The verdict of the cleanup on our lock @name of @kind, the system asked:
 * its process, or for a kept lock the inventory of the directory it names.
 */
enum netlock_verdict netlock_verdict_of(enum netlock_kind kind, const char *name);
/*
 * Drop nothing more, the rules emptied but the table or chain still there:
 * removing an nftables base chain would drop every packet a queue of the
 * namespace holds (nfq-hold.h). 0 or -errno (a warning).
 */
int netlock_open(struct netlock *nl);
/* Remove whatever the lock installed. 0 or -errno (logged). */
int netlock_remove(struct netlock *nl);
const char *netlock_name(const struct netlock *nl);
bool netlock_installed(const struct netlock *nl);
void netlock_free(struct netlock *nl);
/*
 * Our locks of @kind, from one `nft list tables` (or `iptables -S` and
 * `ip6tables -S`): *@ret NULL-terminated, one free(). 0, -ENOENT without
 * the tool, -EIO (logged) when it fails.
 */
int netlock_list(enum netlock_kind kind, char ***ret);
/*
 * Remove the locks of @kind that netlock_judge() finds stale: how many, or
 * -errno (logged; a missing tool is no error when @quiet_missing).
 */
int netlock_cleanup(enum netlock_kind kind, bool quiet_missing);
/* A lock of ours by @name (kind from its prefix): is it installed; remove it. */
bool netlock_name_exists(const char *name);
int netlock_remove_name(const char *name);

/* ---- pure functions (net-lock-rules.c, unit-tested) ---------------------------------------- */

/* "nftables", "iptables", "skip"; NULL means the default, nftables. 0 or -EINVAL. */
int netlock_parse_kind(const char *s, enum netlock_kind *ret);
const char *netlock_kind_name(enum netlock_kind kind);
/* The kind a lock's name belongs to; -EINVAL if it is not a lock of ours. */
int netlock_name_kind(const char *name, enum netlock_kind *ret);

/*
 * The name of a lock. In use by a running criu-like (@kept false): prefix,
 * pid and its start time (/proc/PID/stat field 22), so a reused pid is never
 * taken for the run that crashed. Kept for a complete dump: the kept prefix,
 * the dumper's pid and @stamp (the dump's time). 0 or -ENAMETOOLONG.
 */
int netlock_make_name(enum netlock_kind kind, bool kept, pid_t pid, uint64_t start_or_stamp,
		      char *buf, size_t size);

enum netlock_verdict {
	NETLOCK_FOREIGN, /* not a name of ours: never touched */
	NETLOCK_LIVE, /* its criu-like still runs */
	NETLOCK_KEPT, /* kept for a complete dump: its restore removes it */
	NETLOCK_STALE, /* its criu-like is gone and no dump keeps it: removed */
};

/* Is the process @pid running, started at @start (clock ticks after boot)? */
typedef bool (*netlock_alive_fn)(pid_t pid, uint64_t start, void *arg);
/* The system's answer (/proc/PID/stat); @arg unused. */
bool netlock_proc_alive(pid_t pid, uint64_t start, void *arg);
/* The cleanup rule, for one table or chain name. */
enum netlock_verdict netlock_judge(const char *name, netlock_alive_fn alive, void *arg);
/*
 * The names of our locks in @listing (the output of `nft list tables` for
 * NFTABLES, of `iptables -S` for IPTABLES), NULL-terminated, malloc'ed as
 * one block (free() the array). NULL, errno on no memory.
 */
char **netlock_list_names(enum netlock_kind kind, const char *listing);

/* "127.0.0.1 . 5000 . 10.0.0.1 . 80": local . lport . remote . rport. 0 or -EINVAL. */
int netlock_nft_elem(const struct inet_tuple *t, char *buf, size_t size);
/*
 * `nft -f -` input, one transaction: (re)create table inet @name with the
 * elements @t[0..@n), naming the image directory @dir in its comment unless
 * NULL (a kept lock), then delete table @old unless NULL. NULL, errno.
 */
char *netlock_nft_create(const char *name, const char *old, const struct inet_tuple *t, size_t n,
			 const char *dir);
/* `nft -f -` input adding @t[0..@n) to the sets of table @name. NULL, errno. */
char *netlock_nft_add(const char *name, const struct inet_tuple *t, size_t n);
/* `nft -f -` input deleting the tables @names (NULL-terminated), even absent ones. */
char *netlock_nft_delete(const char *const *names);
/*
 * `iptables-restore --noflush` input (ip6tables-restore for AF_INET6): the
 * two DROP rules of each tuple of @family among @t[0..@n) in chain @chain,
 * created first with its jumps from INPUT and OUTPUT when @create. NULL, errno.
 */
char *netlock_ipt_add(const char *chain, bool create, int family, const struct inet_tuple *t,
		      size_t n);
/*
 * `iptables-restore --noflush` input renaming @chain to @kept (the jumps
 * follow) and naming @dir in a comment-only rule unless NULL.
 */
char *netlock_ipt_keep(const char *chain, const char *kept, const char *dir);
/* The jumps to @chain, its rules and itself removed. */
char *netlock_ipt_delete(const char *chain);
/*
 * The image directory of a kept lock, in a comment of its table (nftables)
 * or a comment-only rule of its chain (iptables): NETLOCK_DIR_TAG then the
 * absolute path, which must not hold a double quote, a backslash or a
 * newline, and at most NETLOCK_DIR_MAX bytes (netlock_dir_recordable()).
 */
#define NETLOCK_DIR_TAG "criu-like images: "
/* nftables takes comments of at most 128 bytes, the tag and a NUL included */
#define NETLOCK_DIR_MAX (128 - (int)sizeof(NETLOCK_DIR_TAG))
bool netlock_dir_recordable(const char *dir);
/* The directory named in @listing (`nft list table`, `iptables -S CHAIN`). 0, -ENOENT, -EINVAL. */
int netlock_recorded_dir(const char *listing, char *buf, size_t size);
/* The dumper's pid in a kept name. 0 or -EINVAL. */
int netlock_kept_pid(const char *name, pid_t *ret);
/*
 * The cleanup rule for a kept lock @name naming @dir (NULL: none) whose
 * complete inventory records @images_lock (NULL: no such inventory): it
 * lives as long as those images record it, or while @dumper_runs.
 */
enum netlock_verdict netlock_judge_kept(const char *name, const char *dir, const char *images_lock,
					bool dumper_runs);
/*
 * The packet holder's rules (nfq-hold.h), `iptables-restore --noflush` input
 * (ip6tables-restore for AF_INET6), table raw: chains @chain_I (from
 * PREROUTING: what comes in) and @chain_O (from OUTPUT: what goes out),
 * created with their jumps when @create, send the packets of the tuples of
 * @family among @t[0..@n) (and with @netns every packet not on lo) to NFQUEUE
 * @queue, without bypass. NULL, errno (EINVAL: a bad family or queue).
 */
char *netlock_hold_ipt_add(const char *chain, bool create, int family, const struct inet_tuple *t,
			   size_t n, bool netns, int queue);
/* The jumps to @chain_I and @chain_O, their rules and themselves removed. */
char *netlock_hold_ipt_delete(const char *chain);
/*
 * Is @listing (`nft list table ip raw`, or ip6) a table of base chains
 * PREROUTING and OUTPUT only, with no rule and policy accept: what
 * iptables-nft leaves once the holder's chains are gone?
 */
bool netlock_raw_table_bare(const char *listing);
/* Is one line of @listing (`nft list tables`...) exactly @line? */
bool netlock_listing_has(const char *listing, const char *line);
/* The holders' pids in @listing (`iptables -t raw -S`, chains CRLH_<pid>_I), at most @max. */
size_t netlock_hold_chain_pids(const char *listing, pid_t *pids, size_t max);
/* Parse "ADDR:PORT" or "[ADDR6]:PORT" twice, "LOCAL,REMOTE". 0 or -EINVAL. */
int netlock_parse_tuple(const char *s, struct inet_tuple *t);

#endif
