// SPDX-License-Identifier: GPL-2.0
/*
 * The network lock's pure half (net-lock-rules.c): the nft and
 * iptables-restore text for IPv4 and IPv6 tuples, the names, the parsing of
 * `nft list tables` and `iptables -S`, the crash-cleanup rule, the
 * --network-lock values and the tuples the net-lock command takes; and,
 * live in a network namespace of its own, nft_table_exists() and
 * nft_inet_tables().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "net-lock.h"
#include "options.h"
#include "util.h"
#include "net/net-lock-int.h"

static struct inet_tuple tuple(int family, const char *l, uint16_t lp, const char *r, uint16_t rp)
{
	struct inet_tuple t = { .family = family, .sport = lp, .dport = rp };

	assert_int_equal(inet_pton(family, l, t.src), 1);
	assert_int_equal(inet_pton(family, r, t.dst), 1);
	return t;
}

static void test_elem(void **state)
{
	struct inet_tuple t4 = tuple(AF_INET, "10.0.0.1", 5000, "192.168.1.2", 80);
	struct inet_tuple t6 = tuple(AF_INET6, "fe80::1", 443, "::ffff:1.2.3.4", 65535);
	struct inet_tuple bad = { .family = AF_UNIX };
	char buf[128];

	(void)state;
	assert_int_equal(netlock_nft_elem(&t4, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "10.0.0.1 . 5000 . 192.168.1.2 . 80");
	assert_int_equal(netlock_nft_elem(&t6, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "fe80::1 . 443 . ::ffff:1.2.3.4 . 65535");
	assert_int_equal(netlock_nft_elem(&bad, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(netlock_nft_elem(&t4, buf, 10), -EINVAL);
}

static void test_nft_create(void **state)
{
	struct inet_tuple t[3] = {
		tuple(AF_INET, "127.0.0.1", 40000, "127.0.0.1", 8080),
		tuple(AF_INET6, "::1", 1, "::1", 2),
		tuple(AF_INET, "10.1.1.1", 22, "10.2.2.2", 60000),
	};
	char *text = netlock_nft_create("criu_like_7_99", NULL, t, 3, NULL);

	(void)state;
	assert_non_null(text);
	/* a leftover of the same name is replaced in the same transaction */
	assert_non_null(strstr(text, "add table inet criu_like_7_99\n"
				     "delete table inet criu_like_7_99\n"
				     "table inet criu_like_7_99 {\n"));
	assert_non_null(strstr(text, "elements = { 127.0.0.1 . 40000 . 127.0.0.1 . 8080, "
				     "10.1.1.1 . 22 . 10.2.2.2 . 60000 }"));
	assert_non_null(strstr(text, "elements = { ::1 . 1 . ::1 . 2 }"));
	/* incoming packets match the reverse of the tuple, outgoing ones the tuple */
	assert_non_null(strstr(text,
			       "hook input priority -150; policy accept;\n"
			       "\t\tip daddr . tcp dport . ip saddr . tcp sport @v4 drop\n"
			       "\t\tip6 daddr . tcp dport . ip6 saddr . tcp sport @v6 drop\n"));
	assert_non_null(strstr(text,
			       "hook output priority -150; policy accept;\n"
			       "\t\tip saddr . tcp sport . ip daddr . tcp dport @v4 drop\n"
			       "\t\tip6 saddr . tcp sport . ip6 daddr . tcp dport @v6 drop\n"));
	assert_null(strstr(text, "delete table inet criu_like_kept"));
	assert_null(strstr(text, "comment"));
	free(text);

	/* renamed: the new table with every element, the old one deleted, one transaction */
	text = netlock_nft_create("criu_like_kept_7_5f", "criu_like_7_99", t, 1, "/var/img/a b");
	assert_non_null(text);
	/* a kept table names the images that record it */
	assert_non_null(strstr(text, "table inet criu_like_kept_7_5f {\n"
				     "\tcomment \"criu-like images: /var/img/a b\"\n"));
	assert_non_null(strstr(text, "elements = { 127.0.0.1 . 40000 . 127.0.0.1 . 8080 }"));
	assert_null(strstr(text, "::1"));
	assert_non_null(strstr(text, "}\ndelete table inet criu_like_7_99\n"));
	free(text);

	/* no connection of a family: its set has no elements clause (nft refuses "{ }") */
	text = netlock_nft_create("criu_like_7_99", NULL, t, 0, NULL);
	assert_non_null(text);
	assert_null(strstr(text, "elements"));
	free(text);
}

