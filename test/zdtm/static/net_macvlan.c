// SPDX-License-Identifier: GPL-2.0
/*
 * Links on a lower link inside the test's own network namespace: a veth
 * pair with both ends inside, a macvlan (mode bridge, its own MAC, an
 * address, an alias, a smaller MTU) on one end and a macvtap (mode vepa) on
 * the other; then a vlan (id 100) and an ipvlan (l3) on the same ends where
 * the kernel has the modules (8021q, ipvlan). After the restore: another
 * namespace, and `ip -d link show`, the addresses and the routes as they
 * were.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "zdtmtst.h"

/* What `ip` says of the namespace, without what changes by itself (the carrier: STP). */
#define DESCRIBE                                                                                \
	"ip -d -o link show | sed -E 's/ state [A-Za-z]+//g; s/NO-CARRIER,//; s/,LOWER_UP//; "  \
	"s/ (hello_timer|tcn_timer|topology_change_timer|gc_timer|message_age_timer|"           \
	"forward_delay_timer|hold_timer) +[0-9.]+//g; "                                         \
	"s/ (topology_change|topology_change_detected|config_pending|topology_change_ack) "     \
	"[0-9]+//g'; "                                                                          \
	"ip -o addr show | sed 's/valid_lft.*//; s/ tentative//; s/ dadfailed//'; ip -4 route " \
	"show table all 2>&1 | sed 's/ linkdown//' | sort; "                                    \
	"ip -6 route show table all | grep -v 'proto kernel' | sort"

int main(int argc, char **argv)
{
	test_init(argc, argv);
	if (test_netns_own())
		return 1;
	if (system("ip link set lo up && "
		   "ip link add va address 02:43:00:00:00:01 type veth peer name vb && "
		   "ip link add link va name mv0 address 02:43:00:00:01:01 mtu 1400 type macvlan "
		   "mode bridge && "
		   "ip link set mv0 alias 'a macvlan' && "
		   "ip link add link vb name mvt0 type macvtap mode vepa && "
		   "ip addr add 10.72.0.1/24 dev mv0 && "
		   /* no link-local addresses: the kernel adds them after the links go up */
		   "for l in va vb mv0 mvt0; do ip link set $l addrgenmode none; done && "
		   "ip link set va up && ip link set vb up && ip link set mv0 up && "
		   "ip link set mvt0 up")) {
		fail("cannot configure the namespace with ip");
		return 1;
	}
	/* vlan and ipvlan only where the kernel has them */
	if (!system("ip link add link va name va.100 type vlan id 100 2>/dev/null"))
		system("ip link set va.100 up && ip addr add 10.73.0.1/24 dev va.100");
	if (!system("ip link add link vb name ipv0 type ipvlan mode l3 2>/dev/null"))
		system("ip link set ipv0 up");
	if (test_netns_unchanged(DESCRIBE))
		return 1;
	pass();
	return 0;
}
