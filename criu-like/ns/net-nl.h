/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_NET_NL_H
#define CRIU_LIKE_NS_NET_NL_H

/*
 * Raw rtnetlink for the network namespace kind (net.c): dumps kept as the
 * messages the kernel sent, requests built in a buffer and acknowledged one
 * by one. A socket belongs to the network namespace its creator was in.
 */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stddef.h>
#include <stdint.h>

/* A growing buffer of netlink messages. */
struct nl_buf {
	uint8_t *data;
	size_t len, size;
};

/* A NETLINK_ROUTE socket in the caller's network namespace, or -errno. */
int rtnl_open(void);
/*
 * Every RTM_NEW* answer to an RTM_GET* dump of @type for @family, appended
 * to @out (nlmsghdr and all). 0 or -errno.
 */
int rtnl_dump(int sk, int type, int family, struct nl_buf *out);
/* The same with the family header @hdr of @hdr_len bytes (at most 32) as the request's. */
int rtnl_dump_hdr(int sk, int type, const void *hdr, size_t hdr_len, struct nl_buf *out);
/* Send the request @n and wait for its acknowledgement: 0 or the kernel's -errno. */
int rtnl_talk(int sk, struct nlmsghdr *n);
void nl_buf_fini(struct nl_buf *b);
/* @len bytes of @p appended to @b: 0 or -ENOMEM. */
int nl_buf_append(struct nl_buf *b, const void *p, size_t len);

/* Building a request in a buffer of NL_REQ_SIZE bytes. */
#define NL_REQ_SIZE 4096
struct nlmsghdr *nl_req_init(void *buf, int type, int flags, const void *hdr, size_t hdr_len);
int nl_put(struct nlmsghdr *n, int type, const void *data, size_t len);
int nl_put_u32(struct nlmsghdr *n, int type, uint32_t v);
int nl_put_str(struct nlmsghdr *n, int type, const char *s);
struct rtattr *nl_nest_start(struct nlmsghdr *n, int type);
void nl_nest_end(struct nlmsghdr *n, struct rtattr *nest);

/* The attributes after the family header of @n (@hdr_len bytes) into @tb[0..@max]. */
void nl_parse(const struct nlmsghdr *n, size_t hdr_len, struct rtattr **tb, int max);
void nl_parse_nested(const struct rtattr *nest, struct rtattr **tb, int max);

/*
 * Each RTM_NEWADDR, RTM_NEWROUTE or RTM_NEWRULE message of @data (@len
 * bytes, read from @img) sent again, as a new object; the routes the kernel
 * makes itself, and what exists already, are skipped. 0 or -errno (said).
 */
int rtnl_replay(int sk, const uint8_t *data, size_t len, const char *img);

#endif
