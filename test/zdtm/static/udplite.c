// SPDX-License-Identifier: GPL-2.0
/*
 * UDP-Lite sockets (IPPROTO_UDPLITE) over IPv4 and IPv6: a server S bound
 * on loopback with UDPLITE_RECV_CSCOV 20, a client C connected to it with
 * UDPLITE_SEND_CSCOV 12, three datagrams from C waiting unread in S at the
 * dump (one of no bytes). After SIGTERM: the same names, peer and coverage
 * options, the three datagrams in order from C's address, and a new
 * datagram goes from C to S and back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef SOL_UDPLITE
#define SOL_UDPLITE 136
#endif
#define UDPLITE_SEND_CSCOV 10
#define UDPLITE_RECV_CSCOV 11

static const char *const msgs[] = { "first datagram of udplite", "", "third" };

struct pair {
	int family, s, c;
	struct sockaddr_storage sname, cname;
	socklen_t slen, clen;
};

static int make_pair(struct pair *p, int family)
{
	struct sockaddr_storage a = { 0 };
	socklen_t len;
	int v;
	size_t i;

	p->family = family;
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&a;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		len = sizeof(*in6);
	}
	p->s = socket(family, SOCK_DGRAM, IPPROTO_UDPLITE);
	p->c = socket(family, SOCK_DGRAM, IPPROTO_UDPLITE);
	v = 20;
	if (p->s < 0 || p->c < 0 || bind(p->s, (struct sockaddr *)&a, len) ||
	    setsockopt(p->s, SOL_UDPLITE, UDPLITE_RECV_CSCOV, &v, sizeof(v)))
		return neg_errno();
	v = 12;
	p->slen = sizeof(p->sname);
	if (getsockname(p->s, (struct sockaddr *)&p->sname, &p->slen) ||
	    setsockopt(p->c, SOL_UDPLITE, UDPLITE_SEND_CSCOV, &v, sizeof(v)) ||
	    connect(p->c, (struct sockaddr *)&p->sname, p->slen))
		return neg_errno();
	p->clen = sizeof(p->cname);
	if (getsockname(p->c, (struct sockaddr *)&p->cname, &p->clen))
		return neg_errno();
	/* a coverage of 12 is below the server's 20: full coverage for these */
	v = 0;
	if (setsockopt(p->c, SOL_UDPLITE, UDPLITE_SEND_CSCOV, &v, sizeof(v)))
		return neg_errno();
	for (i = 0; i < 3; i++)
		if (send(p->c, msgs[i], strlen(msgs[i]), 0) != (ssize_t)strlen(msgs[i]))
			return neg_errno();
	v = 24;
	return setsockopt(p->c, SOL_UDPLITE, UDPLITE_SEND_CSCOV, &v, sizeof(v));
}

static int getint(int sk, int name)
{
	int v = -1;
	socklen_t l = sizeof(v);

	if (getsockopt(sk, SOL_UDPLITE, name, &v, &l))
		return -2;
	return v;
}

static int check_pair(struct pair *p)
{
	struct sockaddr_storage ss, from;
	socklen_t len = sizeof(ss), flen;
	char buf[128];
	const char *fam = p->family == AF_INET ? "v4" : "v6";
	struct pollfd pf = { .fd = p->s, .events = POLLIN };
	size_t i;
	ssize_t n;

	if (getsockname(p->s, (struct sockaddr *)&ss, &len) || len != p->slen ||
	    memcmp(&ss, &p->sname, len)) {
		fail("%s: the server's name changed", fam);
		return -EINVAL;
	}
	len = sizeof(ss);
	if (getpeername(p->c, (struct sockaddr *)&ss, &len) || len != p->slen ||
	    memcmp(&ss, &p->sname, len)) {
		fail("%s: the client's peer changed: %m", fam);
		return neg_errno();
	}
	if (getint(p->s, UDPLITE_RECV_CSCOV) != 20 || getint(p->c, UDPLITE_SEND_CSCOV) != 24) {
		fail("%s: coverage %d/%d, not 20/24", fam, getint(p->s, UDPLITE_RECV_CSCOV),
		     getint(p->c, UDPLITE_SEND_CSCOV));
		return -EINVAL;
	}
	for (i = 0; i < 4; i++) {
		if (i == 3 && send(p->c, "after", 5, 0) != 5) {
			fail("%s: send after the restore: %m", fam);
			return neg_errno();
		}
		if (poll(&pf, 1, 5000) != 1) {
			fail("%s: datagram %zu is not there", fam, i);
			return -ETIMEDOUT;
		}
		flen = sizeof(from);
		n = recvfrom(p->s, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
		if (n != (ssize_t)strlen(i < 3 ? msgs[i] : "after") ||
		    memcmp(buf, i < 3 ? msgs[i] : "after", (size_t)n) || flen != p->clen ||
		    memcmp(&from, &p->cname, flen)) {
			fail("%s: datagram %zu: %zd bytes, or from another sender", fam, i, n);
			return -EINVAL;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pair v4, v6;

	test_init(argc, argv);
	if (make_pair(&v4, AF_INET) || make_pair(&v6, AF_INET6)) {
		fail("setup: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();
	if (check_pair(&v4) || check_pair(&v6))
		return 1;
	pass();
	return 0;
}
