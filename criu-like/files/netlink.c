// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink sockets (Documentation/files.md): what `ip monitor`, udev, systemd
 * and glibc hold. Dump, from the drained socket itself: type and protocol,
 * the port id it is bound to (getsockname), every multicast group it is in
 * (NETLINK_LIST_MEMBERSHIPS: groups past 32 too), the peer it is connected
 * to (getpeername), the buffer sizes and the SOL_NETLINK options that are
 * on. A message waiting in its queue is refused (the kernel gives no way to
 * put one back), as is a socket of another network namespace than the tree's.
 * Restore, in the controller inside the tree's network namespace: socket(),
 * the options, bind() to the same port id, the groups, connect().
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "anon.h"
#include "files-int.h"
#include "inet.h"
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* The boolean SOL_NETLINK options kept (bit n of nl_opts for option n). */
static const int nl_bool_opts[] = {
	NETLINK_PKTINFO, NETLINK_BROADCAST_ERROR, NETLINK_NO_ENOBUFS,	  NETLINK_LISTEN_ALL_NSID,
	NETLINK_CAP_ACK, NETLINK_EXT_ACK,	  NETLINK_GET_STRICT_CHK,
};

#define NL_MAX_GROUP_WORDS 64 /* 2048 groups: more than any family has */

static int netlink_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	/* files.c sets sk_family of sockets */
	return f->sk_family == AF_NETLINK;
}

