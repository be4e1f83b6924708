// SPDX-License-Identifier: GPL-2.0
/*
 * A bridge inside the test's own network namespace: stp on, forward_delay,
 * ageing_time, hello_time and priority set (this kernel has no bridge vlan
 * filtering), an address, an alias and a MAC of its own; two veth pairs with
 * both ends inside, one end of each a port of the bridge (one with a cost and
 * a priority); MTUs and a queue length changed. After the restore: another
 * namespace, and `ip -d link show` (less the timers and the STP port states,
 * which move on their own), the addresses and the routes as they were.
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
	"ip -6 route show table all | grep -v 'proto kernel' | sort; "                          \
	"PATH=$PATH:/usr/sbin:/sbin nft list ruleset 2>&1"

int main(int argc, char **argv)
{
	test_init(argc, argv);
	if (test_netns_own())
		return 1;
	if (system("ip link set lo up && "
		   "ip link add br0 address 02:42:00:00:00:01 mtu 1400 txqueuelen 500 type bridge "
		   "stp_state 1 forward_delay 400 hello_time 150 ageing_time 12345 priority 4096 "
		   "&& "
		   "ip link set br0 alias 'the test bridge' && "
		   "ip link add pa address 02:42:00:00:01:01 type veth peer name qa "
		   "address 02:42:00:00:02:01 && "
		   "ip link add pb type veth peer name qb && "
		   "ip link set qb mtu 1400 && ip link set pb mtu 1400 && "
		   "ip link set pa master br0 && ip link set pb master br0 && "
		   "ip link set pb type bridge_slave cost 42 priority 7 && "
		   "ip addr add 10.71.0.1/24 dev br0 && "
		   /*
		    * no link-local addresses: the kernel adds them some time after a
		    * link goes up, which would change the namespace under the test
		    */
		   "for l in br0 pa qa pb qb; do ip link set $l addrgenmode none; done && "
		   "ip link set pa up && ip link set pb up && ip link set br0 up && "
		   "ip link set qa up && ip link set qb up")) {
		fail("cannot configure the namespace with ip");
		return 1;
	}
	if (test_netns_unchanged(DESCRIBE))
		return 1;
	pass();
	return 0;
}
