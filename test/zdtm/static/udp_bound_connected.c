// SPDX-License-Identifier: GPL-2.0
/*
 * UDP sockets bound and connected, with options: a bound IPv4 socket A with
 * options set and a socket B bound and connected to A; an IPv6-only pair
 * (C connected to D) with a traffic class; a dual-stack socket E bound on ::
 * and an IPv4 socket F connected to it. Datagrams wait unread in A, C and E
 * at the dump, all from loopback senders, which criu-like saves and gives
 * back (Documentation/network.md; a queue with a foreign sender would be
 * dropped whole): each queue must be intact, in order, every datagram from
 * the address and port that sent it (E's from F as ::ffff:127.0.0.1). After
 * the restore: same names, peers and options; datagrams go both ways on
 * every pair (A answers B at the address it came from); B, being connected,
 * still ignores a datagram from a stranger.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

enum {
	A,
	B,
	C,
	D,
	E,
	F,
	NR_SK
};

static const char *const names_of[NR_SK] = { "A", "B", "C", "D", "E", "F" };
static const enum inet_kind kind_of[NR_SK] = { INET_V4, INET_V4,     INET_V6,
					       INET_V6, INET_MAPPED, INET_V4 };

struct opt {
	int sk, level, name, value;
	const char *label;
};

#define OPT(s, l, n, v)        \
	{                      \
		s, l, n, v, #n \
	}

static const struct opt opts[] = {
	OPT(A, SOL_SOCKET, SO_REUSEADDR, 1),
	OPT(A, SOL_SOCKET, SO_BROADCAST, 1),
	OPT(A, SOL_IP, IP_TOS, IPTOS_RELIABILITY),
	OPT(A, SOL_SOCKET, SO_RCVBUF, 100000),
	OPT(A, SOL_SOCKET, SO_PRIORITY, 2),
	OPT(A, SOL_IP, IP_TTL, 40),
	OPT(B, SOL_SOCKET, SO_SNDBUF, 70000),
	OPT(C, SOL_IPV6, IPV6_TCLASS, 0x28),
	OPT(D, SOL_IPV6, IPV6_UNICAST_HOPS, 9),
	OPT(E, SOL_SOCKET, SO_REUSEPORT, 1),
	OPT(A, SOL_IP, IP_MULTICAST_TTL, 5),
	OPT(A, SOL_IP, IP_MULTICAST_LOOP, 0),
	OPT(A, SOL_IP, IP_PKTINFO, 1),
	OPT(D, SOL_IPV6, IPV6_MULTICAST_HOPS, 3),
	OPT(D, SOL_IPV6, IPV6_RECVPKTINFO, 1),
	OPT(B, SOL_SOCKET, SO_TIMESTAMP, 1),
};

#define NR_OPTS ((int)(sizeof(opts) / sizeof(opts[0])))

static int sk[NR_SK];

/* Send "@tag" from @from (to @to's name unless connected), receive it on @to. */
static int send_one(int from, int to, const char *tag, bool connected, struct inet_names *n)
{
	struct pollfd p = { .fd = sk[to], .events = POLLIN };
	char buf[64];
	ssize_t len = strlen(tag), r;

	if (connected)
		r = send(sk[from], tag, len, 0);
	else
		r = sendto(sk[from], tag, len, 0, (struct sockaddr *)&n[to].local,
			   sizeof(n[to].local));
	if (r != len || poll(&p, 1, 10000) != 1)
		return -EIO;
	r = recv(sk[to], buf, sizeof(buf), 0);
	return r == len && !memcmp(buf, tag, len) ? 0 : -EBADMSG;
}

/* Whether @got is @want's address and port (an IPv4 @want seen v4-mapped by an IPv6 socket). */
static bool same_sender(const struct sockaddr_storage *got, const struct sockaddr_storage *want)
{
	const struct sockaddr_in6 *g6 = (const struct sockaddr_in6 *)got;
	const struct sockaddr_in *w4 = (const struct sockaddr_in *)want;

	if (inet_port(got) != inet_port(want))
		return false;
	if (got->ss_family == AF_INET6 && want->ss_family == AF_INET)
		return IN6_IS_ADDR_V4MAPPED(&g6->sin6_addr) &&
		       !memcmp(&g6->sin6_addr.s6_addr[12], &w4->sin_addr, 4);
	if (got->ss_family != want->ss_family)
		return false;
	if (got->ss_family == AF_INET)
		return ((const struct sockaddr_in *)got)->sin_addr.s_addr == w4->sin_addr.s_addr;
	return !memcmp(&g6->sin6_addr, &((const struct sockaddr_in6 *)want)->sin6_addr, 16);
}

