// SPDX-License-Identifier: GPL-2.0
/*
 * The nftables tables of this thread's network namespace asked of the kernel
 * on a netlink socket (NFT_MSG_GETTABLE, about 0.05 ms), for the questions
 * that do not need libnftables, whose load, context and cache cost 3-5 ms:
 * does a table exist (the restore's lock), and which inet tables are there
 * (every run's look for stale locks, net-lock-cleanup.c). And the three
 * changes of a namespace's lock (made, its chains emptied once the tree
 * runs, the table deleted), one nfnetlink batch each (0.05-0.5 ms; the lock
 * made by libnftables took 6 ms in the freeze on a PVM guest), which also undo a
 * packet holder's table raw once a look at its chains and rules found only
 * the holder's (nfq-hold-rules.c). The socket is the
 * caller's to keep: its close after a change waits until the kernel has
 * destroyed what the change removed (nf_tables flushes its destroy work, an
 * RCU grace period: 6-12 ms here), so it is closed off the let-go's path.
 * -errno when the kernel cannot say or refuses; the callers then ask
 * libnftables or the nft tool.
 */
#define LOG_PREFIX "net-lock: "

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "net-lock-int.h"
#include "net-lock.h"
#include "util.h"

/* A GETTABLE request: header, nfgenmsg, and NFTA_TABLE_NAME for one table. */
struct nft_gettable {
	struct nlmsghdr nh;
	struct nfgenmsg nfg;
	struct nlattr name_attr;
	char name[NLA_ALIGN(NETLOCK_NAME_MAX)];
};

/* Called for each object the kernel sends (an NFT_MSG_NEWTABLE, NEWCHAIN or NEWRULE message). */
typedef int (*nft_table_fn)(const struct nlmsghdr *h, void *arg);

/*
 * The answers to @seq on @fd up to the ack or the dump's end: @each for each
 * message of type @type; 0, or the kernel's -errno (-ENOENT: no such table),
 * or -EIO.
 */
static int nft_answer(int fd, uint32_t seq, int type, nft_table_fn each, void *arg)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		size_t len = n > 0 ? (size_t)n : 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? neg_errno() : -EIO;
		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			int err;

			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EIO;
				return e->error > 0 ? -EIO : e->error;
			}
			if (NFNL_MSG_TYPE(h->nlmsg_type) != type)
				continue;
			err = each(h, arg);
			if (err)
				return err;
		}
	}
}

/*
 * One request of @type (NFT_MSG_GETTABLE, GETCHAIN, GETRULE) for @family on @fd,
 * @flags NLM_F_ACK or NLM_F_DUMP, naming table @name when not NULL
 * (NFTA_TABLE_NAME and NFTA_RULE_TABLE are both attribute 1; GETCHAIN takes
 * none), and its answers through @each (their type: @type - 1, NEW*).
 */
static int nft_get(int fd, int type, uint16_t flags, int family, const char *name,
		   nft_table_fn each, void *arg)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nft_gettable req = { 0 };
	size_t len = name ? strlen(name) + 1 : 0;

	if (len > sizeof(req.name))
		return -ENAMETOOLONG;
	req.nh.nlmsg_type = (uint16_t)((NFNL_SUBSYS_NFTABLES << 8) | type);
	req.nh.nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
	req.nh.nlmsg_seq = 1;
	req.nh.nlmsg_len = (uint32_t)NLMSG_LENGTH(sizeof(req.nfg));
	req.nfg.nfgen_family = (uint8_t)family;
	req.nfg.version = NFNETLINK_V0;
	if (len) {
		req.name_attr.nla_type = NFTA_TABLE_NAME;
		req.name_attr.nla_len = (uint16_t)(NLA_HDRLEN + len);
		memcpy(req.name, name, len);
		req.nh.nlmsg_len += (uint32_t)NLA_ALIGN(NLA_HDRLEN + len);
	}
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return neg_errno();
	return nft_answer(fd, req.nh.nlmsg_seq, type - 1, each, arg);
}

