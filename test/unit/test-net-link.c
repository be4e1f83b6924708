// SPDX-License-Identifier: GPL-2.0
/*
 * The links of a network namespace: the restore's --external TYPE[IN]:OUT
 * lookup (veth, macvlan), --external macvlan[...] accepted by the option
 * check, and a veth made ahead of a migration's restore compared with the
 * final image's (net_link_ahead_same()).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "../../criu-like/ns/net-link.h"
#include "ns.h"
#include "options.h"
#include "util.h"

static void test_external_name(void **state)
{
	static const char *const ext[] = {
		"mnt[/data]:d",	 "veth[eth0]:veth-out0", "macvlan[mv0]:eth1", "macvlan[mv]:eth2",
		"macvlan[mv1]:", "macvlanx[mv2]:eth3",	 "macvlan[mv3:eth4",  "veth[mv4]:v4",
	};
	size_t n = ARRAY_SIZE(ext);

	(void)state;
	assert_string_equal(net_external_name(ext, n, "veth", "eth0"), "veth-out0");
	assert_string_equal(net_external_name(ext, n, "macvlan", "mv0"), "eth1");
	/* a prefix of another name is not that name, nor the other way round */
	assert_string_equal(net_external_name(ext, n, "macvlan", "mv"), "eth2");
	assert_null(net_external_name(ext, n, "macvlan", "m"));
	assert_null(net_external_name(ext, n, "macvlan", "mv00"));
	/* an empty outside name is returned as is: the restore refuses it */
	assert_string_equal(net_external_name(ext, n, "macvlan", "mv1"), "");
	/* the type must match exactly, the brackets be closed */
	assert_null(net_external_name(ext, n, "macvlan", "mv2"));
	assert_null(net_external_name(ext, n, "macvlan", "mv3"));
	assert_null(net_external_name(ext, n, "macvlan", "mv4"));
	assert_string_equal(net_external_name(ext, n, "veth", "mv4"), "v4");
	assert_null(net_external_name(ext, n, "veth", "eth1"));
	assert_null(net_external_name(NULL, 0, "veth", "eth0"));
	assert_null(net_external_name(ext, 0, "veth", "eth0"));
}

static void test_external_option(void **state)
{
	const char *good[] = { "macvlan[mv0]:eth1", "veth[a]:b", NULL };
	const char *bad[] = { "vxlan[vx0]:eth1", NULL };
	struct cr_options o = { 0 };

	(void)state;
	o.external = good;
	o.n_external = 2;
	assert_int_equal(ns_set_options(&o), 0);
	o.external = bad;
	o.n_external = 1;
	assert_int_equal(ns_set_options(&o), -EOPNOTSUPP);
	ns_set_options(NULL);
}

static uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x10 }, mac_b[6] = { 0x02, 0, 0, 0, 0, 0x11 };

static NetLinkEntry veth_entry(void)
{
	NetLinkEntry l = NET_LINK_ENTRY__INIT;

	l.kind = NET_LINK_KIND__NET_LINK_VETH;
	l.ifindex = 2;
	l.name = "eth0";
	l.mtu = 1500;
	l.has_txqlen = true;
	l.txqlen = 1000;
	l.has_address = true;
	l.address.data = mac_a;
	l.address.len = sizeof(mac_a);
	l.has_peer_mtu = true;
	l.peer_mtu = 1500;
	l.peer_name = "ve-c0";
	l.peer_master = "br0";
	return l;
}

static void test_ahead_same(void **state)
{
	NetLinkEntry a = veth_entry(), f = veth_entry(), other[11];
	size_t i;

	(void)state;
	assert_true(net_link_ahead_same(&a, "ve-c0", "br0", &f, "ve-c0", "br0"));
	/* what the final dump reads of the links but making them does not set */
	f.flags = 0x1003;
	f.peer_flags = 0x1003;
	assert_true(net_link_ahead_same(&a, "ve-c0", "br0", &f, "ve-c0", "br0"));
	/* no bridge on either side is the same */
	assert_true(net_link_ahead_same(&a, "ve-c0", NULL, &f, "ve-c0", NULL));
	/* an outside end named or bridged otherwise at the restore */
	assert_false(net_link_ahead_same(&a, "ve-c0", "br0", &f, "ve-c1", "br0"));
	assert_false(net_link_ahead_same(&a, "ve-c0", "br0", &f, "ve-c0", "br1"));
	assert_false(net_link_ahead_same(&a, "ve-c0", "br0", &f, "ve-c0", NULL));
	/* each setting made, another kind, or a pair inside (never made ahead) */
	for (i = 0; i < ARRAY_SIZE(other); i++)
		other[i] = veth_entry();
	other[0].mtu = 1400;
	other[1].address.data = mac_b;
	other[2].has_address = false;
	other[3].address.len = 5;
	other[4].ifindex = 3;
	other[5].name = "eth1";
	other[6].txqlen = 500;
	other[7].has_txqlen = false;
	other[8].peer_mtu = 9000;
	other[9].kind = NET_LINK_KIND__NET_LINK_MACVLAN;
	other[10].has_peer_ifindex = true;
	other[10].peer_ifindex = 3;
	for (i = 0; i < ARRAY_SIZE(other); i++)
		assert_false(net_link_ahead_same(&a, "ve-c0", "br0", &other[i], "ve-c0", "br0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_external_name),
		cmocka_unit_test(test_external_option),
		cmocka_unit_test(test_ahead_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
