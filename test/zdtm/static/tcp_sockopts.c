// SPDX-License-Identifier: GPL-2.0
/*
 * Socket and protocol options that programs set, on TCP sockets of every
 * state that keeps them: an established connection (both ends in the test:
 * one end with everything set, the other with defaults and a few set), a
 * listening socket with SO_REUSEPORT, and an IPv6-only listener with its own
 * traffic class and hop limit. getsockopt must give the same values after
 * the restore (the kernel's doubled buffer sizes included), SO_LINGER and
 * TCP_CONGESTION too, and the connection must still carry data both ways.
 *
 * tcp_sockopts_more is this file with TCP_SOCKOPTS_MORE: the options added
 * to the dump later (Documentation/network.md), SO_RCVTIMEO/SO_SNDTIMEO too.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "zdtmtst.h"

struct opt {
	int level, name;
	const char *label;
	int value; /* what to set; 0 in a "read only" list */
};

#define OPT(l, n, v)        \
	{                   \
		l, n, #n, v \
	}

/* The established end with everything set (the congestion control and SO_LINGER apart). */
static const struct opt client_opts[] = {
	OPT(SOL_SOCKET, SO_REUSEADDR, 1),
	OPT(SOL_SOCKET, SO_KEEPALIVE, 1),
	OPT(SOL_TCP, TCP_KEEPIDLE, 77),
	OPT(SOL_TCP, TCP_KEEPINTVL, 13),
	OPT(SOL_TCP, TCP_KEEPCNT, 5),
	OPT(SOL_TCP, TCP_NODELAY, 1),
	OPT(SOL_SOCKET, SO_SNDBUF, 96000),
	OPT(SOL_SOCKET, SO_RCVBUF, 80000),
	OPT(SOL_IP, IP_TOS, IPTOS_LOWDELAY),
	OPT(SOL_TCP, TCP_USER_TIMEOUT, 12345),
	OPT(SOL_SOCKET, SO_PRIORITY, 3),
	OPT(SOL_IP, IP_TTL, 33),
	OPT(SOL_SOCKET, SO_OOBINLINE, 1),
#ifdef TCP_SOCKOPTS_MORE
	OPT(SOL_SOCKET, SO_RCVLOWAT, 100),
	OPT(SOL_SOCKET, SO_TIMESTAMP, 1),
	OPT(SOL_TCP, TCP_NOTSENT_LOWAT, 131072),
	OPT(SOL_TCP, TCP_SYNCNT, 4),
	OPT(SOL_TCP, TCP_LINGER2, 17),
	OPT(SOL_IP, IP_RECVERR, 1),
	OPT(SOL_IP, IP_MTU_DISCOVER, IP_PMTUDISC_PROBE),
	OPT(SOL_IP, IP_RECVTOS, 1),
	OPT(SOL_SOCKET, SO_MARK, 7),
#endif
};

/* The accepted end: a few set, the rest must stay at their defaults. */
static const struct opt server_opts[] = {
	OPT(SOL_TCP, TCP_KEEPIDLE, 300),   OPT(SOL_IP, IP_TOS, IPTOS_THROUGHPUT),
	OPT(SOL_SOCKET, SO_KEEPALIVE, 0),  OPT(SOL_TCP, TCP_NODELAY, 0),
	OPT(SOL_TCP, TCP_USER_TIMEOUT, 0), OPT(SOL_SOCKET, SO_PRIORITY, 0),
	OPT(SOL_SOCKET, SO_OOBINLINE, 0),
};

static const struct opt listen_opts[] = {
	OPT(SOL_SOCKET, SO_REUSEADDR, 1),  OPT(SOL_SOCKET, SO_REUSEPORT, 1),
	OPT(SOL_SOCKET, SO_RCVBUF, 65536), OPT(SOL_TCP, TCP_KEEPIDLE, 99),
#ifdef TCP_SOCKOPTS_MORE
	OPT(SOL_TCP, TCP_DEFER_ACCEPT, 5), OPT(SOL_TCP, TCP_FASTOPEN, 16),
#endif
};