/* An inet GETTABLE on a socket of its own. */
static int gettable(uint16_t flags, const char *name, nft_table_fn each, void *arg)
{
	int fd = nft_nl_open(), ret;

	if (fd < 0)
		return fd;
	ret = nft_get(fd, NFT_MSG_GETTABLE, flags, NFPROTO_INET, name, each, arg);
	close(fd);
	return ret;
}

static int table_seen(const struct nlmsghdr *h __unused, void *arg)
{
	*(int *)arg = 1;
	return 0;
}

int nft_table_exists(const char *name)
{
	int found = 0, ret = gettable(NLM_F_ACK, name, table_seen, &found);

	if (ret == -ENOENT)
		return 0;
	return ret ? ret : found;
}

/*
 * The string attribute @type of the nftables message @h (a name), NULL when
 * it has none; *@n its length. A malformed message has none either.
 */
static const char *msg_str(const struct nlmsghdr *h, uint16_t type, size_t *n)
{
	size_t off = NLMSG_ALIGN(sizeof(struct nfgenmsg));
	const char *p = NLMSG_DATA(h);
	size_t len = h->nlmsg_len - NLMSG_HDRLEN;

	while (off + NLA_HDRLEN <= len) {
		const struct nlattr *a = (const struct nlattr *)(p + off);

		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > len)
			return NULL;
		if ((a->nla_type & NLA_TYPE_MASK) == type) {
			*n = strnlen(p + off + NLA_HDRLEN, a->nla_len - NLA_HDRLEN);
			return p + off + NLA_HDRLEN;
		}
		off += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

/* "table inet NAME\n" of the table in @h appended to the stream @arg. */
static int table_line(const struct nlmsghdr *h, void *arg)
{
	size_t n;
	const char *name = msg_str(h, NFTA_TABLE_NAME, &n);

	if (!name)
		return -EIO;
	return fprintf(arg, "table inet %.*s\n", (int)n, name) < 0 ? -ENOMEM : 0;
}

int nft_inet_tables(char **ret)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	int err;

	if (!f)
		return -ENOMEM;
	err = gettable(NLM_F_DUMP, NULL, table_line, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(text);
		return err;
	}
	*ret = text;
	return 0;
}

/* ---- changes: one nfnetlink batch ------------------------------------------------------------ */

struct nft_batch {
	char buf[2048] __attribute__((aligned(NLMSG_ALIGNTO)));
	size_t len;
	uint32_t seq;
	unsigned int acks; /* the messages that asked for one */
};

/* A message of type @type (subsystem nftables unless a batch mark) with its nfgenmsg. */
static struct nlmsghdr *batch_msg(struct nft_batch *b, uint16_t type, uint16_t flags,
				  uint8_t family, uint16_t res_id)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(b->buf + b->len);
	struct nfgenmsg *g;
	size_t need = NLMSG_SPACE(sizeof(*g));

	if (b->len + need > sizeof(b->buf))
		return NULL;
	memset(h, 0, need);
	h->nlmsg_len = (uint32_t)NLMSG_LENGTH(sizeof(*g));
	h->nlmsg_type = type;
	h->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
	h->nlmsg_seq = ++b->seq;
	g = NLMSG_DATA(h);
	g->nfgen_family = family;
	g->version = NFNETLINK_V0;
	g->res_id = htons(res_id);
	b->acks += !!(flags & NLM_F_ACK);
	return h;
}

/* An attribute of @n bytes at @data (none: a nest's header, its length set by nest_end()). */
static struct nlattr *batch_put(struct nft_batch *b, struct nlmsghdr *h, uint16_t type,
				const void *data, size_t n)
{
	struct nlattr *a;

	if (!h)
		return NULL;
	a = (struct nlattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));
	if ((char *)a + NLA_ALIGN(NLA_HDRLEN + n) > b->buf + sizeof(b->buf))
		return NULL;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + n);
	if (n)
		memcpy((char *)a + NLA_HDRLEN, data, n);
	memset((char *)a + NLA_HDRLEN + n, 0, NLA_ALIGN(a->nla_len) - a->nla_len);
	h->nlmsg_len = (uint32_t)(NLMSG_ALIGN(h->nlmsg_len) + NLA_ALIGN(a->nla_len));
	return a;
}

