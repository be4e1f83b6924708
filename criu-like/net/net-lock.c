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
 */
#define LOG_PREFIX "net-lock: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dump.h"
#include "image.h"
#include "log.h"
#include "ns.h"
#include "net-lock-int.h"
#include "net-lock.h"
#include "nfq-hold.h"
#include "options.h"
#include "proc-parse.h"
#include "restore.h"
#include "util.h"

struct netlock {
	enum netlock_kind kind;
	char name[NETLOCK_NAME_MAX];
	bool installed; /* nftables: the table exists */
	bool chain[2]; /* iptables: the chain exists for IPv4 [0], IPv6 [1] */
	bool kept; /* name is a kept name */
	bool reused; /* restore: the images' kept lock holds every connection already */
	struct inet_tuple *tuples; /* everything locked, to rebuild the table under a new name */
	size_t nr, cap;
	struct nft_runner *nft; /* nftables: kept open, so each connection costs no new start */
	char kept_name[NETLOCK_NAME_MAX]; /* dump: the kept name chosen up front (the holder's) */
	char *dir; /* nftables, created under its kept name: the images it names */
};

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
static int self_start_time(uint64_t *ret)
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
	err = self_start_time(&start);
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
	err = nl->kind == NETLOCK_NFTABLES ? nft_exec(nl->nft, text, NULL, false)
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
		return text ? nft_exec(nl->nft, text, NULL, false) : neg_errno();
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
		if (asprintf(&text, "flush set inet %s v4\nflush set inet %s v6\n", nl->name,
			     nl->name) < 0)
			return -ENOMEM;
		err = nft_exec(nl->nft, text, NULL, false);
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
		err = text ? nft_exec(nl->nft, text, NULL, false) : neg_errno();
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
static struct netlock *netlock_by_name(const char *name)
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
	 * One runner for every change of this lock: closing a libnftables
	 * context after a transaction that deleted something (the sets flushed
	 * by netlock_open()) waits for an RCU grace period (the kernel flushes
	 * its destroy work on NETLINK_URELEASE), 10-15 ms here, which must not
	 * come between opening the lock and letting the held packets go.
	 */
	if (kind == NETLOCK_NFTABLES) {
		nl->installed = true;
		nl->nft = nft_runner_open();
		if (!nl->nft) {
			free(nl);
			errno = ENOMEM;
			return NULL;
		}
	} else
		for (i = 0; i < 2; i++)
			nl->chain[i] = !ipt_cmd(fam_of(i), true, "-S", name, NULL, NULL);
	return nl;
}

