// SPDX-License-Identifier: GPL-2.0
/*
 * The conntrack table of a container's network namespace
 * (Documentation/netfilter.md, "Conntrack"), through libnetfilter-conntrack.
 *
 * Dump, with the dumper's thread in the tree's namespace, once its lock is
 * in (no packet from outside confirms a new entry after that): every entry
 * of every family with its two tuples, status, timeout, mark, zones, TCP
 * state, window scales and flags, labels. Expectations and entries bound to
 * a helper are refused by name: their helper's state is not dumped.
 *
 * Restore, in the new namespace after its rules (their ct expressions turn
 * conntrack on there) and before any task exists: each entry created again.
 * NAT is given as what it did (the reply tuple tells it): DNAT to where the
 * reply comes from, SNAT to where it goes; the kernel then computes the same
 * reply tuple. The TCP windows are not in ctnetlink: the first packet each
 * way sets them, as for a connection picked up in the middle.
 *
 * libnetfilter_conntrack is loaded at the first use (include/dl-lib.h), not
 * linked: with it, the two libraries it brings (libnfnetlink, libmnl) were
 * mapped in every restored task, a fork of criu-like.
 */
#define LOG_PREFIX "ns: conntrack: "

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "image.h"
#include "log.h"
#include "netfilter.h"
#include "util.h"

#include "conntrack-int.h"
#include "dl-lib.h"

/* What this file calls of libnetfilter_conntrack. */
#define CT_FUNCS(X)                \
	X(nfct_attr_is_set)        \
	X(nfct_bitmask_maxbit)     \
	X(nfct_bitmask_new)        \
	X(nfct_bitmask_set_bit)    \
	X(nfct_bitmask_test_bit)   \
	X(nfct_callback_register)  \
	X(nfct_close)              \
	X(nfct_destroy)            \
	X(nfct_get_attr)           \
	X(nfct_get_attr_u16)       \
	X(nfct_get_attr_u32)       \
	X(nfct_get_attr_u8)        \
	X(nfct_new)                \
	X(nfct_open)               \
	X(nfct_query)              \
	X(nfct_set_attr)           \
	X(nfct_set_attr_u16)       \
	X(nfct_set_attr_u32)       \
	X(nfct_set_attr_u8)        \
	X(nfct_snprintf)           \
	X(nfexp_callback_register) \
	X(nfexp_query)             \
	X(nfexp_snprintf)

DL_LIB("libnetfilter_conntrack.so.3", "conntrack", CT_FUNCS);

/* Every call below goes through the table: the names stand for its entries. */
#define nfct_attr_is_set (*dl_fn.nfct_attr_is_set)
#define nfct_bitmask_maxbit (*dl_fn.nfct_bitmask_maxbit)
#define nfct_bitmask_new (*dl_fn.nfct_bitmask_new)
#define nfct_bitmask_set_bit (*dl_fn.nfct_bitmask_set_bit)
#define nfct_bitmask_test_bit (*dl_fn.nfct_bitmask_test_bit)
#define nfct_callback_register (*dl_fn.nfct_callback_register)
#define nfct_close (*dl_fn.nfct_close)
#define nfct_destroy (*dl_fn.nfct_destroy)
#define nfct_get_attr (*dl_fn.nfct_get_attr)
#define nfct_get_attr_u16 (*dl_fn.nfct_get_attr_u16)
#define nfct_get_attr_u32 (*dl_fn.nfct_get_attr_u32)
#define nfct_get_attr_u8 (*dl_fn.nfct_get_attr_u8)
#define nfct_new (*dl_fn.nfct_new)
#define nfct_open (*dl_fn.nfct_open)
#define nfct_query (*dl_fn.nfct_query)
#define nfct_set_attr (*dl_fn.nfct_set_attr)
#define nfct_set_attr_u16 (*dl_fn.nfct_set_attr_u16)
#define nfct_set_attr_u32 (*dl_fn.nfct_set_attr_u32)
#define nfct_set_attr_u8 (*dl_fn.nfct_set_attr_u8)
#define nfct_snprintf (*dl_fn.nfct_snprintf)
#define nfexp_callback_register (*dl_fn.nfexp_callback_register)
#define nfexp_query (*dl_fn.nfexp_query)
#define nfexp_snprintf (*dl_fn.nfexp_snprintf)

/* The status bits the kernel lets a new entry have (IPS_UNCHANGEABLE_MASK are its own). */
#define CT_STATUS_SET (IPS_SEEN_REPLY | IPS_ASSURED | IPS_FIXED_TIMEOUT)

