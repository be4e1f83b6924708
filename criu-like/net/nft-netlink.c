// SPDX-License-Identifier: GPL-2.0
/*
 * The nftables tables of this thread's network namespace asked of the kernel
 * on a netlink socket (NFT_MSG_GETTABLE, about 0.05 ms), for the questions
 * that do not need libnftables, whose load, context and cache cost 3-5 ms:
 * does a table exist (the restore's lock), and which inet tables are there
 * (every run's look for stale locks, net-lock-cleanup.c). -errno when the
 * kernel cannot say; the callers then ask libnftables or the nft tool.
 */
#define LOG_PREFIX "net-lock: "

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

/* Called for each table the kernel sends (an NFT_MSG_NEWTABLE message). */
typedef int (*nft_table_fn)(const struct nlmsghdr *h, void *arg);

/*
 * The answers to @seq on @fd up to the ack or the dump's end: @each for each
 * table; 0, or the kernel's -errno (-ENOENT: no such table), or -EIO.
 */
static int gettable_answer(int fd, uint32_t seq, nft_table_fn each, void *arg)
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
			if (NFNL_MSG_TYPE(h->nlmsg_type) != NFT_MSG_NEWTABLE)
				continue;
			err = each(h, arg);
			if (err)
				return err;
		}
	}
}

/* Send @req (its length set) and read the answers through @each. */
static int gettable(struct nft_gettable *req, nft_table_fn each, void *arg)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd, ret;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0)
		return neg_errno();
	req->nh.nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETTABLE;
	req->nh.nlmsg_seq = 1;
	req->nfg.nfgen_family = NFPROTO_INET;
	req->nfg.version = NFNETLINK_V0;
	if (sendto(fd, req, req->nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		ret = neg_errno();
	else
		ret = gettable_answer(fd, req->nh.nlmsg_seq, each, arg);
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
	struct nft_gettable req = { 0 };
	size_t len = strlen(name) + 1;
	int found = 0, ret;

	if (len > sizeof(req.name))
		return -ENAMETOOLONG;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.name_attr.nla_type = NFTA_TABLE_NAME;
	req.name_attr.nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy(req.name, name, len);
	req.nh.nlmsg_len = (uint32_t)(NLMSG_LENGTH(sizeof(req.nfg)) + NLA_ALIGN(NLA_HDRLEN + len));
	ret = gettable(&req, table_seen, &found);
	if (ret == -ENOENT)
		return 0;
	return ret ? ret : found;
}

/* "table inet NAME\n" of the table in @h appended to the stream @arg. */
static int table_line(const struct nlmsghdr *h, void *arg)
{
	size_t off = NLMSG_ALIGN(sizeof(struct nfgenmsg));
	const char *p = NLMSG_DATA(h);
	size_t len = h->nlmsg_len - NLMSG_HDRLEN;

	while (off + NLA_HDRLEN <= len) {
		const struct nlattr *a = (const struct nlattr *)(p + off);

		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > len)
			return -EIO;
		if ((a->nla_type & NLA_TYPE_MASK) == NFTA_TABLE_NAME) {
			const char *name = p + off + NLA_HDRLEN;
			size_t n = strnlen(name, a->nla_len - NLA_HDRLEN);

			return fprintf(arg, "table inet %.*s\n", (int)n, name) < 0 ? -ENOMEM : 0;
		}
		off += NLA_ALIGN(a->nla_len);
	}
	return -EIO;
}

int nft_inet_tables(char **ret)
{
	struct nft_gettable req = { 0 };
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	int err;

	if (!f)
		return -ENOMEM;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_len = (uint32_t)NLMSG_LENGTH(sizeof(req.nfg));
	err = gettable(&req, table_line, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(text);
		return err;
	}
	*ret = text;
	return 0;
}
