// SPDX-License-Identifier: GPL-2.0
/*
 * The network lock (Documentation/network-lock.md): while a TCP connection
 * of the tree is checkpointed, its packets are dropped both ways so the peer
 * only retransmits. nftables: one table inet of our own, a set of 4-tuples
 * per family, input and output chains; iptables: one chain of our own in
 * table filter per family, jumped to first from INPUT and OUTPUT. Each change
 * is one transaction (net-lock-run.c: libnftables in this process, or `nft
 * -f -`; `iptables-restore --noflush`), its text from net-lock-rules.c.
 *
 * Names carry the pid and start time of the criu-like that installed the
 * lock, or say "kept" once a complete dump hands the lock over to the
 * restore of its images (inventory.img network_lock). Any later run removes
 * a lock whose process is gone and that no dump kept (netlock_judge()).
 *
 * Here one lock; the cleanup of the locks of crashed runs is in
 * net-lock-cleanup.c, the lock of a tree's dump and restore in
 * net-lock-tree.c.
 */
#define LOG_PREFIX "net-lock: "

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "net-lock-int.h"
#include "net-lock-obj.h"
#include "net-lock.h"
#include "proc-parse.h"
#include "util.h"

static int fam_index(int family)
{
	return family == AF_INET6;
}

static int fam_of(int idx)
{
	return idx ? AF_INET6 : AF_INET;
}

/* ---- one lock ------------------------------------------------------------------------------- */

bool netlock_proc_alive(pid_t pid, uint64_t start, void *arg __unused)
{
	struct proc_stat st;
	int err = proc_parse_stat(pid, 0, &st);

	/* only a pid that is gone, or another process on it, makes a lock stale */
	if (err == -ENOENT || err == -ESRCH)
		return false;
	return err || st.start_time == start;
}

/*
 * Read once: a restore makes its lock while it opens a container's sockets,
 * inside the container's mount namespace, whose /proc does not show it;
 * netlock_cleanup_stale() reads it first, before that.
 */
int netlock_self_start_time(uint64_t *ret)
{
	static uint64_t start;
	static pid_t pid;
	struct proc_stat st;
	int err;

	if (pid != getpid()) {
		err = proc_parse_stat(getpid(), 0, &st);
		if (err)
			return err;
		start = st.start_time;
		pid = getpid();
	}
	*ret = start;
	return 0;
}

struct netlock *netlock_new(enum netlock_kind kind)
{
	struct netlock *nl;
	uint64_t start;
	int err;

	if (kind != NETLOCK_NFTABLES && kind != NETLOCK_IPTABLES) {
		errno = EINVAL;
		return NULL;
	}
	err = netlock_self_start_time(&start);
	if (err) {
		pr_errno(err, "cannot read this process's start time for the lock's name");
		errno = -err;
		return NULL;
	}
	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return NULL;
	nl->kind = kind;
	err = netlock_make_name(kind, false, getpid(), start, nl->name, sizeof(nl->name));
	if (!err && kind == NETLOCK_NFTABLES) {
		nl->nft = nft_runner_open();
		err = nl->nft ? 0 : -ENOMEM;
	}
	if (err) {
		free(nl);
		errno = -err;
		return NULL;
	}
	return nl;
}

const char *netlock_name(const struct netlock *nl)
{
	return nl->name;
}

bool netlock_installed(const struct netlock *nl)
{
	return nl->installed || nl->chain[0] || nl->chain[1];
}

void netlock_free(struct netlock *nl)
{
	if (!nl)
		return;
	nft_runner_close(nl->nft);
	free(nl->tuples);
	free(nl->dir);
	free(nl);
}

static int reserve(struct netlock *nl, size_t n)
{
	struct inet_tuple *t;
	size_t cap = nl->cap ? nl->cap : 16;

	while (cap < nl->nr + n)
		cap *= 2;
	if (cap == nl->cap)
		return 0;
	t = realloc(nl->tuples, cap * sizeof(*t));
	if (!t)
		return -ENOMEM;
	nl->tuples = t;
	nl->cap = cap;
	return 0;
}

/*
 * The lock's libnftables runner, opened at its first use: a lock looked up by
 * name (a restore's, netlock_by_name()) is asked whether it exists without
 * it. NULL only without memory (nft_exec() then opens one for the call).
 */
static struct nft_runner *runner(struct netlock *nl)
{
	if (!nl->nft)
		nl->nft = nft_runner_open();
	return nl->nft;
}

void netlock_prepare(struct netlock *nl)
{
	if (nl && nl->kind == NETLOCK_NFTABLES)
		runner(nl);
}

