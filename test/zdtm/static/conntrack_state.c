// SPDX-License-Identifier: GPL-2.0
/*
 * The test's root in a network namespace of its own whose firewall accepts
 * only established traffic on the ports it serves (`ct state established
 * accept`, `ct state new drop`), with a DNAT rule in front of its server: a
 * TCP connection to 10.77.0.1:7000 is served on port 7001, plus a UDP
 * exchange. Once the connection exists, new connections are dropped.
 * After the restore: the conntrack table holds the same entries (both
 * tuples, NAT, state and flags, as `conntrack -L` prints them but for the
 * timeouts), and the connection still carries data both ways: without its
 * conntrack entry, its next packet would be a new one to a dropped port,
 * and without the NAT its replies would not match the client's socket.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#define ADDR "10.77.0.1"

#define SETUP                                                                    \
	"ip link set lo up && ip addr add " ADDR "/24 dev lo && "                \
	"nft 'add table ip nat' && "                                             \
	"nft 'add chain ip nat out { type nat hook output priority -100; }' && " \
	"nft 'add rule ip nat out ip daddr " ADDR " tcp dport 7000 dnat to " ADDR ":7001'"

/* once the connection exists */
#define FIREWALL                                                                               \
	"nft 'add table inet fw' && "                                                          \
	"nft 'add chain inet fw in { type filter hook input priority 0; policy accept; }' && " \
	"nft 'add rule inet fw in ct state established,related accept' && "                    \
	"nft 'add rule inet fw in ct state new tcp dport { 7000, 7001 } drop'"

/* Without the timeouts, ids and reference counts: they change by themselves. */
#define TABLE                                                                      \
	"conntrack -L 2>/dev/null | sed -E 's/^([a-z0-9]+ +[0-9]+) +[0-9]+/\\1/; " \
	"s/ (use|id)=[0-9]+//g' | sort"

static int table(char *buf, size_t size)
{
	FILE *p = popen(TABLE, "r");
	size_t n;

	if (!p)
		return neg_errno();
	n = fread(buf, 1, size - 1, p);
	buf[n] = 0;
	return pclose(p) || !n ? -EIO : 0;
}

static int sock_at(int type, int port, bool bind_it)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s = socket(AF_INET, type, 0);

	inet_pton(AF_INET, ADDR, &sin.sin_addr);
	if (s >= 0 && (bind_it ? bind(s, (struct sockaddr *)&sin, sizeof(sin))
			       : connect(s, (struct sockaddr *)&sin, sizeof(sin)))) {
		int err = neg_errno();

		close(s);
		return err;
	}
	return s;
}

/* One byte @c from @a to @b within 10 s (a dropped packet is never retransmitted in time). */
static int carry(int a, int b, char c)
{
	struct pollfd p = { .fd = b, .events = POLLIN };
	char got;

	return send(a, &c, 1, 0) == 1 && poll(&p, 1, 10000) == 1 && recv(b, &got, 1, 0) == 1 &&
			       got == c
		       ? 0
		       : -1;
}

static char before[8192], after[8192];

int main(int argc, char **argv)
{
	struct pollfd p;
	int ls, cl, sv, ur, us;

	test_init(argc, argv);
	if (unshare(CLONE_NEWNET) || system(SETUP)) {
		fail("cannot make the namespace and its firewall (unshare, ip, nft): %m");
		return 1;
	}
	ls = sock_at(SOCK_STREAM, 7001, true);
	if (ls < 0 || listen(ls, 4)) {
		fail("listener on " ADDR ":7001: %m");
		return 1;
	}
	/* made through the DNAT before the firewall drops new connections */
	cl = sock_at(SOCK_STREAM, 7000, false);
	p = (struct pollfd){ .fd = ls, .events = POLLIN };
	sv = cl < 0 || poll(&p, 1, 10000) != 1 ? -1 : accept(ls, NULL, NULL);
	ur = sock_at(SOCK_DGRAM, 7002, true);
	us = sock_at(SOCK_DGRAM, 7002, false);
	if (sv < 0 || ur < 0 || us < 0 || system(FIREWALL) || carry(cl, sv, 'a') ||
	    carry(sv, cl, 'b') || carry(us, ur, 'u')) {
		fail("the connection through the DNAT or the UDP exchange does not work: %m");
		return 1;
	}
	if (table(before, sizeof(before)) ||
	    !strstr(before, "dport=7000 src=" ADDR " dst=" ADDR " sport=7001") ||
	    !strstr(before, "ESTABLISHED")) {
		fail("conntrack -L does not show the DNATed connection:\n%s", before);
		return 1;
	}

	test_daemon();
	test_waitsig();

	if (table(after, sizeof(after))) {
		fail("conntrack -L failed after the restore");
		return 1;
	}
	if (strcmp(before, after)) {
		fail("the conntrack table changed:\n--- before\n%s--- after\n%s", before, after);
		return 1;
	}
	if (carry(cl, sv, 'c') || carry(sv, cl, 'd') || carry(us, ur, 'v')) {
		table(after, sizeof(after));
		fail("the connection through the DNAT and the firewall stopped after the restore "
		     "(%m):\n%s",
		     after);
		return 1;
	}
	pass();
	return 0;
}
