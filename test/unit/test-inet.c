// SPDX-License-Identifier: GPL-2.0
/*
 * TCP and UDP sockets (files/inet.c and its neighbours): the entry filled
 * from a sock_diag answer built here (addresses, ports, state, shutdown),
 * addresses as text for the messages, the 4-tuple given to the network lock,
 * the split of a send queue into its sent and never-sent parts, sockaddrs
 * from entries, which options apply to which socket, multicast addresses,
 * queued datagrams packed into one block; the kernel fact the dump relies
 * on: a connection closed in repair mode sends neither FIN nor RST; and one
 * end of a connection read in repair mode and rebuilt in a new socket (root
 * only, skipped otherwise).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../criu-like/files/files-int.h"
#include "../../criu-like/files/inet.h"
#include "dump.h"
#include "options.h"
#include "net-lock.h"

/* A SOCK_DIAG_BY_FAMILY answer: header, inet_diag_msg, an INET_DIAG_SHUTDOWN attribute. */
struct fake_diag {
	struct nlmsghdr h;
	struct inet_diag_msg m;
	struct nlattr a;
	uint8_t shutdown;
	uint8_t pad[3];
};

static void fake_v4(struct fake_diag *f, uint8_t state, const char *src, uint16_t sport,
		    const char *dst, uint16_t dport)
{
	memset(f, 0, sizeof(*f));
	f->h.nlmsg_len = sizeof(*f) - sizeof(f->pad);
	f->h.nlmsg_type = 20; /* SOCK_DIAG_BY_FAMILY */
	f->m.idiag_family = AF_INET;
	f->m.idiag_state = state;
	f->m.idiag_inode = 4242;
	f->m.idiag_rqueue = 3;
	f->m.idiag_wqueue = 128;
	f->m.id.idiag_sport = htons(sport);
	f->m.id.idiag_dport = htons(dport);
	inet_pton(AF_INET, src, f->m.id.idiag_src);
	inet_pton(AF_INET, dst, f->m.id.idiag_dst);
	f->a.nla_len = NLA_HDRLEN + 1;
	f->a.nla_type = INET_DIAG_SHUTDOWN;
	f->shutdown = 2;
}

static void test_diag_parse(void **state)
{
	struct inet_sk_diag dg;
	struct fake_diag f;
	uint8_t lo[4] = { 127, 0, 0, 1 };

	(void)state;
	fake_v4(&f, TCP_ESTABLISHED, "127.0.0.1", 5555, "10.1.2.3", 40000);
	assert_int_equal(inet_diag_parse(&f.h, IPPROTO_TCP, &dg), 0);
	assert_int_equal(dg.ino, 4242);
	assert_int_equal(dg.family, AF_INET);
	assert_int_equal(dg.proto, IPPROTO_TCP);
	assert_int_equal(dg.state, TCP_ESTABLISHED);
	assert_int_equal(dg.sport, 5555);
	assert_int_equal(dg.dport, 40000);
	assert_memory_equal(dg.src, lo, 4);
	assert_int_equal(dg.rqueue, 3);
	assert_int_equal(dg.wqueue, 128);
	assert_int_equal(dg.shutdown, 2);

	/* too short for an inet_diag_msg */
	f.h.nlmsg_len = NLMSG_LENGTH(sizeof(f.m) - 1);
	assert_int_equal(inet_diag_parse(&f.h, IPPROTO_TCP, &dg), -EINVAL);
	/* not an inet family */
	fake_v4(&f, TCP_LISTEN, "0.0.0.0", 80, "0.0.0.0", 0);
	f.m.idiag_family = AF_UNIX;
	assert_int_equal(inet_diag_parse(&f.h, IPPROTO_TCP, &dg), -EINVAL);
}

