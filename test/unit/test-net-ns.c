// SPDX-License-Identifier: GPL-2.0
/*
 * The pure logic of a network namespace's dump: which neighbours were
 * configured (ns/net-neigh.c), which sysctls are per link, never written,
 * and in which order (ns/net-sysctl.c), which qdiscs are a link's defaults
 * and which are refused (ns/net-tc.c), a bridge with vlan filtering
 * (ns/net-link.c), which addresses a connection reaches over lo
 * (ns/net-local.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/neighbour.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../criu-like/ns/net-link.h"
#include "../../criu-like/ns/net-local.h"
#include "../../criu-like/ns/net-neigh.h"
#include "../../criu-like/ns/net-sysctl.h"
#include "../../criu-like/ns/net-tc.h"

static const uint8_t mac_pa[6] = { 2, 0x42, 0, 0, 1, 1 };

/* The links of a namespace: lo (1), a veth pa (3) with its MAC, a tun without ARP (4). */
static void links_make(struct nl_buf *links)
{
	static const struct {
		int index;
		unsigned int flags;
		const uint8_t *mac;
	} l[] = { { 1, IFF_LOOPBACK | IFF_UP, NULL },
		  { 3, IFF_UP, mac_pa },
		  { 4, IFF_NOARP, NULL } };
	uint8_t buf[NL_REQ_SIZE];
	size_t i;

	memset(links, 0, sizeof(*links));
	for (i = 0; i < sizeof(l) / sizeof(l[0]); i++) {
		struct ifinfomsg ifi = { .ifi_index = l[i].index, .ifi_flags = l[i].flags };
		struct nlmsghdr *n = nl_req_init(buf, RTM_NEWLINK, 0, &ifi, sizeof(ifi));

		assert_int_equal(nl_put_str(n, IFLA_IFNAME, "x"), 0);
		if (l[i].mac)
			assert_int_equal(nl_put(n, IFLA_ADDRESS, l[i].mac, 6), 0);
		assert_int_equal(nl_buf_append(links, n, NLMSG_ALIGN(n->nlmsg_len)), 0);
	}
}

static struct nlmsghdr *neigh(uint8_t *buf, int family, int ifindex, uint16_t state, uint8_t flags,
			      const uint8_t *lladdr)
{
	struct ndmsg ndm = { .ndm_family = (uint8_t)family,
			     .ndm_ifindex = ifindex,
			     .ndm_state = state,
			     .ndm_flags = flags };
	struct nlmsghdr *n = nl_req_init(buf, RTM_NEWNEIGH, 0, &ndm, sizeof(ndm));
	uint32_t dst = 0x0100000a;

	if (family != AF_BRIDGE)
		assert_int_equal(nl_put(n, NDA_DST, &dst, sizeof(dst)), 0);
	if (lladdr)
		assert_int_equal(nl_put(n, NDA_LLADDR, lladdr, 6), 0);
	return n;
}