/* One transaction: nftables, the table or its sets; iptables, the chain of @family. */
static int add_run(struct netlock *nl, int family, const struct inet_tuple *t, size_t n)
{
	_cleanup_free_ char *text = NULL;
	int fi = fam_index(family), err;

	if (nl->kind == NETLOCK_NFTABLES)
		text = nl->installed ? netlock_nft_add(nl->name, t, n)
				     : netlock_nft_create(nl->name, NULL, t, n, nl->dir);
	else
		text = netlock_ipt_add(nl->name, !nl->chain[fi], family, t, n);
	if (!text)
		return neg_errno();
	err = nl->kind == NETLOCK_NFTABLES ? nft_exec(runner(nl), text, NULL, false)
					   : ipt_restore(family, text, false);
	if (err)
		return err;
	if (nl->kind == NETLOCK_NFTABLES)
		nl->installed = true;
	else
		nl->chain[fi] = true;
	return 0;
}

int netlock_add(struct netlock *nl, const struct inet_tuple *t, size_t n)
{
	char e[2 * 46 + 32] = "?";
	bool has[2] = { false, false };
	size_t i;
	int err, fi;

	if (!n)
		return 0;
	err = reserve(nl, n);
	for (i = 0; i < n && !err; i++) {
		if (t[i].family != AF_INET && t[i].family != AF_INET6)
			err = -EAFNOSUPPORT;
		has[fam_index(t[i].family)] = true;
	}
	if (!err && nl->kind == NETLOCK_NFTABLES)
		err = add_run(nl, AF_INET, t, n);
	for (fi = 0; fi < 2 && !err && nl->kind == NETLOCK_IPTABLES; fi++)
		if (has[fi])
			err = add_run(nl, fam_of(fi), t, n);
	netlock_nft_elem(t, e, sizeof(e));
	if (err) {
		pr_errno(err, "cannot lock %s%s (%s %s)",
			 n > 1 ? "the connections from " : "the connection ", e,
			 netlock_kind_name(nl->kind), nl->name);
		return err;
	}
	memcpy(nl->tuples + nl->nr, t, n * sizeof(*t));
	nl->nr += n;
	pr_debug("%s %s: %zu connection%s locked (%s%s)\n", netlock_kind_name(nl->kind), nl->name,
		 n, n == 1 ? "" : "s", e, n == 1 ? "" : ", ...");
	return 0;
}

static int ipt_rename(int family, const char *from, const char *to, const char *dir)
{
	_cleanup_free_ char *text = netlock_ipt_keep(from, to, dir);

	return text ? ipt_restore(family, text, false) : -ENOMEM;
}

/*
 * iptables: rename the chain of each family (the jumps follow), the first
 * renamed back if the second fails; nftables has no rename: the new table
 * with every element and the old one deleted, in one transaction. Either
 * way the new name comes with @dir, the images that record it.
 */
static int move_to(struct netlock *nl, const char *name, const char *dir)
{
	_cleanup_free_ char *text = NULL;
	int i, err = 0;

	if (nl->kind == NETLOCK_NFTABLES) {
		if (!nl->installed)
			return 0;
		text = netlock_nft_create(name, nl->name, nl->tuples, nl->nr, dir);
		return text ? nft_exec(runner(nl), text, NULL, false) : neg_errno();
	}
	for (i = 0; i < 2 && !err; i++)
		if (nl->chain[i])
			err = ipt_rename(fam_of(i), nl->name, name, dir);
	/* the comment rule stays behind in the chain renamed back: harmless */
	if (err && i == 2 && nl->chain[0] && ipt_rename(AF_INET, name, nl->name, NULL))
		pr_err("chain %s of iptables could not be renamed back to %s: remove it by hand\n",
		       name, nl->name);
	return err;
}

int netlock_keep(struct netlock *nl, const char *name, const char *dir)
{
	char kept[NETLOCK_NAME_MAX];
	int err;

	if (!name && nl->kept_name[0]) {
		name = nl->kept_name;
	} else if (!name) {
		err = netlock_make_name(nl->kind, true, getpid(), (uint64_t)time(NULL), kept,
					sizeof(kept));
		if (err)
			return err;
		name = kept;
	}
	if (strlen(name) >= sizeof(nl->name))
		return -ENAMETOOLONG;
	if (dir && !netlock_dir_recordable(dir))
		pr_warn("network lock %s cannot name its images %s (a relative path, too long, or "
			"with a quote, backslash or newline): later runs will leave it in place "
			"even once the images are gone\n",
			name, dir);
	err = move_to(nl, name, dir);
	if (err) {
		pr_errno(err, "cannot move the network lock %s to %s", nl->name, name);
		return err;
	}
	pr_debug("network lock %s is now %s\n", nl->name, name);
	strcpy(nl->name, name);
	nl->kept = true;
	return 0;
}