static void test_entry_from_diag(void **state)
{
	InetSkEntry e = INET_SK_ENTRY__INIT;
	struct inet_sk_diag dg;
	struct inet_tuple t;
	struct fake_diag f;
	char buf[2 * INET_ADDR_STRLEN + 8];

	(void)state;
	fake_v4(&f, TCP_ESTABLISHED, "127.0.0.1", 5555, "10.1.2.3", 40000);
	assert_int_equal(inet_diag_parse(&f.h, IPPROTO_TCP, &dg), 0);
	e.family = AF_INET;
	inet_entry_addrs(&e, &dg);
	assert_true(e.has_src_port && e.has_dst_port && e.has_src_addr && e.has_dst_addr);
	assert_int_equal(e.src_addr.len, 4);
	assert_string_equal(inet_entry_ends(&e, buf, sizeof(buf)),
			    "127.0.0.1:5555 -> 10.1.2.3:40000");
	assert_int_equal(inet_entry_tuple(&e, &t), 0);
	assert_int_equal(t.family, AF_INET);
	assert_int_equal(t.sport, 5555);
	assert_int_equal(t.dport, 40000);
	assert_memory_equal(t.dst, dg.dst, 4);

	/* a dual-stack socket talking IPv4: the tuple is IPv4, as its packets are */
	{
		uint8_t s6[16], d6[16];

		inet_pton(AF_INET6, "::ffff:127.0.0.1", s6);
		inet_pton(AF_INET6, "::ffff:10.1.2.3", d6);
		e.family = AF_INET6;
		e.src_addr.data = s6;
		e.dst_addr.data = d6;
		e.src_addr.len = e.dst_addr.len = 16;
		assert_int_equal(inet_entry_tuple(&e, &t), 0);
		assert_int_equal(t.family, AF_INET);
		assert_memory_equal(t.src, dg.src, 4);
		assert_memory_equal(t.dst, dg.dst, 4);
		assert_int_equal(t.src[4], 0);
		inet_pton(AF_INET6, "::1", d6); /* not mapped: stays IPv6 */
		assert_int_equal(inet_entry_tuple(&e, &t), 0);
		assert_int_equal(t.family, AF_INET6);
		e.family = AF_INET;
	}

	/* a listener: no peer, no tuple */
	fake_v4(&f, TCP_LISTEN, "0.0.0.0", 80, "0.0.0.0", 0);
	assert_int_equal(inet_diag_parse(&f.h, IPPROTO_TCP, &dg), 0);
	e = (InetSkEntry)INET_SK_ENTRY__INIT;
	e.family = AF_INET;
	inet_entry_addrs(&e, &dg);
	assert_true(e.has_src_port);
	assert_false(e.has_dst_port);
	assert_string_equal(inet_entry_ends(&e, buf, sizeof(buf)), "0.0.0.0:80");
	assert_int_equal(inet_entry_tuple(&e, &t), -EINVAL);

	/* never bound: no local port either */
	fake_v4(&f, TCP_CLOSE, "0.0.0.0", 0, "0.0.0.0", 0);
	assert_int_equal(inet_diag_parse(&f.h, IPPROTO_TCP, &dg), 0);
	e = (InetSkEntry)INET_SK_ENTRY__INIT;
	e.family = AF_INET;
	inet_entry_addrs(&e, &dg);
	assert_false(e.has_src_port);
}

static void test_fmt(void **state)
{
	uint8_t a[16];
	char buf[INET_ADDR_STRLEN];

	(void)state;
	inet_pton(AF_INET6, "::1", a);
	assert_string_equal(inet_fmt(AF_INET6, a, 443, buf, sizeof(buf)), "[::1]:443");
	inet_pton(AF_INET6, "::ffff:127.0.0.1", a);
	assert_string_equal(inet_fmt(AF_INET6, a, 80, buf, sizeof(buf)), "[::ffff:127.0.0.1]:80");
	inet_pton(AF_INET, "192.168.0.1", a);
	assert_string_equal(inet_fmt(AF_INET, a, 0, buf, sizeof(buf)), "192.168.0.1:0");
	assert_string_equal(tcp_state_name(TCP_FIN_WAIT2), "FIN_WAIT2");
	assert_string_equal(tcp_state_name(TCP_CLOSE_WAIT), "CLOSE_WAIT");
	assert_string_equal(tcp_state_name(TCP_LISTEN), "LISTEN");
	assert_string_equal(tcp_state_name(0), "UNKNOWN");
	assert_string_equal(tcp_state_name(200), "UNKNOWN");
}

