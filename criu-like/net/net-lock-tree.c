// SPDX-License-Identifier: GPL-2.0
/*
 * The network lock (Documentation/network-lock.md, net-lock.c) of a tree's
 * dump and restore: made before the freeze or at the first connection, in
 * the tree's network namespace when it has one of its own, its packets held
 * ahead of it (nfq-hold.c); kept for the restore of the images when the
 * dump kills the tree, reused and then removed by that restore.
 */
#define LOG_PREFIX "net-lock: "

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dump.h"
#include "log.h"
#include "ns.h"
#include "net-lock-obj.h"
#include "net-lock.h"
#include "nfq-hold.h"
#include "options.h"
#include "restore.h"
#include "stats.h"
#include "util.h"

/* ---- dump ----------------------------------------------------------------------------------- */

/*
 * Before the first rule: the holder of the namespace (started here if none
 * runs yet), whose rules in table raw queue the connections' packets ahead
 * of the lock. A killed tree of criu-like's namespace keeps its holder until
 * the restore, named like the kept lock, which is chosen now: with nftables
 * the table is created under that name at once, because the rename at the
 * end of the dump deletes a table, and unregistering its hooks drops every
 * queued packet of the namespace (nf_queue_nf_hook_drop()).
 */
static int dump_hold_setup(struct netlock *nl, const struct cr_options *o)
{
	bool keep = ns_net_tree_fd() < 0 && !o->leave_running;
	struct nfq_hold *h = nfq_hold_here(NULL, false);
	int err;

	if (!h && keep) {
		err = netlock_make_name(nl->kind, true, getpid(), (uint64_t)time(NULL),
					nl->kept_name, sizeof(nl->kept_name));
		if (err)
			return err;
		h = nfq_hold_here(nl->kept_name, true);
	}
	if (!h || strcmp(nfq_hold_name(h), nl->kept_name) || nl->kind != NETLOCK_NFTABLES) {
		/* iptables renames its chain at the end: no hook goes, nothing is lost */
		if (!h || strcmp(nfq_hold_name(h), nl->kept_name))
			nl->kept_name[0] = '\0';
		return 0;
	}
	nl->dir = realpath(o->images_dir, NULL);
	if (!nl->dir) {
		pr_perror("cannot resolve the image directory %s", o->images_dir);
		return neg_errno();
	}
	if (!netlock_dir_recordable(nl->dir))
		pr_warn("network lock %s cannot name its images %s (too long, or with a quote, "
			"backslash or newline): later runs will leave it in place even once the "
			"images are gone\n",
			nl->kept_name, nl->dir);
	strcpy(nl->name, nl->kept_name);
	nl->kept = true;
	return 0;
}

/* The holder of this namespace (if any) holds @t[0..@n) too; a failure only warns. Held? */
static bool hold_conns(const struct inet_tuple *t, size_t n)
{
	struct nfq_hold *h = nfq_hold_here(NULL, true);
	bool held;

	if (!h)
		return false;
	held = !nfq_hold_add(h, t, n);
	/* the tools started ahead and not needed (the other family) go now */
	nfq_hold_prime_end(h);
	return held;
}

