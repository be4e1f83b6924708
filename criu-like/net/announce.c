// SPDX-License-Identifier: GPL-2.0
/*
 * After a migration the tree's addresses answer from another port of the
 * network: tell the peers at once (Documentation/migration.md, "The
 * network"). From inside the restored tree's network namespace, on every
 * link that is up and not loopback: a gratuitous ARP request for each IPv4
 * address (switches learn the MAC's new port, neighbours refresh their
 * entry) and an unsolicited neighbour advertisement (override flag, to
 * all-nodes) for each IPv6 address, as RFC 5227 and RFC 4861 7.2.6 describe.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_PREFIX "announce: "
#include "log.h"
#include "migrate.h"
#include "util.h"

struct arp_pkt {
	uint16_t htype, ptype;
	uint8_t hlen, plen;
	uint16_t op;
	uint8_t sha[6], spa[4], tha[6], tpa[4];
} __attribute__((packed));

struct na_pkt {
	struct nd_neighbor_advert na;
	uint8_t opt_type, opt_len, mac[6];
} __attribute__((packed));

static int link_mac(struct ifaddrs *all, const char *name, uint8_t mac[6])
{
	struct ifaddrs *i;

	for (i = all; i; i = i->ifa_next) {
		const struct sockaddr_ll *ll = (const struct sockaddr_ll *)i->ifa_addr;

		if (ll && ll->sll_family == AF_PACKET && !strcmp(i->ifa_name, name) &&
		    ll->sll_halen == 6) {
			memcpy(mac, ll->sll_addr, 6);
			return 0;
		}
	}
	return -ENOENT;
}

static int garp(const char *ifname, const uint8_t mac[6], const struct in_addr *ip)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_ARP),
				  .sll_ifindex = (int)if_nametoindex(ifname),
				  .sll_halen = 6 };
	struct arp_pkt a = {
		.htype = htons(1), .ptype = htons(ETH_P_IP), .hlen = 6, .plen = 4, .op = htons(1)
	};
	_cleanup_close_ int sk = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_ARP));

	if (sk < 0)
		return neg_errno();
	memset(to.sll_addr, 0xff, 6);
	memcpy(a.sha, mac, 6);
	memcpy(a.spa, ip, 4);
	memcpy(a.tpa, ip, 4);
	if (sendto(sk, &a, sizeof(a), 0, (struct sockaddr *)&to, sizeof(to)) != sizeof(a))
		return neg_errno();
	/* a reply too: some stacks refresh their entry on one and not the other */
	a.op = htons(2);
	memcpy(a.tha, mac, 6);
	if (sendto(sk, &a, sizeof(a), 0, (struct sockaddr *)&to, sizeof(to)) != sizeof(a))
		return neg_errno();
	return 0;
}

static int unsolicited_na(const char *ifname, const uint8_t mac[6], const struct sockaddr_in6 *ip)
{
	struct sockaddr_in6 to = { .sin6_family = AF_INET6 }, from = *ip;
	struct na_pkt p = { .opt_type = ND_OPT_TARGET_LINKADDR, .opt_len = 1 };
	int hops = 255, ifindex = (int)if_nametoindex(ifname);
	_cleanup_close_ int sk = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6);

	if (sk < 0)
		return neg_errno();
	inet_pton(AF_INET6, "ff02::1", &to.sin6_addr);
	to.sin6_scope_id = (uint32_t)ifindex;
	from.sin6_port = 0;
	p.na.nd_na_type = ND_NEIGHBOR_ADVERT;
	p.na.nd_na_flags_reserved = ND_NA_FLAG_OVERRIDE;
	p.na.nd_na_target = ip->sin6_addr;
	memcpy(p.mac, mac, 6);
	/* the kernel fills the checksum of ICMPv6 raw sockets; NDP wants hop limit 255 */
	if (setsockopt(sk, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof(hops)) ||
	    setsockopt(sk, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof(ifindex)) ||
	    bind(sk, (struct sockaddr *)&from, sizeof(from)) ||
	    sendto(sk, &p, sizeof(p), 0, (struct sockaddr *)&to, sizeof(to)) != sizeof(p))
		return neg_errno();
	return 0;
}

/* In the tree's namespace: every address of every link up. The number that failed. */
static int announce_all(void)
{
	struct ifaddrs *all = NULL, *i;
	int failed = 0, err;
	uint8_t mac[6];

	if (getifaddrs(&all))
		return 1;
	for (i = all; i; i = i->ifa_next) {
		char a[INET6_ADDRSTRLEN] = "?";

		if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK) ||
		    (i->ifa_flags & IFF_NOARP) || link_mac(all, i->ifa_name, mac))
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			const struct sockaddr_in *in = (const struct sockaddr_in *)i->ifa_addr;

			inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
			err = garp(i->ifa_name, mac, &in->sin_addr);
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)i->ifa_addr;

			inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
			err = unsolicited_na(i->ifa_name, mac, in6);
		} else {
			continue;
		}
		if (err) {
			pr_warn("%s %s: cannot announce: %s\n", i->ifa_name, a, strerror(-err));
			failed++;
		} else {
			pr_info("%s %s announced\n", i->ifa_name, a);
		}
	}
	freeifaddrs(all);
	return failed ? 1 : 0;
}

pid_t net_announce_start(pid_t pid)
{
	char path[64];
	pid_t child;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("pid %d: cannot open its network namespace", pid);
		return neg_errno();
	}
	/* setns() in a child: the caller stays in its own namespace */
	child = fork();
	if (!child)
		_exit(setns(fd, CLONE_NEWNET) ? 2 : announce_all());
	close(fd);
	return child < 0 ? neg_errno() : child;
}

int net_announce_wait(pid_t pid, pid_t child)
{
	int st = 0;

	if (child < 0)
		return child;
	while (waitpid(child, &st, 0) < 0) {
		if (errno == ECHILD)
			return 0; /* reaped by a failed restore's cleanup: nothing to say */
		if (errno != EINTR)
			return neg_errno();
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		pr_warn("pid %d: some of its addresses were not announced\n", pid);
		return -EIO;
	}
	return 0;
}

int net_announce(pid_t pid)
{
	return net_announce_wait(pid, net_announce_start(pid));
}