static void test_sendq_split(void **state)
{
	TcpStreamEntry t = TCP_STREAM_ENTRY__INIT;
	uint8_t q[100];
	size_t sent, unsent;

	(void)state;
	t.out_queue.data = q;
	t.out_queue.len = sizeof(q);
	t.unsent = 30;
	assert_int_equal(tcp_sendq_split(&t, &sent, &unsent), 0);
	assert_int_equal(sent, 70);
	assert_int_equal(unsent, 30);
	t.unsent = 0;
	assert_int_equal(tcp_sendq_split(&t, &sent, &unsent), 0);
	assert_int_equal(sent, 100);
	assert_int_equal(unsent, 0);
	t.unsent = 101; /* more unsent than queued: a corrupt entry */
	assert_int_equal(tcp_sendq_split(&t, &sent, &unsent), -EINVAL);
	/* restore: a small sent part is written again, a large one queued as sent */
	t.unsent = 30;
	assert_int_equal(tcp_sendq_restore_split(&t, &sent, &unsent), 0);
	assert_int_equal(sent, 0);
	assert_int_equal(unsent, 100);
	{
		static uint8_t big[TCP_RESEND_MAX + 31];

		t.out_queue.data = big;
		t.out_queue.len = sizeof(big);
		assert_int_equal(tcp_sendq_restore_split(&t, &sent, &unsent), 0);
		assert_int_equal(sent, TCP_RESEND_MAX + 1);
		assert_int_equal(unsent, 30);
		t.unsent = 31;
		assert_int_equal(tcp_sendq_restore_split(&t, &sent, &unsent), 0);
		assert_int_equal(sent, 0);
		assert_int_equal(unsent, sizeof(big));
		t.unsent = sizeof(big) + 1;
		assert_int_equal(tcp_sendq_restore_split(&t, &sent, &unsent), -EINVAL);
	}
}

static void test_ts_restored(void **state)
{
	(void)state;
	/* on by the time since the read, in steps of 2 (bit 0 is a flag) */
	assert_int_equal(tcp_ts_restored(1000, 5000, 5250), 1250);
	assert_int_equal(tcp_ts_restored(1000, 5000, 5251), 1250);
	/* wraps like the peer's comparison does */
	assert_int_equal(tcp_ts_restored(0xfffffff0u, 100, 132), 0x10);
	/* a clock set back: never backwards */
	assert_int_equal(tcp_ts_restored(1000, 5000, 4000), 1000);
	/* never half the timestamp space or more */
	assert_int_equal(tcp_ts_restored(0, 0, 1ULL << 40), (1U << 30) - 2);
	/* microsecond timestamps (bit 0 set): the flag kept, the step in microseconds */
	assert_int_equal(tcp_ts_restored(1001, 5000, 5003), 4001);
}

static void test_sockaddr(void **state)
{
	InetSkEntry e = INET_SK_ENTRY__INIT;
	struct sockaddr_storage ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	uint8_t a[16];
	socklen_t len;

	(void)state;
	inet_pton(AF_INET6, "::ffff:127.0.0.1", a);
	e.family = AF_INET6;
	e.has_src_addr = e.has_src_port = true;
	e.src_addr.data = a;
	e.src_addr.len = 16;
	e.src_port = 8080;
	assert_int_equal(inet_sockaddr(&e, false, &ss, &len), 0);
	assert_int_equal(len, sizeof(struct sockaddr_in6));
	assert_int_equal(in6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(in6->sin6_port), 8080);
	assert_true(IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr));
	/* a 4-byte address on an AF_INET6 entry, a port beyond 16 bits */
	e.src_addr.len = 4;
	assert_int_equal(inet_sockaddr(&e, false, &ss, &len), -EINVAL);
	e.src_addr.len = 16;
	e.src_port = 70000;
	assert_int_equal(inet_sockaddr(&e, false, &ss, &len), -EINVAL);
	/* no peer */
	assert_int_equal(inet_sockaddr(&e, true, &ss, &len), -EINVAL);
}