/* ---- an entry, both ways (pure: test-conntrack.c) ----------------------------------------- */

static const int attr_addr[2][2][2] = {
	/* [reply][dst][v6] */
	{ { ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC }, { ATTR_ORIG_IPV4_DST, ATTR_ORIG_IPV6_DST } },
	{ { ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC }, { ATTR_REPL_IPV4_DST, ATTR_REPL_IPV6_DST } },
};
static const int attr_port[2][2] = { { ATTR_ORIG_PORT_SRC, ATTR_ORIG_PORT_DST },
				     { ATTR_REPL_PORT_SRC, ATTR_REPL_PORT_DST } };

static bool has_ports(uint32_t l4)
{
	return l4 == IPPROTO_TCP || l4 == IPPROTO_UDP || l4 == IPPROTO_UDPLITE ||
	       l4 == IPPROTO_SCTP || l4 == IPPROTO_DCCP;
}

static bool is_icmp(uint32_t l3, uint32_t l4)
{
	return (l3 == AF_INET && l4 == IPPROTO_ICMP) || (l3 == AF_INET6 && l4 == IPPROTO_ICMPV6);
}

static int tuple_from(const struct nf_conntrack *ct, int dir, uint32_t l3, uint32_t l4,
		      CtTupleEntry *t, uint8_t *addrs)
{
	bool v6 = l3 == AF_INET6;
	size_t alen = v6 ? 16 : 4;
	int i;

	ct_tuple_entry__init(t);
	for (i = 0; i < 2; i++) {
		const void *a = nfct_get_attr(ct, attr_addr[dir][i][v6]);

		if (!a)
			return -EINVAL;
		memcpy(addrs + i * alen, a, alen);
	}
	t->src.data = addrs;
	t->dst.data = addrs + alen;
	t->src.len = t->dst.len = alen;
	if (has_ports(l4)) {
		t->has_sport = t->has_dport = true;
		t->sport = ntohs(nfct_get_attr_u16(ct, attr_port[dir][0]));
		t->dport = ntohs(nfct_get_attr_u16(ct, attr_port[dir][1]));
	} else if (is_icmp(l3, l4) && dir == 0) {
		t->has_icmp_type = t->has_icmp_code = t->has_icmp_id = true;
		t->icmp_type = nfct_get_attr_u8(ct, ATTR_ICMP_TYPE);
		t->icmp_code = nfct_get_attr_u8(ct, ATTR_ICMP_CODE);
		t->icmp_id = ntohs(nfct_get_attr_u16(ct, ATTR_ICMP_ID));
	}
	if (nfct_attr_is_set(ct, dir ? ATTR_REPL_ZONE : ATTR_ORIG_ZONE) > 0) {
		t->has_zone = true;
		t->zone = nfct_get_attr_u16(ct, dir ? ATTR_REPL_ZONE : ATTR_ORIG_ZONE);
	}
	return 0;
}

#define OPT_U32(e, field, ct, attr, get)              \
	do {                                          \
		if (nfct_attr_is_set(ct, attr) > 0) { \
			(e)->has_##field = true;      \
			(e)->field = get(ct, attr);   \
		}                                     \
	} while (0)