static int batch_str(struct nft_batch *b, struct nlmsghdr *h, uint16_t type, const char *str)
{
	return batch_put(b, h, type, str, strlen(str) + 1) ? 0 : -ENOSPC;
}

/* nf_tables' integers are big-endian */
static int batch_u32(struct nft_batch *b, struct nlmsghdr *h, uint16_t type, uint32_t v)
{
	uint32_t be = htonl(v);

	return batch_put(b, h, type, &be, sizeof(be)) ? 0 : -ENOSPC;
}

static struct nlattr *nest_start(struct nft_batch *b, struct nlmsghdr *h, uint16_t type)
{
	return batch_put(b, h, type | NLA_F_NESTED, NULL, 0);
}

/* @a's length: everything added to @h since nest_start() (-ENOSPC if that failed). */
static int nest_end(struct nlmsghdr *h, struct nlattr *a)
{
	if (!a)
		return -ENOSPC;
	a->nla_len = (uint16_t)((char *)h + h->nlmsg_len - (char *)a);
	return 0;
}

static void batch_end(struct nft_batch *b, struct nlmsghdr *h)
{
	b->len = (size_t)((char *)h - b->buf) + NLMSG_ALIGN(h->nlmsg_len);
}

int nft_nl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);

	return fd < 0 ? neg_errno() : fd;
}

