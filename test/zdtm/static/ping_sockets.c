// SPDX-License-Identifier: GPL-2.0
/*
 * ICMP ping sockets (SOCK_DGRAM, IPPROTO_ICMP and IPPROTO_ICMPV6), in a
 * network namespace of the test's own whose net.ipv4.ping_group_range is
 * "1000 1000": made with the effective group 1000 (root's group 0 may not),
 * one IPv4 socket bound to 127.0.0.1 with the echo identifier 4242, one
 * IPv6 socket bound to ::1 with 4343, one IPv4 socket connected to
 * 127.0.0.1 (the kernel picks its identifier). After SIGTERM: the same
 * names and identifiers, the connected one sends without an address, and
 * each gets the echo reply to a request it sends.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

static int name_of(int s, struct sockaddr_storage *ss)
{
	socklen_t len = sizeof(*ss);

	memset(ss, 0, sizeof(*ss));
	return getsockname(s, (struct sockaddr *)ss, &len);
}

/* An echo request from @s (to @to, or its peer when NULL) is answered. */
static int echo(int s, int family, const struct sockaddr *to, socklen_t len, int seq)
{
	struct icmphdr h = { .type = ICMP_ECHO };
	struct icmp6_hdr h6 = { .icmp6_type = ICMP6_ECHO_REQUEST };
	struct pollfd pf = { .fd = s, .events = POLLIN };
	unsigned char buf[256];
	ssize_t n;

	h.un.echo.sequence = htons((uint16_t)seq);
	h6.icmp6_seq = htons((uint16_t)seq);
	if (family == AF_INET)
		n = to ? sendto(s, &h, sizeof(h), 0, to, len) : send(s, &h, sizeof(h), 0);
	else
		n = sendto(s, &h6, sizeof(h6), 0, to, len);
	if (n < 0) {
		fail("echo %d: send: %m", seq);
		return neg_errno();
	}
	if (poll(&pf, 1, 5000) != 1) {
		fail("echo %d: no reply", seq);
		return -ETIMEDOUT;
	}
	n = recv(s, buf, sizeof(buf), MSG_DONTWAIT);
	if (family == AF_INET
		    ? n < (ssize_t)sizeof(h) || buf[0] != ICMP_ECHOREPLY ||
			      ((struct icmphdr *)buf)->un.echo.sequence != h.un.echo.sequence
		    : n < (ssize_t)sizeof(h6) || buf[0] != ICMP6_ECHO_REPLY ||
			      ((struct icmp6_hdr *)buf)->icmp6_seq != h6.icmp6_seq) {
		fail("echo %d: a reply of %zd bytes, type %u", seq, n, n > 0 ? buf[0] : 0);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_port = htons(4242) };
	struct sockaddr_in6 lo6 = { .sin6_family = AF_INET6, .sin6_port = htons(4343) };
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct sockaddr_storage n4, n6, nc, g;
	int s4, s6, sc;

	test_init(argc, argv);
	lo.sin_addr.s_addr = to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lo6.sin6_addr = in6addr_loopback;
	if ((!test_in_container() && unshare(CLONE_NEWNET)) || system("ip link set lo up") ||
	    system("echo '1000 1000' >/proc/sys/net/ipv4/ping_group_range"))
		goto err;
	if (setegid(1000))
		goto err;
	s4 = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
	s6 = socket(AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6);
	sc = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
	if (setegid(0) || s4 < 0 || s6 < 0 || sc < 0 ||
	    bind(s4, (struct sockaddr *)&lo, sizeof(lo)) ||
	    bind(s6, (struct sockaddr *)&lo6, sizeof(lo6)) ||
	    connect(sc, (struct sockaddr *)&to, sizeof(to)) || name_of(s4, &n4) ||
	    name_of(s6, &n6) || name_of(sc, &nc))
		goto err;
	/* root may not make one here: the restore must take a group of the range */
	if (socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP) >= 0 || errno != EACCES) {
		fail("group 0 made a ping socket: the test proves nothing");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (name_of(s4, &g) || memcmp(&g, &n4, sizeof(struct sockaddr_in)) || name_of(s6, &g) ||
	    memcmp(&g, &n6, sizeof(struct sockaddr_in6)) || name_of(sc, &g) ||
	    memcmp(&g, &nc, sizeof(struct sockaddr_in))) {
		fail("a name or echo identifier changed");
		return 1;
	}
	if (echo(s4, AF_INET, (struct sockaddr *)&to, sizeof(to), 1) ||
	    echo(s6, AF_INET6, (struct sockaddr *)&lo6, sizeof(lo6), 2) ||
	    echo(sc, AF_INET, NULL, 0, 3))
		return 1;
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