static const struct opt v6_opts[] = {
	OPT(SOL_IPV6, IPV6_V6ONLY, 1),	      OPT(SOL_IPV6, IPV6_TCLASS, 0x20),
	OPT(SOL_IPV6, IPV6_UNICAST_HOPS, 17), OPT(SOL_SOCKET, SO_REUSEADDR, 1),
#ifdef TCP_SOCKOPTS_MORE
	OPT(SOL_IPV6, IPV6_RECVERR, 1),	      OPT(SOL_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO),
	OPT(SOL_IPV6, IPV6_RECVTCLASS, 1),
#endif
};

#define MAX_OPTS 32

/* The timeouts of the client (TCP_SOCKOPTS_MORE); the others keep none. */
static int set_more(int sk)
{
#ifdef TCP_SOCKOPTS_MORE
	struct timeval rcv = { 3, 250000 }, snd = { 7, 0 };

	if (setsockopt(sk, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof(rcv)) ||
	    setsockopt(sk, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof(snd)))
		return -errno;
#endif
	(void)sk;
	return 0;
}

/* What getsockopt gives for a socket: its options, linger and congestion control. */
struct snap {
	int v[MAX_OPTS];
	struct linger lg;
	char cong[16];
	struct timeval rcvtimeo, sndtimeo;
};

static int set_opts(int sk, const struct opt *o, int n)
{
	for (int i = 0; i < n; i++) {
		if (setsockopt(sk, o[i].level, o[i].name, &o[i].value, sizeof(int))) {
			fail("setsockopt %s = %d: %m", o[i].label, o[i].value);
			return -errno;
		}
	}
	return 0;
}

static int take(int sk, const struct opt *o, int n, struct snap *s)
{
	socklen_t len;

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < n; i++) {
		len = sizeof(int);
		if (getsockopt(sk, o[i].level, o[i].name, &s->v[i], &len))
			return -errno;
	}
	len = sizeof(s->lg);
	if (getsockopt(sk, SOL_SOCKET, SO_LINGER, &s->lg, &len))
		return -errno;
	len = sizeof(s->cong);
	if (getsockopt(sk, SOL_TCP, TCP_CONGESTION, s->cong, &len))
		return -errno;
	len = sizeof(s->rcvtimeo);
	if (getsockopt(sk, SOL_SOCKET, SO_RCVTIMEO, &s->rcvtimeo, &len))
		return -errno;
	len = sizeof(s->sndtimeo);
	if (getsockopt(sk, SOL_SOCKET, SO_SNDTIMEO, &s->sndtimeo, &len))
		return -errno;
	return 0;
}

/* Every difference is logged; the first one is the verdict. */
static int compare(const char *what, int sk, const struct opt *o, int n, const struct snap *old)
{
	struct snap now;
	int bad = 0;

	if (take(sk, o, n, &now)) {
		fail("%s: getsockopt: %m", what);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (now.v[i] == old->v[i])
			continue;
		test_msg("%s: %s was %d, now %d\n", what, o[i].label, old->v[i], now.v[i]);
		if (!bad++)
			fail("%s: %s was %d, now %d", what, o[i].label, old->v[i], now.v[i]);
	}
	if (now.lg.l_onoff != old->lg.l_onoff || now.lg.l_linger != old->lg.l_linger) {
		test_msg("%s: SO_LINGER was {%d, %d}, now {%d, %d}\n", what, old->lg.l_onoff,
			 old->lg.l_linger, now.lg.l_onoff, now.lg.l_linger);
		if (!bad++)
			fail("%s: SO_LINGER differs", what);
	}
	if (memcmp(&now.rcvtimeo, &old->rcvtimeo, sizeof(now.rcvtimeo)) ||
	    memcmp(&now.sndtimeo, &old->sndtimeo, sizeof(now.sndtimeo))) {
		test_msg("%s: SO_RCVTIMEO/SO_SNDTIMEO were %ld.%06ld/%ld.%06ld, now "
			 "%ld.%06ld/%ld.%06ld\n",
			 what, old->rcvtimeo.tv_sec, old->rcvtimeo.tv_usec, old->sndtimeo.tv_sec,
			 old->sndtimeo.tv_usec, now.rcvtimeo.tv_sec, now.rcvtimeo.tv_usec,
			 now.sndtimeo.tv_sec, now.sndtimeo.tv_usec);
		if (!bad++)
			fail("%s: SO_RCVTIMEO or SO_SNDTIMEO differs", what);
	}
	if (strcmp(now.cong, old->cong)) {
		test_msg("%s: TCP_CONGESTION was %s, now %s\n", what, old->cong, now.cong);
		if (!bad++)
			fail("%s: TCP_CONGESTION was %s, now %s", what, old->cong, now.cong);
	}
	return bad;
}

