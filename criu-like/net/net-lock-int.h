/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NET_LOCK_INT_H
#define CRIU_LIKE_NET_LOCK_INT_H

/* net-lock-run.c, for net-lock.c: running nftables and iptables. */
#include <stdbool.h>
#include <stddef.h>

/* @name in $PATH or /usr/sbin, /sbin, /usr/bin, /bin, into @buf. 0 or -ENOENT. */
int find_tool(const char *name, char *buf, size_t size);
/*
 * Run @argv[0] with @input on stdin. 0 when it exits 0, its stdout in
 * *@ret_out if wanted; otherwise -ENOENT (no such tool) or -EIO, logged
 * with the command and its stderr unless @quiet.
 */
int run_tool(const char *const argv[], const char *input, char **ret_out, bool quiet);

/*
 * A tool started ahead, its stdin open (tool_start(), NULL with errno set),
 * so that what it costs to start (exec, libraries, its own set-up: 2-3 ms for
 * iptables-restore here, several times that on a loaded machine) is paid
 * before it is needed. tool_finish() gives it @input and ends as run_tool();
 * tool_give() gives it @input (and ends it) without waiting: a tool_finish()
 * then only waits for it, so that two tools' work overlaps;
 * tool_end_input() ends its input now (it exits, changing nothing, when it
 * had none); tool_cancel() kills one that was given no input (SIGKILL: it
 * did nothing, and exits faster than one that tears itself down at the end
 * of an empty input; reaped by tool_abandon()); tool_abandon() ends its
 * input and waits for it. tool_finish() and tool_abandon() free @r.
 */
struct tool_run;
struct tool_run *tool_start(const char *const argv[]);
int tool_finish(struct tool_run *r, const char *input, char **ret_out, bool quiet);
int tool_give(struct tool_run *r, const char *input); /* 0, or -EPIPE: it went away */
void tool_end_input(struct tool_run *r);
void tool_cancel(struct tool_run *r);
void tool_abandon(struct tool_run *r);

/* libnftables in this process, or the nft tool: open once, run many scripts. */
struct nft_runner;
struct nft_runner *nft_runner_open(void); /* NULL only without memory */
void nft_runner_close(struct nft_runner *r);
bool nft_available(const struct nft_runner *r);
/* One `nft -f -` transaction; @r NULL: a runner for this call only. As run_tool(). */
int nft_exec(struct nft_runner *r, const char *script, char **ret_out, bool quiet);
/*
 * Does table inet @name exist in this thread's network namespace? One
 * NFT_MSG_GETTABLE on a netlink socket (about 0.05 ms, net/nft-netlink.c), not libnftables,
 * whose load and cache cost 1.2-1.4 ms on a restore's path: 1 or 0, or
 * -errno when the kernel could not say (the caller asks libnftables).
 */
int nft_table_exists(const char *name);
/*
 * `nft list tables` of the inet family, from the same netlink socket: one
 * "table inet NAME" line each in *@ret (malloc'ed), or -errno when the kernel
 * could not say (the caller asks libnftables).
 */
int nft_inet_tables(char **ret);
/*
 * A NETLINK_NETFILTER socket of this thread's network namespace (-errno), on
 * which one nfnetlink batch each: every rule of the chains @chains[0..@n) of
 * table @table of @family (NFPROTO_INET, _IPV4, _IPV6) deleted (`flush
 * chain`), and table @name of @family deleted. 0, or the kernel's -errno
 * (the caller falls back to libnftables). Closing @fd after a change waits
 * for an RCU grace period (nft-netlink.c).
 */
int nft_nl_open(void);
int nft_chains_flush(int fd, int family, const char *table, const char *const *chains, size_t n);
int nft_table_delete(int fd, int family, const char *name);
/*
 * Table inet @table made with chains input and output (filter hooks at
 * priority @prio, policy accept) that drop every packet not on lo: the
 * namespace lock's ruleset, as `table inet T { chain input { type filter hook
 * input priority P; policy accept; iifname != "lo" drop; } ... }` makes it,
 * in one batch. Added to what is there, as nft's `table` command adds.
 */
int nft_lo_only(int fd, const char *table, int prio);
/*
 * Does table raw of @family (NFPROTO_IPV4, _IPV6) hold only what a packet
 * holder's iptables rules made (nfq-hold-rules.c): base chains PREROUTING
 * and OUTPUT with a rule each at most (its jumps) and chains @prefix_I and
 * @prefix_O? 1 or 0, -ENOENT when the table has neither of those chains or
 * there is no such table, or another -errno.
 */
int nft_raw_holder_only(int fd, int family, const char *prefix);

/* iptables-restore -w --noflush (ip6tables-restore for AF_INET6) with @script. */
int ipt_restore(int family, const char *script, bool quiet);
/* An iptables-restore -w --noflush started ahead, for tool_finish() (NULL with errno). */
struct tool_run *ipt_restore_start(int family);
/* iptables -w A1 [A2 [A3 [A4]]] (ip6tables for AF_INET6); NULLs end the list. */
int ipt_cmd(int family, bool quiet, const char *a1, const char *a2, const char *a3, const char *a4);
/* The jumps to @chain, its rules and itself; piece by piece when a jump is gone. */
int ipt_remove_chain(int family, const char *chain);

#endif
