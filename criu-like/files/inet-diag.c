// SPDX-License-Identifier: GPL-2.0
/*
 * What the dump knows of the inet sockets of this network namespace
 * (Documentation/network.md), the inet kind's dump state: every TCP and UDP
 * socket listed by sock_diag (NETLINK_SOCK_DIAG through libnl, once per
 * dump, found by inode), and which bound ones processes outside the tree
 * hold too (their /proc/PID/fd, once per dump). A socket sock_diag does not
 * list is described by getsockname.
 */
#define LOG_PREFIX "files: "

#include <arpa/inet.h>
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files-int.h"
#include "inet.h"
#include "inet-scan.h"
#include "log.h"
#include "ns.h"
#include "util.h"

/* ---- sock_diag through libnl ----------------------------------------------------------- */

int inet_diag_parse(const struct nlmsghdr *h, uint8_t proto, struct inet_sk_diag *ret)
{
	struct nlattr *tb[INET_DIAG_MAX + 1];
	const struct inet_diag_msg *m;

	memset(ret, 0, sizeof(*ret));
	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return -EINVAL;
	m = NLMSG_DATA(h);
	if (m->idiag_family != AF_INET && m->idiag_family != AF_INET6)
		return -EINVAL;
	ret->ino = m->idiag_inode;
	ret->family = m->idiag_family;
	ret->proto = proto;
	ret->state = m->idiag_state;
	memcpy(ret->src, m->id.idiag_src, 16);
	memcpy(ret->dst, m->id.idiag_dst, 16);
	ret->sport = ntohs(m->id.idiag_sport);
	ret->dport = ntohs(m->id.idiag_dport);
	ret->rqueue = m->idiag_rqueue;
	ret->wqueue = m->idiag_wqueue;
	if (nlmsg_parse((struct nlmsghdr *)h, sizeof(*m), tb, INET_DIAG_MAX, NULL) < 0)
		return -EINVAL;
	if (tb[INET_DIAG_SHUTDOWN] && nla_len(tb[INET_DIAG_SHUTDOWN]) >= 1)
		ret->shutdown = nla_get_u8(tb[INET_DIAG_SHUTDOWN]);
	return 0;
}

struct diag_load {
	struct inet_dump *in;
	uint8_t proto;
	size_t cap;
	int err;
};

static int diag_cb(struct nl_msg *msg, void *arg)
{
	struct diag_load *l = arg;
	struct inet_dump *in = l->in;
	struct inet_sk_diag dg;

	if (inet_diag_parse(nlmsg_hdr(msg), l->proto, &dg))
		return NL_OK; /* not an inet socket: nothing of ours */
	if (in->nr_sks == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct inet_sk_diag *n = realloc(in->sks, cap * sizeof(*n));

		if (!n) {
			l->err = -ENOMEM;
			return NL_STOP;
		}
		in->sks = n;
		l->cap = cap;
	}
	in->sks[in->nr_sks++] = dg;
	return NL_OK;
}

/*
 * Every socket of @family and @proto. IPPROTO_RAW: every raw socket, of any
 * protocol (raw_diag's dump does not look at its protocol byte). @optional: a kernel without that part of sock_diag is no error (-ENOENT).
 */
static int diag_dump_one(struct nl_sock *sk, struct diag_load *l, uint8_t family, uint8_t proto,
			 bool optional)
{
	struct inet_diag_req_v2 req = {
		.sdiag_family = family,
		.sdiag_protocol = proto,
		.idiag_states = ~0u,
	};
	int err = sock_diag_send(sk, &req, sizeof(req), NLM_F_DUMP);

	if (err == -ENOMEM)
		return err;
	if (err < 0 && optional) {
		pr_debug("sock_diag request (family %u, protocol %u): %s\n", family, proto,
			 nl_geterror(err));
		return -ENOENT;
	}
	if (err < 0) {
		pr_err("sock_diag request (family %u, protocol %u): %s\n", family, proto,
		       nl_geterror(err));
		return -EIO;
	}
	l->proto = proto;
	err = nl_recvmsgs_default(sk);
	if (l->err)
		return l->err;
	if (err < 0 && optional) {
		pr_debug("sock_diag dump (family %u, protocol %u): %s\n", family, proto,
			 nl_geterror(err));
		return -ENOENT;
	}
	if (err < 0) {
		pr_err("sock_diag dump (family %u, protocol %u): %s\n", family, proto,
		       nl_geterror(err));
		return -EIO;
	}
	return 0;
}