static void test_hold_ipt(void **state)
{
	struct inet_tuple t4 = tuple(AF_INET, "127.0.0.1", 40000, "127.0.0.2", 8080);
	struct inet_tuple t6 = tuple(AF_INET6, "::1", 1, "fd00::2", 2);
	struct inet_tuple both[2] = { t4, t6 };
	char *text;

	(void)state;
	text = netlock_hold_ipt_add("CRLH_42", true, AF_INET, both, 2, false, 19456);
	/* in raw, before conntrack and every lock; no --queue-bypass: no listener drops */
	assert_string_equal(
		text, "*raw\n:CRLH_42_I - [0:0]\n:CRLH_42_O - [0:0]\n"
		      "-I PREROUTING -j CRLH_42_I\n-I OUTPUT -j CRLH_42_O\n"
		      "-A CRLH_42_I -p tcp -s 127.0.0.2 -d 127.0.0.1 --sport 8080 --dport 40000 "
		      "-j NFQUEUE --queue-num 19456\n"
		      "-A CRLH_42_I -p tcp -s 127.0.0.1 -d 127.0.0.2 --sport 40000 --dport 8080 "
		      "-j NFQUEUE --queue-num 19456\n"
		      "-A CRLH_42_O -p tcp -s 127.0.0.2 -d 127.0.0.1 --sport 8080 --dport 40000 "
		      "-j NFQUEUE --queue-num 19456\n"
		      "-A CRLH_42_O -p tcp -s 127.0.0.1 -d 127.0.0.2 --sport 40000 --dport 8080 "
		      "-j NFQUEUE --queue-num 19456\nCOMMIT\n");
	free(text);
	text = netlock_hold_ipt_add("CRLH_42", false, AF_INET6, both, 2, true, 3);
	assert_string_equal(text,
			    "*raw\n-A CRLH_42_I ! -i lo -j NFQUEUE --queue-num 3\n"
			    "-A CRLH_42_O ! -o lo -j NFQUEUE --queue-num 3\n"
			    "-A CRLH_42_I -p tcp -s fd00::2 -d ::1 --sport 2 --dport 1 -j NFQUEUE "
			    "--queue-num 3\n"
			    "-A CRLH_42_I -p tcp -s ::1 -d fd00::2 --sport 1 --dport 2 -j NFQUEUE "
			    "--queue-num 3\n"
			    "-A CRLH_42_O -p tcp -s fd00::2 -d ::1 --sport 2 --dport 1 -j NFQUEUE "
			    "--queue-num 3\n"
			    "-A CRLH_42_O -p tcp -s ::1 -d fd00::2 --sport 1 --dport 2 -j NFQUEUE "
			    "--queue-num 3\nCOMMIT\n");
	assert_null(strstr(text, "bypass"));
	free(text);
	assert_null(netlock_hold_ipt_add("CRLH_42", false, AF_INET, both, 2, false, -1));
	assert_null(netlock_hold_ipt_add("CRLH_42", false, AF_UNIX, both, 2, false, 1));
	{
		pid_t pids[4];
		const char *listing = "-P PREROUTING ACCEPT\n-N CRLH_42_I\n-N CRLH_42_O\n"
				      "-N CRLH_7_I\n-N CRLH_x_I\n-N CRLH_9_IX\n-N CRLH_42_I\n"
				      "-A PREROUTING -j CRLH_42_I\n";

		assert_int_equal(netlock_hold_chain_pids(listing, pids, 4), 2);
		assert_int_equal(pids[0], 42);
		assert_int_equal(pids[1], 7);
		assert_int_equal(netlock_hold_chain_pids(listing, pids, 1), 1);
	}
	text = netlock_hold_ipt_delete("CRLH_42");
	assert_string_equal(text,
			    "*raw\n-D PREROUTING -j CRLH_42_I\n-D OUTPUT -j CRLH_42_O\n"
			    "-F CRLH_42_I\n-F CRLH_42_O\n-X CRLH_42_I\n-X CRLH_42_O\nCOMMIT\n");
	free(text);
}

static void test_nft_add_delete(void **state)
{
	struct inet_tuple t6 = tuple(AF_INET6, "2001:db8::5", 80, "2001:db8::9", 33000);
	struct inet_tuple t4 = tuple(AF_INET, "1.2.3.4", 80, "5.6.7.8", 9);
	const char *names[] = { "criu_like_1_2", "criu_like_3_4", NULL };
	struct inet_tuple both[3] = { t4, t6, tuple(AF_INET, "1.2.3.4", 81, "5.6.7.8", 10) };
	struct inet_tuple bad = { .family = AF_PACKET };
	char *text;

	(void)state;
	text = netlock_nft_add("criu_like_1_2", &t6, 1);
	assert_string_equal(text, "add element inet criu_like_1_2 v6 { 2001:db8::5 . 80 . "
				  "2001:db8::9 . 33000 }\n");
	free(text);
	text = netlock_nft_add("criu_like_1_2", &t4, 1);
	assert_string_equal(text,
			    "add element inet criu_like_1_2 v4 { 1.2.3.4 . 80 . 5.6.7.8 . 9 }\n");
	free(text);
	/* a batch: one command per family, in one transaction */
	text = netlock_nft_add("criu_like_1_2", both, 3);
	assert_string_equal(text, "add element inet criu_like_1_2 v4 { 1.2.3.4 . 80 . 5.6.7.8 . 9, "
				  "1.2.3.4 . 81 . 5.6.7.8 . 10 }\n"
				  "add element inet criu_like_1_2 v6 { 2001:db8::5 . 80 . "
				  "2001:db8::9 . 33000 }\n");
	free(text);
	assert_null(netlock_nft_add("criu_like_1_2", &bad, 1));
	assert_int_equal(errno, EINVAL);
	text = netlock_nft_delete(names);
	assert_string_equal(text,
			    "add table inet criu_like_1_2\ndelete table inet criu_like_1_2\n"
			    "add table inet criu_like_3_4\ndelete table inet criu_like_3_4\n");
	free(text);
}