/* Does @nl (netlock_by_name()) exist on this machine? Through its own runner. */
static bool netlock_exists(struct netlock *nl)
{
	_cleanup_free_ char *cmd = NULL;

	if (nl->kind == NETLOCK_NFTABLES)
		return asprintf(&cmd, "list table inet %s\n", nl->name) > 0 &&
		       !nft_exec(nl->nft, cmd, NULL, true);
	return nl->chain[0] || nl->chain[1];
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

/* ---- crash cleanup -------------------------------------------------------------------------- */

/* `nft list tables` through @r; -ENOENT without libnftables and nft. */
static int nft_list(struct nft_runner *r, char **ret)
{
	if (!r)
		return -ENOMEM;
	if (!nft_available(r))
		return -ENOENT;
	return nft_exec(r, "list tables\n", ret, false);
}

int netlock_list(enum netlock_kind kind, char ***ret)
{
	_cleanup_free_ char *a = NULL, *b = NULL, *both = NULL;
	char path[256];
	int err;

	if (kind == NETLOCK_NFTABLES) {
		struct nft_runner *r = nft_runner_open();

		err = nft_list(r, &a);
		nft_runner_close(r);
	} else {
		/* no tool, no lock of its kind: quiet; a tool that fails says why */
		err = find_tool("iptables", path, sizeof(path));
		if (err)
			return err;
		const char *const v4[] = { "iptables", "-w", "-S", NULL };
		const char *const v6[] = { "ip6tables", "-w", "-S", NULL };

		err = run_tool(v4, NULL, &a, false);
		if (!err)
			err = run_tool(v6, NULL, &b, false);
	}
	if (err)
		return err;
	if (asprintf(&both, "%s\n%s", a, b ? b : "") < 0)
		return -ENOMEM;
	*ret = netlock_list_names(kind, both);
	return *ret ? 0 : -ENOMEM;
}

/* What `nft list table` or `iptables -S` shows of our lock @name; -ENOENT if absent. */
static int lock_listing(enum netlock_kind kind, const char *name, char **ret)
{
	_cleanup_free_ char *cmd = NULL;
	int i;

	if (kind == NETLOCK_NFTABLES) {
		if (asprintf(&cmd, "list table inet %s\n", name) < 0)
			return -ENOMEM;
		return nft_exec(NULL, cmd, ret, true) ? -ENOENT : 0;
	}
	for (i = 0; i < 2; i++) {
		const char *const argv[] = { i ? "ip6tables" : "iptables", "-w", "-S", name, NULL };

		if (!run_tool(argv, NULL, ret, true))
			return 0;
	}
	return -ENOENT;
}

/* The network_lock of the complete dump in @dir; NULL when there is none. */
static char *images_lock_of(const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	InventoryEntry *inv = NULL;
	char *name = NULL;

	/* no directory, no inventory: quietly none; a corrupt one is logged by the reader */
	if (fd < 0 || faccessat(fd, "inventory.img", F_OK, 0) ||
	    img_read_one(fd, CR_IMG_INVENTORY, 0, (ProtobufCMessage **)&inv))
		return NULL;
	if (inv->completed && inv->network_lock)
		name = strdup(inv->network_lock);
	protobuf_c_message_free_unpacked(&inv->base, NULL);
	return name;
}

/* Boot time, seconds since the epoch (/proc/stat btime). */
static int boot_time(uint64_t *ret)
{
	_cleanup_free_ char *text = read_file_at(AT_FDCWD, "/proc/stat", NULL);
	const char *p = text ? strstr(text, "\nbtime ") : NULL;
	unsigned long long v;

	if (!p || sscanf(p + 7, "%llu", &v) != 1)
		return -EINVAL;
	*ret = v;
	return 0;
}

/*
 * Does the criu-like that kept @name still run? The kept name has its pid and
 * the dump's time: the process on that pid must have started before it.
 */
static bool dumper_runs(const char *name)
{
	struct proc_stat st;
	uint64_t btime, stamp;
	long hz = sysconf(_SC_CLK_TCK);
	const char *p = strrchr(name, '_');
	pid_t pid;

	if (netlock_kept_pid(name, &pid) || !p || proc_parse_stat(pid, 0, &st))
		return false;
	stamp = strtoull(p + 1, NULL, 16);
	if (boot_time(&btime) || hz <= 0)
		return true; /* cannot tell: the benefit of the doubt */
	return btime + st.start_time / (uint64_t)hz <= stamp + 1;
}

enum netlock_verdict netlock_verdict_of(enum netlock_kind kind, const char *name)
{
	enum netlock_verdict v = netlock_judge(name, netlock_proc_alive, NULL);
	_cleanup_free_ char *listing = NULL, *images = NULL;
	char dir[NETLOCK_DIR_MAX + 1];

	if (v != NETLOCK_KEPT)
		return v;
	/* a kept lock that names no directory, or cannot be read now, is left alone */
	if (lock_listing(kind, name, &listing) || netlock_recorded_dir(listing, dir, sizeof(dir)))
		return NETLOCK_KEPT;
	images = images_lock_of(dir);
	return netlock_judge_kept(name, dir, images, dumper_runs(name));
}

int netlock_cleanup(enum netlock_kind kind, bool quiet_missing)
{
	_cleanup_free_ char **names = NULL;
	const char *stale[64];
	int n = 0, err, i;

	err = netlock_list(kind, &names);
	if (err) {
		if (!quiet_missing || err != -ENOENT)
			pr_warn("cannot list the %s locks to remove stale ones: %s\n",
				netlock_kind_name(kind), strerror(-err));
		return err == -ENOENT && quiet_missing ? 0 : err;
	}
	for (i = 0; names[i] && n < (int)ARRAY_SIZE(stale) - 1; i++) {
		if (netlock_verdict_of(kind, names[i]) != NETLOCK_STALE)
			continue;
		pr_warn("removing the network lock %s: %s\n", names[i],
			netlock_judge(names[i], netlock_proc_alive, NULL) == NETLOCK_KEPT
				? "the images it was kept for no longer record it"
				: "the criu-like that installed it is gone");
		stale[n++] = names[i];
		nfq_hold_stop_name(names[i]);
	}
	stale[n] = NULL;
	if (n && kind == NETLOCK_NFTABLES) {
		/* every stale table in one transaction */
		_cleanup_free_ char *text = netlock_nft_delete(stale);

		err = text ? nft_exec(NULL, text, NULL, false) : -ENOMEM;
		if (err)
			pr_errno(err, "cannot remove the stale network locks");
		return err ? err : n;
	}
	for (i = 0; i < n; i++) {
		err = netlock_remove_name(stale[i]);
		if (err)
			return err;
	}
	return n;
}

void netlock_run_start(const struct cr_options *o)
{
	uint64_t start;

	self_start_time(&start); /* while /proc is criu-like's */
	/* holding packets on or off for this run */
	nfq_hold_disable(o->no_packet_hold);
}

void netlock_cleanup_stale(const struct cr_options *o)
{
	enum netlock_kind kind;

	netlock_run_start(o);
	if (netlock_parse_kind(o->network_lock, &kind) || kind == NETLOCK_SKIP)
		return;
	/* a host without the tool has no lock of that kind: nothing to say */
	netlock_cleanup(kind, true);
}

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

/* The holder of this namespace (if any) holds @t[0..@n) too; a failure only warns. */
static void hold_conns(const struct inet_tuple *t, size_t n)
{
	struct nfq_hold *h = nfq_hold_here(NULL, true);

	if (!h)
		return;
	nfq_hold_add(h, t, n);
	/* the tools started ahead and not needed (the other family) go now */
	nfq_hold_prime_end(h);
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

static int netlock_dump_conns_here(struct dump_ctx *ctx, const struct inet_tuple *t, size_t n)
{
	enum netlock_kind kind;
	int err;

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
	/* held first: from the lock's rule on, nothing of them is only dropped */
	hold_conns(t, n);
	return netlock_add(ctx->netlock, t, n);
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
	if (nl && netlock_installed(nl))
		netlock_open(nl);
	if (in_tree)
		ns_net_open_here();
	nfq_hold_release(h);
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

	if (!h && kept && nfq_hold_find(kept, &h)) {
		h = NULL;
		/* killed, its rules left behind: they would drop these connections for good */
		lost = !ctx->opts->no_packet_hold;
	}
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