int netlock_open(struct netlock *nl)
{
	_cleanup_free_ char *text = NULL;
	int i, err = 0;

	if (nl->kind == NETLOCK_NFTABLES && nl->installed) {
		/*
		 * Its two rules deleted: about 0.05 ms, where flushing its sets
		 * took 0.5-1.5 ms (the kernel's commit of a set of concatenated
		 * fields), up to 7 ms on a loaded machine, all of it between the
		 * tree's resume and the let-go of its held packets.
		 */
		if (asprintf(&text, "flush chain inet %s input\nflush chain inet %s output\n",
			     nl->name, nl->name) < 0)
			return -ENOMEM;
		err = nft_exec(runner(nl), text, NULL, false);
	}
	for (i = 0; i < 2 && nl->kind == NETLOCK_IPTABLES && !err; i++) {
		if (!nl->chain[i])
			continue;
		free(text);
		if (asprintf(&text, "*filter\n-F %s\nCOMMIT\n", nl->name) < 0)
			return -ENOMEM;
		err = ipt_restore(fam_of(i), text, false);
	}
	if (err)
		pr_warn("cannot open the network lock %s before the held packets go: they are "
			"dropped, peers retransmit\n",
			nl->name);
	else
		pr_debug("network lock %s open: it drops nothing more\n", nl->name);
	return err;
}

int netlock_remove(struct netlock *nl)
{
	const char *names[] = { nl->name, NULL };
	_cleanup_free_ char *text = NULL;
	int i, err = 0, e;

	if (nl->kind == NETLOCK_NFTABLES && nl->installed) {
		text = netlock_nft_delete(names);
		err = text ? nft_exec(runner(nl), text, NULL, false) : neg_errno();
		if (!err)
			nl->installed = false;
	}
	for (i = 0; i < 2 && nl->kind == NETLOCK_IPTABLES; i++) {
		if (!nl->chain[i])
			continue;
		e = ipt_remove_chain(fam_of(i), nl->name);
		if (!e)
			nl->chain[i] = false;
		err = err ? err : e;
	}
	if (err)
		pr_errno(err, "cannot remove the network lock %s (%s): remove it by hand", nl->name,
			 netlock_kind_name(nl->kind));
	else
		pr_debug("network lock %s removed\n", nl->name);
	return err;
}

/* A lock of ours by name, whatever installed it: every family it exists in. */
struct netlock *netlock_by_name(const char *name)
{
	enum netlock_kind kind;
	struct netlock *nl;
	int i;

	if (netlock_name_kind(name, &kind) || strlen(name) >= NETLOCK_NAME_MAX) {
		errno = EINVAL;
		return NULL;
	}
	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return NULL;
	nl->kind = kind;
	strcpy(nl->name, name);
	/*
	 * nftables: deleting an absent table is harmless (netlock_nft_delete()).
	 * One runner for every change of this lock (runner(), opened at the
	 * first): closing a libnftables context after a transaction that
	 * deleted something (the rules flushed by netlock_open()) waits for an
	 * RCU grace period (the kernel flushes its destroy work on
	 * NETLINK_URELEASE), 10-15 ms here, which must not come between opening
	 * the lock and letting the held packets go.
	 */
	if (kind == NETLOCK_NFTABLES)
		nl->installed = true;
	else
		for (i = 0; i < 2; i++)
			nl->chain[i] = !ipt_cmd(fam_of(i), true, "-S", name, NULL, NULL);
	return nl;
}

/* Does @nl (netlock_by_name()) exist on this machine? Asked of the kernel, else through its runner. */
bool netlock_exists(struct netlock *nl)
{
	_cleanup_free_ char *cmd = NULL;
	int ret;

	if (nl->kind != NETLOCK_NFTABLES)
		return nl->chain[0] || nl->chain[1];
	ret = nft_table_exists(nl->name);
	if (ret >= 0)
		return ret;
	return asprintf(&cmd, "list table inet %s\n", nl->name) > 0 &&
	       !nft_exec(runner(nl), cmd, NULL, true);
}

bool netlock_name_exists(const char *name)
{
	struct netlock *nl = netlock_by_name(name);
	bool ret = nl && netlock_exists(nl);

	netlock_free(nl);
	return ret;
}

int netlock_remove_name(const char *name)
{
	struct netlock *nl = netlock_by_name(name);
	int err;

	if (!nl) {
		pr_err("%s is not the name of a network lock of criu-like\n", name);
		return -EINVAL;
	}
	err = netlock_remove(nl);
	netlock_free(nl);
	return err;
}