static int cmp_diag_ino(const void *a, const void *b)
{
	uint32_t x = ((const struct inet_sk_diag *)a)->ino,
		 y = ((const struct inet_sk_diag *)b)->ino;

	return (x > y) - (x < y);
}

/* Every TCP and UDP socket of this network namespace, once per dump, sorted by inode. */
static int diag_load(struct inet_dump *in)
{
	static const uint8_t families[] = { AF_INET, AF_INET6 };
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP };
	struct diag_load l = { .in = in };
	struct nl_sock *sk;
	unsigned int i, k;
	int err;

	if (in->loaded)
		return 0;
	err = sock_diag_open(&sk);
	if (err)
		return err;
	err = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, diag_cb, &l);
	for (i = 0; !err && i < ARRAY_SIZE(families); i++)
		for (k = 0; !err && k < ARRAY_SIZE(protos); k++)
			err = diag_dump_one(sk, &l, families[i], protos[k], false);
	/*
	 * UDP-Lite and raw sockets: a kernel without their sock_diag (udp_diag's
	 * UDP-Lite part, raw_diag: this one has none) leaves them to the
	 * fallbacks (getsockname and getpeername; /proc/PID/net/raw).
	 */
	for (i = 0; !err && i < ARRAY_SIZE(families); i++)
		for (k = 0; !err && k < 2; k++)
			if (diag_dump_one(sk, &l, families[i], k ? IPPROTO_RAW : IPPROTO_UDPLITE,
					  true) == -ENOMEM)
				err = -ENOMEM;
	nl_socket_free(sk);
	if (err)
		return err < 0 ? err : -EIO;
	if (in->nr_sks)
		qsort(in->sks, in->nr_sks, sizeof(*in->sks), cmp_diag_ino);
	in->loaded = true;
	pr_debug("sock_diag: %zu inet sockets\n", in->nr_sks);
	return 0;
}

/* A bound socket of the tree, to look for outside once the scan is over. */
struct inet_outside_check {
	pid_t pid;
	int fd;
	uint32_t ino;
	char link[64];
	char ends[INET_ENDS_STRLEN];
};

static int outside_check(struct dump_ctx *ctx, struct inet_dump *in,
			 const struct inet_outside_check *c);

/*
 * The early lock (inet_dump_start()): sock_diag, then the lock of every
 * connection of the tree, by a thread of its own from the freeze on, while
 * the tasks are infected. Once the holder holds the connections, the main
 * thread may go on (held) while the lock's own transaction is made.
 */
struct inet_early {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool held; /* in->locked complete, the connections safe (or the thread done) */
	int lock_err; /* of the lock's transaction, after held */
	struct dump_ctx *ctx;
	struct inet_dump *in;
};

