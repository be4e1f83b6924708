// SPDX-License-Identifier: GPL-2.0
/*
 * Socket options that act at bind(), so a restore must set them before it:
 * IP_FREEBIND and IPV6_FREEBIND on UDP sockets bound to addresses of no
 * interface (192.0.2.1, 2001:db8::1: the bind fails without it), and
 * SO_BINDTODEVICE "lo" on a UDP socket and a TCP listener bound on
 * loopback. After the restore: the same options and names; the device-bound
 * UDP socket still takes a datagram, the listener a connection.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

enum {
	FREE4,
	FREE6,
	DEV_UDP,
	DEV_TCP,
	NR
};

static const char *const name_of[NR] = { "IPv4 freebind", "IPv6 freebind", "UDP on lo",
					 "TCP listener on lo" };
static int sk[NR];
static struct sockaddr_storage addr[NR];

static int make(int i, int fam, int type, const char *a)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = fam == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	int on = 1;

	sk[i] = socket(fam, type, 0);
	if (sk[i] < 0)
		return neg_errno();
	ss.ss_family = (sa_family_t)fam;
	if (fam == AF_INET)
		inet_pton(AF_INET, a, &((struct sockaddr_in *)&ss)->sin_addr);
	else
		inet_pton(AF_INET6, a, &((struct sockaddr_in6 *)&ss)->sin6_addr);
	if (i == FREE4 && setsockopt(sk[i], SOL_IP, IP_FREEBIND, &on, sizeof(on)))
		return neg_errno();
	if (i == FREE6 && setsockopt(sk[i], SOL_IPV6, IPV6_FREEBIND, &on, sizeof(on)))
		return neg_errno();
	if ((i == DEV_UDP || i == DEV_TCP) &&
	    setsockopt(sk[i], SOL_SOCKET, SO_BINDTODEVICE, "lo", 3))
		return neg_errno();
	if (bind(sk[i], (struct sockaddr *)&ss, len))
		return neg_errno();
	if (type == SOCK_STREAM && listen(sk[i], 4))
		return neg_errno();
	len = sizeof(addr[i]);
	return getsockname(sk[i], (struct sockaddr *)&addr[i], &len);
}

static int check_opts(int i)
{
	struct sockaddr_storage now;
	socklen_t len = sizeof(now);
	char dev[IFNAMSIZ] = "";
	int v = 0;
	socklen_t vl = sizeof(v), dl = sizeof(dev);

	if (getsockname(sk[i], (struct sockaddr *)&now, &len) || memcmp(&now, &addr[i], len)) {
		fail("%s: not bound to the same address after the restore", name_of[i]);
		return -EINVAL;
	}
	if (i == FREE4 || i == FREE6) {
		if (getsockopt(sk[i], i == FREE4 ? SOL_IP : SOL_IPV6,
			       i == FREE4 ? IP_FREEBIND : IPV6_FREEBIND, &v, &vl) ||
		    v != 1) {
			fail("%s: FREEBIND reads %d: %m", name_of[i], v);
			return neg_errno();
		}
		return 0;
	}
	if (getsockopt(sk[i], SOL_SOCKET, SO_BINDTODEVICE, dev, &dl) || strcmp(dev, "lo")) {
		fail("%s: SO_BINDTODEVICE is '%s', not lo: %m", name_of[i], dev);
		return neg_errno();
	}
	return 0;
}

static int check_traffic(void)
{
	struct pollfd p = { .fd = sk[DEV_UDP], .events = POLLIN };
	int u = socket(AF_INET, SOCK_DGRAM, 0), t = socket(AF_INET, SOCK_STREAM, 0), c;
	char buf[8];

	if (u < 0 || t < 0 ||
	    sendto(u, "dgram", 5, 0, (struct sockaddr *)&addr[DEV_UDP],
		   sizeof(struct sockaddr_in)) != 5 ||
	    poll(&p, 1, 10000) != 1 || recv(sk[DEV_UDP], buf, sizeof(buf), 0) != 5) {
		fail("the UDP socket bound to lo takes no datagram: %m");
		return neg_errno();
	}
	if (connect(t, (struct sockaddr *)&addr[DEV_TCP], sizeof(struct sockaddr_in))) {
		fail("connect to the listener bound to lo: %m");
		return neg_errno();
	}
	c = accept(sk[DEV_TCP], NULL, NULL);
	if (c < 0) {
		fail("accept: %m");
		return neg_errno();
	}
	close(c);
	close(t);
	close(u);
	return 0;
}

int main(int argc, char **argv)
{
	int i;

	test_init(argc, argv);
	if (make(FREE4, AF_INET, SOCK_DGRAM, "192.0.2.1") ||
	    make(FREE6, AF_INET6, SOCK_DGRAM, "2001:db8::1") ||
	    make(DEV_UDP, AF_INET, SOCK_DGRAM, "127.0.0.1") ||
	    make(DEV_TCP, AF_INET, SOCK_STREAM, "127.0.0.1")) {
		fail("setup: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();
	for (i = 0; i < NR; i++)
		if (check_opts(i))
			return 1;
	if (check_traffic())
		return 1;
	pass();
	return 0;
}
