// SPDX-License-Identifier: GPL-2.0
/*
 * Corked UDP sockets with nothing corked yet: an IPv4 and an IPv6 socket,
 * each connected to a receiver of its family, and a UDP-Lite IPv4 one, all
 * with UDP_CORK set. After the restore UDP_CORK still reads 1 and still
 * acts: two sends stay in the socket (the receiver gets nothing), then
 * UDP_CORK 0 sends them as one datagram. (A socket with corked bytes is
 * refused by the dump: test/integration/udp-corked.sh.)
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef IPPROTO_UDPLITE
#define IPPROTO_UDPLITE 136
#endif

enum {
	V4,
	V6,
	LITE,
	NR_PAIRS
};

static const char *const pair_name[NR_PAIRS] = { "IPv4 UDP", "IPv6 UDP", "IPv4 UDP-Lite" };

struct pair {
	int snd, rcv;
};

static int make_pair(int fam, int proto, struct pair *p)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int on = 1;

	p->rcv = socket(fam, SOCK_DGRAM, proto);
	p->snd = socket(fam, SOCK_DGRAM, proto);
	if (p->rcv < 0 || p->snd < 0)
		return -errno;
	if (fam == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		len = sizeof(*in6);
	}
	if (bind(p->rcv, (struct sockaddr *)&ss, len) ||
	    getsockname(p->rcv, (struct sockaddr *)&ss, &len) ||
	    connect(p->snd, (struct sockaddr *)&ss, len) ||
	    setsockopt(p->snd, SOL_UDP, UDP_CORK, &on, sizeof(on)))
		return -errno;
	return 0;
}

static int cork_of(int sk)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (getsockopt(sk, SOL_UDP, UDP_CORK, &v, &len))
		return -errno;
	return v;
}

/* Corked: two sends give the receiver nothing; uncorked they arrive as one datagram. */
static int check_corking(const struct pair *p, const char *name)
{
	struct pollfd pf = { .fd = p->rcv, .events = POLLIN };
	char buf[64];
	int off = 0;
	ssize_t n;

	if (send(p->snd, "abc", 3, 0) != 3 || send(p->snd, "def", 3, 0) != 3) {
		fail("%s: send on the corked socket: %m", name);
		return neg_errno();
	}
	/* a socket that lost its cork delivered both datagrams before send() returned */
	if (poll(&pf, 1, 100) != 0) {
		fail("%s: a datagram arrived while the sender was corked", name);
		return -EINVAL;
	}
	if (setsockopt(p->snd, SOL_UDP, UDP_CORK, &off, sizeof(off))) {
		fail("%s: UDP_CORK 0: %m", name);
		return neg_errno();
	}
	if (poll(&pf, 1, 10000) != 1) {
		fail("%s: nothing arrived once uncorked", name);
		return -ETIMEDOUT;
	}
	n = recv(p->rcv, buf, sizeof(buf), MSG_DONTWAIT);
	if (n != 6 || memcmp(buf, "abcdef", 6)) {
		fail("%s: got %zd bytes '%.*s' instead of one datagram 'abcdef'", name, n,
		     n > 0 ? (int)n : 0, buf);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const int fam[NR_PAIRS] = { AF_INET, AF_INET6, AF_INET };
	static const int proto[NR_PAIRS] = { IPPROTO_UDP, IPPROTO_UDP, IPPROTO_UDPLITE };
	struct pair p[NR_PAIRS];
	int i, c;

	test_init(argc, argv);
	for (i = 0; i < NR_PAIRS; i++) {
		if (make_pair(fam[i], proto[i], &p[i]) < 0) {
			fail("%s: socket pair: %m", pair_name[i]);
			return 1;
		}
	}
	test_daemon();
	test_waitsig();
	for (i = 0; i < NR_PAIRS; i++) {
		c = cork_of(p[i].snd);
		if (c != 1) {
			fail("%s: UDP_CORK reads %d after the restore, not 1", pair_name[i], c);
			return 1;
		}
		if (check_corking(&p[i], pair_name[i]))
			return 1;
	}
	pass();
	return 0;
}