static void test_opts_apply(void **state)
{
	const struct inet_opt *o;
	unsigned int tcp_only = 0, n = 0;

	(void)state;
	for (o = inet_opts; o->name; o++, n++) {
		if (!strcmp(o->name, "TCP_NODELAY")) {
			assert_true(inet_opt_applies(o, AF_INET, SOCK_STREAM, IPPROTO_TCP));
			assert_false(inet_opt_applies(o, AF_INET, SOCK_DGRAM, IPPROTO_UDP));
			/* a raw socket of protocol TCP is no TCP socket */
			assert_false(inet_opt_applies(o, AF_INET, SOCK_RAW, IPPROTO_TCP));
			tcp_only++;
		}
		if (!strcmp(o->name, "IP_TOS")) {
			assert_true(inet_opt_applies(o, AF_INET, SOCK_DGRAM, IPPROTO_UDP));
			assert_false(inet_opt_applies(o, AF_INET6, SOCK_DGRAM, IPPROTO_UDP));
		}
		if (!strcmp(o->name, "IPV6_TCLASS"))
			assert_false(inet_opt_applies(o, AF_INET, SOCK_STREAM, IPPROTO_TCP));
		if (!strcmp(o->name, "IP_MULTICAST_TTL")) {
			assert_true(inet_opt_applies(o, AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE));
			assert_true(inet_opt_applies(o, AF_INET, SOCK_RAW, IPPROTO_ICMP));
			assert_false(inet_opt_applies(o, AF_INET, SOCK_STREAM, IPPROTO_TCP));
		}
		if (!strcmp(o->name, "ICMP_FILTER")) {
			assert_true(inet_opt_applies(o, AF_INET, SOCK_RAW, IPPROTO_ICMP));
			/* ping sockets and raw sockets of other protocols have none */
			assert_false(inet_opt_applies(o, AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
			assert_false(inet_opt_applies(o, AF_INET, SOCK_RAW, IPPROTO_UDP));
		}
		if (!strcmp(o->name, "UDPLITE_SEND_CSCOV")) {
			assert_true(inet_opt_applies(o, AF_INET6, SOCK_DGRAM, IPPROTO_UDPLITE));
			assert_false(inet_opt_applies(o, AF_INET6, SOCK_DGRAM, IPPROTO_UDP));
			assert_false(inet_opt_applies(o, AF_INET6, SOCK_RAW, IPPROTO_UDPLITE));
		}
		/* every option lands in a 32-bit field behind its has_ flag */
		assert_true(o->val_off > o->has_off);
	}
	assert_int_equal(tcp_only, 1);
	assert_true(n >= 15);
}

static void test_proc_addr(void **state)
{
	uint8_t a[16], want6[16] = { [15] = 1 };

	(void)state;
	assert_int_equal(inet_proc_addr("0100007F:00FD", a, 4), 0);
	assert_memory_equal(a, ((uint8_t[]){ 127, 0, 0, 1 }), 4);
	assert_int_equal(inet_proc_addr("00000000000000000000000001000000:0000", a, 16), 0);
	assert_memory_equal(a, want6, 16);
	/* no colon after the address, or not hex */
	assert_int_equal(inet_proc_addr("0100007F00FD", a, 4), -EINVAL);
	assert_int_equal(inet_proc_addr("0100007G:00FD", a, 4), -EINVAL);
}

/* The one's complement sum of a UDP-Lite datagram with its pseudo-header, folded. */
static uint16_t sum_all(const uint8_t *s, const uint8_t *d, const uint8_t *pkt, size_t len)
{
	uint32_t sum = IPPROTO_UDPLITE + (uint32_t)len;
	size_t i;

	for (i = 0; i < 4; i += 2)
		sum += (uint32_t)(s[i] << 8 | s[i + 1]) + (uint32_t)(d[i] << 8 | d[i + 1]);
	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(pkt[i] << 8 | pkt[i + 1]);
	if (len & 1)
		sum += (uint32_t)pkt[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static void test_udplite_csum(void **state)
{
	struct sockaddr_in s = { .sin_family = AF_INET }, d = { .sin_family = AF_INET };
	uint8_t pkt[8 + 5] = { 0x12, 0x34, 0x00, 0x35, 0, 0, 0, 0, 'h', 'e', 'l', 'l', 'o' };
	uint16_t c;

	(void)state;
	inet_pton(AF_INET, "127.0.0.1", &s.sin_addr);
	inet_pton(AF_INET, "10.1.2.3", &d.sin_addr);
	/* odd length: the last byte is padded; the sum with the checksum in place is all ones */
	c = udplite_csum4(&s, &d, pkt, sizeof(pkt));
	assert_int_not_equal(c, 0);
	memcpy(pkt + 6, &c, 2);
	assert_int_equal(sum_all((uint8_t *)&s.sin_addr, (uint8_t *)&d.sin_addr, pkt, sizeof(pkt)),
			 0xffff);
}

static void test_group_addr(void **state)
{
	uint8_t a[16];

	(void)state;
	inet_pton(AF_INET, "239.1.2.3", a);
	assert_true(inet_addr_group(AF_INET, a));
	inet_pton(AF_INET, "255.255.255.255", a);
	assert_true(inet_addr_group(AF_INET, a));
	inet_pton(AF_INET, "127.0.0.1", a);
	assert_false(inet_addr_group(AF_INET, a));
	inet_pton(AF_INET6, "ff02::fb", a);
	assert_true(inet_addr_group(AF_INET6, a));
	inet_pton(AF_INET6, "::ffff:224.0.0.251", a);
	assert_true(inet_addr_group(AF_INET6, a));
	inet_pton(AF_INET6, "::ffff:10.0.0.1", a);
	assert_false(inet_addr_group(AF_INET6, a));
	inet_pton(AF_INET6, "::", a);
	assert_false(inet_addr_group(AF_INET6, a));
}

/* Datagrams packed into one block (a file_desc's priv): every byte and sender, aligned. */
static void test_udp_pack(void **state)
{
	UdpDgramEntry d[3] = { UDP_DGRAM_ENTRY__INIT, UDP_DGRAM_ENTRY__INIT,
			       UDP_DGRAM_ENTRY__INIT };
	UdpDgramEntry *v[3] = { &d[0], &d[1], &d[2] };
	InetSkEntry src = INET_SK_ENTRY__INIT, dst = INET_SK_ENTRY__INIT;
	uint8_t from[4] = { 127, 0, 0, 1 }, big[1001], *block;
	size_t i, sz;

	(void)state;
	memset(big, 0xab, sizeof(big));
	for (i = 0; i < 3; i++) {
		d[i].from_addr.data = from;
		d[i].from_addr.len = 4;
		d[i].from_port = 1000 + (uint32_t)i;
	}
	d[0].data.data = (uint8_t *)"abc";
	d[0].data.len = 3;
	d[1].data.len = 0; /* a datagram of no bytes */
	d[2].data.data = big;
	d[2].data.len = sizeof(big);
	src.dgrams = v;
	src.n_dgrams = 3;
	sz = udp_queue_size(&src);
	block = malloc(sz + 8);
	assert_non_null(block);
	udp_queue_pack(&dst, &src, block);
	assert_int_equal(dst.n_dgrams, 3);
	for (i = 0; i < 3; i++) {
		const UdpDgramEntry *p = dst.dgrams[i];

		assert_int_equal((uintptr_t)p % 8, 0);
		assert_true((uint8_t *)p >= block && p->data.data + p->data.len <= block + sz);
		assert_int_equal(p->from_port, 1000 + i);
		assert_memory_equal(p->from_addr.data, from, 4);
		assert_int_equal(p->data.len, d[i].data.len);
		if (p->data.len)
			assert_memory_equal(p->data.data, d[i].data.data, p->data.len);
	}
	free(block);
}

/* A loopback connection: *@a the connecting end, *@b the accepted one. */
static void tcp_pair(int *a, int *b)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &len), 0);
	*a = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(*a >= 0);
	assert_int_equal(connect(*a, (struct sockaddr *)&sa, sizeof(sa)), 0);
	*b = accept(l, NULL, NULL);
	assert_true(*b >= 0);
	close(l);
}

/*
 * What a dump that kills its tree relies on: the socket closed in repair
 * mode (with unread data, which would otherwise send a RST) sends nothing:
 * the peer sees neither EOF nor a reset, and its data waits in vain.
 */
static void test_repair_close_silent(void **state)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	struct pollfd p;
	int a, b, on = TCP_REPAIR_ON;
	char c;

	(void)state;
	if (geteuid()) {
		skip();
		return;
	}
	tcp_pair(&a, &b);
	assert_int_equal(send(a, "x", 1, 0), 1); /* unread at b's close */
	p = (struct pollfd){ .fd = b, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(setsockopt(b, SOL_TCP, TCP_REPAIR, &on, sizeof(on)), 0);
	close(b);
	/* Loopback delivers at once: a FIN or RST would be there by now. */
	p = (struct pollfd){ .fd = a, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 100), 0);
	assert_int_equal(recv(a, &c, 1, MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(getsockopt(a, SOL_TCP, TCP_INFO, &ti, &len), 0);
	assert_int_equal(ti.tcpi_state, TCP_ESTABLISHED);
	close(a);
}

/* The entry of the connected socket @sk: family, state, addresses (as sock_diag gives them). */
static void entry_of(int sk, InetSkEntry *e, struct inet_sk_diag *dg)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	memset(dg, 0, sizeof(*dg));
	dg->family = AF_INET;
	assert_int_equal(getsockname(sk, (struct sockaddr *)&a, &len), 0);
	memcpy(dg->src, &a.sin_addr, 4);
	dg->sport = ntohs(a.sin_port);
	len = sizeof(a);
	assert_int_equal(getpeername(sk, (struct sockaddr *)&a, &len), 0);
	memcpy(dg->dst, &a.sin_addr, 4);
	dg->dport = ntohs(a.sin_port);
	*e = (InetSkEntry)INET_SK_ENTRY__INIT;
	e->family = AF_INET;
	e->type = SOCK_STREAM;
	e->proto = IPPROTO_TCP;
	e->state = TCP_ESTABLISHED;
	inet_entry_addrs(e, dg);
}

static void recv_exact(int sk, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { .fd = sk, .events = POLLIN };
		ssize_t n;

		assert_int_equal(poll(&p, 1, 10000), 1);
		n = recv(sk, buf + got, len - got, MSG_DONTWAIT);
		assert_true(n > 0);
		got += (size_t)n;
	}
}

