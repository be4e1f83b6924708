// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink sockets as ordinary programs hold them: an rtnetlink socket bound
 * to an explicit port id, in groups RTNLGRP_LINK and RTNLGRP_IPV6_ROUTE (past
 * 32: only NETLINK_ADD_MEMBERSHIP reaches it), with NETLINK_EXT_ACK,
 * NETLINK_GET_STRICT_CHK and a receive buffer of its own, non-blocking; an
 * autobound one (port id from the kernel after a request), an unbound one,
 * a uevent socket bound in group 1, and a generic netlink datagram socket
 * connected to the kernel's port id 0 group 0 (default) plus one connected
 * to another socket's port id. After SIGTERM each must have the same type,
 * protocol, port id, groups, options, flags and peer, and the rtnetlink ones
 * must still answer a request (RTM_GETLINK gives lo).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define NR 6

struct nl_state {
	int type, proto, rcvbuf, fl, ext_ack, strict;
	struct sockaddr_nl name, peer;
	uint32_t groups[4];
};

static int getint(int sk, int level, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (getsockopt(sk, level, opt, &v, &len))
		return neg_errno();
	return v;
}

static int snap(int sk, struct nl_state *s)
{
	socklen_t len = sizeof(s->name), plen = sizeof(s->peer), glen = sizeof(s->groups);

	memset(s, 0, sizeof(*s));
	s->type = getint(sk, SOL_SOCKET, SO_TYPE);
	s->proto = getint(sk, SOL_SOCKET, SO_PROTOCOL);
	s->rcvbuf = getint(sk, SOL_SOCKET, SO_RCVBUF);
	s->ext_ack = getint(sk, SOL_NETLINK, NETLINK_EXT_ACK);
	s->strict = getint(sk, SOL_NETLINK, NETLINK_GET_STRICT_CHK);
	s->fl = fcntl(sk, F_GETFL) & (O_NONBLOCK | O_ACCMODE);
	if (getsockname(sk, (struct sockaddr *)&s->name, &len) ||
	    getpeername(sk, (struct sockaddr *)&s->peer, &plen) ||
	    getsockopt(sk, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, s->groups, &glen))
		return neg_errno();
	return 0;
}

/* An RTM_GETLINK dump on @sk: 0 when its answer names lo. */
static int ask_links(int sk)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = {
		.h = { .nlmsg_len = sizeof(req),
		       .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		       .nlmsg_seq = 42 },
		.i = { .ifi_family = AF_UNSPEC },
	};
	static char buf[65536];
	int found = 0;

	if (send(sk, &req, sizeof(req), 0) != sizeof(req))
		return neg_errno();
	for (;;) {
		ssize_t n;
		struct nlmsghdr *h;

		n = recv(sk, buf, sizeof(buf), 0);
		if (n < 0 && errno == EAGAIN) {
			fd_set r;

			FD_ZERO(&r);
			FD_SET(sk, &r);
			select(sk + 1, &r, NULL, NULL, NULL);
			continue;
		}
		if (n <= 0)
			return neg_errno();
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned int)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return found ? 0 : -ENOENT;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EPROTO;
			if (h->nlmsg_type == RTM_NEWLINK) {
				struct ifinfomsg *i = NLMSG_DATA(h);

				found |= i->ifi_index == 1;
			}
		}
	}
}

static int nl_socket(int type, int proto, uint32_t portid)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_pid = portid };
	int sk = socket(AF_NETLINK, type, proto);

	if (sk < 0 || (portid && bind(sk, (struct sockaddr *)&a, sizeof(a))))
		return neg_errno();
	return sk;
}

int main(int argc, char **argv)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	struct nl_state before[NR], after;
	int sk[NR], one = 1, g, rcv = 300000;
	uint32_t port = 0x7e570000u + (uint32_t)getpid();

	test_init(argc, argv);
	/* 0: bound to an explicit port id, in two groups, options, non-blocking */
	sk[0] = nl_socket(SOCK_RAW | SOCK_NONBLOCK, NETLINK_ROUTE, port);
	g = RTNLGRP_LINK;
	if (sk[0] < 0 || setsockopt(sk[0], SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)))
		goto err;
	g = RTNLGRP_IPV6_ROUTE;
	if (setsockopt(sk[0], SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) ||
	    setsockopt(sk[0], SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) ||
	    setsockopt(sk[0], SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one, sizeof(one)) ||
	    setsockopt(sk[0], SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)))
		goto err;
	/* 1: autobound by its first request (its answer read: nothing queued) */
	sk[1] = nl_socket(SOCK_RAW, NETLINK_ROUTE, 0);
	if (sk[1] < 0 || ask_links(sk[1]))
		goto err;
	/* 2: never bound */
	sk[2] = nl_socket(SOCK_DGRAM, NETLINK_ROUTE, 0);
	/* 3: uevents, group 1, the way udev listens */
	sk[3] = nl_socket(SOCK_DGRAM, NETLINK_KOBJECT_UEVENT, port + 1);
	g = 1;
	if (sk[2] < 0 || sk[3] < 0 ||
	    setsockopt(sk[3], SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)))
		goto err;
	/* 4: generic netlink; 5: a user-space peer, connected to socket 4's port id */
	sk[4] = nl_socket(SOCK_RAW, NETLINK_GENERIC, port + 2);
	sk[5] = nl_socket(SOCK_RAW, NETLINK_GENERIC, port + 3);
	to.nl_pid = port + 2;
	if (sk[4] < 0 || sk[5] < 0 || connect(sk[5], (struct sockaddr *)&to, sizeof(to)))
		goto err;
	for (int i = 0; i < NR; i++)
		if (snap(sk[i], &before[i]))
			goto err;
	test_daemon();
	test_waitsig();

	for (int i = 0; i < NR; i++) {
		if (snap(sk[i], &after)) {
			fail("socket %d: cannot read its state back: %m", i);
			return 1;
		}
		if (memcmp(&after, &before[i], sizeof(after))) {
			fail("socket %d changed: type %d/%d proto %d/%d port %u/%u groups %#x.%#x/"
			     "%#x.%#x peer %u/%u rcvbuf %d/%d flags %#x/%#x ext_ack %d/%d",
			     i, before[i].type, after.type, before[i].proto, after.proto,
			     before[i].name.nl_pid, after.name.nl_pid, before[i].groups[0],
			     before[i].groups[1], after.groups[0], after.groups[1],
			     before[i].peer.nl_pid, after.peer.nl_pid, before[i].rcvbuf,
			     after.rcvbuf, before[i].fl, after.fl, before[i].ext_ack,
			     after.ext_ack);
			return 1;
		}
	}
	if (ask_links(sk[0]) || ask_links(sk[1])) {
		fail("an rtnetlink socket does not answer RTM_GETLINK with lo after the restore");
		return 1;
	}
	/* the connected pair still talks: 5 -> 4 */
	if (send(sk[5], "hi", 2, 0) != 2) {
		fail("generic netlink socket 5 cannot send to its peer: %m");
		return 1;
	}
	{
		char buf[8];

		if (recv(sk[4], buf, sizeof(buf), 0) != 2 || memcmp(buf, "hi", 2)) {
			fail("generic netlink socket 4 did not get its peer's message");
			return 1;
		}
	}
	pass();
	return 0;
err:
	fail("cannot set up the netlink sockets: %m");
	return 1;
}