/* The datagrams "q0".."q<n-1>" sent by @from wait on @s, and nothing more: 0 or -EBADMSG. */
static int check_queue(int s, int n, int from, const struct inet_names *nm)
{
	struct sockaddr_storage sender;
	char buf[64], want[8], a[64], b[64];
	int i;

	for (i = 0; i < n; i++) {
		socklen_t slen = sizeof(sender);
		ssize_t r;

		memset(&sender, 0, sizeof(sender));
		r = recvfrom(sk[s], buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&sender,
			     &slen);
		snprintf(want, sizeof(want), "q%d", i);
		if (r != (ssize_t)strlen(want) || memcmp(buf, want, r)) {
			fail("socket %s: queued datagram %d is wrong or missing (%zd bytes)",
			     names_of[s], i, r);
			return -EBADMSG;
		}
		if (!same_sender(&sender, &nm[from].local)) {
			fail("socket %s: datagram %d comes from %s, was sent by %s", names_of[s], i,
			     inet_str(&sender, a, sizeof(a)),
			     inet_str(&nm[from].local, b, sizeof(b)));
			return -EBADMSG;
		}
	}
	if (recv(sk[s], buf, sizeof(buf), MSG_DONTWAIT) >= 0) {
		fail("socket %s: more datagrams than were queued", names_of[s]);
		return -EBADMSG;
	}
	test_msg("socket %s: the %d queued datagrams are intact\n", names_of[s], n);
	return 0;
}

static int setup(struct inet_names *n)
{
	struct sockaddr_storage ss;
	unsigned int len;
	int i;

	for (i = 0; i < NR_SK; i++) {
		sk[i] = inet_socket(kind_of[i], SOCK_DGRAM);
		if (sk[i] < 0)
			return sk[i];
	}
	for (i = 0; i < NR_OPTS; i++)
		if (setsockopt(sk[opts[i].sk], opts[i].level, opts[i].name, &opts[i].value,
			       sizeof(int)))
			return -errno;
	for (i = 0; i < NR_SK; i++) {
		len = inet_loopback(kind_of[i], 0, &ss);
		if (i == E) /* dual-stack: bound on :: */
			((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_any;
		if (bind(sk[i], (struct sockaddr *)&ss, len) || inet_names_get(sk[i], &n[i]))
			return -errno;
	}
	/* B -> A, C -> D, F -> E (E's port at 127.0.0.1) */
	if (connect(sk[B], (struct sockaddr *)&n[A].local, sizeof(n[A].local)) ||
	    connect(sk[C], (struct sockaddr *)&n[D].local, sizeof(n[D].local)))
		return -errno;
	len = inet_loopback(INET_V4, inet_port(&n[E].local), &ss);
	if (connect(sk[F], (struct sockaddr *)&ss, len))
		return -errno;
	for (i = 0; i < NR_SK; i++)
		if (inet_names_get(sk[i], &n[i]))
			return -errno;
	return 0;
}

/* Datagrams both ways on each pair; A and E answer to whatever address asked. */
static int exchange(struct inet_names *n)
{
	if (send_one(B, A, "b to a", true, n) || send_one(A, B, "a to b", false, n) ||
	    send_one(C, D, "c to d", true, n) || send_one(D, C, "d to c", false, n) ||
	    send_one(F, E, "f to e", true, n))
		return -EIO;
	return 0;
}

static int take_opts(int *v)
{
	for (int i = 0; i < NR_OPTS; i++) {
		socklen_t len = sizeof(int);

		if (getsockopt(sk[opts[i].sk], opts[i].level, opts[i].name, &v[i], &len))
			return -errno;
	}
	return 0;
}

static int check_after(struct inet_names *n, const int *before)
{
	int now[NR_OPTS], i, stranger;

	for (i = 0; i < NR_SK; i++)
		if (inet_names_check(sk[i], &n[i])) {
			fail("socket %s has other names after the restore", names_of[i]);
			return 1;
		}
	if (take_opts(now)) {
		fail("getsockopt: %m");
		return 1;
	}
	for (i = 0; i < NR_OPTS; i++)
		if (now[i] != before[i]) {
			fail("socket %s: %s was %d, now %d", names_of[opts[i].sk], opts[i].label,
			     before[i], now[i]);
			return 1;
		}
	if (check_queue(A, 3, B, n) || check_queue(C, 2, D, n) || check_queue(E, 2, F, n))
		return 1;
	if (exchange(n)) {
		fail("datagrams no longer go through after the restore");
		return 1;
	}
	/* A connected socket takes datagrams from its peer only. */
	stranger = socket(AF_INET, SOCK_DGRAM, 0);
	if (stranger < 0 ||
	    sendto(stranger, "stranger", 8, 0, (struct sockaddr *)&n[B].local,
		   sizeof(n[B].local)) != 8 ||
	    send_one(A, B, "a again", false, n)) {
		fail("B is no longer connected to A only");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct inet_names n[NR_SK];
	int before[NR_OPTS], i;
	char q[8];

	test_init(argc, argv);
	if (setup(n) || exchange(n) || take_opts(before)) {
		fail("cannot set up the UDP sockets: %m");
		return 1;
	}
	for (i = 0; i < 3; i++) {
		snprintf(q, sizeof(q), "q%d", i);
		if (send(sk[B], q, strlen(q), 0) != (ssize_t)strlen(q) ||
		    (i < 2 && sendto(sk[D], q, strlen(q), 0, (struct sockaddr *)&n[C].local,
				     sizeof(n[C].local)) != (ssize_t)strlen(q)) ||
		    (i < 2 && send(sk[F], q, strlen(q), 0) != (ssize_t)strlen(q))) {
			fail("cannot queue datagrams: %m");
			return 1;
		}
	}
	test_daemon();
	test_waitsig();

	if (check_after(n, before))
		return 1;
	pass();
	return 0;
}
