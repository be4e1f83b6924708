// SPDX-License-Identifier: GPL-2.0
/*
 * The pure half of a namespace's netfilter state: criu-like's own tables,
 * chains and rules taken out of `nft list ruleset` and iptables-save text,
 * the xt tables named for iptables-nft-save, the leftovers of iptables-nft
 * dropped, the comparison of a ruleset with its copy; and a conntrack
 * entry through the image and back (both tuples, NAT, status, TCP fields,
 * mark, zone, labels), with the NAT given back as what it translated to.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "ns/conntrack-int.h"
#include "ns/netfilter.h"

static const char ruleset[] = "table inet criu_like_netns {\n"
			      "\tchain input {\n"
			      "\t\ttype filter hook input priority -160; policy accept;\n"
			      "\t\tiifname != \"lo\" drop\n"
			      "\t}\n"
			      "}\n"
			      "table inet mine {\n"
			      "\tset s {\n"
			      "\t\ttype ipv4_addr\n"
			      "\t\telements = { 10.0.0.1 }\n"
			      "\t}\n"
			      "\n"
			      "\tchain c {\n"
			      "\t\ttype filter hook input priority filter; policy accept;\n"
			      "\t\tct state established accept\n"
			      "\t\tcomment \"xt match in a string\" accept\n"
			      "\t}\n"
			      "}\n"
			      "table ip filter {\n"
			      "\tchain INPUT {\n"
			      "\t\ttype filter hook input priority filter; policy accept;\n"
			      "\t\txt match recent counter packets 0 bytes 0\n"
			      "\t\tiifname != \"lo\" comment \"criu-like-netns\" drop\n"
			      "\t}\n"
			      "}\n"
			      "table ip6 raw {\n"
			      "\tchain PREROUTING {\n"
			      "\t\ttype filter hook prerouting priority raw; policy accept;\n"
			      "\t}\n"
			      "}\n"
			      "table ip nat {\n"
			      "\tchain CRLH_12_I {\n"
			      "\t\tcounter queue num 3\n"
			      "\t}\n"
			      "\n"
			      "\tchain PREROUTING {\n"
			      "\t\ttype nat hook prerouting priority dstnat; policy accept;\n"
			      "\t\tjump CRLH_12_I\n"
			      "\t\ttcp dport 80 dnat to 127.0.0.1:8080\n"
			      "\t}\n"
			      "}\n";

static void test_nft_split(void **state)
{
	struct nf_split sp;

	(void)state;
	/* iptables-nft claims filter (xt) and nat; ip6 raw is an empty leftover */
	assert_int_equal(nf_nft_split(ruleset, "filter nat", "raw", &sp), 0);
	assert_string_equal(sp.ipt4, "filter nat ");
	assert_string_equal(sp.ipt6, "");
	assert_string_equal(sp.xt, "");
	/* the lock's table, the empty raw table, the holder's chain and jump: gone */
	assert_null(strstr(sp.nft, "criu_like"));
	assert_null(strstr(sp.nft, "table ip6 raw"));
	assert_null(strstr(sp.nft, "table ip "));
	assert_non_null(strstr(sp.nft, "table inet mine {\n\tset s {"));
	assert_non_null(strstr(sp.nft, "\"xt match in a string\" accept"));
	assert_non_null(strstr(sp.ipt, "table ip filter {"));
	assert_non_null(strstr(sp.ipt, "\t\ttcp dport 80 dnat to 127.0.0.1:8080\n\t}\n}\n"));
	assert_null(strstr(sp.ipt, "CRLH_"));
	assert_null(strstr(sp.ipt, "criu-like-netns"));
	nf_split_fini(&sp);

	/* not claimed: the xt table is refused, nat is nft's */
	assert_int_equal(nf_nft_split(ruleset, "", "", &sp), 0);
	assert_string_equal(sp.xt, "ip filter\n");
	assert_non_null(strstr(sp.nft, "table ip nat {"));
	assert_string_equal(sp.ipt, "");
	nf_split_fini(&sp);

	/* a table named like iptables' with a set stays nft's even when claimed */
	assert_int_equal(nf_nft_split("table ip filter {\n\tset s {\n\t\ttype ipv4_addr\n\t}\n\n"
				      "\tchain INPUT {\n\t\tip saddr @s drop\n\t}\n}\n",
				      "filter", NULL, &sp),
			 0);
	assert_string_equal(sp.ipt4, "");
	assert_non_null(strstr(sp.nft, "ip saddr @s drop"));
	nf_split_fini(&sp);

	/* nothing but the lock: nothing left */
	assert_int_equal(nf_nft_split("table inet criu_like_netns {\n\tchain c {\n\t}\n}\n", NULL,
				      NULL, &sp),
			 0);
	assert_string_equal(sp.nft, "");
	nf_split_fini(&sp);
}

