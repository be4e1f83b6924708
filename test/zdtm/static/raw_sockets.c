// SPDX-License-Identifier: GPL-2.0
/*
 * Raw IP sockets: an ICMP one whose ICMP_FILTER blocks every type, an IPv4
 * one of protocol 253 with IP_HDRINCL bound to 127.0.0.1 and connected to
 * 127.0.0.2, another of protocol 253 bound to 127.0.0.1 with IP_NODEFRAG,
 * an ICMPv6 one whose ICMP6_FILTER blocks every type, and an IPv6 one of
 * protocol 253 bound to ::1 with IPV6_CHECKSUM 2. Nothing waits in them at
 * the dump (criu-like refuses a raw socket with a queue). After SIGTERM:
 * the same types, protocols, names, peer (in /proc/net/raw) and options, and a packet of
 * protocol 253 sent to 127.0.0.1 and to ::1 reaches the bound sockets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PROTO 253
#define SOL_RAW_ 255
#define ICMP_FILTER_ 1

enum {
	ICMP4,
	HDRINCL,
	NODEFRAG,
	ICMP6,
	CSUM6,
	NR
};

static int sk[NR];

static int setint(int s, int level, int name, int v)
{
	return setsockopt(s, level, name, &v, sizeof(v));
}

static int getint(int s, int level, int name)
{
	int v = -1;
	socklen_t l = sizeof(v);

	return getsockopt(s, level, name, &v, &l) ? -2 : v;
}

static void addr4(struct sockaddr_in *a, const char *ip)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	inet_pton(AF_INET, ip, &a->sin_addr);
}

static void addr6(struct sockaddr_in6 *a)
{
	memset(a, 0, sizeof(*a));
	a->sin6_family = AF_INET6;
	a->sin6_addr = in6addr_loopback;
}

static int proto_of(int s)
{
	return getint(s, SOL_SOCKET, SO_PROTOCOL);
}

/* A packet of PROTO from a new socket to @to reaches @s. */
static int reaches(int s, const struct sockaddr *to, socklen_t len, const char *what)
{
	int tx = socket(to->sa_family, SOCK_RAW, PROTO);
	struct pollfd pf = { .fd = s, .events = POLLIN };
	char buf[256];
	ssize_t n;

	/* the receiver checks a checksum at offset 2: the sender puts it there */
	if (tx < 0 || (to->sa_family == AF_INET6 && setint(tx, SOL_IPV6, IPV6_CHECKSUM, 2)) ||
	    sendto(tx, "\0\0\0\0payload", 11, 0, to, len) != 11) {
		fail("%s: send: %m", what);
		return neg_errno();
	}
	close(tx);
	if (poll(&pf, 1, 5000) != 1) {
		fail("%s: nothing came", what);
		return -ETIMEDOUT;
	}
	n = recv(s, buf, sizeof(buf), MSG_DONTWAIT);
	/* IPv4 raw sockets get the IP header too; the IPv6 checksum is in the first 4 bytes */
	if (n < 7 || memcmp(buf + n - 7, "payload", 7)) {
		fail("%s: got %zd bytes, not the payload", what, n);
		return -EINVAL;
	}
	return 0;
}

/*
 * The peer of raw socket @s as /proc/net/raw shows it (getpeername() of a
 * raw socket says ENOTCONN even when it is connected): @want, with the state
 * 01 (TCP_ESTABLISHED) for a peer, 07 (TCP_CLOSE) for none.
 */