int ct_entry_from(const struct nf_conntrack *ct, struct ct_entry_buf *b)
{
	ConntrackEntry *e = &b->e;
	const struct nfct_bitmask *labels;
	int err = dl_lib_load();

	if (err)
		return err;

	conntrack_entry__init(e);
	e->l3proto = nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO);
	e->l4proto = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);
	if (e->l3proto != AF_INET && e->l3proto != AF_INET6)
		return -EPROTONOSUPPORT;
	e->orig = &b->orig;
	e->reply = &b->reply;
	err = tuple_from(ct, 0, e->l3proto, e->l4proto, &b->orig, b->addrs[0]);
	if (!err)
		err = tuple_from(ct, 1, e->l3proto, e->l4proto, &b->reply, b->addrs[1]);
	if (err)
		return err;
	e->status = nfct_get_attr_u32(ct, ATTR_STATUS);
	e->timeout = nfct_get_attr_u32(ct, ATTR_TIMEOUT);
	OPT_U32(e, mark, ct, ATTR_MARK, nfct_get_attr_u32);
	OPT_U32(e, zone, ct, ATTR_ZONE, nfct_get_attr_u16);
	OPT_U32(e, secmark, ct, ATTR_SECMARK, nfct_get_attr_u32);
	if (e->l4proto == IPPROTO_TCP) {
		OPT_U32(e, tcp_state, ct, ATTR_TCP_STATE, nfct_get_attr_u8);
		OPT_U32(e, tcp_wscale_orig, ct, ATTR_TCP_WSCALE_ORIG, nfct_get_attr_u8);
		OPT_U32(e, tcp_wscale_repl, ct, ATTR_TCP_WSCALE_REPL, nfct_get_attr_u8);
		OPT_U32(e, tcp_flags_orig, ct, ATTR_TCP_FLAGS_ORIG, nfct_get_attr_u8);
		OPT_U32(e, tcp_flags_repl, ct, ATTR_TCP_FLAGS_REPL, nfct_get_attr_u8);
	}
	labels = nfct_attr_is_set(ct, ATTR_CONNLABELS) > 0 ? nfct_get_attr(ct, ATTR_CONNLABELS)
							   : NULL;
	if (labels) {
		unsigned int bit, max = nfct_bitmask_maxbit(labels);

		memset(b->labels, 0, sizeof(b->labels));
		for (bit = 0; bit <= max && bit < sizeof(b->labels) * 8; bit++)
			if (nfct_bitmask_test_bit(labels, bit))
				b->labels[bit / 8] |= (uint8_t)(1u << (bit % 8));
		e->has_labels = true;
		e->labels.data = b->labels;
		e->labels.len = max / 8 + 1 < sizeof(b->labels) ? max / 8 + 1 : sizeof(b->labels);
	}
	return 0;
}

bool ct_nat_of(const ConntrackEntry *e, int which, const uint8_t **addr, uint16_t *port)
{
	const CtTupleEntry *r = e->reply;
	bool dnat = which == IPS_DST_NAT;

	if (!(e->status & (uint32_t)which))
		return false;
	/* DNAT: the reply comes from the real destination; SNAT: it goes to the new source */
	*addr = dnat ? r->src.data : r->dst.data;
	*port = (uint16_t)(dnat ? r->sport : r->dport);
	return true;
}

static int tuple_to(struct nf_conntrack *ct, int dir, const ConntrackEntry *e,
		    const CtTupleEntry *t)
{
	bool v6 = e->l3proto == AF_INET6;
	size_t alen = v6 ? 16 : 4;

	if (t->src.len != alen || t->dst.len != alen)
		return -EINVAL;
	nfct_set_attr(ct, attr_addr[dir][0][v6], t->src.data);
	nfct_set_attr(ct, attr_addr[dir][1][v6], t->dst.data);
	if (has_ports(e->l4proto)) {
		nfct_set_attr_u16(ct, attr_port[dir][0], htons((uint16_t)t->sport));
		nfct_set_attr_u16(ct, attr_port[dir][1], htons((uint16_t)t->dport));
	} else if (is_icmp(e->l3proto, e->l4proto) && dir == 0) {
		nfct_set_attr_u8(ct, ATTR_ICMP_TYPE, (uint8_t)t->icmp_type);
		nfct_set_attr_u8(ct, ATTR_ICMP_CODE, (uint8_t)t->icmp_code);
		nfct_set_attr_u16(ct, ATTR_ICMP_ID, htons((uint16_t)t->icmp_id));
	}
	if (t->has_zone)
		nfct_set_attr_u16(ct, dir ? ATTR_REPL_ZONE : ATTR_ORIG_ZONE, (uint16_t)t->zone);
	return 0;
}

static void nat_to(struct nf_conntrack *ct, const ConntrackEntry *e)
{
	static const int attr[2][3] = { /* snat, dnat: v4, v6, port */
					{ ATTR_SNAT_IPV4, ATTR_SNAT_IPV6, ATTR_SNAT_PORT },
					{ ATTR_DNAT_IPV4, ATTR_DNAT_IPV6, ATTR_DNAT_PORT }
	};
	const uint8_t *addr;
	uint16_t port;
	int i;

	for (i = 0; i < 2; i++) {
		if (!ct_nat_of(e, i ? IPS_DST_NAT : IPS_SRC_NAT, &addr, &port))
			continue;
		if (e->l3proto == AF_INET) {
			uint32_t a;

			memcpy(&a, addr, 4);
			nfct_set_attr_u32(ct, attr[i][0], a);
		} else {
			nfct_set_attr(ct, attr[i][1], addr);
		}
		if (has_ports(e->l4proto))
			nfct_set_attr_u16(ct, attr[i][2], htons(port));
	}
}