/* The groups of @f in @words, their number (trailing empty words left out) in *@ret_n. */
static int dump_groups(const struct fd_info *f, uint32_t *words, size_t *ret_n)
{
	socklen_t len = NL_MAX_GROUP_WORDS * sizeof(uint32_t);
	size_t n;

	if (getsockopt(f->dfd, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, words, &len)) {
		pr_perror("pid %d fd %d: NETLINK_LIST_MEMBERSHIPS of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	/* @len is what the kernel would have written: all of it when it fits */
	if (len > NL_MAX_GROUP_WORDS * sizeof(uint32_t)) {
		pr_err("pid %d fd %d: %s is in groups past %d: not supported\n", f->pid, f->fd,
		       f->link, NL_MAX_GROUP_WORDS * 32);
		return -EOPNOTSUPP;
	}
	for (n = len / sizeof(uint32_t); n > 0 && !words[n - 1]; n--)
		;
	*ret_n = n;
	return 0;
}

/* The port id bound (getsockname) and the peer connected to (getpeername). */
static int dump_addrs(const struct fd_info *f, NetlinkSkEntry *e)
{
	struct sockaddr_nl a = {};
	socklen_t len = sizeof(a);

	if (getsockname(f->dfd, (struct sockaddr *)&a, &len)) {
		pr_perror("pid %d fd %d: getsockname of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	e->has_portid = a.nl_pid != 0;
	e->portid = a.nl_pid;
	memset(&a, 0, sizeof(a));
	len = sizeof(a);
	if (getpeername(f->dfd, (struct sockaddr *)&a, &len)) {
		pr_perror("pid %d fd %d: getpeername of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	/* the kernel (0, 0) unless connect() named another */
	if (a.nl_pid || a.nl_groups) {
		e->has_dst_portid = e->has_dst_group = true;
		e->dst_portid = a.nl_pid;
		e->dst_group = a.nl_groups;
	}
	return 0;
}

static int dump_opts(const struct fd_info *f, NetlinkSkEntry *e)
{
	int val, err;
	size_t i;

	err = inet_sk_getint(f, SOL_SOCKET, SO_RCVBUF, &val);
	e->rcvbuf = (uint32_t)val;
	if (!err)
		err = inet_sk_getint(f, SOL_SOCKET, SO_SNDBUF, &val);
	e->sndbuf = (uint32_t)val;
	for (i = 0; !err && i < ARRAY_SIZE(nl_bool_opts); i++) {
		err = inet_sk_getint(f, SOL_NETLINK, nl_bool_opts[i], &val);
		if (!err && val)
			e->nl_opts |= 1u << nl_bool_opts[i];
	}
	e->has_nl_opts = e->nl_opts != 0;
	return err;
}

/* A message waiting to be read cannot be put back at restore: refused. */
static int check_queue(const struct fd_info *f, const NetlinkSkEntry *e)
{
	char c;
	ssize_t n = recv(f->dfd, &c, 1, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n < 0) {
		pr_perror("pid %d fd %d: cannot look at the queue of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	pr_err("pid %d fd %d: %s, a netlink socket of protocol %u, has a message of %zd bytes "
	       "queued unread: netlink queues are not supported (the kernel cannot queue it "
	       "again)\n",
	       f->pid, f->fd, f->link, e->protocol, n);
	return -EOPNOTSUPP;
}

static int netlink_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	/* one block owned by @d: the entry, then its group words */
	NetlinkSkEntry *e = anon_priv_alloc(d, sizeof(*e) + NL_MAX_GROUP_WORDS * sizeof(uint32_t));
	int type = 0, proto = 0, err;

	(void)ctx;
	if (!e)
		return -ENOMEM;
	netlink_sk_entry__init(e);
	e->groups = (uint32_t *)(e + 1);
	d->fe.type = FILE_TYPE__FILE_NETLINKSK;
	d->fe.netlinksk = e;
	e->flags = f->flags;
	err = sock_check_netns(f, "a netlink");
	if (!err)
		err = inet_sk_getint(f, SOL_SOCKET, SO_TYPE, &type);
	if (!err)
		err = inet_sk_getint(f, SOL_SOCKET, SO_PROTOCOL, &proto);
	e->type = (uint32_t)type;
	e->protocol = (uint32_t)proto;
	if (!err)
		err = dump_addrs(f, e);
	if (!err)
		err = dump_groups(f, e->groups, &e->n_groups);
	if (!err)
		err = dump_opts(f, e);
	if (!err)
		err = check_queue(f, e);
	if (err)
		return err;
	pr_debug("pid %d fd %d: netlink protocol %u port %u, %zu group words, peer %u/%u\n", f->pid,
		 f->fd, e->protocol, e->portid, e->n_groups, e->dst_portid, e->dst_group);
	return 0;
}

/* ---- restore ---- */
static int netlink_check(const FileEntry *fe)
{
	const NetlinkSkEntry *e = fe->netlinksk;

	if (!e)
		return rst_file_part_missing(fe);
	if ((e->type != SOCK_RAW && e->type != SOCK_DGRAM) || e->n_groups > NL_MAX_GROUP_WORDS ||
	    e->has_dst_portid != e->has_dst_group) {
		pr_err("files.img: file %u: netlink socket of type %u with %zu group words: "
		       "not one the dump writes\n",
		       fe->id, e->type, e->n_groups);
		return -EINVAL;
	}
	return 0;
}

static int set_opts(const FileEntry *fe, int sk, const NetlinkSkEntry *e)
{
	/* the kernel doubles what it is given, and getsockopt() shows the double */
	int rcv = (int)(e->rcvbuf / 2), snd = (int)(e->sndbuf / 2), on = 1;
	size_t i;

	if (setsockopt(sk, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) ||
	    setsockopt(sk, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof(snd))) {
		pr_perror("file %u: netlink socket: cannot set its buffer sizes", fe->id);
		return neg_errno();
	}
	for (i = 0; i < ARRAY_SIZE(nl_bool_opts); i++) {
		if (!(e->nl_opts & (1u << nl_bool_opts[i])))
			continue;
		if (setsockopt(sk, SOL_NETLINK, nl_bool_opts[i], &on, sizeof(on))) {
			pr_perror("file %u: netlink socket: cannot set option %d", fe->id,
				  nl_bool_opts[i]);
			return neg_errno();
		}
	}
	return 0;
}

/* Bound to the same port id (before the groups: a membership would autobind another). */
static int set_addrs(const FileEntry *fe, int sk, const NetlinkSkEntry *e)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK };

	if (e->has_portid) {
		a.nl_pid = e->portid;
		if (bind(sk, (struct sockaddr *)&a, sizeof(a))) {
			pr_perror("file %u: netlink socket of protocol %u: cannot bind port id %u",
				  fe->id, e->protocol, e->portid);
			return neg_errno();
		}
	}
	for (size_t w = 0; w < e->n_groups; w++)
		for (unsigned int b = 0; b < 32; b++) {
			int g = (int)(w * 32 + b + 1);

			if (!(e->groups[w] & (1u << b)))
				continue;
			if (setsockopt(sk, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g))) {
				pr_perror("file %u: netlink socket of protocol %u: cannot join "
					  "group %d",
					  fe->id, e->protocol, g);
				return neg_errno();
			}
		}
	if (e->has_dst_portid) {
		a.nl_pid = e->dst_portid;
		a.nl_groups = e->dst_group;
		if (connect(sk, (struct sockaddr *)&a, sizeof(a))) {
			pr_perror("file %u: netlink socket: cannot connect to %u/%u", fe->id,
				  e->dst_portid, e->dst_group);
			return neg_errno();
		}
	}
	return 0;
}

static int netlink_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const NetlinkSkEntry *e = fe->netlinksk;
	_cleanup_close_ int sk = -1;
	int err;

	sk = socket(AF_NETLINK, (int)e->type | SOCK_CLOEXEC | (int)(e->flags & O_NONBLOCK),
		    (int)e->protocol);
	if (sk < 0) {
		pr_perror("file %u: socket(AF_NETLINK, %u, %u)", fe->id, e->type, e->protocol);
		return neg_errno();
	}
	err = set_opts(fe, sk, e);
	if (!err)
		err = set_addrs(fe, sk, e);
	return err ? err : TAKE_FD(sk);
}

const struct file_kind netlink_kind = {
	.name = "netlink",
	.match = netlink_match,
	.dump = netlink_dump,
	.types = { FILE_TYPE__FILE_NETLINKSK },
	.in_flight = true,
	.check = netlink_check,
	.open = netlink_open,
};