static void test_neigh_configured(void **state)
{
	static const uint8_t uni[6] = { 2, 0, 0, 0, 0, 9 }, mcast[6] = { 1, 0, 0x5e, 0, 0, 1 },
			     v6mcast[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	uint8_t buf[NL_REQ_SIZE];
	struct nl_buf links;
	struct nlmsghdr *n;

	(void)state;
	links_make(&links);
	/* ARP and NDP: permanent and proxy kept, learnt ones not */
	assert_true(neigh_configured(neigh(buf, AF_INET, 3, NUD_PERMANENT, 0, uni), &links));
	assert_true(neigh_configured(neigh(buf, AF_INET6, 3, NUD_PERMANENT, 0, uni), &links));
	assert_true(neigh_configured(neigh(buf, AF_INET, 3, 0, NTF_PROXY, NULL), &links));
	assert_false(neigh_configured(neigh(buf, AF_INET, 3, NUD_REACHABLE, 0, uni), &links));
	assert_false(neigh_configured(neigh(buf, AF_INET, 3, NUD_STALE, 0, uni), &links));
	/* managed (an extended flag): the user's, whatever its state */
	n = neigh(buf, AF_INET, 3, NUD_INCOMPLETE, 0, NULL);
	assert_int_equal(nl_put_u32(n, NDA_FLAGS_EXT, NTF_EXT_MANAGED), 0);
	assert_true(neigh_configured(n, &links));
	/* noarp: the user's on an ARP link; the kernel's for multicast, lo, a link without ARP */
	assert_true(neigh_configured(neigh(buf, AF_INET, 3, NUD_NOARP, 0, uni), &links));
	assert_false(neigh_configured(neigh(buf, AF_INET, 3, NUD_NOARP, 0, mcast), &links));
	assert_false(neigh_configured(neigh(buf, AF_INET6, 3, NUD_NOARP, 0, v6mcast), &links));
	assert_false(neigh_configured(neigh(buf, AF_INET, 1, NUD_NOARP, 0, uni), &links));
	assert_false(neigh_configured(neigh(buf, AF_INET, 4, NUD_NOARP, 0, NULL), &links));
	assert_false(neigh_configured(neigh(buf, AF_INET, 99, NUD_NOARP, 0, uni), &links));
	/* fdb: static and permanent kept, but a port's own address (the kernel's) */
	assert_true(neigh_configured(neigh(buf, AF_BRIDGE, 3, NUD_NOARP, 0, uni), &links));
	assert_true(neigh_configured(neigh(buf, AF_BRIDGE, 3, NUD_PERMANENT, 0, uni), &links));
	assert_false(neigh_configured(neigh(buf, AF_BRIDGE, 3, NUD_PERMANENT, 0, mac_pa), &links));
	assert_false(neigh_configured(neigh(buf, AF_BRIDGE, 3, NUD_REACHABLE, 0, uni), &links));
	assert_false(neigh_configured(neigh(buf, AF_BRIDGE, 3, 0, 0, uni), &links));
	assert_false(neigh_configured(neigh(buf, AF_BRIDGE, 3, NUD_NOARP, NTF_EXT_LEARNED, uni),
				      &links));
	/* a link's own list: unicast added by the user, multicast joined by its users */
	assert_true(
		neigh_configured(neigh(buf, AF_BRIDGE, 3, NUD_PERMANENT, NTF_SELF, uni), &links));
	assert_false(
		neigh_configured(neigh(buf, AF_BRIDGE, 3, NUD_PERMANENT, NTF_SELF, mcast), &links));
	/* another family, or not a neighbour */
	assert_false(neigh_configured(neigh(buf, AF_PACKET, 3, NUD_PERMANENT, 0, uni), &links));
	((struct nlmsghdr *)buf)->nlmsg_type = RTM_NEWLINK;
	assert_false(neigh_configured((struct nlmsghdr *)buf, &links));
	nl_buf_fini(&links);
}

static void test_sysctl_paths(void **state)
{
	(void)state;
	assert_true(net_sysctl_per_link("ipv4/conf/eth0/accept_local"));
	assert_true(net_sysctl_per_link("ipv6/conf/all/forwarding"));
	assert_true(net_sysctl_per_link("ipv4/neigh/default/gc_thresh1"));
	assert_true(net_sysctl_per_link("ipv6/neigh/lo/retrans_time_ms"));
	assert_false(net_sysctl_per_link("ipv4/tcp_rmem"));
	assert_false(net_sysctl_per_link("ipv4/config"));
	assert_false(net_sysctl_per_link("core/somaxconn"));
	/* what setting a link's MTU resets, written again after it */
	assert_true(net_sysctl_mtu6("ipv6/conf/eth0/mtu"));
	assert_true(net_sysctl_mtu6("ipv6/conf/default/mtu"));
	assert_false(net_sysctl_mtu6("ipv4/conf/eth0/mtu"));
	assert_false(net_sysctl_mtu6("ipv6/conf/eth0/mtu_expires"));
	assert_false(net_sysctl_mtu6("ipv6/neigh/eth0/mtu"));
	/* flushes are actions, and nothing outside /proc/sys/net */
	assert_true(net_sysctl_never("ipv4/route/flush"));
	assert_true(net_sysctl_never("ipv6/route/flush"));
	assert_true(net_sysctl_never("flush"));
	assert_true(net_sysctl_never("../kernel/hostname"));
	assert_true(net_sysctl_never("/etc/passwd"));
	assert_true(net_sysctl_never("ipv4/conf/../../../kernel/x"));
	assert_false(net_sysctl_never("ipv4/route/flushed"));
	assert_false(net_sysctl_never("ipv4/tcp_rmem"));
}

static void test_sysctl_order(void **state)
{
	NetSysctlEntry e[5];
	static const char *const in[] = {
		"ipv6/conf/va/mtu",	      "ipv4/neigh/va/base_reachable_time_ms",
		"ipv6/conf/va/stable_secret", "ipv4/neigh/va/base_reachable_time",
		"ipv6/conf/va/addr_gen_mode",
	};
	static const char *const out[] = {
		"ipv6/conf/va/stable_secret",
		"ipv4/neigh/va/base_reachable_time",
		"ipv4/neigh/va/base_reachable_time_ms",
		"ipv6/conf/va/addr_gen_mode",
		"ipv6/conf/va/mtu",
	};
	size_t i;

	(void)state;
	for (i = 0; i < 5; i++) {
		net_sysctl_entry__init(&e[i]);
		e[i].path = (char *)in[i];
	}
	qsort(e, 5, sizeof(e[0]), net_sysctl_cmp);
	/* stable_secret first (it switches the address mode), the finer unit after the coarser */
	for (i = 0; i < 5; i++)
		assert_string_equal(e[i].path, out[i]);
}

static int sysctl_get(const char *path, char *buf, size_t n)
{
	char full[256];
	FILE *f;
	int ok;

	snprintf(full, sizeof(full), "/proc/sys/net/%s", path);
	f = fopen(full, "r");
	if (!f)
		return -errno;
	ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ok ? 0 : -EIO;
}

static int sysctl_put(const char *path, const char *v)
{
	char full[256];
	FILE *f;

	snprintf(full, sizeof(full), "/proc/sys/net/%s", path);
	f = fopen(full, "w");
	if (!f)
		return -errno;
	fputs(v, f);
	return fclose(f) ? -errno : 0;
}

/*
 * In a network namespace of its own: the values read ahead
 * (net_sysctls_known_read()) spare the reads of the image's sysctls that
 * are the same (one changed behind its back stays as it is: it was not
 * read), up to the first write only: a write of all/forwarding sets lo's
 * too, and the image's lo/forwarding is written back although it was that
 * ahead.
 */
static int known_child(void)
{
	NetSysctlEntry e[4];
	NetSysctlEntry *pe[4] = { &e[0], &e[1], &e[2], &e[3] };
	NetnsEntry ne;
	char v[64], fwd[64], other[2];

	if (unshare(CLONE_NEWNET))
		return 77;
	/* a new namespace's forwarding may be the host's: 0 or 1, and lo's the same */
	if (sysctl_get("ipv4/conf/lo/accept_local", v, sizeof(v)) || strcmp(v, "0") ||
	    sysctl_get("ipv4/conf/all/forwarding", fwd, sizeof(fwd)) ||
	    sysctl_get("ipv4/conf/lo/forwarding", v, sizeof(v)) || strcmp(v, fwd) ||
	    (strcmp(fwd, "0") && strcmp(fwd, "1")))
		return 77;
	other[0] = fwd[0] == '0' ? '1' : '0';
	other[1] = 0;
	if (net_sysctls_known_read())
		return 1;
	/* behind the back of what was read ahead */
	if (sysctl_put("ipv4/conf/lo/accept_local", "1"))
		return 2;
	netns_entry__init(&ne);
	for (int i = 0; i < 4; i++)
		net_sysctl_entry__init(&e[i]);
	e[0].path = "ipv4/conf/lo/accept_local";
	e[0].value = "0";
	e[1].path = "ipv4/conf/all/forwarding";
	e[1].value = other;
	e[2].path = "ipv4/conf/lo/forwarding";
	e[2].value = fwd;
	e[3].path = "ipv4/conf/lo/accept_local";
	e[3].value = "0";
	ne.sysctls = pe;
	ne.n_sysctls = 3;
	if (net_sysctls_restore(&ne, false))
		return 3;
	/* skipped: the same as read ahead */
	if (sysctl_get("ipv4/conf/lo/accept_local", v, sizeof(v)) || strcmp(v, "1"))
		return 4;
	if (sysctl_get("ipv4/conf/all/forwarding", v, sizeof(v)) || strcmp(v, other))
		return 5;
	/* read and written after the first write, though the same as ahead */
	if (sysctl_get("ipv4/conf/lo/forwarding", v, sizeof(v)) || strcmp(v, fwd))
		return 6;
	/* once only: the next restore reads every one */
	ne.sysctls = &pe[3];
	ne.n_sysctls = 1;
	if (net_sysctls_restore(&ne, false))
		return 7;
	if (sysctl_get("ipv4/conf/lo/accept_local", v, sizeof(v)) || strcmp(v, "0"))
		return 8;
	return 0;
}

static void test_sysctl_known(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	if (geteuid())
		skip();
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(known_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_qdisc(void **state)
{
	struct tcmsg root = { .tcm_handle = TC_H_MAKE(0x80010000U, 0), .tcm_parent = TC_H_ROOT };
	struct tcmsg dflt = { .tcm_handle = 0, .tcm_parent = TC_H_ROOT };
	struct tcmsg mqchild = { .tcm_handle = 0, .tcm_parent = TC_H_MAKE(0, 1) };
	struct tcmsg ingress = { .tcm_handle = TC_H_MAKE(TC_H_INGRESS, 0),
				 .tcm_parent = TC_H_INGRESS };
	struct tcmsg child = { .tcm_handle = TC_H_MAKE(0x100000U, 0),
			       .tcm_parent = TC_H_MAKE(0x10000U, 1) };

	(void)state;
	/* handle 0: made by the kernel (a link's default root, mq's children) */
	assert_true(tc_qdisc_default(&dflt));
	assert_true(tc_qdisc_default(&mqchild));
	assert_false(tc_qdisc_default(&root));
	assert_false(tc_qdisc_default(&ingress));
	/* simple root and ingress kinds are made again */
	assert_null(tc_qdisc_refusal(&root, "tbf", false));
	assert_null(tc_qdisc_refusal(&root, "pfifo", false));
	assert_null(tc_qdisc_refusal(&root, "noqueue", false));
	assert_null(tc_qdisc_refusal(&ingress, "ingress", false));
	assert_null(tc_qdisc_refusal(&ingress, "clsact", false));
	/* classful kinds, children of a class, size tables, no kind: refused */
	assert_non_null(tc_qdisc_refusal(&root, "htb", false));
	assert_non_null(tc_qdisc_refusal(&root, "prio", false));
	assert_non_null(tc_qdisc_refusal(&root, "mq", false));
	assert_non_null(tc_qdisc_refusal(&child, "pfifo", false));
	assert_non_null(tc_qdisc_refusal(&root, "tbf", true));
	assert_non_null(tc_qdisc_refusal(&root, NULL, false));
	assert_non_null(tc_qdisc_refusal(&root, "tbfx", false));
}

static void test_vlan_filtering(void **state)
{
	NetLinkEntry l = NET_LINK_ENTRY__INIT;
	uint8_t data[32] = { 0 };
	struct rtattr *a = (struct rtattr *)data, *b;

	(void)state;
	/* IFLA_BR_STP_STATE 1, then IFLA_BR_VLAN_FILTERING as the kernel puts it (u8) */
	a->rta_type = IFLA_BR_STP_STATE;
	a->rta_len = RTA_LENGTH(4);
	*(uint32_t *)RTA_DATA(a) = 1;
	b = (struct rtattr *)(data + RTA_ALIGN(a->rta_len));
	b->rta_type = IFLA_BR_VLAN_FILTERING;
	b->rta_len = RTA_LENGTH(1);
	l.kind = NET_LINK_KIND__NET_LINK_BRIDGE;
	l.has_info_data = true;
	l.info_data.data = data;
	l.info_data.len = RTA_ALIGN(a->rta_len) + RTA_ALIGN(b->rta_len);
	assert_false(net_link_vlan_filtering(&l));
	*(uint8_t *)RTA_DATA(b) = 1;
	assert_true(net_link_vlan_filtering(&l));
	/* only a bridge's options say it */
	l.kind = NET_LINK_KIND__NET_LINK_VETH;
	assert_false(net_link_vlan_filtering(&l));
	l.kind = NET_LINK_KIND__NET_LINK_BRIDGE;
	l.has_info_data = false;
	assert_false(net_link_vlan_filtering(&l));
}

/* An RTM_NEWADDR of @family with @addr as IFA_ADDRESS (and @local as IFA_LOCAL if given). */
static void addr_msg(struct nl_buf *b, int family, const void *addr, const void *local)
{
	struct ifaddrmsg ifa = { .ifa_family = (uint8_t)family, .ifa_index = 3 };
	size_t len = family == AF_INET ? 4 : 16;
	uint8_t buf[NL_REQ_SIZE];
	struct nlmsghdr *n = nl_req_init(buf, RTM_NEWADDR, 0, &ifa, sizeof(ifa));

	assert_int_equal(nl_put(n, IFA_ADDRESS, addr, len), 0);
	if (local)
		assert_int_equal(nl_put(n, IFA_LOCAL, local, len), 0);
	assert_int_equal(nl_buf_append(b, n, NLMSG_ALIGN(n->nlmsg_len)), 0);
}

static void test_local_addr(void **state)
{
	(void)state;
	static const uint8_t own4[4] = { 10, 77, 0, 10 }, peer4[4] = { 10, 77, 0, 100 };
	static const uint8_t ptp4[4] = { 192, 0, 2, 1 }, ptp_local4[4] = { 192, 0, 2, 2 };
	static const uint8_t own6[16] = { 0xfd, 0, [15] = 0x10 }, peer6[16] = { 0xfd, 0, [15] = 9 };
	static const uint8_t lo6[16] = { [15] = 1 };
	static const uint8_t mapped_own[16] = { [10] = 0xff, [11] = 0xff, 10, 77, 0, 10 };
	static const uint8_t mapped_peer[16] = { [10] = 0xff, [11] = 0xff, 10, 77, 0, 100 };
	static const uint8_t lo4[4] = { 127, 0, 0, 53 };
	struct local_addr l[3] = { { AF_INET, { 10, 77, 0, 10 } } };
	struct nl_buf b = { 0 };

	memcpy(l[1].a, own6, 16);
	l[1].family = AF_INET6;
	/* loopback, and the namespace's own addresses: over lo */
	assert_true(net_local_addr(AF_INET, lo4, NULL, 0));
	assert_true(net_local_addr(AF_INET6, lo6, NULL, 0));
	assert_true(net_local_addr(AF_INET, own4, l, 2));
	assert_true(net_local_addr(AF_INET6, own6, l, 2));
	assert_true(net_local_addr(AF_INET6, mapped_own, l, 2));
	/* a peer outside */
	assert_false(net_local_addr(AF_INET, peer4, l, 2));
	assert_false(net_local_addr(AF_INET6, peer6, l, 2));
	assert_false(net_local_addr(AF_INET6, mapped_peer, l, 2));
	assert_false(net_local_addr(AF_INET, own4, NULL, 0));
	/* an IPv6 address is never one of the IPv4 ones by its first bytes */
	memcpy(l[2].a, own6, 4);
	l[2].family = AF_INET;
	assert_false(net_local_addr(AF_INET6, peer6, l, 2));
	/* from the kernel's messages: IFA_LOCAL is this end of a point-to-point link */
	addr_msg(&b, AF_INET, own4, NULL);
	addr_msg(&b, AF_INET, ptp4, ptp_local4);
	addr_msg(&b, AF_INET6, own6, NULL);
	assert_int_equal(net_local_set(&b), 0);
	assert_true(net_local_kept(AF_INET, own4));
	assert_true(net_local_kept(AF_INET, ptp_local4));
	assert_false(net_local_kept(AF_INET, ptp4));
	assert_true(net_local_kept(AF_INET6, own6));
	assert_false(net_local_kept(AF_INET, peer4));
	net_local_reset();
	assert_false(net_local_kept(AF_INET, own4));
	nl_buf_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_neigh_configured),
		cmocka_unit_test(test_sysctl_paths),
		cmocka_unit_test(test_sysctl_order),
		cmocka_unit_test(test_sysctl_known),
		cmocka_unit_test(test_qdisc),
		cmocka_unit_test(test_vlan_filtering),
		cmocka_unit_test(test_local_addr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
