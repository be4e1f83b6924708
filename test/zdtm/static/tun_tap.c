// SPDX-License-Identifier: GPL-2.0
/*
 * Tun and tap devices in the test's own network namespace, and the
 * /dev/net/tun fds that are their queues: tun0 (IFF_TUN | IFF_NO_PI, not
 * persistent, held by one fd, an address and a route through it); tap0
 * (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE, persistent, its MAC
 * and MTU set, its ipv6 MTU below the link's, three queues of which one
 * detached by TUNSETQUEUE); tap1, a
 * persistent tap with an owner and no fd at all; an fd of /dev/net/tun never
 * attached. After the restore: another namespace, `ip -d link show` (flags,
 * persistence, queues and detached queues, owner), addresses and routes as
 * they were; each fd a queue of the same device with the same flags
 * (TUNGETIFF), the detached one still detached; a UDP datagram sent through
 * tun0 is read from its fd, and one written into the fd reaches a socket.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define TAP_FLAGS (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE)

#define DESCRIBE                                                                                \
	"ip -d -o link show | sed -E 's/ state [A-Za-z]+//g; s/NO-CARRIER,//; s/,LOWER_UP//'; " \
	"ip -o addr show | sed 's/valid_lft.*//; s/ tentative//'; "                             \
	"ip -4 route show table all | sed 's/ linkdown//' | sort; "                             \
	"ip link show tap0 >/dev/null && echo ipv6 mtu $(cat /proc/sys/net/ipv6/conf/tap0/mtu)"

static int describe(char *buf, size_t size)
{
	return test_sh_output(DESCRIBE, buf, size);
}

static int tun_attach(const char *name, short flags)
{
	struct ifreq ifr = { .ifr_flags = flags };
	int fd = open("/dev/net/tun", O_RDWR);

	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (fd >= 0 && ioctl(fd, TUNSETIFF, &ifr)) {
		int err = neg_errno();

		close(fd);
		return err;
	}
	return fd;
}

/* 0 when @fd is a queue of @name with @flags (and IFF_PERSIST as @persist). */
static int check_queue(int fd, const char *name, short flags, bool persist)
{
	struct ifreq ifr = { 0 };

	if (ioctl(fd, TUNGETIFF, &ifr)) {
		fail("TUNGETIFF of the queue of %s: %m", name);
		return neg_errno();
	}
	if (strcmp(ifr.ifr_name, name) ||
	    (ifr.ifr_flags & (flags | IFF_PERSIST)) != (flags | (persist ? IFF_PERSIST : 0))) {
		fail("a queue of %s (flags %#x) is of %s with flags %#x", name, flags, ifr.ifr_name,
		     ifr.ifr_flags);
		return neg_errno();
	}
	return 0;
}

static uint16_t ip_csum(const void *p, size_t len)
{
	const uint16_t *w = p;
	uint32_t sum = 0;

	for (; len > 1; len -= 2)
		sum += *w++;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* A datagram sent to 10.74.0.2 goes out through tun0: read from its fd. */
static int packet_out(int tun)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(7474) };
	struct pollfd p = { .fd = tun, .events = POLLIN };
	unsigned char buf[2048];
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	ssize_t n;

	inet_pton(AF_INET, "10.74.0.2", &to.sin_addr);
	if (s < 0 || sendto(s, "out", 3, 0, (struct sockaddr *)&to, sizeof(to)) != 3) {
		fail("sendto 10.74.0.2: %m");
		return neg_errno();
	}
	close(s);
	/* skip what else the kernel sends (none expected, but IPv6 is off only by sysctl) */
	while (poll(&p, 1, 5000) == 1 && (n = read(tun, buf, sizeof(buf))) > 0)
		if (n == 20 + 8 + 3 && (buf[0] >> 4) == 4 && buf[9] == IPPROTO_UDP &&
		    !memcmp(buf + 28, "out", 3))
			return 0;
	fail("the datagram to 10.74.0.2 did not come out of tun0's fd");
	return -EINVAL;
}