/*
 * The reply tuple as it was before NAT: the orig tuple reversed. The kernel
 * marks an entry NATed (IPS_SRC_NAT, IPS_DST_NAT: what makes it translate
 * packets) only when the NAT it is given changes that tuple; given the
 * translated reply, it would translate nothing.
 */
static void unnat_reply(const CtTupleEntry *o, CtTupleEntry *r)
{
	ct_tuple_entry__init(r);
	r->src = o->dst;
	r->dst = o->src;
	r->has_sport = r->has_dport = o->has_sport;
	r->sport = o->dport;
	r->dport = o->sport;
	r->has_zone = o->has_zone;
	r->zone = o->zone;
}

struct nf_conntrack *ct_entry_to(const ConntrackEntry *e)
{
	struct nf_conntrack *ct;
	CtTupleEntry unnat;
	int err = dl_lib_load();

	if (err) {
		errno = -err;
		return NULL;
	}
	ct = nfct_new();
	if (!ct) {
		errno = ENOMEM;
		return NULL;
	}
	nfct_set_attr_u8(ct, ATTR_ORIG_L3PROTO, (uint8_t)e->l3proto);
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, (uint8_t)e->l3proto);
	nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, (uint8_t)e->l4proto);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, (uint8_t)e->l4proto);
	if (e->orig && e->reply && (e->status & IPS_NAT_MASK)) {
		unnat_reply(e->orig, &unnat);
		unnat.has_zone = e->reply->has_zone;
		unnat.zone = e->reply->zone;
	}
	if ((e->l3proto != AF_INET && e->l3proto != AF_INET6) || !e->orig || !e->reply ||
	    tuple_to(ct, 0, e, e->orig) ||
	    tuple_to(ct, 1, e, (e->status & IPS_NAT_MASK) ? &unnat : e->reply)) {
		nfct_destroy(ct);
		errno = EINVAL;
		return NULL;
	}
	nfct_set_attr_u32(ct, ATTR_STATUS, e->status & CT_STATUS_SET);
	nfct_set_attr_u32(ct, ATTR_TIMEOUT, e->timeout);
	if (e->has_mark)
		nfct_set_attr_u32(ct, ATTR_MARK, e->mark);
	if (e->has_zone)
		nfct_set_attr_u16(ct, ATTR_ZONE, (uint16_t)e->zone);
	if (e->has_secmark && e->secmark)
		nfct_set_attr_u32(ct, ATTR_SECMARK, e->secmark);
	if (e->has_tcp_state)
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, (uint8_t)e->tcp_state);
	if (e->has_tcp_wscale_orig)
		nfct_set_attr_u8(ct, ATTR_TCP_WSCALE_ORIG, (uint8_t)e->tcp_wscale_orig);
	if (e->has_tcp_wscale_repl)
		nfct_set_attr_u8(ct, ATTR_TCP_WSCALE_REPL, (uint8_t)e->tcp_wscale_repl);
	if (e->has_tcp_flags_orig) {
		nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_ORIG, (uint8_t)e->tcp_flags_orig);
		nfct_set_attr_u8(ct, ATTR_TCP_MASK_ORIG, (uint8_t)e->tcp_flags_orig);
	}
	if (e->has_tcp_flags_repl) {
		nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_REPL, (uint8_t)e->tcp_flags_repl);
		nfct_set_attr_u8(ct, ATTR_TCP_MASK_REPL, (uint8_t)e->tcp_flags_repl);
	}
	if (e->has_labels && e->labels.len && e->labels.len <= 16) {
		struct nfct_bitmask *b = nfct_bitmask_new((unsigned int)e->labels.len * 8 - 1);
		unsigned int bit;

		for (bit = 0; b && bit < e->labels.len * 8; bit++)
			if (e->labels.data[bit / 8] & (1u << (bit % 8)))
				nfct_bitmask_set_bit(b, bit);
		if (b)
			nfct_set_attr(ct, ATTR_CONNLABELS, b); /* ct owns it now */
	}
	nat_to(ct, e);
	return ct;
}

static const char *l4_name(uint32_t l4)
{
	switch (l4) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	case IPPROTO_SCTP:
		return "sctp";
	case IPPROTO_DCCP:
		return "dccp";
	case IPPROTO_GRE:
		return "gre";
	default:
		return "proto";
	}
}

