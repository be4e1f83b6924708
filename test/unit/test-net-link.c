// SPDX-License-Identifier: GPL-2.0
/*
 * The links of a network namespace: the restore's --external TYPE[IN]:OUT
 * lookup (veth, macvlan), and --external macvlan[...] accepted by the option
 * check.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_external_name),
		cmocka_unit_test(test_external_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
