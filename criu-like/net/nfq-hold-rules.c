// SPDX-License-Identifier: GPL-2.0
/*
 * The holder's rules: chains CRLH_<pid>_I and _O of table raw that queue
 * what the lock holds, started ahead before the freeze (nfq_hold_prime()),
 * removed again with table raw when our first rules made it, and the rules
 * of holders that are gone cleaned up.
 */
#define LOG_PREFIX "nfq-hold: "

#include <errno.h>
#include <linux/netfilter.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "net-lock-int.h"
#include "net-lock.h"
#include "nfq-hold-int.h"
#include "util.h"

/* The chains of holder @pid, in both families; quiet: a family may have none. */
void holder_rules_remove(pid_t pid)
{
	char chain[32];
	_cleanup_free_ char *text = NULL;

	snprintf(chain, sizeof(chain), HOLD_CHAIN_FMT, pid);
	text = netlock_hold_ipt_delete(chain);
	if (!text)
		return;
	ipt_restore(AF_INET, text, true);
	ipt_restore(AF_INET6, text, true);
}

bool nfq_hold_raw_theirs[2];

/*
 * Does table raw of family @fi exist before our first rules? iptables-nft
 * makes it (with its base chains) for them and leaves it behind when they
 * go: a namespace would gain a table it did not have. Without nftables
 * (iptables-legacy, whose tables always exist) there is nothing to undo.
 */
static struct {
	ino_t ino; /* the namespace looked at, 0: none */
	bool has[2];
} raw_seen;

/* Table raw of each family in this thread's namespace, looked at once (nfq_hold_raw_probe()). */
static int raw_tables_here(bool has[2])
{
	_cleanup_free_ char *out = NULL;
	struct stat st;
	int err;

	if (stat("/proc/thread-self/ns/net", &st))
		return neg_errno();
	if (raw_seen.ino != st.st_ino) {
		err = nft_exec(NULL, "list tables\n", &out, true);
		if (err)
			return err; /* no nftables: iptables-legacy, nothing to undo */
		raw_seen.has[0] = netlock_listing_has(out, "table ip raw");
		raw_seen.has[1] = netlock_listing_has(out, "table ip6 raw");
		raw_seen.ino = st.st_ino;
	}
	has[0] = raw_seen.has[0];
	has[1] = raw_seen.has[1];
	return 0;
}

void nfq_hold_raw_probe(void)
{
	bool has[2];

	raw_tables_here(has);
}

/* Before the holder's first rules: which tables raw they would make (both families at once). */
static void raw_look(struct nfq_hold *h, int fi)
{
	bool has[2];
	int i;

	if (h->raw_known[fi] || h->found)
		return;
	if (raw_tables_here(has))
		has[0] = has[1] = true; /* not known: never removed */
	raw_seen.ino = 0; /* what was looked at is used once */
	for (i = 0; i < 2; i++) {
		h->raw_made[i] = !h->chains[i] && !has[i];
		h->raw_known[i] = true;
	}
}

/* Table raw of family @fi removed if it holds only its bare base chains. */
void raw_drop_bare(int fi)
{
	_cleanup_free_ char *out = NULL;
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "list table %s raw\n", fi ? "ip6" : "ip");
	if (nft_exec(NULL, cmd, &out, true) || !netlock_raw_table_bare(out))
		return;
	snprintf(cmd, sizeof(cmd), "delete table %s raw\n", fi ? "ip6" : "ip");
	if (!nft_exec(NULL, cmd, NULL, true))
		pr_debug("table %s raw, made for the held packets' rules, removed\n",
			 fi ? "ip6" : "ip");
}

/* Table raw of family @fi removed when we made it and it holds only its bare base chains. */
static void raw_unmake(struct nfq_hold *h, int fi)
{
	if (!h->raw_made[fi] || nfq_hold_raw_theirs[fi])
		return;
	h->raw_made[fi] = false;
	raw_drop_bare(fi);
}

