// SPDX-License-Identifier: GPL-2.0
/*
 * Queueing disciplines of a network namespace (Documentation/namespaces.md,
 * "Network namespaces"): net-tc.h.
 *
 * Dump: RTM_GETQDISC inside the namespace. A qdisc of handle 0: is one the
 * kernel attached to a link by itself (noqueue for a virtual link, the
 * default_qdisc's kind, mq and its children for a multi-queue one): the new
 * link gets it again. A root qdisc, or the ingress or clsact one, of a kind
 * whose whole configuration is its TCA_OPTIONS is saved; the rest (classful
 * kinds, a child qdisc, size tables) is refused. RTM_GETTFILTER of each
 * link's root and ingress/egress hooks: a filter is refused.
 *
 * Restore: RTM_NEWQDISC with the handle, parent, kind, options and shared
 * blocks of each, then the namespace's qdiscs read again: one whose kind or
 * options differ fails the restore.
 */
#define LOG_PREFIX "ns: net: "

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "net-link.h"
#include "net-tc.h"
#include "util.h"

/* Kinds whose whole state is TCA_OPTIONS (and the inner fifo they make themselves). */
static const char *const simple_kinds[] = {
	"tbf",	    "pfifo", "bfifo", "pfifo_head_drop", "pfifo_fast", "noqueue",
	"fq_codel", "fq",    "sfq",   "codel",		 "pie",	       "fq_pie",
	"red",	    "netem", "cake",  "ingress",	 "clsact",
};

bool tc_qdisc_default(const struct tcmsg *t)
{
	return TC_H_MAJ(t->tcm_handle) == 0;
}

const char *tc_qdisc_refusal(const struct tcmsg *t, const char *kind, bool has_stab)
{
	size_t i;

	if (!kind)
		return "it has no kind";
	if (t->tcm_parent != TC_H_ROOT && t->tcm_parent != TC_H_INGRESS)
		return "only a link's root and ingress qdiscs are dumped, not a child of a class";
	if (has_stab)
		return "its size table (stab) is not dumped";
	for (i = 0; i < ARRAY_SIZE(simple_kinds); i++)
		if (!strcmp(kind, simple_kinds[i]))
			return NULL;
	return "its kind is not one that is dumped (classful, or with state beyond its options)";
}

static const char *link_name(const struct nl_buf *links, int ifindex)
{
	const struct nlmsghdr *n;
	size_t off;

	for (off = 0; off < links->len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		struct rtattr *tb[IFLA_MAX + 1];
		const char *name, *kind;

		n = (const struct nlmsghdr *)(links->data + off);
		if (((const struct ifinfomsg *)NLMSG_DATA(n))->ifi_index != ifindex)
			continue;
		link_info(n, tb, &name, &kind);
		return name;
	}
	return "?";
}

static const char *kind_of(const struct nlmsghdr *n, struct rtattr **tb)
{
	nl_parse(n, sizeof(struct tcmsg), tb, TCA_MAX);
	return tb[TCA_KIND] ? RTA_DATA(tb[TCA_KIND]) : NULL;
}

static int dump_tc(int sk, int type, int ifindex, uint32_t parent, struct nl_buf *out)
{
	struct tcmsg t = { .tcm_family = AF_UNSPEC, .tcm_ifindex = ifindex, .tcm_parent = parent };

	return rtnl_dump_hdr(sk, type, &t, sizeof(t), out);
}

/* The filters on the root, ingress and egress of link @ifindex: 0, or -EOPNOTSUPP naming one. */
static int check_filters(pid_t pid, int sk, const struct nl_buf *links, int ifindex, bool hooks)
{
	const uint32_t parents[] = { 0, TC_H_MAKE(TC_H_INGRESS, TC_H_MIN_INGRESS),
				     TC_H_MAKE(TC_H_INGRESS, TC_H_MIN_EGRESS) };
	struct nl_buf f = { 0 };
	struct rtattr *tb[TCA_MAX + 1];
	size_t i;
	int err = 0;

	for (i = 0; !err && i < (hooks ? ARRAY_SIZE(parents) : 1); i++)
		err = dump_tc(sk, RTM_GETTFILTER, ifindex, parents[i], &f);
	if (!err && f.len) {
		const struct nlmsghdr *n = (const struct nlmsghdr *)f.data;
		const struct tcmsg *t = NLMSG_DATA(n);
		const char *kind = kind_of(n, tb);

		pr_err("pid %d: link %s of its network namespace has a tc filter (%s, parent "
		       "%x:%x): filters are not dumped\n",
		       pid, link_name(links, ifindex), kind ?: "?", TC_H_MAJ(t->tcm_parent) >> 16,
		       TC_H_MIN(t->tcm_parent));
		err = -EOPNOTSUPP;
	} else if (err) {
		pr_errno(err, "pid %d: cannot read the tc filters of link %s", pid,
			 link_name(links, ifindex));
	}
	nl_buf_fini(&f);
	return err;
}