static void test_ipt(void **state)
{
	struct inet_tuple t4 = tuple(AF_INET, "127.0.0.1", 40000, "127.0.0.2", 8080);
	struct inet_tuple t6 = tuple(AF_INET6, "::1", 1, "fd00::2", 2);
	struct inet_tuple both[3] = { t4, t6, tuple(AF_INET, "10.0.0.1", 1, "10.0.0.2", 2) };
	char *text;

	(void)state;
	text = netlock_ipt_add("CRLK_7_99", true, AF_INET, &t4, 1);
	assert_string_equal(text,
			    "*filter\n:CRLK_7_99 - [0:0]\n-I INPUT -j CRLK_7_99\n"
			    "-I OUTPUT -j CRLK_7_99\n"
			    "-A CRLK_7_99 -p tcp -s 127.0.0.2 -d 127.0.0.1 --sport 8080 --dport "
			    "40000 -j DROP\n"
			    "-A CRLK_7_99 -p tcp -s 127.0.0.1 -d 127.0.0.2 --sport 40000 --dport "
			    "8080 -j DROP\nCOMMIT\n");
	free(text);
	text = netlock_ipt_add("CRLK_7_99", false, AF_INET6, &t6, 1);
	assert_string_equal(text,
			    "*filter\n"
			    "-A CRLK_7_99 -p tcp -s fd00::2 -d ::1 --sport 2 --dport 1 -j DROP\n"
			    "-A CRLK_7_99 -p tcp -s ::1 -d fd00::2 --sport 1 --dport 2 -j DROP\n"
			    "COMMIT\n");
	free(text);
	/* a batch of both families: the rules of the one asked for only */
	text = netlock_ipt_add("CRLK_7_99", false, AF_INET6, both, 3);
	assert_string_equal(text,
			    "*filter\n"
			    "-A CRLK_7_99 -p tcp -s fd00::2 -d ::1 --sport 2 --dport 1 -j DROP\n"
			    "-A CRLK_7_99 -p tcp -s ::1 -d fd00::2 --sport 1 --dport 2 -j DROP\n"
			    "COMMIT\n");
	free(text);
	text = netlock_ipt_add("CRLK_7_99", false, AF_INET, both, 3);
	assert_non_null(strstr(text, "--sport 8080 --dport 40000 -j DROP\n"));
	assert_non_null(strstr(text, "--sport 1 --dport 2 -j DROP\n"));
	assert_null(strstr(text, "::1"));
	free(text);
	assert_null(netlock_ipt_add("CRLK_7_99", false, AF_UNIX, both, 3));
	text = netlock_ipt_delete("CRLK_7_99");
	assert_string_equal(text, "*filter\n-D INPUT -j CRLK_7_99\n-D OUTPUT -j CRLK_7_99\n"
				  "-F CRLK_7_99\n-X CRLK_7_99\nCOMMIT\n");
	free(text);
}

static void test_ipt_keep(void **state)
{
	char *text;

	(void)state;
	text = netlock_ipt_keep("CRLK_7_99", "CRLK_K7_5f", "/var/img/a b");
	/* the comment first: iptables-restore cannot find a chain renamed in the same commit */
	assert_string_equal(text,
			    "*filter\n"
			    "-A CRLK_7_99 -m comment --comment \"criu-like images: /var/img/a b\"\n"
			    "-E CRLK_7_99 CRLK_K7_5f\nCOMMIT\n");
	free(text);
	/* a path the tools cannot quote is not named */
	text = netlock_ipt_keep("CRLK_7_99", "CRLK_K7_5f", "/var/img/\"x");
	assert_string_equal(text, "*filter\n-E CRLK_7_99 CRLK_K7_5f\nCOMMIT\n");
	free(text);
	text = netlock_ipt_keep("CRLK_7_99", "CRLK_K7_5f", NULL);
	assert_string_equal(text, "*filter\n-E CRLK_7_99 CRLK_K7_5f\nCOMMIT\n");
	free(text);
}