void nfq_hold_prime(struct nfq_hold *h)
{
	int fi;

	for (fi = 0; fi < 2; fi++) {
		raw_look(h, fi);
		if (!h->primed[fi])
			h->primed[fi] = ipt_restore_start(fi ? AF_INET6 : AF_INET);
	}
}

void nfq_hold_prime_end(struct nfq_hold *h)
{
	int fi;

	for (fi = 0; h && fi < 2; fi++)
		tool_cancel(h->primed[fi]);
}

/* The tools started ahead: their input ended, waited for. */
void hold_unprime(struct nfq_hold *h)
{
	int fi;

	for (fi = 0; fi < 2; fi++) {
		tool_abandon(h->primed[fi]);
		h->primed[fi] = NULL;
	}
}

/* @text for the family of index @fi: the tool started ahead if it still waits, else a new one. */
static int hold_ipt_restore(struct nfq_hold *h, int fi, const char *text)
{
	struct tool_run *r = h->primed[fi];
	int family = fi ? AF_INET6 : AF_INET;

	h->primed[fi] = NULL;
	if (r && !tool_finish(r, text, NULL, true))
		return 0;
	/* none, or cancelled (nfq_hold_prime_end()), or it failed: a new one */
	return ipt_restore(family, text, true);
}

/*
 * One iptables-restore per family that has something to hold. The tools
 * started ahead are both given their rules before either is waited for:
 * their parsing and transactions overlap (the namespace's lock, in the
 * freeze). Each family is then waited for, or run again on its own where its
 * tool failed (hold_ipt_restore()), whatever the other's outcome: the chains
 * made are known, for their removal.
 */
static int hold_add(struct nfq_hold *h, const struct inet_tuple *t, size_t n, bool netns)
{
	char chain[32], what[2 * 46 + 32] = "every packet not on lo";
	char *text[2] = { NULL, NULL };
	size_t i;
	int fi, e, err = 0;

	snprintf(chain, sizeof(chain), HOLD_CHAIN_FMT, h->pid);
	for (fi = 0; fi < 2 && !err; fi++) {
		int family = fi ? AF_INET6 : AF_INET;

		for (i = 0; i < n && t[i].family != family; i++)
			;
		if (i == n && !netns)
			continue;
		raw_look(h, fi);
		text[fi] = netlock_hold_ipt_add(chain, !h->chains[fi], family, t, n, netns,
						h->queue);
		if (!text[fi])
			err = neg_errno();
		else if (h->primed[fi])
			tool_give(h->primed[fi], text[fi]); /* a failure: run again below */
	}
	for (fi = 0; fi < 2; fi++) {
		if (!text[fi])
			continue;
		e = hold_ipt_restore(h, fi, text[fi]);
		if (!e)
			h->chains[fi] = true;
		err = err ? err : e;
		free(text[fi]);
	}
	if (!netns && n)
		netlock_nft_elem(t, what, sizeof(what));
	if (err)
		pr_warn("cannot hold %s%s on queue %d (%s): dropped instead, peers retransmit\n",
			n > 1 ? "the packets from " : "", what, h->queue, strerror(-err));
	return err;
}

int nfq_hold_add(struct nfq_hold *h, const struct inet_tuple *t, size_t n)
{
	return n ? hold_add(h, t, n, false) : 0;
}

int nfq_hold_add_netns(struct nfq_hold *h)
{
	return hold_add(h, NULL, 0, true);
}

/*
 * Family @fi's rules emptied by netlink where table raw is ours alone (we
 * made it, the tree's own rules have none, and it holds only the holder's
 * chains and jumps: @state 1, nft_raw_holder_only()): the table is then
 * deleted whole once the queue is empty (unhold_quick_end()). iptables-restore
 * of the deletions and libnftables' look at the table and its deletion cost
 * 70-90 ms of CPU at a migration's destination, right after the let-go,
 * beside the tree that just began to run. True when done so.
 */