static void test_nft_canon(void **state)
{
	char *a, *b;

	(void)state;
	/* the order of the tables and the empty accepting base chains do not count */
	a = nf_nft_canon("table ip nat {\n\tchain P {\n\t\tcounter\n\t}\n}\n"
			 "table ip filter {\n\tchain INPUT {\n\t\ttype filter hook input "
			 "priority filter; policy accept;\n\t\tdrop\n\t}\n}\n");
	b = nf_nft_canon("table ip filter {\n\tchain INPUT {\n\t\ttype filter hook input "
			 "priority filter; policy accept;\n\t\tdrop\n\t}\n\n\tchain FORWARD {\n"
			 "\t\ttype filter hook forward priority filter; policy accept;\n\t}\n}\n"
			 "table ip nat {\n\tchain P {\n\t\tcounter\n\t}\n}\n");
	assert_non_null(a);
	assert_string_equal(a, b);
	free(b);
	/* one that drops does */
	b = nf_nft_canon("table ip filter {\n\tchain INPUT {\n\t\ttype filter hook input "
			 "priority filter; policy accept;\n\t\tdrop\n\t}\n\n\tchain FORWARD {\n"
			 "\t\ttype filter hook forward priority filter; policy drop;\n\t}\n}\n"
			 "table ip nat {\n\tchain P {\n\t\tcounter\n\t}\n}\n");
	assert_string_not_equal(a, b);
	free(a);
	free(b);
}

static const char saved[] = "# Generated by iptables-save v1.8.9\n"
			    "*filter\n"
			    ":INPUT ACCEPT [3:120]\n"
			    ":FORWARD ACCEPT [0:0]\n"
			    ":OUTPUT ACCEPT [0:0]\n"
			    ":CRLK_K12_ab - [0:0]\n"
			    "[0:0] -A INPUT ! -i lo -m comment --comment criu-like-netns -j DROP\n"
			    "[0:0] -A INPUT -j CRLK_K12_ab\n"
			    "[0:0] -A CRLK_K12_ab -s 1.2.3.4/32 -j DROP\n"
			    "[5:300] -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n"
			    "COMMIT\n"
			    "*raw\n"
			    ":PREROUTING ACCEPT [0:0]\n"
			    ":OUTPUT ACCEPT [0:0]\n"
			    ":CRLH_7_I - [0:0]\n"
			    "[0:0] -A PREROUTING -j CRLH_7_I\n"
			    "COMMIT\n"
			    "*nat\n"
			    ":PREROUTING DROP [0:0]\n"
			    "COMMIT\n"
			    "*mangle\n"
			    ":PREROUTING ACCEPT [0:0]\n"
			    ":MINE - [0:0]\n"
			    "COMMIT\n";

static void test_ipt_strip(void **state)
{
	char *out = nf_ipt_strip(saved, NULL);

	(void)state;
	assert_string_equal(out, "*filter\n"
				 ":INPUT ACCEPT [3:120]\n"
				 ":FORWARD ACCEPT [0:0]\n"
				 ":OUTPUT ACCEPT [0:0]\n"
				 "[5:300] -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n"
				 "COMMIT\n"
				 "*nat\n"
				 ":PREROUTING DROP [0:0]\n"
				 "COMMIT\n"
				 "*mangle\n"
				 ":PREROUTING ACCEPT [0:0]\n"
				 ":MINE - [0:0]\n"
				 "COMMIT\n");
	free(out);
	out = nf_ipt_strip(saved, "raw mangle");
	assert_string_equal(out, "*mangle\n:PREROUTING ACCEPT [0:0]\n:MINE - [0:0]\nCOMMIT\n");
	free(out);
	out = nf_ipt_strip(saved, "filte");
	assert_string_equal(out, "");
	free(out);
}

static void test_diff(void **state)
{
	char line[64];

	(void)state;
	assert_int_equal(nf_text_diff("a\nb\n", "a\nb\n", line, sizeof(line)), 0);
	assert_int_equal(nf_text_diff(NULL, "", line, sizeof(line)), 0);
	/* a timeout counting down is not a difference */
	assert_int_equal(nf_text_diff("e = { 1.2.3.4 timeout 1m expires 59s }\n",
				      "e = { 1.2.3.4 timeout 1m expires 58s }\n", line,
				      sizeof(line)),
			 0);
	assert_int_equal(nf_text_diff("a\nb\nc\n", "a\nB\nc\n", line, sizeof(line)), 2);
	assert_string_equal(line, "b");
	assert_int_equal(nf_text_diff("a\n", "a\nxt\n", line, sizeof(line)), 2);
	assert_string_equal(line, "xt");
}