/* Begin, @fill's messages, end; sent on @fd, every ack read. */
static int batch_run(int fd, struct nft_batch *b, int (*fill)(struct nft_batch *b, const void *arg),
		     const void *arg)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char ans[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *h;
	int err = 0;

	h = batch_msg(b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
	batch_end(b, h);
	err = fill(b, arg);
	h = err ? NULL : batch_msg(b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
	if (!h)
		return err ?: -ENOSPC;
	batch_end(b, h);
	if (sendto(fd, b->buf, b->len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		err = neg_errno();
	/* one NLMSG_ERROR for each message that asked (0: done), the first error kept */
	while (!err && b->acks) {
		ssize_t n = recv(fd, ans, sizeof(ans), 0);
		size_t len = n > 0 ? (size_t)n : 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? neg_errno() : -EIO;
			break;
		}
		for (h = (struct nlmsghdr *)ans; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			if (h->nlmsg_type != NLMSG_ERROR)
				continue;
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				err = err ?: -EIO;
			else if (e->error)
				err = err ?: (e->error > 0 ? -EIO : e->error);
			b->acks -= b->acks > 0;
		}
	}
	return err;
}

struct chains_arg {
	uint8_t family;
	const char *table;
	const char *const *chains;
	size_t n;
};

static int fill_flush(struct nft_batch *b, const void *arg)
{
	const struct chains_arg *c = arg;
	int err = 0;

	for (size_t i = 0; i < c->n && !err; i++) {
		struct nlmsghdr *h = batch_msg(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELRULE,
					       NLM_F_ACK, c->family, 0);

		/* no handle: every rule of the chain */
		err = batch_str(b, h, NFTA_RULE_TABLE, c->table)
			      ?: batch_str(b, h, NFTA_RULE_CHAIN, c->chains[i]);
		if (!err)
			batch_end(b, h);
	}
	return err;
}

int nft_chains_flush(int fd, int family, const char *table, const char *const *chains, size_t n)
{
	struct chains_arg c = {
		.family = (uint8_t)family, .table = table, .chains = chains, .n = n
	};
	struct nft_batch b = { .len = 0 };

	return batch_run(fd, &b, fill_flush, &c);
}

static int fill_deltable(struct nft_batch *b, const void *arg)
{
	const struct chains_arg *c = arg;
	struct nlmsghdr *h = batch_msg(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELTABLE, NLM_F_ACK,
				       c->family, 0);
	int err = batch_str(b, h, NFTA_TABLE_NAME, c->table);

	if (!err)
		batch_end(b, h);
	return err;
}

int nft_table_delete(int fd, int family, const char *name)
{
	struct chains_arg c = { .family = (uint8_t)family, .table = name };
	struct nft_batch b = { .len = 0 };

	return batch_run(fd, &b, fill_deltable, &c);
}

/* ---- a namespace's lock: only lo carries packets ------------------------------------------- */

struct lock_arg {
	const char *table;
	int prio;
};

/* One expression of a rule: its name, then what @fill puts in its NFTA_EXPR_DATA. */
static int rule_expr(struct nft_batch *b, struct nlmsghdr *h, const char *name,
		     int (*fill)(struct nft_batch *b, struct nlmsghdr *h, uint32_t arg),
		     uint32_t arg)
{
	struct nlattr *e = nest_start(b, h, NFTA_LIST_ELEM), *d;
	int err = e ? batch_str(b, h, NFTA_EXPR_NAME, name) : -ENOSPC;

	d = err ? NULL : nest_start(b, h, NFTA_EXPR_DATA);
	err = err ?: d ? fill(b, h, arg) : -ENOSPC;
	err = err ?: nest_end(h, d);
	return err ?: nest_end(h, e);
}

/* meta load iifname (oifname) => reg 1 */
static int expr_meta(struct nft_batch *b, struct nlmsghdr *h, uint32_t key)
{
	return batch_u32(b, h, NFTA_META_DREG, NFT_REG_1) ?: batch_u32(b, h, NFTA_META_KEY, key);
}

/* cmp neq reg 1 "lo", padded to IFNAMSIZ as nft does for a name without a wildcard */
static int expr_not_lo(struct nft_batch *b, struct nlmsghdr *h, uint32_t unused __unused)
{
	static const char lo[16] = "lo";
	struct nlattr *d;
	int err = batch_u32(b, h, NFTA_CMP_SREG, NFT_REG_1)
			  ?: batch_u32(b, h, NFTA_CMP_OP, NFT_CMP_NEQ);

	d = err ? NULL : nest_start(b, h, NFTA_CMP_DATA);
	err = err ?: batch_put(b, h, NFTA_DATA_VALUE, lo, sizeof(lo)) ? 0 : -ENOSPC;
	return err ?: nest_end(h, d);
}

/* immediate reg verdict drop */
static int expr_drop(struct nft_batch *b, struct nlmsghdr *h, uint32_t unused __unused)
{
	struct nlattr *d, *v;
	int err = batch_u32(b, h, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);

	d = err ? NULL : nest_start(b, h, NFTA_IMMEDIATE_DATA);
	v = d ? nest_start(b, h, NFTA_DATA_VERDICT) : NULL;
	err = err ?: v ? batch_u32(b, h, NFTA_VERDICT_CODE, NF_DROP) : -ENOSPC;
	err = err ?: nest_end(h, v);
	return err ?: nest_end(h, d);
}

/* chain NAME { type filter hook HOOK priority PRIO; policy accept; IIF/OIFNAME != "lo" drop; } */
static int lock_chain(struct nft_batch *b, const struct lock_arg *l, const char *name,
		      uint32_t hook, uint32_t meta)
{
	struct nlmsghdr *h = batch_msg(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWCHAIN,
				       NLM_F_CREATE | NLM_F_ACK, NFPROTO_INET, 0);
	struct nlattr *n;
	int err = batch_str(b, h, NFTA_CHAIN_TABLE, l->table) ?:
			  batch_str(b, h, NFTA_CHAIN_NAME, name) ?:
				  batch_str(b, h, NFTA_CHAIN_TYPE, "filter") ?:
					  batch_u32(b, h, NFTA_CHAIN_POLICY, NF_ACCEPT);

	n = err ? NULL : nest_start(b, h, NFTA_CHAIN_HOOK);
	err = err ?: n ? batch_u32(b, h, NFTA_HOOK_HOOKNUM, hook) : -ENOSPC;
	err = err ?: batch_u32(b, h, NFTA_HOOK_PRIORITY, (uint32_t)l->prio);
	err = err ?: nest_end(h, n);
	if (err)
		return err;
	batch_end(b, h);
	h = batch_msg(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE,
		      NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, NFPROTO_INET, 0);
	err = batch_str(b, h, NFTA_RULE_TABLE, l->table) ?: batch_str(b, h, NFTA_RULE_CHAIN, name);
	n = err ? NULL : nest_start(b, h, NFTA_RULE_EXPRESSIONS);
	err = err ?: n ? rule_expr(b, h, "meta", expr_meta, meta) : -ENOSPC;
	err = err ?: rule_expr(b, h, "cmp", expr_not_lo, 0);
	err = err ?: rule_expr(b, h, "immediate", expr_drop, 0);
	err = err ?: nest_end(h, n);
	if (!err)
		batch_end(b, h);
	return err;
}

static int fill_lock(struct nft_batch *b, const void *arg)
{
	const struct lock_arg *l = arg;
	struct nlmsghdr *h = batch_msg(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE,
				       NLM_F_CREATE | NLM_F_ACK, NFPROTO_INET, 0);
	int err = batch_str(b, h, NFTA_TABLE_NAME, l->table);

	if (err)
		return err;
	batch_end(b, h);
	return lock_chain(b, l, "input", NF_INET_LOCAL_IN, NFT_META_IIFNAME)
		       ?: lock_chain(b, l, "output", NF_INET_LOCAL_OUT, NFT_META_OIFNAME);
}

int nft_lo_only(int fd, const char *table, int prio)
{
	struct lock_arg l = { .table = table, .prio = prio };
	struct nft_batch b = { .len = 0 };

	return batch_run(fd, &b, fill_lock, &l);
}

/* ---- a packet holder's table raw: only its own? --------------------------------------------- */

struct raw_look {
	const char *table, *prefix;
	size_t prefix_len;
	unsigned int chains, base_rules, others, ours;
};

static bool name_is(const char *name, size_t n, const char *lit)
{
	return n == strlen(lit) && !memcmp(name, lit, n);
}

/*
 * A chain of the family (counted: a base chain, the holder's, or another's)
 * or a rule (counted when in a base chain: the holder's jump, or another's).
 */
static int raw_obj(const struct nlmsghdr *h, void *arg)
{
	bool chain = NFNL_MSG_TYPE(h->nlmsg_type) == NFT_MSG_NEWCHAIN, base;
	struct raw_look *l = arg;
	size_t tn, n;
	const char *t = msg_str(h, chain ? NFTA_CHAIN_TABLE : NFTA_RULE_TABLE, &tn);
	const char *name = msg_str(h, chain ? NFTA_CHAIN_NAME : NFTA_RULE_CHAIN, &n);

	if (!t || !name)
		return -EIO;
	if (!name_is(t, tn, l->table))
		return 0;
	base = name_is(name, n, "PREROUTING") || name_is(name, n, "OUTPUT");
	if (!chain) {
		l->base_rules += base;
		return 0;
	}
	l->chains++;
	if (n == l->prefix_len + 2 && !memcmp(name, l->prefix, l->prefix_len) &&
	    name[l->prefix_len] == '_' && (name[n - 1] == 'I' || name[n - 1] == 'O'))
		l->ours++;
	else if (!base)
		l->others++;
	return 0;
}

int nft_raw_holder_only(int fd, int family, const char *prefix)
{
	struct raw_look l = { .table = "raw", .prefix = prefix, .prefix_len = strlen(prefix) };
	int err = nft_get(fd, NFT_MSG_GETCHAIN, NLM_F_DUMP, family, NULL, raw_obj, &l);

	if (!err && l.chains)
		err = nft_get(fd, NFT_MSG_GETRULE, NLM_F_DUMP, family, l.table, raw_obj, &l);
	if (err)
		return err;
	if (!l.ours)
		return -ENOENT;
	/* its two base chains with a jump each at most, its own two chains */
	return l.chains <= 4 && !l.others && l.base_rules <= 2;
}