/* The kept lock's half of the cleanup rule: it lives as long as its images record it. */
static void test_kept(void **state)
{
	static const char nft[] = "table inet criu_like_kept_7_5f {\n"
				  "\tcomment \"criu-like images: /var/img/a b\"\n"
				  "\tset v4 {\n";
	static const char ipt[] = "-N CRLK_K7_5f\n"
				  "-A CRLK_K7_5f -m comment --comment \"criu-like images: /img\"\n"
				  "-A CRLK_K7_5f -s 1.1.1.1/32 -d 2.2.2.2/32 -p tcp -j DROP\n";
	char dir[NETLOCK_DIR_MAX + 1], big[NETLOCK_DIR_MAX + 2];
	pid_t pid = 0;

	(void)state;
	assert_int_equal(netlock_recorded_dir(nft, dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/var/img/a b");
	assert_int_equal(netlock_recorded_dir(ipt, dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/img");
	assert_int_equal(netlock_recorded_dir("table inet criu_like_kept_7_5f {\n", dir,
					      sizeof(dir)),
			 -ENOENT);
	assert_int_equal(netlock_recorded_dir("comment \"criu-like images: /x", dir, sizeof(dir)),
			 -EINVAL);
	assert_int_equal(netlock_recorded_dir(nft, dir, 5), -EINVAL);

	assert_true(netlock_dir_recordable("/var/img/a b"));
	assert_false(netlock_dir_recordable("img"));
	assert_false(netlock_dir_recordable("/a\"b"));
	assert_false(netlock_dir_recordable("/a\\b"));
	assert_false(netlock_dir_recordable("/a\nb"));
	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	assert_false(netlock_dir_recordable(big));
	big[NETLOCK_DIR_MAX] = '\0';
	assert_true(netlock_dir_recordable(big));
	/* nftables refuses a comment past 128 bytes (podman's image paths are longer) */
	assert_true(strlen(NETLOCK_DIR_TAG) + NETLOCK_DIR_MAX < 128);

	assert_int_equal(netlock_kept_pid("criu_like_kept_77_5f", &pid), 0);
	assert_int_equal(pid, 77);
	assert_int_equal(netlock_kept_pid("CRLK_K78_1", &pid), 0);
	assert_int_equal(pid, 78);
	assert_int_equal(netlock_kept_pid("criu_like_77_5", &pid), -EINVAL);

	/* the images record this lock: kept; another lock, none, no inventory: stale */
	assert_int_equal(netlock_judge_kept("criu_like_kept_7_5f", "/img", "criu_like_kept_7_5f",
					    false),
			 NETLOCK_KEPT);
	assert_int_equal(netlock_judge_kept("criu_like_kept_7_5f", "/img", "criu_like_kept_7_60",
					    false),
			 NETLOCK_STALE);
	assert_int_equal(netlock_judge_kept("criu_like_kept_7_5f", "/img", NULL, false),
			 NETLOCK_STALE);
	/* its dumper still runs: the inventory is being written */
	assert_int_equal(netlock_judge_kept("criu_like_kept_7_5f", "/img", NULL, true),
			 NETLOCK_KEPT);
	/* it names no directory: nothing tells, left alone */
	assert_int_equal(netlock_judge_kept("criu_like_kept_7_5f", NULL, NULL, false),
			 NETLOCK_KEPT);
}

static void test_names(void **state)
{
	char buf[NETLOCK_NAME_MAX];
	enum netlock_kind k;

	(void)state;
	assert_int_equal(netlock_make_name(NETLOCK_NFTABLES, false, 1234, 5678, buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "criu_like_1234_5678");
	assert_int_equal(netlock_make_name(NETLOCK_NFTABLES, true, 1234, 0x6750abcd, buf,
					   sizeof(buf)),
			 0);
	assert_string_equal(buf, "criu_like_kept_1234_6750abcd");
	assert_int_equal(netlock_make_name(NETLOCK_IPTABLES, false, 4194304, 123456789012ULL, buf,
					   sizeof(buf)),
			 0);
	assert_string_equal(buf, "CRLK_4194304_123456789012");
	/* the largest pid and a 64-bit stamp still fit iptables' 28 characters */
	assert_int_equal(netlock_make_name(NETLOCK_IPTABLES, true, 4194304, 0xffffffffULL, buf,
					   sizeof(buf)),
			 0);
	assert_string_equal(buf, "CRLK_K4194304_ffffffff");
	assert_int_equal(netlock_make_name(NETLOCK_IPTABLES, false, 4194304, UINT64_MAX, buf,
					   sizeof(buf)),
			 -ENAMETOOLONG);
	assert_int_equal(netlock_make_name(NETLOCK_SKIP, false, 1, 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(netlock_make_name(NETLOCK_NFTABLES, false, 1, 1, buf, 8), -ENAMETOOLONG);

	assert_int_equal(netlock_name_kind("criu_like_kept_1_2", &k), 0);
	assert_int_equal(k, NETLOCK_NFTABLES);
	assert_int_equal(netlock_name_kind("CRLK_K1_2", &k), 0);
	assert_int_equal(k, NETLOCK_IPTABLES);
	assert_int_equal(netlock_name_kind("filter", &k), -EINVAL);
}

/* pid 100 runs, started at 5000; pid 200 runs, started at 7000 */
static bool fake_alive(pid_t pid, uint64_t start, void *arg)
{
	int *calls = arg;

	(*calls)++;
	return (pid == 100 && start == 5000) || (pid == 200 && start == 7000);
}

static void test_judge(void **state)
{
	int calls = 0;

	(void)state;
	assert_int_equal(netlock_judge("criu_like_100_5000", fake_alive, &calls), NETLOCK_LIVE);
	assert_int_equal(netlock_judge("CRLK_200_7000", fake_alive, &calls), NETLOCK_LIVE);
	/* the pid runs, but it is another process: the criu-like that crashed is gone */
	assert_int_equal(netlock_judge("criu_like_100_4999", fake_alive, &calls), NETLOCK_STALE);
	assert_int_equal(netlock_judge("criu_like_300_5000", fake_alive, &calls), NETLOCK_STALE);
	assert_int_equal(netlock_judge("CRLK_300_1", fake_alive, &calls), NETLOCK_STALE);
	assert_int_equal(calls, 5);
	/* kept for a complete dump: never asked about its pid, never removed */
	assert_int_equal(netlock_judge("criu_like_kept_300_6750abcd", fake_alive, &calls),
			 NETLOCK_KEPT);
	assert_int_equal(netlock_judge("CRLK_K300_1f", fake_alive, &calls), NETLOCK_KEPT);
	assert_int_equal(calls, 5);
	/* anything else, even close to our names, is left alone */
	assert_int_equal(netlock_judge("filter", fake_alive, &calls), NETLOCK_FOREIGN);
	assert_int_equal(netlock_judge("criu_like_", fake_alive, &calls), NETLOCK_FOREIGN);
	assert_int_equal(netlock_judge("criu_like_100", fake_alive, &calls), NETLOCK_FOREIGN);
	assert_int_equal(netlock_judge("criu_like_100_", fake_alive, &calls), NETLOCK_FOREIGN);
	assert_int_equal(netlock_judge("criu_like_100_50x", fake_alive, &calls), NETLOCK_FOREIGN);
	assert_int_equal(netlock_judge("criu_like_0_1", fake_alive, &calls), NETLOCK_FOREIGN);
	assert_int_equal(netlock_judge("criu_like_mine", fake_alive, &calls), NETLOCK_FOREIGN);
	assert_int_equal(netlock_judge("criu_like_kept_1", fake_alive, &calls), NETLOCK_FOREIGN);
	assert_int_equal(netlock_judge("criu_like_kept_1_xyz", fake_alive, &calls),
			 NETLOCK_FOREIGN);
	assert_int_equal(netlock_judge("CRLK", fake_alive, &calls), NETLOCK_FOREIGN);
	assert_int_equal(calls, 5);
}

/* The whole decision over a real listing: which tables a run removes. */
static void test_listing(void **state)
{
	static const char nft[] = "table ip filter\n"
				  "table inet criu_like_100_5000\n"
				  "table inet criu_like_300_5000\n"
				  "table ip criu_like_300_1\n" /* not our family */
				  "table inet criu_like_kept_300_6750abcd\n"
				  "table inet firewalld\n"
				  "table inet criu_like_200_6999";
	static const char ipt[] = "-P INPUT ACCEPT\n-P OUTPUT ACCEPT\n-N CRLK_200_7000\n"
				  "-N CRLK_K1_2\n-N DOCKER\n-A INPUT -j CRLK_200_7000\n"
				  "-N CRLK_9_9\n-P INPUT ACCEPT\n-N CRLK_K1_2\n";
	const char *stale[8];
	char **names;
	int calls = 0, i, n = 0;

	(void)state;
	names = netlock_list_names(NETLOCK_NFTABLES, nft);
	assert_non_null(names);
	for (i = 0; names[i]; i++)
		if (netlock_judge(names[i], fake_alive, &calls) == NETLOCK_STALE)
			stale[n++] = names[i];
	assert_int_equal(i, 4);
	assert_int_equal(n, 2);
	assert_string_equal(stale[0], "criu_like_300_5000");
	assert_string_equal(stale[1], "criu_like_200_6999");
	free(names);

	/* iptables -S, then ip6tables -S: a chain in both families listed once */
	names = netlock_list_names(NETLOCK_IPTABLES, ipt);
	assert_non_null(names);
	assert_string_equal(names[0], "CRLK_200_7000");
	assert_string_equal(names[1], "CRLK_K1_2");
	assert_string_equal(names[2], "CRLK_9_9");
	assert_null(names[3]);
	assert_int_equal(netlock_judge(names[2], fake_alive, &calls), NETLOCK_STALE);
	free(names);

	names = netlock_list_names(NETLOCK_NFTABLES, "");
	assert_non_null(names);
	assert_null(names[0]);
	free(names);
}

/* The system's side of the rule: this process runs, with its start time only. */
static void test_proc_alive(void **state)
{
	char name[NETLOCK_NAME_MAX];
	unsigned long long start = 0;
	char path[64], text[1024], *p;
	FILE *f;
	int field;

	(void)state;
	snprintf(path, sizeof(path), "/proc/%d/stat", getpid());
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	p = strrchr(text, ')');
	for (field = 2; p && *p && field < 22; p++)
		if (*p == ' ')
			field++;
	assert_int_equal(sscanf(p, "%llu", &start), 1);

	assert_true(netlock_proc_alive(getpid(), start, NULL));
	assert_false(netlock_proc_alive(getpid(), start + 1, NULL));
	/* above the largest pid_max (4194304): never a process */
	assert_false(netlock_proc_alive(0x3fffffff, start, NULL));
	assert_int_equal(netlock_make_name(NETLOCK_NFTABLES, false, getpid(), start, name,
					   sizeof(name)),
			 0);
	assert_int_equal(netlock_judge(name, netlock_proc_alive, NULL), NETLOCK_LIVE);
	assert_int_equal(netlock_make_name(NETLOCK_IPTABLES, false, getpid(), start + 7, name,
					   sizeof(name)),
			 0);
	assert_int_equal(netlock_judge(name, netlock_proc_alive, NULL), NETLOCK_STALE);
}

static void test_kind(void **state)
{
	enum netlock_kind k = NETLOCK_SKIP;

	(void)state;
	assert_int_equal(netlock_parse_kind(NULL, &k), 0);
	assert_int_equal(k, NETLOCK_NFTABLES);
	assert_int_equal(netlock_parse_kind("iptables", &k), 0);
	assert_int_equal(k, NETLOCK_IPTABLES);
	assert_int_equal(netlock_parse_kind("skip", &k), 0);
	assert_int_equal(k, NETLOCK_SKIP);
	assert_int_equal(netlock_parse_kind("nftables", &k), 0);
	assert_int_equal(k, NETLOCK_NFTABLES);
	assert_int_equal(netlock_parse_kind("nft", &k), -EINVAL);
	assert_int_equal(netlock_parse_kind("", &k), -EINVAL);
	assert_string_equal(netlock_kind_name(NETLOCK_IPTABLES), "iptables");
}

static int parse(struct cr_options *o, const char *const *args, int n, uint64_t *seen)
{
	const struct cli_command *cmd;
	char *argv[8];
	int i, first;

	for (i = 0; i < n; i++)
		argv[i] = (char *)args[i];
	argv[n] = NULL;
	cr_options_init(o);
	i = cli_parse(n, argv, o, &cmd, &first, seen);
	if (!i)
		i = cli_validate(cmd, *seen, n - first);
	return i;
}

static void test_cli(void **state)
{
	static const char *const ok[] = { "criu-like", "dump",		 "-t",
					  "1",	       "--network-lock", "iptables" };
	static const char *const bad[] = { "criu-like", "dump",		  "-t",
					   "1",		"--network-lock", "ebtables" };
	static const char *const rst[] = { "criu-like", "restore", "--network-lock", "skip" };
	struct cr_options o;
	uint64_t seen;

	(void)state;
	assert_int_equal(parse(&o, ok, 6, &seen), 0);
	assert_string_equal(o.network_lock, "iptables");
	cr_options_fini(&o);
	assert_int_equal(parse(&o, bad, 6, &seen), -EINVAL);
	cr_options_fini(&o);
	assert_int_equal(parse(&o, rst, 4, &seen), 0);
	assert_string_equal(o.network_lock, "skip");
	cr_options_fini(&o);
}

static void test_tuple_arg(void **state)
{
	struct inet_tuple t;
	char buf[128];

	(void)state;
	assert_int_equal(netlock_parse_tuple("127.0.0.1:5000,10.0.0.2:80", &t), 0);
	assert_int_equal(t.family, AF_INET);
	assert_int_equal(netlock_nft_elem(&t, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "127.0.0.1 . 5000 . 10.0.0.2 . 80");
	assert_int_equal(netlock_parse_tuple("[::1]:1,[fe80::2]:65535", &t), 0);
	assert_int_equal(t.family, AF_INET6);
	assert_int_equal(netlock_nft_elem(&t, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "::1 . 1 . fe80::2 . 65535");
	assert_int_equal(netlock_parse_tuple("127.0.0.1:5000,[::1]:80", &t), -EINVAL);
	assert_int_equal(netlock_parse_tuple("127.0.0.1:5000", &t), -EINVAL);
	assert_int_equal(netlock_parse_tuple("127.0.0.1:0,1.1.1.1:1", &t), -EINVAL);
	assert_int_equal(netlock_parse_tuple("127.0.0.1:65536,1.1.1.1:1", &t), -EINVAL);
	assert_int_equal(netlock_parse_tuple("::1:5,::1:6", &t), -EINVAL);
	assert_int_equal(netlock_parse_tuple("host:5,1.1.1.1:1", &t), -EINVAL);
}

/*
 * A tool started ahead (net-lock-run.c) gets its input only when finished:
 * its output is what that input made; a failing one fails; one whose input
 * was ended first did nothing with the input given after (-EPIPE).
 */
static void test_tool_ahead(void **state)
{
	const char *const cat[] = { "cat", NULL };
	const char *const fail[] = { "sh", "-c", "cat >/dev/null; exit 3", NULL };
	const char *const none[] = { "criu-like-no-such-tool", NULL };
	struct tool_run *r;
	char *out = NULL;

	(void)state;
	r = tool_start(cat);
	assert_non_null(r);
	usleep(10000); /* it waits for its input meanwhile */
	assert_int_equal(tool_finish(r, "*raw\nCOMMIT\n", &out, true), 0);
	assert_string_equal(out, "*raw\nCOMMIT\n");
	free(out);
	out = NULL;
	r = tool_start(fail);
	assert_non_null(r);
	assert_int_equal(tool_finish(r, "x\n", NULL, true), -EIO);
	r = tool_start(cat);
	assert_non_null(r);
	tool_end_input(r);
	assert_int_equal(tool_finish(r, "late\n", &out, true), -EPIPE);
	assert_null(out);
	r = tool_start(cat);
	assert_non_null(r);
	tool_cancel(r);
	assert_int_equal(tool_finish(r, "late\n", &out, true), -EIO);
	assert_null(out);
	r = tool_start(cat);
	assert_non_null(r);
	tool_abandon(r);
	errno = 0;
	assert_null(tool_start(none));
	assert_int_equal(errno, ENOENT);
}

/* What iptables-nft leaves of table raw once the holder's chains are gone, and what it does not. */
static void test_raw_bare(void **state)
{
	const char *bare = "table ip raw {\n"
			   "\tchain PREROUTING {\n"
			   "\t\ttype filter hook prerouting priority raw; policy accept;\n"
			   "\t}\n\n"
			   "\tchain OUTPUT {\n"
			   "\t\ttype filter hook output priority raw; policy accept;\n"
			   "\t}\n"
			   "}\n";
	const char *rule = "table ip raw {\n"
			   "\tchain PREROUTING {\n"
			   "\t\ttype filter hook prerouting priority raw; policy accept;\n"
			   "\t\tip saddr 10.0.0.1 counter packets 0 bytes 0 notrack\n"
			   "\t}\n"
			   "}\n";
	const char *drop = "table ip6 raw {\n"
			   "\tchain OUTPUT {\n"
			   "\t\ttype filter hook output priority raw; policy drop;\n"
			   "\t}\n"
			   "}\n";
	const char *other = "table ip6 raw {\n"
			    "\tchain OUTPUT {\n"
			    "\t\ttype filter hook output priority raw; policy accept;\n"
			    "\t}\n"
			    "\tchain CRLH_12_O {\n"
			    "\t}\n"
			    "}\n";

	(void)state;
	assert_true(netlock_raw_table_bare(bare));
	assert_false(netlock_raw_table_bare(rule));
	assert_false(netlock_raw_table_bare(drop));
	assert_false(netlock_raw_table_bare(other));
	assert_false(netlock_raw_table_bare(""));
	assert_false(netlock_raw_table_bare(NULL));
	/* `nft list tables` */
	assert_true(netlock_listing_has("table inet x\ntable ip raw\n", "table ip raw"));
	assert_false(netlock_listing_has("table ip raw2\ntable ip6 raw\n", "table ip raw"));
	assert_true(netlock_listing_has("table ip6 raw", "table ip6 raw"));
	assert_false(netlock_listing_has("", "table ip raw"));
}

/*
 * nft_table_exists(): the kernel's answer for a table inet made by the nft
 * runner and for one that is not there, in a network namespace of a child
 * of its own (root and nftables needed, else skipped).
 */
/*
 * nft_inet_tables() in that namespace: the inet tables only, one line each,
 * the names netlock_list_names() then finds the same as in libnftables'
 * `list tables`.
 */
static int inet_tables_check(struct nft_runner *r)
{
	_cleanup_free_ char *nl = NULL, *lib = NULL, **a = NULL, **b = NULL;
	int i;

	if (nft_exec(r, "add table inet criu_like_1_2\nadd table ip criu_like_3_4\n", NULL, true))
		return 10;
	if (nft_inet_tables(&nl))
		return 11;
	if (strcmp(nl, "table inet criu_like_test_t\ntable inet criu_like_1_2\n") &&
	    strcmp(nl, "table inet criu_like_1_2\ntable inet criu_like_test_t\n"))
		return 12;
	if (nft_exec(r, "list tables\n", &lib, true))
		return 13;
	a = netlock_list_names(NETLOCK_NFTABLES, nl);
	b = netlock_list_names(NETLOCK_NFTABLES, lib);
	if (!a || !b)
		return 14;
	for (i = 0; a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]))
			return 15;
	return a[i] || b[i] || i != 2 ? 16 : 0;
}

/* The namespace lock's table (ns/net.c) named @name, made by libnftables. */
static int lock_by_text(struct nft_runner *r, const char *name)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "table inet %s {\n"
		 "	chain input { type filter hook input priority -160; policy accept; "
		 "iifname != \"lo\" drop; }\n"
		 "	chain output { type filter hook output priority -160; policy accept; "
		 "oifname != \"lo\" drop; }\n"
		 "}\n",
		 name);
	return nft_exec(r, text, NULL, true);
}

/*
 * nft_chains_flush() and nft_table_delete(), the lock's two changes once the
 * tree runs, by netlink: the rules go, the chains and their hooks stay; then
 * the table goes; either on what is not there is the kernel's -ENOENT.
 */
static int flush_delete_check(struct nft_runner *r)
{
	static const char *const chains[] = { "input", "output" };
	static const char *const missing[] = { "forward" };
	_cleanup_free_ char *before = NULL, *after = NULL;
	_cleanup_close_ int fd = nft_nl_open();

	if (lock_by_text(r, "criu_like_test_l"))
		return 77;
	if (fd < 0)
		return 27;
	if (nft_exec(r, "list table inet criu_like_test_l\n", &before, true) ||
	    !strstr(before, "drop"))
		return 20;
	if (nft_chains_flush(fd, NFPROTO_INET, "criu_like_test_l", chains, 2))
		return 21;
	if (nft_exec(r, "list table inet criu_like_test_l\n", &after, true))
		return 22;
	if (strstr(after, "drop") || !strstr(after, "hook input") || !strstr(after, "hook output"))
		return 23;
	if (nft_chains_flush(fd, NFPROTO_INET, "criu_like_test_l", missing, 1) != -ENOENT)
		return 24;
	if (nft_table_delete(fd, NFPROTO_INET, "criu_like_test_l") ||
	    nft_table_exists("criu_like_test_l") != 0)
		return 25;
	return nft_table_delete(fd, NFPROTO_INET, "criu_like_test_l") == -ENOENT ? 0 : 26;
}

/*
 * nft_lo_only(), the lock made by netlink: the table nft lists is the one the
 * lock's text makes (the table's name aside), and what it drops is all but lo.
 */
static int lo_only_check(struct nft_runner *r)
{
	_cleanup_free_ char *text = NULL, *nl = NULL;
	_cleanup_close_ int fd = nft_nl_open();
	char *p;

	if (fd < 0)
		return 40;
	if (lock_by_text(r, "criu_like_test_x"))
		return 77;
	if (nft_lo_only(fd, "criu_like_test_y", -160))
		return 41;
	if (nft_exec(r, "list table inet criu_like_test_x\n", &text, true) ||
	    nft_exec(r, "list table inet criu_like_test_y\n", &nl, true))
		return 42;
	p = strstr(nl, "criu_like_test_y");
	if (!p)
		return 43;
	p[strlen("criu_like_test_")] = 'x';
	if (strcmp(text, nl)) {
		print_message("libnftables:\n%s\nnetlink:\n%s\n", text, nl);
		return 44;
	}
	if (!strstr(nl, "iifname != \"lo\" drop") || !strstr(nl, "oifname != \"lo\" drop"))
		return 45;
	if (nft_table_delete(fd, NFPROTO_INET, "criu_like_test_y") ||
	    nft_exec(r, "delete table inet criu_like_test_x\n", NULL, true))
		return 46;
	return 0;
}

/*
 * nft_raw_holder_only() on a table ip raw as a holder's iptables rules make
 * it (nfq-hold-rules.c): 1 while it holds only the base chains with a jump
 * each and the holder's two chains, 0 with a rule or a chain of another's,
 * -ENOENT for another holder's prefix or a family without the table; then the
 * holder's chains emptied and the table deleted by netlink.
 */
static int raw_holder_check(struct nft_runner *r)
{
	static const char *const ours[] = { "CRLH_7_I", "CRLH_7_O" };
	_cleanup_free_ char *after = NULL, *tables = NULL;
	_cleanup_close_ int fd = nft_nl_open();

	if (fd < 0)
		return 30;
	if (nft_exec(r,
		     "table ip raw {\n"
		     "	chain PREROUTING { type filter hook prerouting priority raw; policy "
		     "accept; }\n"
		     "	chain OUTPUT { type filter hook output priority raw; policy accept; }\n"
		     "	chain CRLH_7_I { counter; }\n"
		     "	chain CRLH_7_O { counter; }\n"
		     "}\n"
		     "add rule ip raw PREROUTING jump CRLH_7_I\n"
		     "add rule ip raw OUTPUT jump CRLH_7_O\n",
		     NULL, true))
		return 77;
	if (nft_raw_holder_only(fd, NFPROTO_IPV4, "CRLH_7") != 1)
		return 31;
	if (nft_raw_holder_only(fd, NFPROTO_IPV4, "CRLH_8") != -ENOENT ||
	    nft_raw_holder_only(fd, NFPROTO_IPV6, "CRLH_7") != -ENOENT)
		return 32;
	if (nft_exec(r, "add rule ip raw PREROUTING counter\n", NULL, true) ||
	    nft_raw_holder_only(fd, NFPROTO_IPV4, "CRLH_7") != 0)
		return 33;
	if (nft_exec(r, "flush chain ip raw PREROUTING\nadd rule ip raw PREROUTING jump CRLH_7_I\n",
		     NULL, true) ||
	    nft_raw_holder_only(fd, NFPROTO_IPV4, "CRLH_7") != 1)
		return 34;
	if (nft_exec(r, "add chain ip raw theirs\n", NULL, true) ||
	    nft_raw_holder_only(fd, NFPROTO_IPV4, "CRLH_7") != 0)
		return 35;
	if (nft_exec(r, "delete chain ip raw theirs\n", NULL, true) ||
	    nft_raw_holder_only(fd, NFPROTO_IPV4, "CRLH_7") != 1)
		return 36;
	if (nft_chains_flush(fd, NFPROTO_IPV4, "raw", ours, 2) ||
	    nft_exec(r, "list table ip raw\n", &after, true) || strstr(after, "counter") ||
	    !strstr(after, "jump CRLH_7_I"))
		return 37;
	if (nft_table_delete(fd, NFPROTO_IPV4, "raw") ||
	    nft_exec(r, "list tables\n", &tables, true) || strstr(tables, "table ip raw"))
		return 38;
	return 0;
}

static int table_exists_child(void)
{
	struct nft_runner *r;
	int ret;

	if (unshare(CLONE_NEWNET))
		return 77;
	if (nft_table_exists("criu_like_test_t") != 0)
		return 1;
	{
		_cleanup_free_ char *none = NULL;

		if (nft_inet_tables(&none) || strcmp(none, ""))
			return 5;
	}
	r = nft_runner_open();
	if (!r || nft_exec(r, "add table inet criu_like_test_t\n", NULL, true))
		return 77;
	ret = nft_table_exists("criu_like_test_t") == 1 ? 0 : 2;
	if (!ret && nft_table_exists("criu_like_test_u") != 0)
		ret = 3;
	if (!ret && nft_table_exists("criu_like_test_t2") != 0)
		ret = 4;
	if (!ret)
		ret = inet_tables_check(r);
	if (!ret)
		ret = flush_delete_check(r);
	if (!ret)
		ret = lo_only_check(r);
	if (!ret)
		ret = raw_holder_check(r);
	nft_runner_close(r);
	return ret;
}

static void test_table_exists(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	if (geteuid())
		skip();
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(table_exists_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elem),
		cmocka_unit_test(test_nft_create),
		cmocka_unit_test(test_nft_add_delete),
		cmocka_unit_test(test_ipt),
		cmocka_unit_test(test_hold_ipt),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_listing),
		cmocka_unit_test(test_proc_alive),
		cmocka_unit_test(test_kind),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_tuple_arg),
		cmocka_unit_test(test_ipt_keep),
		cmocka_unit_test(test_kept),
		cmocka_unit_test(test_tool_ahead),
		cmocka_unit_test(test_raw_bare),
		cmocka_unit_test(test_table_exists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