/*
 * One end of a loopback connection, holding 100 KiB it has not read, read in
 * repair mode (tcp_dump_established()), closed silently, rebuilt in a new
 * socket (tcp_restore_established()) and taken out of repair mode: it reads
 * those bytes and then new ones, its peer reads what it sends, and the
 * peer's own unread bytes are still there. Root only.
 */
static void test_repair_roundtrip(void **state)
{
	static uint8_t to_b[100 << 10], to_a[50 << 10], buf[100 << 10];
	struct cr_options o;
	struct dump_ctx ctx = { 0 };
	struct inet_dump *in;
	struct inet_sk_diag dg;
	struct fd_info f = { 0 };
	InetSkEntry e;
	int a, b, sk, one = 1;
	size_t i;

	(void)state;
	if (geteuid()) {
		skip();
		return;
	}
	for (i = 0; i < sizeof(to_b); i++)
		to_b[i] = (uint8_t)(i * 7);
	for (i = 0; i < sizeof(to_a); i++)
		to_a[i] = (uint8_t)(i * 13);
	tcp_pair(&a, &b);
	assert_int_equal(send(a, to_b, sizeof(to_b), 0), (ssize_t)sizeof(to_b));
	assert_int_equal(send(b, to_a, sizeof(to_a), 0), (ssize_t)sizeof(to_a));
	/* everything arrived: b holds to_b, a holds to_a */
	for (i = 0; i < 100; i++) {
		int inq = 0;

		assert_int_equal(ioctl(b, SIOCINQ, &inq), 0);
		if (inq == (int)sizeof(to_b))
			break;
		poll(NULL, 0, 10);
	}

	cr_options_init(&o);
	o.tcp_established = true;
	o.network_lock = "skip";
	ctx.opts = &o;
	in = inet_dump_get(&ctx);
	assert_non_null(in);
	in->loaded = true;
	f.pid = getpid();
	f.fd = f.dfd = b;
	f.link = "socket:[test]";
	f.sk_family = AF_INET;
	assert_int_equal(fstat(b, &f.st), 0);
	entry_of(b, &e, &dg);
	assert_int_equal(tcp_dump_established(&ctx, &f, &e), 0);
	assert_non_null(e.tcp);
	assert_int_equal(e.tcp->in_queue.len, sizeof(to_b));
	assert_memory_equal(e.tcp->in_queue.data, to_b, sizeof(to_b));
	/* what a's window did not take yet, or a has not acknowledged: the end of to_a */
	assert_true(e.tcp->out_queue.len <= sizeof(to_a));
	assert_memory_equal(e.tcp->out_queue.data, to_a + sizeof(to_a) - e.tcp->out_queue.len,
			    e.tcp->out_queue.len);
	inet_dump_fini(&ctx, false); /* b stays in repair mode */
	file_table_free(ctx.files);
	close(b);

	sk = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_true(sk >= 0);
	assert_int_equal(setsockopt(sk, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	assert_int_equal(tcp_restore_established(sk, &e, 1), 0);
	assert_int_equal(tcp_go_live(sk, &e), 0);
	tcp_stream_free(e.tcp);

	recv_exact(sk, buf, sizeof(to_b));
	assert_memory_equal(buf, to_b, sizeof(to_b));
	assert_int_equal(send(a, "more", 4, 0), 4);
	recv_exact(sk, buf, 4);
	assert_memory_equal(buf, "more", 4);
	assert_int_equal(send(sk, "back", 4, 0), 4);
	recv_exact(a, buf, sizeof(to_a) + 4);
	assert_memory_equal(buf, to_a, sizeof(to_a));
	assert_memory_equal(buf + sizeof(to_a), "back", 4);
	close(sk);
	close(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diag_parse),
		cmocka_unit_test(test_entry_from_diag),
		cmocka_unit_test(test_fmt),
		cmocka_unit_test(test_sendq_split),
		cmocka_unit_test(test_ts_restored),
		cmocka_unit_test(test_sockaddr),
		cmocka_unit_test(test_opts_apply),
		cmocka_unit_test(test_group_addr),
		cmocka_unit_test(test_proc_addr),
		cmocka_unit_test(test_udplite_csum),
		cmocka_unit_test(test_udp_pack),
		cmocka_unit_test(test_repair_close_silent),
		cmocka_unit_test(test_repair_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
