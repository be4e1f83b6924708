// SPDX-License-Identifier: GPL-2.0
/*
 * Packet sockets, in a network namespace of the test's own (nothing else
 * sends on its lo): R, SOCK_RAW of ETH_P_ALL bound to lo, with
 * PACKET_AUXDATA, PACKET_VERSION 2, PACKET_RESERVE 64, SO_MARK 7 and a
 * promiscuous membership of lo taken twice; D, SOCK_DGRAM of ETH_P_IP
 * bound to lo with a classic BPF filter that takes every packet, locked,
 * and a multicast membership; F1 and F2, SOCK_RAW of ETH_P_ALL on lo in one
 * fanout group (id 4242, PACKET_FANOUT_HASH); U, unbound, protocol 0; P,
 * the old SOCK_PACKET bound to "lo". After SIGTERM: the same types, links,
 * protocols, options, fanout, the membership counted twice (lo stays
 * promiscuous after one drop, not after two), and a frame written on lo
 * reaches R.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

static int getint(int s, int level, int name)
{
	int v = -1;
	socklen_t l = sizeof(v);

	return getsockopt(s, level, name, &v, &l) ? -2 : v;
}

static int setint(int s, int level, int name, int v)
{
	return setsockopt(s, level, name, &v, sizeof(v));
}

static int bind_ll(int s, int proto, int ifindex)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET,
				  .sll_protocol = htons((uint16_t)proto),
				  .sll_ifindex = ifindex };

	return bind(s, (struct sockaddr *)&ll, sizeof(ll));
}

static int bound(int s, int proto, int ifindex, const char *name)
{
	struct sockaddr_ll ll = {};
	socklen_t len = sizeof(ll);

	if (getsockname(s, (struct sockaddr *)&ll, &len) || ntohs(ll.sll_protocol) != proto ||
	    ll.sll_ifindex != ifindex) {
		fail("%s: bound to link %d protocol %#x, expected %d %#x", name, ll.sll_ifindex,
		     ntohs(ll.sll_protocol), ifindex, proto);
		return -EINVAL;
	}
	return 0;
}

static int promiscuity(void)
{
	FILE *p = popen("ip -d link show lo", "r");
	char line[512];
	int n = -1;

	while (p && fgets(line, sizeof(line), p)) {
		char *q = strstr(line, "promiscuity ");

		if (q)
			n = atoi(q + 12);
	}
	if (p)
		pclose(p);
	return n;
}

int main(int argc, char **argv)
{
	struct sock_filter all[] = { { BPF_RET | BPF_K, 0, 0, 0xffff } };
	struct sock_fprog prog = { .len = 1, .filter = all };
	struct packet_mreq promisc = { .mr_type = PACKET_MR_PROMISC };
	struct packet_mreq mc = { .mr_type = PACKET_MR_MULTICAST,
				  .mr_alen = 6,
				  .mr_address = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x42 } };
	struct sockaddr_pkt pk = { .spkt_family = AF_PACKET,
				   .spkt_device = "lo",
				   .spkt_protocol = htons(ETH_P_ALL) };
	struct sockaddr_pkt gotpk = {};
	unsigned char frame[64] = { 0 };
	struct pollfd pf;
	int r, d, f1, f2, u, p, lo, fan = 4242 | (PACKET_FANOUT_HASH << 16);
	socklen_t len;

	test_init(argc, argv);
	/* in the runner's container: its network namespace (a tree has one only) */
	if ((!test_in_container() && unshare(CLONE_NEWNET)) || system("ip link set lo up"))
		goto err;
	lo = (int)if_nametoindex("lo");
	promisc.mr_ifindex = mc.mr_ifindex = lo;
	r = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	d = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_IP));
	f1 = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	f2 = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	u = socket(AF_PACKET, SOCK_RAW, 0);
	p = socket(AF_PACKET, SOCK_PACKET, htons(ETH_P_ALL));
	if (r < 0 || d < 0 || f1 < 0 || f2 < 0 || u < 0 || p < 0)
		goto err;
	if (setint(r, SOL_PACKET, PACKET_VERSION, TPACKET_V2)) {
		fail("setup: %s: %m", "setint(r, SOL_PACKET, PACKET_VERSION, TPACKET_V2)");
		return 1;
	}
	if (setint(r, SOL_PACKET, PACKET_RESERVE, 64)) {
		fail("setup: %s: %m", "setint(r, SOL_PACKET, PACKET_RESERVE, 64)");
		return 1;
	}
	if (setint(r, SOL_PACKET, PACKET_AUXDATA, 1)) {
		fail("setup: %s: %m", "setint(r, SOL_PACKET, PACKET_AUXDATA, 1)");
		return 1;
	}
	if (setint(r, SOL_SOCKET, SO_MARK, 7)) {
		fail("setup: %s: %m", "setint(r, SOL_SOCKET, SO_MARK, 7)");
		return 1;
	}
	if (bind_ll(r, ETH_P_ALL, lo)) {
		fail("setup: %s: %m", "bind_ll(r, ETH_P_ALL, lo)");
		return 1;
	}
	if (setsockopt(r, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &promisc, sizeof(promisc))) {
		fail("setup: %s: %m",
		     "setsockopt(r, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &promisc, sizeof(promisc))");
		return 1;
	}
	if (setsockopt(r, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &promisc, sizeof(promisc))) {
		fail("setup: %s: %m",
		     "setsockopt(r, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &promisc, sizeof(promisc))");
		return 1;
	}
	if (setsockopt(d, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog))) {
		fail("setup: %s: %m",
		     "setsockopt(d, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog))");
		return 1;
	}
	if (setint(d, SOL_SOCKET, SO_LOCK_FILTER, 1)) {
		fail("setup: %s: %m", "setint(d, SOL_SOCKET, SO_LOCK_FILTER, 1)");
		return 1;
	}
	if (bind_ll(d, ETH_P_IP, lo)) {
		fail("setup: %s: %m", "bind_ll(d, ETH_P_IP, lo)");
		return 1;
	}
	if (setsockopt(d, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mc, sizeof(mc))) {
		fail("setup: %s: %m",
		     "setsockopt(d, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mc, sizeof(mc))");
		return 1;
	}
	if (bind_ll(f1, ETH_P_ALL, lo)) {
		fail("setup: %s: %m", "bind_ll(f1, ETH_P_ALL, lo)");
		return 1;
	}
	if (bind_ll(f2, ETH_P_ALL, lo)) {
		fail("setup: %s: %m", "bind_ll(f2, ETH_P_ALL, lo)");
		return 1;
	}
	if (setint(f1, SOL_PACKET, PACKET_FANOUT, fan)) {
		fail("setup: %s: %m", "setint(f1, SOL_PACKET, PACKET_FANOUT, fan)");
		return 1;
	}
	if (setint(f2, SOL_PACKET, PACKET_FANOUT, fan)) {
		fail("setup: %s: %m", "setint(f2, SOL_PACKET, PACKET_FANOUT, fan)");
		return 1;
	}
	if (bind(p, (struct sockaddr *)&pk, sizeof(struct sockaddr))) {
		fail("setup: %s: %m", "bind(p, (struct sockaddr *)&pk, sizeof(pk))");
		return 1;
	}
	if (promiscuity() != 1) {
		fail("lo's promiscuity is %d before the dump, not 1", promiscuity());
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (getint(r, SOL_SOCKET, SO_TYPE) != SOCK_RAW ||
	    getint(d, SOL_SOCKET, SO_TYPE) != SOCK_DGRAM ||
	    getint(p, SOL_SOCKET, SO_TYPE) != SOCK_PACKET || bound(r, ETH_P_ALL, lo, "R") ||
	    bound(d, ETH_P_IP, lo, "D") || bound(f1, ETH_P_ALL, lo, "F1") || bound(u, 0, 0, "U"))
		return 1;
	if (getint(r, SOL_PACKET, PACKET_VERSION) != TPACKET_V2 ||
	    getint(r, SOL_PACKET, PACKET_RESERVE) != 64 ||
	    getint(r, SOL_PACKET, PACKET_AUXDATA) != 1 || getint(r, SOL_SOCKET, SO_MARK) != 7 ||
	    getint(d, SOL_SOCKET, SO_LOCK_FILTER) != 1) {
		fail("options: version %d reserve %d auxdata %d mark %d lock %d",
		     getint(r, SOL_PACKET, PACKET_VERSION), getint(r, SOL_PACKET, PACKET_RESERVE),
		     getint(r, SOL_PACKET, PACKET_AUXDATA), getint(r, SOL_SOCKET, SO_MARK),
		     getint(d, SOL_SOCKET, SO_LOCK_FILTER));
		return 1;
	}
	if (getint(f1, SOL_PACKET, PACKET_FANOUT) != fan ||
	    getint(f2, SOL_PACKET, PACKET_FANOUT) != fan) {
		fail("fanout %#x %#x, expected %#x", getint(f1, SOL_PACKET, PACKET_FANOUT),
		     getint(f2, SOL_PACKET, PACKET_FANOUT), fan);
		return 1;
	}
	len = sizeof(gotpk);
	if (getsockname(p, (struct sockaddr *)&gotpk, &len) ||
	    strcmp((char *)gotpk.spkt_device, "lo")) {
		fail("SOCK_PACKET bound to '%s'", (char *)gotpk.spkt_device);
		return 1;
	}
	/* the membership was taken twice: one drop leaves lo promiscuous, the second ends it */
	if (promiscuity() != 1 ||
	    setsockopt(r, SOL_PACKET, PACKET_DROP_MEMBERSHIP, &promisc, sizeof(promisc)) ||
	    promiscuity() != 1 ||
	    setsockopt(r, SOL_PACKET, PACKET_DROP_MEMBERSHIP, &promisc, sizeof(promisc)) ||
	    promiscuity() != 0) {
		fail("lo's promiscuity (%d now) did not follow a membership taken twice: %m",
		     promiscuity());
		return 1;
	}
	/* a frame on lo: to R (ETH_P_ALL) */
	memset(frame, 0xff, 12);
	frame[12] = 0x88;
	frame[13] = 0xb5; /* a local experimental ethertype */
	if (send(u, frame, sizeof(frame), 0) >= 0 || errno != ENXIO) {
		/* U is unbound: it cannot send without an address, as before */
	}
	{
		struct sockaddr_ll to = { .sll_family = AF_PACKET,
					  .sll_ifindex = lo,
					  .sll_halen = 6 };
		int tx = socket(AF_PACKET, SOCK_RAW, 0);

		if (tx < 0 || sendto(tx, frame, sizeof(frame), 0, (struct sockaddr *)&to,
				     sizeof(to)) != sizeof(frame)) {
			fail("cannot send a frame on lo: %m");
			return 1;
		}
		close(tx);
	}
	pf.fd = r;
	pf.events = POLLIN;
	if (poll(&pf, 1, 5000) != 1) {
		fail("R got nothing");
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