int net_tc_read(pid_t pid, int sk, const struct nl_buf *links, struct nl_buf *out)
{
	struct nl_buf q = { 0 };
	const struct nlmsghdr *n;
	size_t off;
	int err = dump_tc(sk, RTM_GETQDISC, 0, 0, &q);

	if (err)
		pr_errno(err, "pid %d: cannot read the qdiscs of its network namespace", pid);
	for (off = 0; !err && off < q.len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		struct rtattr *tb[TCA_MAX + 1];
		const struct tcmsg *t;
		const char *kind, *why;

		n = (const struct nlmsghdr *)(q.data + off);
		t = NLMSG_DATA(n);
		kind = kind_of(n, tb);
		if (t->tcm_parent == TC_H_ROOT || t->tcm_parent == TC_H_INGRESS)
			err = check_filters(pid, sk, links, t->tcm_ifindex,
					    t->tcm_parent == TC_H_INGRESS);
		if (err || tc_qdisc_default(t))
			continue;
		why = tc_qdisc_refusal(t, kind, tb[TCA_STAB] != NULL);
		if (why) {
			pr_err("pid %d: link %s of its network namespace has qdisc %s %x: (parent "
			       "%x:%x): %s\n",
			       pid, link_name(links, t->tcm_ifindex), kind ?: "?",
			       TC_H_MAJ(t->tcm_handle) >> 16, TC_H_MAJ(t->tcm_parent) >> 16,
			       TC_H_MIN(t->tcm_parent), why);
			err = -EOPNOTSUPP;
		} else {
			err = nl_buf_append(out, n, NLMSG_ALIGN(n->nlmsg_len));
		}
	}
	nl_buf_fini(&q);
	return err;
}

/* The attributes that make a qdisc what it is, compared once it is made again. */
static const int qdisc_attrs[] = { TCA_KIND, TCA_OPTIONS, TCA_INGRESS_BLOCK, TCA_EGRESS_BLOCK };

static bool same_attr(const struct rtattr *a, const struct rtattr *b)
{
	if (!a || !b)
		return !a && !b;
	return RTA_PAYLOAD(a) == RTA_PAYLOAD(b) &&
	       !memcmp(RTA_DATA(a), RTA_DATA(b), RTA_PAYLOAD(a));
}

/* The qdisc of @want's link and handle in the namespace now is the same as @want. */
static int check_made(int sk, const struct nlmsghdr *want, const char *what)
{
	const struct tcmsg *w = NLMSG_DATA(want);
	struct rtattr *wtb[TCA_MAX + 1], *tb[TCA_MAX + 1];
	struct nl_buf q = { 0 };
	const struct nlmsghdr *n;
	size_t off, i;
	int err = dump_tc(sk, RTM_GETQDISC, 0, 0, &q);

	nl_parse(want, sizeof(*w), wtb, TCA_MAX);
	for (off = 0; !err && off < q.len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		const struct tcmsg *t;

		n = (const struct nlmsghdr *)(q.data + off);
		t = NLMSG_DATA(n);
		if (t->tcm_ifindex != w->tcm_ifindex || t->tcm_handle != w->tcm_handle)
			continue;
		nl_parse(n, sizeof(*t), tb, TCA_MAX);
		for (i = 0; i < ARRAY_SIZE(qdisc_attrs); i++)
			if (!same_attr(tb[qdisc_attrs[i]], wtb[qdisc_attrs[i]])) {
				pr_err("%s does not come back the same (attribute %d differs)\n",
				       what, qdisc_attrs[i]);
				err = -EIO;
			}
		nl_buf_fini(&q);
		return err;
	}
	if (!err) {
		pr_err("%s is not there once made\n", what);
		err = -EIO;
	}
	nl_buf_fini(&q);
	return err;
}

int net_tc_restore(int sk, const ProtobufCBinaryData *b, const char *img)
{
	uint8_t buf[NL_REQ_SIZE];
	size_t off = 0, i;

	while (off + sizeof(struct nlmsghdr) <= b->len) {
		const struct nlmsghdr *src = (const struct nlmsghdr *)(b->data + off);
		struct tcmsg t;
		struct rtattr *tb[TCA_MAX + 1];
		struct nlmsghdr *n = (struct nlmsghdr *)buf;
		char what[128];
		const char *kind;
		int err = 0;

		if (src->nlmsg_len < NLMSG_LENGTH(sizeof(t)) || src->nlmsg_len > NL_REQ_SIZE ||
		    off + src->nlmsg_len > b->len || src->nlmsg_type != RTM_NEWQDISC) {
			pr_err("%s: offset %zu: not an rtnetlink message of a qdisc\n", img, off);
			return -EINVAL;
		}
		off += NLMSG_ALIGN(src->nlmsg_len);
		memcpy(&t, NLMSG_DATA(src), sizeof(t));
		kind = kind_of(src, tb);
		snprintf(what, sizeof(what), "qdisc %s %x: of link %d", kind ?: "?",
			 TC_H_MAJ(t.tcm_handle) >> 16, t.tcm_ifindex);
		if (tc_qdisc_refusal(&t, kind, tb[TCA_STAB] != NULL)) {
			pr_err("%s: %s refused: not one that is dumped\n", img, what);
			return -EINVAL;
		}
		t.tcm_info = 0;
		/* replacing the link's default one */
		nl_req_init(n, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE, &t, sizeof(t));
		for (i = 0; !err && i < ARRAY_SIZE(qdisc_attrs); i++)
			if (tb[qdisc_attrs[i]])
				err = nl_put(n, qdisc_attrs[i], RTA_DATA(tb[qdisc_attrs[i]]),
					     RTA_PAYLOAD(tb[qdisc_attrs[i]]));
		if (!err)
			err = rtnl_talk(sk, n);
		if (err) {
			pr_errno(err, "cannot restore %s", what);
			return err;
		}
		err = check_made(sk, src, what);
		if (err)
			return err;
	}
	return 0;
}