void ct_describe(const ConntrackEntry *e, char *buf, size_t size)
{
	char s[INET6_ADDRSTRLEN] = "?", d[INET6_ADDRSTRLEN] = "?";
	const CtTupleEntry *o = e->orig;

	if (o && o->src.len == (e->l3proto == AF_INET6 ? 16u : 4u) && o->dst.len == o->src.len) {
		inet_ntop((int)e->l3proto, o->src.data, s, sizeof(s));
		inet_ntop((int)e->l3proto, o->dst.data, d, sizeof(d));
	}
	if (o && has_ports(e->l4proto))
		snprintf(buf, size, "%s %s:%u -> %s:%u", l4_name(e->l4proto), s, o->sport, d,
			 o->dport);
	else
		snprintf(buf, size, "%s %u %s -> %s", l4_name(e->l4proto), e->l4proto, s, d);
}

/* ---- dump --------------------------------------------------------------------------------- */

struct ct_read {
	pid_t pid;
	struct ct_entry_buf *bufs;
	size_t n, size;
	int err;
};

static int dump_cb(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	struct ct_read *r = data;
	char what[160];

	(void)type;
	if (r->n == r->size) {
		size_t size = r->size * 2 + 64;
		struct ct_entry_buf *b = realloc(r->bufs, size * sizeof(*b));

		if (!b) {
			r->err = -ENOMEM;
			return NFCT_CB_STOP;
		}
		r->bufs = b;
		r->size = size;
	}
	r->err = ct_entry_from(ct, &r->bufs[r->n]);
	if (r->err) {
		nfct_snprintf(what, sizeof(what), ct, NFCT_T_UNKNOWN, NFCT_O_DEFAULT, 0);
		pr_err("pid %d: conntrack entry `%s` of its network namespace: its family is not "
		       "dumped\n",
		       r->pid, what);
		return NFCT_CB_STOP;
	}
	/* their protocol state (SCTP vtags, DCCP roles, GRE keys) is not in the image */
	if (r->bufs[r->n].e.l4proto == IPPROTO_SCTP || r->bufs[r->n].e.l4proto == IPPROTO_DCCP ||
	    r->bufs[r->n].e.l4proto == IPPROTO_GRE) {
		ct_describe(&r->bufs[r->n].e, what, sizeof(what));
		pr_err("pid %d: conntrack entry %s of its network namespace: its protocol's state "
		       "is not dumped\n",
		       r->pid, what);
		r->err = -EOPNOTSUPP;
		return NFCT_CB_STOP;
	}
	if (nfct_attr_is_set(ct, ATTR_HELPER_NAME) > 0) {
		ct_describe(&r->bufs[r->n].e, what, sizeof(what));
		pr_err("pid %d: conntrack entry %s of its network namespace uses helper %s: "
		       "conntrack helpers are not dumped\n",
		       r->pid, what, (const char *)nfct_get_attr(ct, ATTR_HELPER_NAME));
		r->err = -EOPNOTSUPP;
		return NFCT_CB_STOP;
	}
	r->n++;
	return NFCT_CB_CONTINUE;
}

static int exp_cb(enum nf_conntrack_msg_type type, struct nf_expect *exp, void *data)
{
	struct ct_read *r = data;
	char what[256];

	(void)type;
	nfexp_snprintf(what, sizeof(what), exp, NFCT_T_UNKNOWN, NFCT_O_DEFAULT, 0);
	pr_err("pid %d: its network namespace has a conntrack expectation (%s): expectations "
	       "are not dumped\n",
	       r->pid, what);
	r->err = -EOPNOTSUPP;
	return NFCT_CB_STOP;
}

static int check_expectations(struct ct_read *r)
{
	struct nfct_handle *h = nfct_open(EXPECT, 0);
	uint32_t family = AF_UNSPEC;
	int ret;

	if (!h) {
		/* no nf_conntrack_netlink: no conntrack table to read either */
		pr_debug("no conntrack netlink: %s\n", strerror(errno));
		return 0;
	}
	nfexp_callback_register(h, NFCT_T_ALL, exp_cb, r);
	ret = nfexp_query(h, NFCT_Q_DUMP, &family);
	nfct_close(h);
	if (r->err)
		return r->err;
	if (ret < 0 && errno != ENOENT && errno != EOPNOTSUPP) {
		pr_perror("pid %d: cannot read the conntrack expectations of its network namespace",
			  r->pid);
		return neg_errno();
	}
	return 0;
}

/*
 * Does this thread's namespace track no connection? A dump walks every bucket
 * of the kernel's table, which all namespaces share (9 ms here, whatever this
 * one holds); the namespace's own count is a sysctl of it.
 */
