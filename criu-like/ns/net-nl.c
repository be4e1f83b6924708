// SPDX-License-Identifier: GPL-2.0
/* Raw rtnetlink for the network namespace kind: net-nl.h. */
#define LOG_PREFIX "ns: net: "

#include <arpa/inet.h>
#include <errno.h>
#include <linux/fib_rules.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "net-nl.h"
#include "util.h"

static uint32_t nl_seq = 1;

int rtnl_open(void)
{
	int sk = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int one = 1;

	if (sk < 0) {
		pr_perror("cannot open an rtnetlink socket");
		return neg_errno();
	}
	/* the extended ack names what the kernel refused (it is logged as is) */
	setsockopt(sk, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	return sk;
}

void nl_buf_fini(struct nl_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

int nl_buf_append(struct nl_buf *b, const void *p, size_t len)
{
	if (b->len + len > b->size) {
		size_t size = max(b->size * 2, b->len + len + 4096);
		uint8_t *d = realloc(b->data, size);

		if (!d)
			return -ENOMEM;
		b->data = d;
		b->size = size;
	}
	memcpy(b->data + b->len, p, len);
	b->len += len;
	return 0;
}

int rtnl_dump_hdr(int sk, int type, const void *hdr, size_t hdr_len, struct nl_buf *out)
{
	struct {
		struct nlmsghdr n;
		uint8_t hdr[32];
	} req = { 0 };
	static uint8_t buf[65536];
	uint32_t seq = nl_seq++;

	if (hdr_len > sizeof(req.hdr))
		return -EINVAL;
	req.n.nlmsg_len = (uint32_t)NLMSG_LENGTH(hdr_len);
	req.n.nlmsg_type = (uint16_t)type;
	req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.n.nlmsg_seq = seq;
	memcpy(req.hdr, hdr, hdr_len);
	if (send(sk, &req, req.n.nlmsg_len, 0) < 0)
		return neg_errno();
	for (;;) {
		ssize_t len = recv(sk, buf, sizeof(buf), 0);
		struct nlmsghdr *n;

		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0)
			return neg_errno();
		for (n = (struct nlmsghdr *)buf; NLMSG_OK(n, (size_t)len); n = NLMSG_NEXT(n, len)) {
			if (n->nlmsg_seq != seq)
				continue;
			if (n->nlmsg_type == NLMSG_DONE)
				return 0;
			if (n->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(n);

				return e->error ? e->error : -EIO;
			}
			if (nl_buf_append(out, n, NLMSG_ALIGN(n->nlmsg_len)))
				return -ENOMEM;
		}
	}
}

int rtnl_dump(int sk, int type, int family, struct nl_buf *out)
{
	/* ifinfomsg, ifaddrmsg, rtmsg, fib_rule_hdr: family first */
	uint8_t hdr[16] = { (uint8_t)family };

	return rtnl_dump_hdr(sk, type, hdr, sizeof(hdr), out);
}

int rtnl_talk(int sk, struct nlmsghdr *n)
{
	static uint8_t buf[16384];

	n->nlmsg_seq = nl_seq++;
	n->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	if (send(sk, n, n->nlmsg_len, 0) < 0)
		return neg_errno();
	for (;;) {
		ssize_t len = recv(sk, buf, sizeof(buf), 0);
		struct nlmsghdr *a;

		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0)
			return neg_errno();
		for (a = (struct nlmsghdr *)buf; NLMSG_OK(a, (size_t)len); a = NLMSG_NEXT(a, len)) {
			const struct nlmsgerr *e = NLMSG_DATA(a);

			if (a->nlmsg_seq != n->nlmsg_seq || a->nlmsg_type != NLMSG_ERROR)
				continue;
			return e->error;
		}
	}
}

struct nlmsghdr *nl_req_init(void *buf, int type, int flags, const void *hdr, size_t hdr_len)
{
	struct nlmsghdr *n = buf;

	memset(buf, 0, NL_REQ_SIZE);
	n->nlmsg_len = (uint32_t)NLMSG_LENGTH(hdr_len);
	n->nlmsg_type = (uint16_t)type;
	n->nlmsg_flags = (uint16_t)flags;
	memcpy(NLMSG_DATA(n), hdr, hdr_len);
	return n;
}

int nl_put(struct nlmsghdr *n, int type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)((uint8_t *)n + NLMSG_ALIGN(n->nlmsg_len));

	if (NLMSG_ALIGN(n->nlmsg_len) + RTA_SPACE(len) > NL_REQ_SIZE)
		return -E2BIG;
	a->rta_type = (unsigned short)type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	n->nlmsg_len = (uint32_t)(NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(a->rta_len));
	return 0;
}

int nl_put_u32(struct nlmsghdr *n, int type, uint32_t v)
{
	return nl_put(n, type, &v, sizeof(v));
}

