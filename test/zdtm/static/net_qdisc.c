// SPDX-License-Identifier: GPL-2.0
/*
 * Queueing disciplines in the test's own network namespace: a tbf root
 * qdisc on one veth end, a bfifo on the other, an ingress qdisc, a pfifo on
 * a third link (no classes nor filters: refused at dump,
 * test/integration/ns-refused.sh). After the restore: another namespace,
 * and `tc qdisc show` as before (a lost one comes back as noqueue).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "zdtmtst.h"

/* The qdiscs, as `tc` prints them (without their counters). */
#define DESCRIBE \
	"tc qdisc show | sort; tc -d qdisc show dev va; ip -o link show | sed 's/ state [A-Z]*//'"
int main(int argc, char **argv)
{
	test_init(argc, argv);
	if (test_netns_own())
		return 1;
	if (system("ip link set lo up && "
		   "ip link add va type veth peer name vb && ip link add vc type veth peer name vd "
		   "&& "
		   "for l in va vb vc vd; do ip link set $l addrgenmode none; ip link set $l up; "
		   "done && "
		   "tc qdisc add dev va root tbf rate 1mbit burst 32k latency 400ms && "
		   "tc qdisc add dev vb root bfifo limit 12345 && "
		   "tc qdisc add dev vb ingress && "
		   "tc qdisc add dev vc root handle 42: pfifo limit 77")) {
		fail("cannot configure the namespace's qdiscs");
		return 1;
	}
	if (test_netns_unchanged(DESCRIBE))
		return 1;
	pass();
	return 0;
}