static bool table_empty(void)
{
	char buf[32] = "";
	int fd = open("/proc/sys/net/netfilter/nf_conntrack_count", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 && !strcmp(buf, "0\n");
}

static int read_table(struct ct_read *r)
{
	struct nfct_handle *h;
	uint32_t family = AF_UNSPEC;
	int ret;

	if (table_empty()) {
		pr_debug("pid %d: no conntrack entry in its network namespace\n", r->pid);
		return 0;
	}
	h = nfct_open(CONNTRACK, 0);
	if (!h) {
		pr_debug("no conntrack netlink: %s\n", strerror(errno));
		return 0;
	}
	nfct_callback_register(h, NFCT_T_ALL, dump_cb, r);
	ret = nfct_query(h, NFCT_Q_DUMP, &family);
	nfct_close(h);
	if (r->err)
		return r->err;
	if (ret < 0 && errno != ENOENT) {
		pr_perror("pid %d: cannot read the conntrack table of its network namespace",
			  r->pid);
		return neg_errno();
	}
	return 0;
}

void ct_prefetch(void)
{
	dl_lib_load();
}

int ct_dump(pid_t pid, int dirfd, uint32_t id)
{
	struct ct_read r = { .pid = pid };
	ConntrackTable t = CONNTRACK_TABLE__INIT;
	ConntrackEntry **ep = NULL;
	size_t i;
	int err;

	err = dl_lib_load();
	if (!err)
		err = check_expectations(&r);
	if (!err)
		err = read_table(&r);
	if (!err && r.n) {
		ep = calloc(r.n, sizeof(*ep));
		if (!ep)
			err = -ENOMEM;
	}
	if (!err && r.n) {
		/* the entries point into their buffers: linked once the array no longer moves */
		for (i = 0; i < r.n; i++) {
			r.bufs[i].e.orig = &r.bufs[i].orig;
			r.bufs[i].e.reply = &r.bufs[i].reply;
			r.bufs[i].orig.src.data = r.bufs[i].addrs[0];
			r.bufs[i].orig.dst.data = r.bufs[i].addrs[0] + r.bufs[i].orig.src.len;
			r.bufs[i].reply.src.data = r.bufs[i].addrs[1];
			r.bufs[i].reply.dst.data = r.bufs[i].addrs[1] + r.bufs[i].reply.src.len;
			if (r.bufs[i].e.has_labels)
				r.bufs[i].e.labels.data = r.bufs[i].labels;
			ep[i] = &r.bufs[i].e;
		}
		t.entries = ep;
		t.n_entries = r.n;
		pr_info("pid %d: %zu conntrack entries\n", pid, r.n);
		err = img_write_one(dirfd, CR_IMG_CONNTRACK, id, &t.base);
	}
	free(ep);
	free(r.bufs);
	return err;
}

/* ---- restore ------------------------------------------------------------------------------ */

int ct_load(int dirfd, uint32_t id, ConntrackTable **ret)
{
	struct cr_img *img = img_open(dirfd, CR_IMG_CONNTRACK, id, IMG_READ | IMG_OPTIONAL);

	*ret = NULL;
	if (!img)
		return errno == ENOENT ? 0 : -errno;
	img_close(img);
	return img_read_one(dirfd, CR_IMG_CONNTRACK, id, (ProtobufCMessage **)ret);
}

int ct_restore(const ConntrackTable *t)
{
	struct nfct_handle *h;
	size_t i, made = 0;
	int err = 0;

	if (!t || !t->n_entries)
		return 0;
	err = dl_lib_load();
	if (err)
		return err;
	h = nfct_open(CONNTRACK, 0);
	if (!h) {
		pr_perror("cannot talk to conntrack (nf_conntrack_netlink) to restore %zu entries",
			  t->n_entries);
		return neg_errno();
	}
	for (i = 0; !err && i < t->n_entries; i++) {
		struct nf_conntrack *ct = ct_entry_to(t->entries[i]);
		char what[160];

		if (ct && !nfct_query(h, NFCT_Q_CREATE, ct))
			made++;
		else if (ct && errno == EEXIST)
			; /* a packet of the restore made it already (over lo) */
		else {
			err = neg_errno();
			ct_describe(t->entries[i], what, sizeof(what));
			pr_perror("cannot restore conntrack entry %s (status %#x)", what,
				  t->entries[i]->status);
		}
		if (ct)
			nfct_destroy(ct);
	}
	nfct_close(h);
	if (!err)
		pr_info("%zu of %zu conntrack entries restored\n", made, t->n_entries);
	return err;
}