static void set4(struct nf_conntrack *ct, int attr, const char *a)
{
	uint32_t v;

	assert_int_equal(inet_pton(AF_INET, a, &v), 1);
	nfct_set_attr_u32(ct, attr, v);
}

/* A DNATed TCP connection: 10.0.0.2:4000 -> 192.0.2.1:80, served by 10.1.0.5:8080. */
static struct nf_conntrack *dnat_conn(void)
{
	struct nf_conntrack *ct = nfct_new();
	struct nfct_bitmask *labels = nfct_bitmask_new(127);

	nfct_set_attr_u8(ct, ATTR_ORIG_L3PROTO, AF_INET);
	nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, IPPROTO_TCP);
	set4(ct, ATTR_ORIG_IPV4_SRC, "10.0.0.2");
	set4(ct, ATTR_ORIG_IPV4_DST, "192.0.2.1");
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_SRC, htons(4000));
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_DST, htons(80));
	set4(ct, ATTR_REPL_IPV4_SRC, "10.1.0.5");
	set4(ct, ATTR_REPL_IPV4_DST, "10.0.0.2");
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(8080));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(4000));
	nfct_set_attr_u32(ct, ATTR_STATUS,
			  IPS_CONFIRMED | IPS_SEEN_REPLY | IPS_ASSURED | IPS_DST_NAT |
				  IPS_DST_NAT_DONE);
	nfct_set_attr_u32(ct, ATTR_TIMEOUT, 431990);
	nfct_set_attr_u32(ct, ATTR_MARK, 0x42);
	nfct_set_attr_u16(ct, ATTR_ZONE, 3);
	nfct_set_attr_u8(ct, ATTR_TCP_STATE, 3 /* ESTABLISHED */);
	nfct_set_attr_u8(ct, ATTR_TCP_WSCALE_ORIG, 7);
	nfct_set_attr_u8(ct, ATTR_TCP_WSCALE_REPL, 9);
	nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_ORIG, 0x23);
	nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_REPL, 0x22);
	nfct_bitmask_set_bit(labels, 1);
	nfct_bitmask_set_bit(labels, 100);
	nfct_set_attr(ct, ATTR_CONNLABELS, labels);
	return ct;
}