/* A datagram from 10.74.0.2 written into tun0's fd reaches a socket on 10.74.0.1. */
static int packet_in(int tun)
{
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(7475) };
	struct pollfd p;
	unsigned char pkt[20 + 8 + 2] = { 0 };
	struct iphdr *ip = (struct iphdr *)pkt;
	struct udphdr *udp = (struct udphdr *)(pkt + 20);
	char c[4];
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	inet_pton(AF_INET, "10.74.0.1", &me.sin_addr);
	if (s < 0 || bind(s, (struct sockaddr *)&me, sizeof(me))) {
		fail("bind 10.74.0.1: %m");
		return neg_errno();
	}
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons(sizeof(pkt));
	inet_pton(AF_INET, "10.74.0.2", &ip->saddr);
	inet_pton(AF_INET, "10.74.0.1", &ip->daddr);
	ip->check = ip_csum(ip, 20);
	udp->source = htons(7476);
	udp->dest = htons(7475);
	udp->len = htons(8 + 2);
	memcpy(pkt + 28, "in", 2);
	if (write(tun, pkt, sizeof(pkt)) != sizeof(pkt)) {
		fail("write into tun0: %m");
		return neg_errno();
	}
	p.fd = s;
	p.events = POLLIN;
	if (poll(&p, 1, 5000) != 1 || recv(s, c, sizeof(c), 0) != 2 || memcmp(c, "in", 2)) {
		fail("the datagram written into tun0 did not reach 10.74.0.1");
		return -EINVAL;
	}
	close(s);
	return 0;
}

static char before[16384], after[16384];

int main(int argc, char **argv)
{
	struct ifreq detach = { .ifr_flags = IFF_DETACH_QUEUE }, ifr = { 0 };
	struct ifreq attach = { .ifr_flags = IFF_ATTACH_QUEUE };
	int tun, q1, q2, q3, bare;
	test_init(argc, argv);
	if (test_netns_own())
		return 1;
	tun = tun_attach("tun0", IFF_TUN | IFF_NO_PI);
	q1 = tun_attach("tap0", TAP_FLAGS);
	q2 = tun_attach("tap0", TAP_FLAGS);
	q3 = tun_attach("tap0", TAP_FLAGS);
	bare = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
	if (tun < 0 || q1 < 0 || q2 < 0 || q3 < 0 || bare < 0 || ioctl(q1, TUNSETPERSIST, 1) ||
	    ioctl(q3, TUNSETQUEUE, &detach)) {
		fail("cannot make tun0 and tap0: %m");
		return 1;
	}
	if (system("ip link set lo up && ip addr add 10.74.0.1/24 dev tun0 && "
		   "ip link set tun0 up && echo 1 >/proc/sys/net/ipv6/conf/tun0/disable_ipv6 && "
		   "ip link set tap0 address 02:74:00:00:00:01 mtu 1300 && ip link set tap0 up && "
		   "ip tuntap add tap1 mode tap user 4242 && ip link set tap1 mtu 1200 && "
		   /* after its carrier's change is passed on (a GETLINK of it does, 6.8) */
		   "ip link show tap0 >/dev/null && echo 1280 >/proc/sys/net/ipv6/conf/tap0/mtu")) {
		fail("cannot configure the namespace with ip");
		return 1;
	}
	if (describe(before, sizeof(before))) {
		fail("cannot describe the namespace");
		return 1;
	}

	test_daemon();
	test_waitsig();

	if (test_netns_kept())
		return 1;
	if (describe(after, sizeof(after))) {
		fail("cannot describe the namespace after the restore");
		return 1;
	}
	if (test_same_text("the namespace", before, after))
		return 1;
	if (check_queue(tun, "tun0", IFF_TUN | IFF_NO_PI, false) ||
	    check_queue(q1, "tap0", TAP_FLAGS, true) || check_queue(q2, "tap0", TAP_FLAGS, true))
		return 1;
	/* the kernel attaches only a detached queue */
	if (check_queue(q3, "tap0", TAP_FLAGS, true) || ioctl(q3, TUNSETQUEUE, &attach) ||
	    !ioctl(q2, TUNSETQUEUE, &attach) || errno != EINVAL) {
		fail("the detached queue of tap0 is not the detached one any more: %m");
		return 1;
	}
	if (ioctl(bare, TUNGETIFF, &ifr) == 0 || errno != EBADFD) {
		fail("the /dev/net/tun fd never attached is attached to %s", ifr.ifr_name);
		return 1;
	}
	if (packet_out(tun) || packet_in(tun))
		return 1;
	pass();
	return 0;
}