int nl_put_str(struct nlmsghdr *n, int type, const char *s)
{
	return nl_put(n, type, s, strlen(s) + 1);
}

struct rtattr *nl_nest_start(struct nlmsghdr *n, int type)
{
	struct rtattr *a = (struct rtattr *)((uint8_t *)n + NLMSG_ALIGN(n->nlmsg_len));

	if (nl_put(n, type, NULL, 0))
		return NULL;
	return a;
}

void nl_nest_end(struct nlmsghdr *n, struct rtattr *nest)
{
	nest->rta_len = (unsigned short)((uint8_t *)n + n->nlmsg_len - (uint8_t *)nest);
}

static void parse_attrs(struct rtattr *a, int len, struct rtattr **tb, int max)
{
	memset(tb, 0, sizeof(*tb) * (size_t)(max + 1));
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type <= max && !tb[a->rta_type])
			tb[a->rta_type] = a;
}

void nl_parse(const struct nlmsghdr *n, size_t hdr_len, struct rtattr **tb, int max)
{
	struct rtattr *a = (struct rtattr *)((uint8_t *)NLMSG_DATA(n) + NLMSG_ALIGN(hdr_len));

	parse_attrs(a, (int)n->nlmsg_len - (int)NLMSG_LENGTH(NLMSG_ALIGN(hdr_len)), tb, max);
}

void nl_parse_nested(const struct rtattr *nest, struct rtattr **tb, int max)
{
	parse_attrs(RTA_DATA(nest), (int)RTA_PAYLOAD(nest), tb, max);
}

/* ---- replaying a namespace's saved addresses, routes and rules ---- */

static void describe(const struct nlmsghdr *n, char *buf, size_t size)
{
	struct rtattr *tb[RTA_MAX + 1];
	char a[INET6_ADDRSTRLEN] = "default";
	int fam, type = IFA_ADDRESS, len = 0;

	if (n->nlmsg_type == RTM_NEWADDR) {
		const struct ifaddrmsg *ifa = NLMSG_DATA(n);

		nl_parse(n, sizeof(*ifa), tb, IFA_MAX);
		fam = ifa->ifa_family;
		len = ifa->ifa_prefixlen;
		if (!tb[IFA_ADDRESS])
			type = IFA_LOCAL;
	} else if (n->nlmsg_type == RTM_NEWROUTE) {
		const struct rtmsg *rt = NLMSG_DATA(n);

		nl_parse(n, sizeof(*rt), tb, RTA_MAX);
		fam = rt->rtm_family;
		len = rt->rtm_dst_len;
		type = RTA_DST;
	} else {
		const struct fib_rule_hdr *fr = NLMSG_DATA(n);

		nl_parse(n, sizeof(*fr), tb, FRA_MAX);
		fam = fr->family;
		len = fr->src_len;
		type = FRA_SRC;
		snprintf(a, sizeof(a), "all");
	}
	if (tb[type])
		inet_ntop(fam, RTA_DATA(tb[type]), a, sizeof(a));
	snprintf(buf, size, "%s %s/%d",
		 n->nlmsg_type == RTM_NEWADDR	 ? "address"
		 : n->nlmsg_type == RTM_NEWROUTE ? "route to"
						 : "rule from",
		 a, len);
}

int rtnl_replay(int sk, const uint8_t *data, size_t len, const char *img)
{
	uint8_t buf[NL_REQ_SIZE];
	size_t off = 0;

	while (off + sizeof(struct nlmsghdr) <= len) {
		const struct nlmsghdr *src = (const struct nlmsghdr *)(data + off);
		struct nlmsghdr *n = (struct nlmsghdr *)buf;
		char what[96];
		int err;

		if (src->nlmsg_len < NLMSG_HDRLEN || src->nlmsg_len > NL_REQ_SIZE ||
		    off + src->nlmsg_len > len ||
		    (src->nlmsg_type != RTM_NEWADDR && src->nlmsg_type != RTM_NEWROUTE &&
		     src->nlmsg_type != RTM_NEWRULE)) {
			pr_err("%s: offset %zu: not an rtnetlink message of an address, a route "
			       "or a rule\n",
			       img, off);
			return -EINVAL;
		}
		off += NLMSG_ALIGN(src->nlmsg_len);
		memcpy(buf, src, src->nlmsg_len);
		n->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
		if (n->nlmsg_type == RTM_NEWROUTE) {
			const struct rtmsg *rt = NLMSG_DATA(n);

			/* made by the kernel with the addresses and links */
			if (rt->rtm_protocol == RTPROT_KERNEL || (rt->rtm_flags & RTM_F_CLONED))
				continue;
		}
		err = rtnl_talk(sk, n);
		if (err == -EEXIST)
			continue;
		if (err) {
			describe(n, what, sizeof(what));
			pr_errno(err, "cannot restore %s", what);
			return err;
		}
	}
	return 0;
}