static void test_ct_encode(void **state)
{
	struct nf_conntrack *ct = dnat_conn(), *back;
	struct ct_entry_buf b;
	const struct nfct_bitmask *labels;
	const uint8_t *addr;
	uint16_t port;
	char what[128];
	uint32_t a;
	size_t len;
	uint8_t *packed;
	ConntrackEntry *u;

	(void)state;
	assert_int_equal(ct_entry_from(ct, &b), 0);
	assert_int_equal(b.e.l3proto, AF_INET);
	assert_int_equal(b.e.orig->sport, 4000);
	assert_int_equal(b.e.reply->sport, 8080);
	assert_int_equal(b.e.mark, 0x42);
	assert_int_equal(b.e.zone, 3);
	assert_int_equal(b.e.tcp_wscale_repl, 9);
	assert_true(b.e.has_labels);
	ct_describe(&b.e, what, sizeof(what));
	assert_string_equal(what, "tcp 10.0.0.2:4000 -> 192.0.2.1:80");
	/* DNAT to where the reply comes from; no SNAT */
	assert_true(ct_nat_of(&b.e, IPS_DST_NAT, &addr, &port));
	assert_int_equal(port, 8080);
	assert_memory_equal(addr, b.e.reply->src.data, 4);
	assert_false(ct_nat_of(&b.e, IPS_SRC_NAT, &addr, &port));

	/* through the image format */
	len = conntrack_entry__get_packed_size(&b.e);
	packed = malloc(len);
	conntrack_entry__pack(&b.e, packed);
	u = conntrack_entry__unpack(NULL, len, packed);
	assert_non_null(u);
	back = ct_entry_to(u);
	assert_non_null(back);
	assert_int_equal(nfct_get_attr_u16(back, ATTR_ORIG_PORT_DST), htons(80));
	/* the reply before the NAT (the kernel translates it again): the orig reversed */
	assert_int_equal(nfct_get_attr_u32(back, ATTR_REPL_IPV4_SRC),
			 nfct_get_attr_u32(ct, ATTR_ORIG_IPV4_DST));
	assert_int_equal(nfct_get_attr_u16(back, ATTR_REPL_PORT_SRC), htons(80));
	assert_int_equal(nfct_get_attr_u16(back, ATTR_REPL_PORT_DST), htons(4000));
	/* the status bits the kernel lets a new entry have, NAT as a NAT request */
	assert_int_equal(nfct_get_attr_u32(back, ATTR_STATUS), IPS_SEEN_REPLY | IPS_ASSURED);
	assert_int_equal(inet_pton(AF_INET, "10.1.0.5", &a), 1);
	assert_int_equal(nfct_get_attr_u32(back, ATTR_DNAT_IPV4), a);
	assert_int_equal(nfct_get_attr_u16(back, ATTR_DNAT_PORT), htons(8080));
	assert_true(nfct_attr_is_set(back, ATTR_SNAT_IPV4) <= 0);
	assert_int_equal(nfct_get_attr_u32(back, ATTR_TIMEOUT), 431990);
	assert_int_equal(nfct_get_attr_u32(back, ATTR_MARK), 0x42);
	assert_int_equal(nfct_get_attr_u16(back, ATTR_ZONE), 3);
	assert_int_equal(nfct_get_attr_u8(back, ATTR_TCP_STATE), 3);
	assert_int_equal(nfct_get_attr_u8(back, ATTR_TCP_WSCALE_ORIG), 7);
	assert_int_equal(nfct_get_attr_u8(back, ATTR_TCP_FLAGS_REPL), 0x22);
	labels = nfct_get_attr(back, ATTR_CONNLABELS);
	assert_non_null(labels);
	assert_true(nfct_bitmask_test_bit(labels, 1));
	assert_true(nfct_bitmask_test_bit(labels, 100));
	assert_false(nfct_bitmask_test_bit(labels, 2));
	nfct_destroy(back);
	conntrack_entry__free_unpacked(u, NULL);
	free(packed);

	/* a bad image: a 5-byte address */
	b.e.orig->src.len = 5;
	errno = 0;
	assert_null(ct_entry_to(&b.e));
	assert_int_equal(errno, EINVAL);
	nfct_destroy(ct);
}

static void test_ct_v6_snat(void **state)
{
	struct nf_conntrack *ct = nfct_new(), *back;
	uint8_t s[16], d[16], n[16];
	struct ct_entry_buf b;
	const uint8_t *addr;
	uint16_t port;

	(void)state;
	inet_pton(AF_INET6, "fd00::2", s);
	inet_pton(AF_INET6, "2001:db8::1", d);
	inet_pton(AF_INET6, "2001:db8::99", n);
	nfct_set_attr_u8(ct, ATTR_ORIG_L3PROTO, AF_INET6);
	nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, IPPROTO_UDP);
	nfct_set_attr(ct, ATTR_ORIG_IPV6_SRC, s);
	nfct_set_attr(ct, ATTR_ORIG_IPV6_DST, d);
	nfct_set_attr(ct, ATTR_REPL_IPV6_SRC, d);
	nfct_set_attr(ct, ATTR_REPL_IPV6_DST, n);
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_SRC, htons(53));
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_DST, htons(53));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(53));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(1024));
	nfct_set_attr_u32(ct, ATTR_STATUS, IPS_CONFIRMED | IPS_SRC_NAT | IPS_SRC_NAT_DONE);
	assert_int_equal(ct_entry_from(ct, &b), 0);
	assert_int_equal(b.e.orig->src.len, 16);
	assert_true(ct_nat_of(&b.e, IPS_SRC_NAT, &addr, &port));
	assert_memory_equal(addr, n, 16);
	assert_int_equal(port, 1024);
	back = ct_entry_to(&b.e);
	assert_non_null(back);
	assert_memory_equal(nfct_get_attr(back, ATTR_SNAT_IPV6), n, 16);
	assert_int_equal(nfct_get_attr_u16(back, ATTR_SNAT_PORT), htons(1024));
	assert_int_equal(nfct_get_attr_u32(back, ATTR_STATUS), 0);
	nfct_destroy(back);
	nfct_destroy(ct);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nft_split), cmocka_unit_test(test_nft_canon),
		cmocka_unit_test(test_ipt_strip), cmocka_unit_test(test_diff),
		cmocka_unit_test(test_ct_encode), cmocka_unit_test(test_ct_v6_snat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
