// SPDX-License-Identifier: GPL-2.0
/*
 * Net sysctls of the test's own network namespace outside any fixed list:
 * per link (ipv6/conf/X/mtu of both ends of a veth, ipv4/conf/X/accept_local,
 * ipv4/neigh/X/base_reachable_time_ms, ipv6/neigh/X/retrans_time_ms),
 * default and all (ipv4/conf/default/arp_notify, all/forwarding), and
 * global ones (tcp_rmem, tcp_congestion_control, ipv4/route/mtu_expires,
 * unix/max_dgram_qlen). After the restore: another namespace, and every
 * readable file of ipv4/conf, ipv6/conf, ipv4/neigh and ipv6/neigh and the
 * global ones changed as they were.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "zdtmtst.h"

/* Every per-link sysctl, and the global ones the test changed. */
#define DESCRIBE                                                                                 \
	"cd /proc/sys/net && grep -r . ipv4/conf ipv6/conf ipv4/neigh ipv6/neigh 2>/dev/null | " \
	"sort; for f in ipv4/tcp_rmem ipv4/tcp_congestion_control ipv4/route/mtu_expires "       \
	"unix/max_dgram_qlen; do echo $f: $(cat $f); done"

int main(int argc, char **argv)
{
	test_init(argc, argv);
	if (test_netns_own())
		return 1;
	/*
	 * vb up gives both ends their carrier, which the kernel passes on
	 * later, from linkwatch's work: a link "becoming ready" then has its
	 * ipv6/conf/LINK/mtu set back to its MTU, after the echo below unless
	 * something waits for it (1 run in 12 here), and the state compared
	 * after the restore is not the one taken before. A single RTM_GETLINK
	 * of a link (ip link show DEV) applies its pending change at once
	 * (linkwatch_sync_dev(), 6.8). The ipv6 MTU of both ends: the
	 * restore brings them up the same way, and must wait for the same.
	 */
	if (system("ip link set lo up && "
		   "ip link add va mtu 1500 type veth peer name vb && "
		   "ip link set va up && ip link set vb up && "
		   "ip link show va >/dev/null && ip link show vb >/dev/null && "
		   "cd /proc/sys/net && "
		   "echo 1400 > ipv6/conf/va/mtu && echo 1300 > ipv6/conf/vb/mtu && "
		   "echo 1 > ipv4/conf/va/accept_local && "
		   "echo 12345 > ipv4/neigh/va/base_reachable_time_ms && "
		   "echo 1500 > ipv6/neigh/vb/retrans_time_ms && "
		   "echo 1 > ipv4/conf/default/arp_notify && echo 1 > ipv4/conf/all/forwarding && "
		   "echo 0 > ipv4/conf/vb/forwarding && "
		   "echo '4096 87380 4000000' > ipv4/tcp_rmem && "
		   "echo reno > ipv4/tcp_congestion_control && "
		   "echo 555 > ipv4/route/mtu_expires && echo 77 > unix/max_dgram_qlen")) {
		fail("cannot configure the namespace's sysctls");
		return 1;
	}
	if (test_netns_unchanged(DESCRIBE))
		return 1;
	pass();
	return 0;
}