static int raw_peer(int s, const char *want)
{
	char line[512], rem[64], st[8];
	unsigned long ino;
	struct stat sb;
	FILE *f = fopen("/proc/net/raw", "r");
	int found = 0;

	if (!f || fstat(s, &sb)) {
		fail("/proc/net/raw: %m");
		return neg_errno();
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %63s %7s %*s %*s %*s %*s %*s %lu", rem, st, &ino) == 3 &&
		    ino == sb.st_ino) {
			found = 1;
			break;
		}
	fclose(f);
	if (!found || strcmp(rem, want) ||
	    strcmp(st, strcmp(want, "00000000:0000") ? "01" : "07")) {
		fail("raw socket %lu: peer %s state %s, not %s", (unsigned long)sb.st_ino,
		     found ? rem : "?", found ? st : "?", want);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in lo, lo2, got;
	struct sockaddr_in6 lo6, got6;
	struct icmp6_filter f6, g6;
	socklen_t len;
	int i;

	test_init(argc, argv);
	addr4(&lo, "127.0.0.1");
	addr4(&lo2, "127.0.0.2");
	addr6(&lo6);
	ICMP6_FILTER_SETBLOCKALL(&f6);
	sk[ICMP4] = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	sk[HDRINCL] = socket(AF_INET, SOCK_RAW, PROTO);
	sk[NODEFRAG] = socket(AF_INET, SOCK_RAW, PROTO);
	sk[ICMP6] = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
	sk[CSUM6] = socket(AF_INET6, SOCK_RAW, PROTO);
	for (i = 0; i < NR; i++)
		if (sk[i] < 0)
			goto err;
	if (setint(sk[ICMP4], SOL_RAW_, ICMP_FILTER_, ~0) ||
	    setint(sk[HDRINCL], SOL_IP, IP_HDRINCL, 1) ||
	    bind(sk[HDRINCL], (struct sockaddr *)&lo, sizeof(lo)) ||
	    connect(sk[HDRINCL], (struct sockaddr *)&lo2, sizeof(lo2)) ||
	    setint(sk[NODEFRAG], SOL_IP, IP_NODEFRAG, 1) ||
	    bind(sk[NODEFRAG], (struct sockaddr *)&lo, sizeof(lo)) ||
	    setsockopt(sk[ICMP6], IPPROTO_ICMPV6, ICMP6_FILTER, &f6, sizeof(f6)) ||
	    setint(sk[CSUM6], SOL_IPV6, IPV6_CHECKSUM, 2) ||
	    bind(sk[CSUM6], (struct sockaddr *)&lo6, sizeof(lo6)))
		goto err;
	/* HDRINCL gets nothing: its peer 127.0.0.2 sends nothing of PROTO */
	test_daemon();
	test_waitsig();

	if (getint(sk[ICMP4], SOL_SOCKET, SO_TYPE) != SOCK_RAW ||
	    proto_of(sk[ICMP4]) != IPPROTO_ICMP || proto_of(sk[HDRINCL]) != PROTO ||
	    proto_of(sk[ICMP6]) != IPPROTO_ICMPV6 || proto_of(sk[CSUM6]) != PROTO) {
		fail("types or protocols changed");
		return 1;
	}
	if ((unsigned int)getint(sk[ICMP4], SOL_RAW_, ICMP_FILTER_) != ~0u ||
	    getint(sk[HDRINCL], SOL_IP, IP_HDRINCL) != 1 ||
	    getint(sk[NODEFRAG], SOL_IP, IP_NODEFRAG) != 1 ||
	    getint(sk[NODEFRAG], SOL_IP, IP_HDRINCL) != 0 ||
	    getint(sk[CSUM6], SOL_IPV6, IPV6_CHECKSUM) != 2) {
		fail("options: icmp filter %x hdrincl %d nodefrag %d csum %d",
		     getint(sk[ICMP4], SOL_RAW_, ICMP_FILTER_),
		     getint(sk[HDRINCL], SOL_IP, IP_HDRINCL),
		     getint(sk[NODEFRAG], SOL_IP, IP_NODEFRAG),
		     getint(sk[CSUM6], SOL_IPV6, IPV6_CHECKSUM));
		return 1;
	}
	len = sizeof(g6);
	if (getsockopt(sk[ICMP6], IPPROTO_ICMPV6, ICMP6_FILTER, &g6, &len) ||
	    memcmp(&g6, &f6, sizeof(f6))) {
		fail("ICMP6_FILTER changed");
		return 1;
	}
	len = sizeof(got);
	if (getsockname(sk[HDRINCL], (struct sockaddr *)&got, &len) ||
	    got.sin_addr.s_addr != lo.sin_addr.s_addr) {
		fail("HDRINCL's name changed");
		return 1;
	}
	if (raw_peer(sk[HDRINCL], "0200007F:0000") || raw_peer(sk[NODEFRAG], "00000000:0000"))
		return 1;
	len = sizeof(got6);
	if (getsockname(sk[CSUM6], (struct sockaddr *)&got6, &len) ||
	    memcmp(&got6.sin6_addr, &in6addr_loopback, 16)) {
		fail("CSUM6's name changed");
		return 1;
	}
	if (reaches(sk[NODEFRAG], (struct sockaddr *)&lo, sizeof(lo), "IPv4") ||
	    reaches(sk[CSUM6], (struct sockaddr *)&lo6, sizeof(lo6), "IPv6"))
		return 1;
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
