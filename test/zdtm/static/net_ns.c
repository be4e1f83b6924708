// SPDX-License-Identifier: GPL-2.0
/*
 * The test's root in a network namespace of its own (in the runner's ns
 * modes, the container's, which is one already): lo up with extra IPv4
 * and IPv6 addresses, a route in table 66 and a policy rule for it, changed
 * sysctls (global and of lo), a dummy link with an address when the kernel
 * has the dummy module; a TCP listener on an extra address, a TCP
 * connection over lo with bytes queued both ways and not read, and a unix
 * datagram socket bound to an abstract name (abstract names belong to the
 * network namespace). After the restore: another namespace than the one it started in,
 * the same links, addresses, routes, rules and sysctls as `ip` and
 * /proc/sys show them, the queued bytes read, the connection and the
 * listener working, the abstract name reachable.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "zdtmtst.h"

#define ADDR "10.66.0.1"
#define PORT 6606
#define ABSTRACT "zdtm-net-ns"

/* What `ip` and /proc/sys say about the namespace (no lifetimes: they count down). */
#define DESCRIBE                                                                      \
	"ip -o link show | sed 's/ state [A-Z]*//'; "                                 \
	"ip -o addr show | sed 's/valid_lft.*//'; ip route show table all; "          \
	"ip -6 route show table all | grep -v '^local\\|^multicast\\|proto kernel'; " \
	"ip rule; ip -6 rule; cat /proc/sys/net/ipv4/ip_local_port_range "            \
	"/proc/sys/net/ipv4/ping_group_range /proc/sys/net/ipv4/conf/lo/rp_filter "   \
	"/proc/sys/net/ipv6/conf/lo/hop_limit 2>&1"

static int describe(char *buf, size_t size)
{
	return test_sh_output(DESCRIBE, buf, size);
}

static int abstract_sock(bool bind_it)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_DGRAM, 0);

	memcpy(a.sun_path + 1, ABSTRACT, strlen(ABSTRACT));
	if (s >= 0 && bind_it &&
	    bind(s, (struct sockaddr *)&a,
		 offsetof(struct sockaddr_un, sun_path) + 1 + strlen(ABSTRACT))) {
		int err = neg_errno();

		close(s);
		return err;
	}
	return s;
}

static int send_abstract(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = abstract_sock(false), ret;

	memcpy(a.sun_path + 1, ABSTRACT, strlen(ABSTRACT));
	ret = sendto(s, "u", 1, 0, (struct sockaddr *)&a,
		     offsetof(struct sockaddr_un, sun_path) + 1 + strlen(ABSTRACT)) == 1
		      ? 0
		      : -1;
	close(s);
	return ret;
}

static int tcp_to(const char *ip, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, ip, &sin.sin_addr);
	if (s >= 0 && connect(s, (struct sockaddr *)&sin, sizeof(sin))) {
		int err = neg_errno();

		close(s);
		return err;
	}
	return s;
}

static int accept_one(int ls)
{
	struct pollfd p = { .fd = ls, .events = POLLIN };

	return poll(&p, 1, 10000) == 1 ? accept(ls, NULL, NULL) : -ETIMEDOUT;
}

static char before[16384], after[16384];

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	char out[3000], in[3000], c;
	int ls, cl, sv, ux, cl2, sv2;
	size_t bad;

	test_init(argc, argv);
	if (test_netns_own())
		return 1;
	if (system("ip link set lo up && ip addr add " ADDR "/24 dev lo && "
		   "ip -6 addr add fd66::1/64 dev lo && "
		   "ip route add 10.67.0.0/16 via 10.66.0.2 table 66 && "
		   "ip -6 route add fd67::/64 dev lo table 66 && "
		   "ip rule add from " ADDR " table 66 pref 666 && "
		   "ip -6 rule add from fd66::1 table 66 pref 667 && "
		   "echo '40000 41000' >/proc/sys/net/ipv4/ip_local_port_range && "
		   "echo '0 2000' >/proc/sys/net/ipv4/ping_group_range && "
		   "echo 2 >/proc/sys/net/ipv4/conf/lo/rp_filter && "
		   "echo 33 >/proc/sys/net/ipv6/conf/lo/hop_limit")) {
		fail("cannot configure the namespace with ip");
		return 1;
	}
	/* a dummy link only where the kernel has the module */
	if (!system("ip link add dm66 type dummy 2>/dev/null"))
		system("ip link set dm66 mtu 1300 address 02:66:00:00:00:01 up && "
		       "ip addr add 10.68.0.1/24 dev dm66");
	inet_pton(AF_INET, ADDR, &sin.sin_addr);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sin, sizeof(sin)) || listen(ls, 8)) {
		fail("listener on " ADDR ": %m");
		return 1;
	}
	cl = tcp_to(ADDR, PORT);
	sv = cl < 0 ? -1 : accept_one(ls);
	ux = abstract_sock(true);
	if (sv < 0 || ux < 0) {
		fail("connection over lo or abstract unix socket: %m");
		return 1;
	}
	datagen(out, sizeof(out), 0x66);
	if (send(cl, out, sizeof(out), 0) != sizeof(out) ||
	    send(sv, out, sizeof(out), 0) != sizeof(out)) {
		fail("send: %m");
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
	if (recv(sv, in, sizeof(in), MSG_WAITALL) != sizeof(in) ||
	    datachk(in, sizeof(in), 0x66, &bad) ||
	    recv(cl, in, sizeof(in), MSG_WAITALL) != sizeof(in) ||
	    datachk(in, sizeof(in), 0x66, &bad)) {
		fail("the bytes queued over lo did not come back: %m");
		return 1;
	}
	if (send(cl, "x", 1, 0) != 1 || recv(sv, &c, 1, 0) != 1 || c != 'x') {
		fail("the connection over lo does not work: %m");
		return 1;
	}
	cl2 = tcp_to(ADDR, PORT);
	sv2 = cl2 < 0 ? -1 : accept_one(ls);
	if (sv2 < 0 || send(cl2, "y", 1, 0) != 1 || recv(sv2, &c, 1, 0) != 1 || c != 'y') {
		fail("the listener on " ADDR " does not accept: %m");
		return 1;
	}
	if (send_abstract() || recv(ux, &c, 1, MSG_DONTWAIT) != 1 || c != 'u') {
		fail("the abstract unix name is not reachable: %m");
		return 1;
	}
	pass();
	return 0;
}