/* Is the tree of @pid in this thread's network namespace? */
static bool tree_netns_here(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	return !stat(path, &a) && !stat("/proc/thread-self/ns/net", &b) && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

int netlock_dump_ahead(struct dump_ctx *ctx)
{
	const struct cr_options *o = ctx->opts;
	enum netlock_kind kind;
	struct nfq_hold *h;
	int err;

	if (!o->tcp_established || o->no_packet_hold || ctx->netlock ||
	    netlock_parse_kind(o->network_lock, &kind) || kind == NETLOCK_SKIP ||
	    !tree_netns_here(o->tree))
		return 0;
	ctx->netlock = netlock_new(kind);
	if (!ctx->netlock) {
		pr_perror("cannot set up the network lock");
		return neg_errno();
	}
	err = dump_hold_setup(ctx->netlock, o);
	if (err)
		return err;
	/* -R: the holder of the first connection, started now (a kill-mode one is already) */
	h = nfq_hold_here(NULL, true);
	if (h)
		nfq_hold_prime(h);
	pr_debug("network lock and packet holder ready before the freeze\n");
	return 0;
}

/* The lock, made if it was not ahead; 0 (*@skip: nothing to lock) or -errno. */
static int dump_lock_get(struct dump_ctx *ctx, size_t n, bool *skip)
{
	enum netlock_kind kind;
	int err;

	*skip = true;
	if (netlock_parse_kind(ctx->opts->network_lock, &kind)) {
		pr_err("--network-lock %s: not nftables, iptables or skip\n",
		       ctx->opts->network_lock);
		return -EINVAL;
	}
	if (kind == NETLOCK_SKIP || !n)
		return 0;
	if (!ctx->netlock) {
		ctx->netlock = netlock_new(kind);
		if (!ctx->netlock) {
			pr_perror("cannot set up the network lock");
			return neg_errno();
		}
		err = dump_hold_setup(ctx->netlock, ctx->opts);
		if (err)
			return err;
	}
	*skip = false;
	return 0;
}

static int netlock_dump_conns_here(struct dump_ctx *ctx, const struct inet_tuple *t, size_t n)
{
	bool skip;
	int err = dump_lock_get(ctx, n, &skip);

	if (err || skip)
		return err;
	/* held first: from the lock's rule on, nothing of them is only dropped */
	hold_conns(t, n);
	return netlock_add(ctx->netlock, t, n);
}

int netlock_dump_conns_hold(struct dump_ctx *ctx, const struct inet_tuple *t, size_t n)
{
	bool skip;
	int err;

	/* only for a lock made ahead, of criu-like's namespace */
	if (!ctx->netlock || ns_net_tree_fd() >= 0)
		return 0;
	err = dump_lock_get(ctx, n, &skip);
	if (err || skip)
		return err;
	return hold_conns(t, n) ? 1 : 0;
}

int netlock_dump_conns_lock(struct dump_ctx *ctx, const struct inet_tuple *t, size_t n, bool held)
{
	bool skip;
	int err;

	if (!held)
		return netlock_dump_conns(ctx, t, n);
	err = dump_lock_get(ctx, n, &skip);
	return err || skip ? err : netlock_add(ctx->netlock, t, n);
}

/* In the tree's network namespace when it has one of its own: its connections are there. */
int netlock_dump_conns(struct dump_ctx *ctx, const struct inet_tuple *t, size_t n)
{
	int saved, err = ns_net_enter_tree(&saved);

	if (err)
		return err;
	err = netlock_dump_conns_here(ctx, t, n);
	ns_net_leave_tree(saved);
	return err;
}

int netlock_dump_conn(struct dump_ctx *ctx, const struct inet_tuple *t)
{
	return netlock_dump_conns(ctx, t, 1);
}

static int netlock_dump_keep_here(struct dump_ctx *ctx)
{
	_cleanup_free_ char *dir = NULL;

	if (!ctx->netlock || !netlock_installed(ctx->netlock))
		return 0;
	/* created under its kept name already (dump_hold_setup()) */
	if (ctx->netlock->kept)
		return 0;
	/* the lock lives as long as these images record it (netlock_verdict_of()) */
	dir = realpath(ctx->opts->images_dir, NULL);
	if (!dir) {
		pr_perror("cannot resolve the image directory %s", ctx->opts->images_dir);
		return neg_errno();
	}
	return netlock_keep(ctx->netlock, NULL, dir);
}

/* In the tree's network namespace when it has one of its own: its connections are there. */
int netlock_dump_keep(struct dump_ctx *ctx)
{
	int saved, err = ns_net_enter_tree(&saved);

	if (err)
		return err;
	err = netlock_dump_keep_here(ctx);
	ns_net_leave_tree(saved);
	return err;
}

const char *netlock_dump_kept_name(const struct dump_ctx *ctx)
{
	const struct netlock *nl = ctx->netlock;

	return nl && nl->kept && netlock_installed(nl) ? nl->name : NULL;
}

static void netlock_dump_fini_here(struct dump_ctx *ctx, bool remove)
{
	struct netlock *nl = ctx->netlock;

	if (!nl)
		return;
	if (!netlock_installed(nl))
		;
	else if (remove)
		netlock_remove(nl);
	else
		pr_info("network lock %s (%s) kept until these images are restored\n", nl->name,
			netlock_kind_name(nl->kind));
	netlock_free(nl);
	ctx->netlock = NULL;
}

/* In the tree's network namespace when it has one of its own (a lock installed there). */
/*
 * The tree runs again: the lock drops nothing more (emptied, its hooks still
 * there), then the holder lets its packets go, in their order, its rules go
 * and what they queued meanwhile passes, then the lock and the holder go.
 * Deleting the lock while anything is queued would drop it: unregistering a
 * hook flushes the namespace's queues.
 */
static void hold_let_go(struct netlock *nl, bool in_tree, struct nfq_hold *h)
{
	uint64_t t0 = stats_now_ns(), t1;

	if (nl && netlock_installed(nl))
		netlock_open(nl);
	if (in_tree)
		ns_net_open_here();
	t1 = stats_now_ns();
	nfq_hold_release(h);
	pr_debug("the lock opened in %llu us, the held packets let go in %llu us\n",
		 (unsigned long long)(t1 - t0) / 1000,
		 (unsigned long long)(stats_now_ns() - t1) / 1000);
	nfq_hold_unhold(h);
}

void netlock_dump_fini(struct dump_ctx *ctx, bool remove)
{
	int saved;
	/* the tree has a namespace of its own, entered (the controller may be there already) */
	bool in_tree = ns_net_tree_fd() >= 0 && !ns_net_enter_tree(&saved);
	bool kept = !remove && netlock_dump_kept_name(ctx);
	struct nfq_hold *h;

	if (!in_tree)
		saved = -1;
	h = nfq_hold_take_here();
	/* the tree goes on: what was held goes to it */
	if (h && remove)
		hold_let_go(ctx->netlock, in_tree, h);
	netlock_dump_fini_here(ctx, remove);
	/* the tree goes on (-R, a failure): its namespace carries packets again */
	if (remove && in_tree)
		ns_net_unlock_here();
	/* killed: held for the restore with the kept lock; a container's namespace dies */
	if (h && kept && !in_tree)
		nfq_hold_detach(h);
	else
		nfq_hold_stop(h, !remove);
	ns_net_leave_tree(saved);
}

/* ---- restore -------------------------------------------------------------------------------- */

/* The lock the images recorded (a complete dump that killed its tree), or NULL. */
static const char *images_lock(const struct restore_ctx *ctx)
{
	const char *name = ctx->inv ? ctx->inv->network_lock : NULL;

	return name && *name ? name : NULL;
}

/* The first connection decides: the dump's lock is still here, or a new one is needed. */
static int restore_lock_setup(struct restore_ctx *ctx, enum netlock_kind kind)
{
	const char *kept = images_lock(ctx);
	struct netlock *nl;

	/* one runner both to look for the images' lock and to let it go */
	nl = kept ? netlock_by_name(kept) : NULL;
	if (nl && !netlock_exists(nl)) {
		netlock_free(nl);
		nl = NULL;
	}
	if (nl) {
		nl->kept = nl->reused = true;
		pr_info("network lock %s of the dump is in place: reused\n", kept);
	} else {
		if (kind == NETLOCK_SKIP)
			return 0;
		nl = netlock_new(kind);
	}
	if (!nl) {
		pr_perror("cannot set up the network lock");
		return neg_errno();
	}
	ctx->netlock = nl;
	return 0;
}

static int netlock_restore_conns_here(struct restore_ctx *ctx, const struct inet_tuple *t, size_t n)
{
	enum netlock_kind kind;
	int err;

	if (netlock_parse_kind(ctx->opts->network_lock, &kind)) {
		pr_err("--network-lock %s: not nftables, iptables or skip\n",
		       ctx->opts->network_lock);
		return -EINVAL;
	}
	if (!n)
		return 0;
	if (!ctx->netlock) {
		err = restore_lock_setup(ctx, kind);
		if (err || !ctx->netlock)
			return err;
	}
	/* the dump's lock holds every connection of these images already */
	if (ctx->netlock->reused)
		return 0;
	hold_conns(t, n);
	return netlock_add(ctx->netlock, t, n);
}

/* In the tree's network namespace when it has one of its own: its connections are there. */
int netlock_restore_conns(struct restore_ctx *ctx, const struct inet_tuple *t, size_t n)
{
	int saved, err = ns_net_enter_tree(&saved);

	if (err)
		return err;
	err = netlock_restore_conns_here(ctx, t, n);
	ns_net_leave_tree(saved);
	return err;
}

int netlock_restore_conn(struct restore_ctx *ctx, const struct inet_tuple *t)
{
	return netlock_restore_conns(ctx, t, 1);
}

static void restore_failed(struct netlock *nl, const char *kept, const char *dir)
{
	enum netlock_kind kind;

	_cleanup_free_ char *abs = realpath(dir, NULL);

	/* a lock installed here becomes the images' lock: the next attempt finds it */
	if (nl && !nl->reused && netlock_installed(nl)) {
		if (kept && abs && !netlock_name_kind(kept, &kind) && kind == nl->kind &&
		    !netlock_keep(nl, kept, abs))
			nl->reused = true;
		else
			netlock_remove(nl);
	}
	if (kept && ((nl && nl->reused) || netlock_name_exists(kept)))
		pr_warn("network lock %s stays for another restore of %s; "
			"`criu-like net-lock unlock %s` removes it\n",
			kept, dir, kept);
}

static void netlock_restore_fini_here(struct restore_ctx *ctx, bool restored)
{
	struct netlock *nl = ctx->netlock;
	const char *kept = images_lock(ctx);

	if (!restored) {
		restore_failed(nl, kept, ctx->opts->images_dir);
	} else {
		if (nl && !nl->reused && netlock_installed(nl))
			netlock_remove(nl);
		/* the images' lock, through the runner that opened it (reused) */
		if (nl && nl->reused && kept && !netlock_remove(nl))
			pr_info("network lock %s removed: the tree runs\n", kept);
		else if (kept && (!nl || !nl->reused) && netlock_name_exists(kept) &&
			 !netlock_remove_name(kept))
			pr_info("network lock %s removed: the tree runs\n", kept);
	}
	netlock_free(nl);
	ctx->netlock = NULL;
}

void netlock_restore_ahead(struct restore_ctx *ctx)
{
	const char *kept = images_lock(ctx);

	/* a tree with a namespace of its own has its holder there (nfq_hold_take_here()) */
	if (!kept || ctx->hold_found || ns_net_tree_fd() >= 0 || nfq_hold_here(NULL, false))
		return;
	ctx->hold_found = true;
	if (nfq_hold_find(kept, &ctx->hold))
		ctx->hold = NULL;
	/* the images' lock, found without libnftables: loaded now for the let-go */
	netlock_prepare(ctx->netlock);
}

/* In the tree's network namespace when it has one of its own (a lock installed there). */
void netlock_restore_fini(struct restore_ctx *ctx, bool restored)
{
	const char *kept = images_lock(ctx);
	int saved;
	/* the tree has a namespace of its own, entered (the controller may be there already) */
	bool in_tree = ns_net_tree_fd() >= 0 && !ns_net_enter_tree(&saved);
	struct nfq_hold *h;

	if (!in_tree)
		saved = -1;
	h = nfq_hold_take_here();
	/*
	 * The dump's holder, named like the lock it kept (whether or not a
	 * connection of these images needed the lock: a SYN_SENT socket does not).
	 */
	bool lost = false;

	/* found ahead (netlock_restore_ahead(): never with a holder of this restore) */
	if (!h && ctx->hold_found)
		h = TAKE_PTR(ctx->hold);
	else if (!h && kept && nfq_hold_find(kept, &h))
		h = NULL;
	/* killed, its rules left behind: they would drop these connections for good */
	if (!h && kept)
		lost = !ctx->opts->no_packet_hold;
	/*
	 * The tree runs: what was held goes to its sockets now, no peer waits for
	 * its retransmission timer; first, because removing the rules drops what a
	 * queue holds. A failed restore drops it: the tree is gone.
	 */
	if (h && restored) {
		struct netlock *byname = ctx->netlock || !kept ? NULL : netlock_by_name(kept);

		hold_let_go(ctx->netlock ? ctx->netlock : byname, in_tree, h);
		netlock_free(byname);
	}
	netlock_restore_fini_here(ctx, restored);
	/* the tree runs (or its namespace goes away with it) */
	if (in_tree)
		ns_net_unlock_here();
	nfq_hold_stop(h, !restored);
	if (lost && restored)
		nfq_hold_cleanup();
	ns_net_leave_tree(saved);
}