static bool unhold_quick(struct nfq_hold *h, int fi, int fd, int state, const char *chain)
{
	char in[40], out[40];
	const char *const chains[] = { in, out };

	if (state != 1 || !h->chains[fi] || !h->raw_made[fi] || nfq_hold_raw_theirs[fi])
		return false;
	snprintf(in, sizeof(in), "%s_I", chain);
	snprintf(out, sizeof(out), "%s_O", chain);
	if (nft_chains_flush(fd, fi ? NFPROTO_IPV6 : NFPROTO_IPV4, "raw", chains, 2))
		return false;
	h->chains[fi] = false;
	return true;
}

static void unhold_quick_end(struct nfq_hold *h, int fi, int fd)
{
	int err = nft_table_delete(fd, fi ? NFPROTO_IPV6 : NFPROTO_IPV4, "raw");

	h->raw_made[fi] = false;
	if (err)
		pr_warn("table %s raw, made for the held packets' rules, not removed: %s\n",
			fi ? "ip6" : "ip", strerror(-err));
	else
		pr_debug("table %s raw, made for the held packets' rules, removed by netlink\n",
			 fi ? "ip6" : "ip");
}

int nfq_hold_unhold(struct nfq_hold *h)
{
	char chain[32];
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	bool quick[2];
	int fi, err = 0, state[2] = { -ENOENT, -ENOENT };

	snprintf(chain, sizeof(chain), HOLD_CHAIN_FMT, h->pid);
	text = netlock_hold_ipt_delete(chain);
	if (!text)
		return -ENOMEM;
	for (fi = 0; fi < 2; fi++) {
		if (h->chains[fi] && fd < 0)
			fd = nft_nl_open();
		if (h->chains[fi])
			state[fi] = fd < 0 ? fd
					   : nft_raw_holder_only(fd,
								 fi ? NFPROTO_IPV6 : NFPROTO_IPV4,
								 chain);
	}
	/*
	 * A holder found by name does not know in which families it has rules. Its
	 * chains seen by netlink in one family say that iptables is nftables'
	 * here: where netlink sees none, there are none (a per-connection
	 * holder of IPv4 connections only: no ip6tables-restore, 20-30 ms).
	 */
	for (fi = 0; fi < 2; fi++)
		if (h->found && state[fi] == -ENOENT && state[!fi] >= 0)
			h->chains[fi] = false;
	for (fi = 0; fi < 2; fi++) {
		quick[fi] = unhold_quick(h, fi, fd, state[fi], chain);
		if (!quick[fi] && h->chains[fi] &&
		    !ipt_restore(fi ? AF_INET6 : AF_INET, text, h->found))
			h->chains[fi] = false;
	}
	/* what was queued meanwhile is let through before anyone deletes a base chain */
	err = hold_ask(h, 's');
	for (fi = 0; err >= 0 && fi < 2; fi++)
		if (quick[fi])
			unhold_quick_end(h, fi, fd);
		else if (!h->chains[fi])
			raw_unmake(h, fi);
	return err < 0 ? err : 0;
}

/* Is @pid a holder (not a pid reused by something else)? */
static bool holder_alive(pid_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strcmp(comm, "criu-like-hold\n");
}

int nfq_hold_cleanup(void)
{
	pid_t pids[64];
	size_t n, i;
	int fi, removed = 0;

	for (fi = 0; fi < 2; fi++) {
		const char *const argv[] = {
			fi ? "ip6tables" : "iptables", "-w", "-t", "raw", "-S", NULL
		};
		_cleanup_free_ char *listing = NULL;

		/* no tool, no rules of a holder */
		if (run_tool(argv, NULL, &listing, true))
			continue;
		n = netlock_hold_chain_pids(listing, pids, ARRAY_SIZE(pids));
		for (i = 0; i < n; i++) {
			char chain[32];
			_cleanup_free_ char *text = NULL;

			if (holder_alive(pids[i]))
				continue;
			snprintf(chain, sizeof(chain), HOLD_CHAIN_FMT, pids[i]);
			pr_warn("removing the rules %s_I and %s_O of a packet holder that is "
				"gone\n",
				chain, chain);
			text = netlock_hold_ipt_delete(chain);
			if (text && !ipt_restore(fi ? AF_INET6 : AF_INET, text, false))
				removed++;
		}
	}
	return removed;
}
