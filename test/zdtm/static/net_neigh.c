// SPDX-License-Identifier: GPL-2.0
/*
 * Neighbours given by hand in the test's own network namespace: permanent
 * and noarp ARP entries (one with a protocol), a permanent NDP entry, proxy
 * entries, a managed entry, static and permanent fdb entries of a bridge
 * port, one of the bridge itself, a unicast address in a veth's own list (`self`). After the restore: another
 * namespace, and each of them there as before (the kernel's own entries and
 * the learnt ones are not compared: they come and go by themselves).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "zdtmtst.h"

/* The configured neighbours, as `ip` and `bridge` print them. */
#define DESCRIBE                                                                           \
	"{ ip -4 neigh show nud permanent; ip -4 neigh show nud noarp dev qa; "            \
	"ip -6 neigh show nud permanent; ip neigh show proxy; ip -6 neigh show proxy; "    \
	"bridge fdb show | grep -E '^02:00:00'; ip neigh show | grep managed | cut -d' ' " \
	"-f1-4; } | sort"

int main(int argc, char **argv)
{
	test_init(argc, argv);
	if (test_netns_own())
		return 1;
	if (system("ip link set lo up && "
		   "ip link add br0 address 02:42:00:00:00:01 type bridge && "
		   "ip link add pa address 02:42:00:00:01:01 type veth peer name qa "
		   "address 02:42:00:00:02:01 && "
		   "ip link set pa master br0 && "
		   "for l in br0 pa qa; do ip link set $l addrgenmode none; done && "
		   "ip link set pa up && ip link set br0 up && ip link set qa up && "
		   "ip addr add 10.72.0.1/24 dev qa && ip -6 addr add fd72::1/64 dev qa nodad && "
		   "ip neigh add 10.72.0.2 lladdr 02:00:00:00:00:02 dev qa nud permanent && "
		   "ip neigh add 10.72.0.3 lladdr 02:00:00:00:00:03 dev qa nud noarp && "
		   "ip -6 neigh add fd72::4 lladdr 02:00:00:00:00:04 dev qa nud permanent && "
		   "ip neigh add proxy 10.72.0.5 dev qa && "
		   "ip neigh add 10.72.0.11 dev qa managed && "
		   "ip neigh add 10.72.0.12 lladdr 02:00:00:00:00:0c dev qa nud permanent "
		   "protocol static && "
		   "ip -6 neigh add proxy fd72::6 dev qa && "
		   "bridge fdb add 02:00:00:00:00:07 dev pa master static && "
		   "bridge fdb add 02:00:00:00:00:08 dev pa master permanent && "
		   "bridge fdb add 02:00:00:00:00:09 dev br0 self && "
		   "bridge fdb add 02:00:00:00:00:0a dev qa self")) {
		fail("cannot configure the namespace with ip");
		return 1;
	}
	if (test_netns_unchanged(DESCRIBE))
		return 1;
	pass();
	return 0;
}