static void early_held(void *arg)
{
	struct inet_early *e = arg;

	pthread_mutex_lock(&e->lock);
	e->held = true;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

static void *early_run(void *arg)
{
	struct inet_early *e = arg;
	bool held;
	int err = 0;

	/* a sock_diag that failed is asked again, and reported, by the first socket */
	if (!diag_load(e->in))
		err = tcp_lock_tree(e->ctx, e->in, early_held, e);
	pthread_mutex_lock(&e->lock);
	held = e->held;
	pthread_mutex_unlock(&e->lock);
	if (held)
		e->lock_err = err;
	else
		e->in->early_err = err;
	early_held(e);
	return NULL;
}

/* Until the early lock's connections are held (or it ended). */
static void early_wait(struct inet_early *e)
{
	pthread_mutex_lock(&e->lock);
	while (!e->held)
		pthread_cond_wait(&e->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
}

/* The early lock's thread done: its results in @in are the dump's from now on. */
static void early_join(struct inet_dump *in)
{
	if (!in->early)
		return;
	pthread_join(in->early->th, NULL);
	if (!in->lock_err)
		in->lock_err = in->early->lock_err;
	pthread_mutex_destroy(&in->early->lock);
	pthread_cond_destroy(&in->early->cond);
	free(in->early);
	in->early = NULL;
}

/* The main thread's view: whatever the early lock was doing is done. */
struct inet_dump *inet_dump_get(struct dump_ctx *ctx)
{
	void **slot = file_kind_dump_state(ctx, &inet_kind);

	if (!slot)
		return NULL;
	if (!*slot)
		*slot = calloc(1, sizeof(struct inet_dump));
	if (*slot && ((struct inet_dump *)*slot)->early)
		early_wait(((struct inet_dump *)*slot)->early);
	return *slot;
}

int inet_dump_sync(struct dump_ctx *ctx)
{
	void **slot = ctx->files ? file_kind_dump_state(ctx, &inet_kind) : NULL;
	struct inet_dump *in = slot ? *slot : NULL;
	size_t i;
	int err = 0;

	if (!in)
		return 0;
	early_join(in);
	/* the bound sockets met while the scan still ran, in the order they were met */
	for (i = 0; i < in->nr_pending && !err; i++)
		err = outside_check(ctx, in, &in->pending[i]);
	in->nr_pending = 0;
	return err ?: in->lock_err;
}

static const struct inet_sk_diag *diag_find(const struct inet_dump *in, uint32_t ino)
{
	struct inet_sk_diag key = { .ino = ino };

	if (!ino || !in->nr_sks)
		return NULL;
	return bsearch(&key, in->sks, in->nr_sks, sizeof(key), cmp_diag_ino);
}

/*
 * A socket sock_diag does not list: an unbound (or bound-only, before 6.6)
 * TCP socket in CLOSE, an unbound UDP socket, a raw or ping socket (not
 * asked for). Its name from getsockname, a datagram socket's peer from
 * getpeername (connected: TCP_ESTABLISHED, as sock_diag says of UDP).
 */
/* The address (network order) and port (host order) of @ss. */
static void sockaddr_split(const struct sockaddr_storage *ss, uint8_t *addr, uint16_t *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		memcpy(addr, &in->sin_addr, 4);
		*port = ntohs(in->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		memcpy(addr, &in6->sin6_addr, 16);
		*port = ntohs(in6->sin6_port);
	}
}

static int diag_fallback(const struct fd_info *f, int proto, struct inet_sk_diag *dg)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct tcp_info ti;
	socklen_t tlen = sizeof(ti);

	memset(dg, 0, sizeof(*dg));
	dg->ino = (uint32_t)f->st.st_ino;
	dg->family = (uint8_t)f->sk_family;
	dg->proto = (uint8_t)proto;
	dg->state = TCP_CLOSE;
	if (proto == IPPROTO_TCP && !getsockopt(f->dfd, SOL_TCP, TCP_INFO, &ti, &tlen) &&
	    ti.tcpi_state != TCP_CLOSE) {
		pr_err("pid %d fd %d: %s (TCP, %s) is not known to sock_diag\n", f->pid, f->fd,
		       f->link, tcp_state_name(ti.tcpi_state));
		return -ENOENT;
	}
	if (getsockname(f->dfd, (struct sockaddr *)&ss, &len)) {
		pr_perror("pid %d fd %d: getsockname of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	sockaddr_split(&ss, dg->src, &dg->sport);
	len = sizeof(ss);
	if (proto != IPPROTO_TCP && !getpeername(f->dfd, (struct sockaddr *)&ss, &len)) {
		sockaddr_split(&ss, dg->dst, &dg->dport);
		dg->state = TCP_ESTABLISHED;
	} else if (proto != IPPROTO_TCP && errno != ENOTCONN) {
		pr_perror("pid %d fd %d: getpeername of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	return 0;
}

/* @n bytes of address from the hex words of /proc/net/raw (each a __be32 printed as a u32). */
int inet_proc_addr(const char *hex, uint8_t *addr, size_t n)
{
	size_t i;

	for (i = 0; i < n; i += 4) {
		char word[9];
		char *end;
		uint32_t w;

		memcpy(word, hex + 2 * i, 8);
		word[8] = '\0';
		w = (uint32_t)strtoul(word, &end, 16);
		if (end != word + 8)
			return -EINVAL;
		memcpy(addr + i, &w, 4);
	}
	return hex[2 * n] == ':' ? 0 : -EINVAL;
}

/*
 * A raw or ping socket from /proc/PID/net/@table (raw, icmp; "6" added for
 * IPv6) of its task, the namespace's view: ping sockets have no sock_diag,
 * raw ones none in a kernel without raw_diag (CONFIG_INET_RAW_DIAG, as
 * here). Local and remote address, state (TCP_ESTABLISHED once connected:
 * getpeername says ENOTCONN of them while their remote port is 0), the
 * protocol (raw) or echo identifier (ping) as local port.
 */
static int sk_from_proc(const struct fd_info *f, int proto, const char *table,
			struct inet_sk_diag *dg)
{
	size_t alen = f->sk_family == AF_INET ? 4 : 16;
	_cleanup_fclose_ FILE *pf = NULL;
	_cleanup_free_ char *line = NULL;
	char path[64], loc[40], rem[40];
	unsigned int st, lport, rport;
	unsigned long ino;
	size_t cap = 0;

	snprintf(path, sizeof(path), "/proc/%d/net/%s%s", f->pid, table,
		 f->sk_family == AF_INET ? "" : "6");
	pf = fopen(path, "re");
	if (!pf) {
		pr_perror("pid %d fd %d: %s: cannot read %s", f->pid, f->fd, f->link, path);
		return neg_errno();
	}
	while (getline(&line, &cap, pf) > 0) {
		if (sscanf(line, "%*s %39s %39s %x %*s %*s %*s %*s %*s %lu", loc, rem, &st, &ino) !=
			    4 ||
		    ino != f->st.st_ino)
			continue;
		memset(dg, 0, sizeof(*dg));
		if (strlen(loc) != 2 * alen + 5 || strlen(rem) != 2 * alen + 5 ||
		    inet_proc_addr(loc, dg->src, alen) || inet_proc_addr(rem, dg->dst, alen) ||
		    sscanf(loc + 2 * alen + 1, "%x", &lport) != 1 ||
		    sscanf(rem + 2 * alen + 1, "%x", &rport) != 1 || st > 255) {
			pr_err("pid %d fd %d: %s: a line of %s not understood: %s", f->pid, f->fd,
			       f->link, path, line);
			return -EINVAL;
		}
		dg->ino = (uint32_t)ino;
		dg->family = (uint8_t)f->sk_family;
		dg->proto = (uint8_t)proto;
		dg->state = (uint8_t)st;
		dg->sport = (uint16_t)lport;
		dg->dport = (uint16_t)rport;
		return 0;
	}
	pr_err("pid %d fd %d: %s (%s, protocol %d) is neither known to sock_diag nor in %s\n",
	       f->pid, f->fd, f->link, table, proto, path);
	return -ENOENT;
}

/* What sock_diag knows of @f, or what getsockname tells of a socket it does not list. */
int inet_diag_of(struct dump_ctx *ctx, const struct fd_info *f, int type, int proto,
		 struct inet_sk_diag *dg)
{
	struct inet_dump *in = inet_dump_get(ctx);
	const struct inet_sk_diag *found;
	int err;

	if (!in)
		return -ENOMEM;
	if (f->st.st_ino > UINT32_MAX) {
		pr_err("pid %d fd %d: %s: inode beyond sock_diag's 32 bits\n", f->pid, f->fd,
		       f->link);
		return -EOVERFLOW;
	}
	err = diag_load(in);
	if (err) {
		pr_errno(err, "pid %d fd %d: sock_diag of %s", f->pid, f->fd, f->link);
		return err;
	}
	found = diag_find(in, (uint32_t)f->st.st_ino);
	if (found && found->family == f->sk_family &&
	    (found->proto == proto || (type == SOCK_RAW && found->proto == IPPROTO_RAW))) {
		*dg = *found;
		dg->proto = (uint8_t)proto;
		return 0;
	}
	if (type == SOCK_RAW)
		return sk_from_proc(f, proto, "raw", dg);
	if (inet_is_ping(type, proto))
		return sk_from_proc(f, proto, "icmp", dg);
	return diag_fallback(f, proto, dg);
}

/* ---- sockets held outside the tree ---------------------------------------------------- */

static int cmp_holder(const void *a, const void *b)
{
	uint32_t x = ((const struct inet_holder *)a)->ino, y = ((const struct inet_holder *)b)->ino;

	return (x > y) - (x < y);
}

/*
 * The socket fds of the processes outside the tree (@tree[0..@nr_tree),
 * and the dumper), as (inode, pid): read by a thread of their own from
 * inet_dump_start() on, or at once by holders_load(). A process that
 * vanishes meanwhile holds none.
 */
struct inet_scan {
	pthread_t th;
	bool started;
	bool ready; /* read before the freeze (inet_scan_ahead()): no walk left */
	bool done; /* the thread's walk is over (atomic) */
	pid_t *tree;
	size_t nr_tree;
	struct inet_holder *all;
	size_t nr, cap;
	int err;
};

static bool scan_in_tree(const struct inet_scan *sc, pid_t pid)
{
	size_t i;

	for (i = 0; i < sc->nr_tree; i++)
		if (sc->tree[i] == pid)
			return true;
	return false;
}

static int scan_add(struct inet_scan *sc, uint32_t ino, pid_t pid)
{
	if (sc->nr == sc->cap) {
		size_t nc = sc->cap ? sc->cap * 2 : 256;
		struct inet_holder *v = realloc(sc->all, nc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sc->all = v;
		sc->cap = nc;
	}
	sc->all[sc->nr++] = (struct inet_holder){ .ino = ino, .pid = pid };
	return 0;
}

/* The socket fds of process @pid. */
static int scan_pid(struct inet_scan *sc, pid_t pid)
{
	_cleanup_closedir_ DIR *dir = NULL;
	struct dirent *de;
	char path[64], link[64];
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	while (!err && dir && (de = readdir(dir))) {
		unsigned int ino;
		ssize_t n = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);

		if (n > 0 && (link[n] = '\0', sscanf(link, "socket:[%u]", &ino) == 1))
			err = scan_add(sc, ino, pid);
	}
	return err;
}

static void *scan_run(void *arg)
{
	struct inet_scan *sc = arg;
	_cleanup_closedir_ DIR *proc = opendir("/proc");
	struct dirent *de;

	if (!proc)
		sc->err = neg_errno();
	while (!sc->err && proc && (de = readdir(proc))) {
		long pid;

		if (parse_long(de->d_name, &pid) || pid <= 0 || scan_in_tree(sc, (pid_t)pid))
			continue;
		sc->err = scan_pid(sc, (pid_t)pid);
	}
	__atomic_store_n(&sc->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static struct inet_scan *scan_new(const struct dump_ctx *ctx)
{
	struct inet_scan *sc = calloc(1, sizeof(*sc));
	unsigned int i;

	if (!sc || !(sc->tree = calloc(ctx->nr_tasks + 1, sizeof(*sc->tree)))) {
		free(sc);
		return NULL;
	}
	for (i = 0; i < ctx->nr_tasks; i++)
		sc->tree[sc->nr_tree++] = ctx->tasks[i].t->pid;
	sc->tree[sc->nr_tree++] = getpid(); /* the dumper, holding what the parasite drained */
	return sc;
}

/* Waits for the thread if one runs; frees @sc. */
static void scan_free(struct inet_scan *sc)
{
	if (!sc)
		return;
	if (sc->started)
		pthread_join(sc->th, NULL);
	free(sc->all);
	free(sc->tree);
	free(sc);
}

struct inet_scan *inet_scan_ahead(const pid_t *tree, size_t n)
{
	struct inet_scan *sc = calloc(1, sizeof(*sc));

	if (!sc || !(sc->tree = calloc(n + 1, sizeof(*sc->tree)))) {
		free(sc);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(sc->tree, tree, n * sizeof(*tree));
	sc->nr_tree = n;
	sc->tree[sc->nr_tree++] = getpid();
	scan_run(sc);
	sc->ready = true;
	pr_debug("processes outside the tree: %zu socket fds, read before the freeze%s\n", sc->nr,
		 sc->err ? " (the walk failed)" : "");
	return sc;
}

void inet_scan_ahead_free(struct inet_scan *sc)
{
	scan_free(sc);
}

/*
 * The walk made before the freeze, for this dump: its sockets of processes
 * that are not the dump's tasks (a task forked while the walk ran was not
 * known to it as the tree's).
 */
static struct inet_scan *scan_from_ahead(const struct dump_ctx *ctx, const struct inet_scan *a)
{
	struct inet_scan *sc = scan_new(ctx);

	if (!sc)
		return NULL;
	sc->err = a->err;
	sc->ready = true;
	sc->done = true;
	for (size_t i = 0; !sc->err && i < a->nr; i++)
		if (!scan_in_tree(sc, a->all[i].pid))
			sc->err = scan_add(sc, a->all[i].ino, a->all[i].pid);
	return sc;
}

/*
 * The lock's context and the holder made before the freeze
 * (netlock_dump_ahead(): a tree of this network namespace, packets held):
 * the connections are locked by a thread from now on, while the tasks are
 * infected, rather than at the first connection dumped (sock_diag of the
 * namespace and the lock's transaction, 8-10 ms here, frozen time after the
 * infection). The tree is frozen: the sockets its tasks hold are the ones
 * its dump will find. The same for a tree in a namespace of its own once
 * that is locked (ns/net.c): its sock_diag (3-4 ms) by the thread, which
 * locks the connections over lo, the others being held by the namespace's
 * lock already (ns_net_conn_outside()).
 */
static void early_start(struct dump_ctx *ctx, struct inet_dump *in)
{
	/* or a tree of its own namespace, locked: only the connections over lo are left */
	bool ahead = (ctx->netlock && ns_net_tree_fd() < 0) || ns_net_tree_locked();
	struct inet_early *e;

	if (!ahead || !(e = calloc(1, sizeof(*e))))
		return;
	e->ctx = ctx;
	e->in = in;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	/* without a thread, the first connection locks them all, as before */
	if (pthread_create(&e->th, NULL, early_run, e)) {
		pthread_mutex_destroy(&e->lock);
		pthread_cond_destroy(&e->cond);
		free(e);
		return;
	}
	in->early = e;
}

int inet_dump_start(struct dump_ctx *ctx)
{
	struct inet_dump *in;

	if (!ctx->opts->tcp_established)
		return 0;
	in = inet_dump_get(ctx);
	if (!in)
		return -ENOMEM;
	if (ctx->opts->inet_scan_ahead) {
		/* read before the freeze (a migration's final dump: include/inet-scan.h) */
		in->scan = scan_from_ahead(ctx, ctx->opts->inet_scan_ahead);
		if (!in->scan)
			return -ENOMEM;
		early_start(ctx, in);
		return 0;
	}
	in->scan = scan_new(ctx);
	if (!in->scan)
		return -ENOMEM;
	/* without a thread, holders_load() reads it all itself */
	in->scan->started = !pthread_create(&in->scan->th, NULL, scan_run, in->scan);
	early_start(ctx, in);
	return 0;
}

/*
 * Every process outside the tree, once per dump: which bound TCP and UDP
 * sockets (of sock_diag) it holds, into in->outside. From the scan started
 * by inet_dump_start(), or one made now.
 */
static int holders_load(const struct dump_ctx *ctx, struct inet_dump *in)
{
	struct inet_scan *sc = in->scan ? in->scan : scan_new(ctx);
	size_t i;
	int err;

	in->outside_loaded = true;
	in->scan = NULL;
	if (!sc)
		return -ENOMEM;
	if (sc->started) {
		pthread_join(sc->th, NULL);
		sc->started = false;
	} else if (!sc->ready) {
		scan_run(sc);
	}
	err = sc->err;
	in->outside = err ? NULL : malloc((sc->nr ? sc->nr : 1) * sizeof(*in->outside));
	if (!err && !in->outside)
		err = -ENOMEM;
	for (i = 0; !err && i < sc->nr; i++) {
		const struct inet_sk_diag *dg = diag_find(in, sc->all[i].ino);

		if (dg && dg->sport)
			in->outside[in->nr_outside++] = sc->all[i];
	}
	if (!err && in->nr_outside)
		qsort(in->outside, in->nr_outside, sizeof(*in->outside), cmp_holder);
	scan_free(sc);
	return err;
}

/*
 * A bound socket of the tree that a process outside holds too stays open
 * there, with its address, when the tree is killed: the restore could not
 * take the address again (a listening socket inherited by a child outside,
 * a socket passed to another program). Refused before anything is killed.
 */
/* @c refused when a process outside holds it: -EOPNOTSUPP (logged), 0, or -errno. */
static int outside_check(struct dump_ctx *ctx, struct inet_dump *in,
			 const struct inet_outside_check *c)
{
	struct inet_holder key = { .ino = c->ino }, *h;
	char path[64], comm[32] = "?";
	_cleanup_close_ int cfd = -1;
	ssize_t n;
	int err;

	if (!in->outside_loaded) {
		err = holders_load(ctx, in);
		if (err) {
			pr_errno(err,
				 "cannot look for the inet sockets of processes outside the tree");
			return err;
		}
	}
	h = in->nr_outside ? bsearch(&key, in->outside, in->nr_outside, sizeof(key), cmp_holder)
			   : NULL;
	if (!h)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", h->pid);
	cfd = open(path, O_RDONLY | O_CLOEXEC);
	n = cfd >= 0 ? read(cfd, comm, sizeof(comm) - 1) : -1;
	if (n > 0)
		comm[n - (comm[n - 1] == '\n')] = '\0';
	pr_err("pid %d fd %d: %s (%s) is also open in pid %d (%s), outside the dumped tree: it "
	       "would stay open there with its address, which the restore could not take again; "
	       "dump that process too, or close the socket there\n",
	       c->pid, c->fd, c->link, c->ends, h->pid, comm);
	return -EOPNOTSUPP;
}

int inet_check_outside(struct dump_ctx *ctx, const struct fd_info *f, const InetSkEntry *e)
{
	struct inet_dump *in = inet_dump_get(ctx);
	struct inet_outside_check c = { .pid = f->pid, .fd = f->fd, .ino = (uint32_t)f->st.st_ino };
	struct inet_outside_check *v;

	if (!e->has_src_port)
		return 0;
	snprintf(c.link, sizeof(c.link), "%s", f->link);
	inet_entry_ends(e, c.ends, sizeof(c.ends));
	/* the scan's thread still walks /proc: looked at in inet_dump_sync(), not waited for now */
	if (in->scan && in->scan->started && !__atomic_load_n(&in->scan->done, __ATOMIC_ACQUIRE)) {
		v = realloc(in->pending, (in->nr_pending + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		in->pending = v;
		in->pending[in->nr_pending++] = c;
		return 0;
	}
	return outside_check(ctx, in, &c);
}

/* ---- the end of the dump --------------------------------------------------------------- */

void inet_dump_fini(struct dump_ctx *ctx, bool resume)
{
	/* no file table: nothing was dumped, no state to free (and none to make now) */
	void **slot = ctx->files ? file_kind_dump_state(ctx, &inet_kind) : NULL;
	struct inet_dump *in = slot ? *slot : NULL;

	if (!in)
		return;
	early_join(in);
	tcp_repair_undo(in, resume);
	free(in->pending);
	scan_free(in->scan);
	free(in->sks);
	free(in->locked);
	free(in->outside);
	free(in);
	*slot = NULL;
}