/* A block each way through the connection. */
static int exchange(int a, int b)
{
	char out[4096], in[4096];
	size_t bad;

	for (int dir = 0; dir < 2; dir++) {
		int from = dir ? b : a, to = dir ? a : b;

		datagen(out, sizeof(out), 0x5000 + dir);
		if (send(from, out, sizeof(out), 0) != sizeof(out) ||
		    recv(to, in, sizeof(in), MSG_WAITALL) != sizeof(in) ||
		    datachk(in, sizeof(in), 0x5000 + dir, &bad))
			return -EIO;
	}
	return 0;
}

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

int main(int argc, char **argv)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 7 };
	struct snap cs, ss, ls_snap, l6s;
	struct sockaddr_storage addr;
	unsigned int len;
	int ls, cl, sv, l6;

	test_init(argc, argv);
	ls = tcp_listen_loopback(INET_V4, 4, &addr, &len);
	cl = socket(AF_INET, SOCK_STREAM, 0);
	l6 = inet_socket(INET_V6, SOCK_STREAM);
	if (ls < 0 || cl < 0 || l6 < 0 || set_opts(cl, client_opts, N(client_opts)) ||
	    setsockopt(cl, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) ||
	    setsockopt(cl, SOL_TCP, TCP_CONGESTION, "reno", 4) || set_more(cl) ||
	    connect(cl, (struct sockaddr *)&addr, len)) {
		fail("cannot set up the client: %m");
		return 1;
	}
	sv = accept(ls, NULL, NULL);
	if (sv < 0 || set_opts(sv, server_opts, N(server_opts)) ||
	    set_opts(ls, listen_opts, N(listen_opts)) || set_opts(l6, v6_opts, N(v6_opts))) {
		fail("cannot set up the server side: %m");
		return 1;
	}
	len = inet_loopback(INET_V6, 0, &addr);
	if (bind(l6, (struct sockaddr *)&addr, len) || listen(l6, 3) || exchange(cl, sv)) {
		fail("cannot set up the IPv6 listener or exchange data: %m");
		return 1;
	}
	if (take(cl, client_opts, N(client_opts), &cs) ||
	    take(sv, server_opts, N(server_opts), &ss) ||
	    take(ls, listen_opts, N(listen_opts), &ls_snap) ||
	    take(l6, v6_opts, N(v6_opts), &l6s)) {
		fail("getsockopt: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (compare("client", cl, client_opts, N(client_opts), &cs) |
	    compare("accepted", sv, server_opts, N(server_opts), &ss) |
	    compare("listener", ls, listen_opts, N(listen_opts), &ls_snap) |
	    compare("IPv6 listener", l6, v6_opts, N(v6_opts), &l6s))
		return 1;
	if (exchange(cl, sv)) {
		fail("the connection no longer carries data: %m");
		return 1;
	}
	pass();
	return 0;
}
