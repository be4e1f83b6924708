// SPDX-License-Identifier: GPL-2.0
/*
 * Packet sockets with mmap'ed rings, on lo in a network namespace of the
 * test's own (packet_sockets does the same): V1, SOCK_RAW bound to lo for
 * protocol 0x88b6 with a receive ring of 8 frames, 5 frames received, 3 of
 * them read and given back (frames 3 and 4 still the program's); V2, SOCK_RAW
 * for protocol 0x88b7 with PACKET_RESERVE 32, PACKET_TIMESTAMP and a receive
 * and a transmit ring, 6 frames received and all given back; V3, SOCK_RAW for
 * protocol 0x88b8 with a receive ring of 4 blocks (retire timeout, private
 * area). Frames are sent from an unbound SOCK_RAW socket. After SIGTERM:
 * the versions and reserve are the same, frames 3 and 4 of V1 are still the
 * program's with their data; 6 new frames land in V1 at frames 5, 6, 7, 0, 1,
 * 2 and 4 new ones in V2 at frames 6, 7, 0, 1 (the kernel's position was put
 * back); a frame sent through V2's transmit ring arrives in V3's first block.
 */
#include <errno.h>
#include <net/if.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "zdtmtst.h"

#define P1 0x88b6
#define P2 0x88b7
#define P3 0x88b8
#define FRAME 1024
#define NFRAMES 8

static int lo, tx;

static int ring_socket(int proto, int version, int reserve)
{
	int s = socket(AF_PACKET, SOCK_RAW, 0);

	(void)proto;
	if (s < 0 || setsockopt(s, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) ||
	    (reserve && setsockopt(s, SOL_PACKET, PACKET_RESERVE, &reserve, sizeof(reserve))))
		return neg_errno();
	return s;
}

static int bind_lo(int s, int proto)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(proto) };

	ll.sll_ifindex = lo;
	return bind(s, (struct sockaddr *)&ll, sizeof(ll));
}

/* An Ethernet frame of @proto on lo carrying the text @what. */
static int send_frame(int proto, const char *what)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(proto) };
	unsigned char f[64] = { 0 };

	ll.sll_ifindex = lo;
	f[12] = proto >> 8;
	f[13] = proto & 0xff;
	snprintf((char *)f + 14, sizeof(f) - 14, "%s", what);
	return sendto(tx, f, sizeof(f), 0, (struct sockaddr *)&ll, sizeof(ll)) == sizeof(f) ? 0
											    : -1;
}

/* Frame @i of ring @m (version 1 or 2) once the kernel filled it; its text checked. */
static int take(unsigned char *m, int v2, int i, const char *want)
{
	unsigned char *fr = m + (size_t)i * FRAME;
	volatile unsigned long *s1 = (unsigned long *)fr;
	volatile __u32 *s2 = (__u32 *)fr;
	unsigned int mac, k;

	for (k = 0; k < 5000; k++) {
		if ((v2 ? *s2 : *s1) & TP_STATUS_USER)
			break;
		test_sleep_ms(1);
	}
	if (!((v2 ? *s2 : *s1) & TP_STATUS_USER)) {
		fail("V%d frame %d: never filled (waiting for %s)", v2 ? 2 : 1, i, want);
		return -EINVAL;
	}
	mac = v2 ? ((struct tpacket2_hdr *)fr)->tp_mac : ((struct tpacket_hdr *)fr)->tp_mac;
	if (v2 && mac < TPACKET_ALIGN(sizeof(struct tpacket2_hdr)) + 32) {
		fail("V2 frame %d: tp_mac %u ignores PACKET_RESERVE", i, mac);
		return -EINVAL;
	}
	if (strcmp((char *)fr + mac + 14, want)) {
		fail("V%d frame %d: \"%.20s\", expected \"%s\"", v2 ? 2 : 1, i,
		     (char *)fr + mac + 14, want);
		return -EINVAL;
	}
	if (v2)
		*s2 = TP_STATUS_KERNEL;
	else
		*s1 = TP_STATUS_KERNEL;
	return 0;
}

static int getint(int s, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);

	getsockopt(s, SOL_PACKET, opt, &v, &len);
	return v;
}

int main(int argc, char **argv)
{
	struct tpacket_req r12 = { .tp_block_size = 4096,
				   .tp_block_nr = 2,
				   .tp_frame_size = FRAME,
				   .tp_frame_nr = NFRAMES };
	struct tpacket_req3 r3 = { .tp_block_size = 4096,
				   .tp_block_nr = 4,
				   .tp_frame_size = 2048,
				   .tp_frame_nr = 8,
				   .tp_retire_blk_tov = 10,
				   .tp_sizeof_priv = 16 };
	unsigned char *m1, *m2, *m3, *t2;
	struct tpacket_block_desc *b0;
	struct tpacket3_hdr *h3;
	struct tpacket2_hdr *th;
	int s1, s2, s3, ts = SOF_TIMESTAMPING_RAW_HARDWARE, i, k;
	char what[32];

	test_init(argc, argv);
	if ((!test_in_container() && unshare(CLONE_NEWNET)) || system("ip link set lo up"))
		goto err;
	lo = (int)if_nametoindex("lo");
	tx = socket(AF_PACKET, SOCK_RAW, 0);
	s1 = ring_socket(P1, TPACKET_V1, 0);
	s2 = ring_socket(P2, TPACKET_V2, 32);
	s3 = ring_socket(P3, TPACKET_V3, 0);
	if (tx < 0 || s1 < 0 || s2 < 0 || s3 < 0 ||
	    setsockopt(s2, SOL_PACKET, PACKET_TIMESTAMP, &ts, sizeof(ts)) ||
	    setsockopt(s1, SOL_PACKET, PACKET_RX_RING, &r12, sizeof(r12)) ||
	    setsockopt(s2, SOL_PACKET, PACKET_RX_RING, &r12, sizeof(r12)) ||
	    setsockopt(s2, SOL_PACKET, PACKET_TX_RING, &r12, sizeof(r12)) ||
	    setsockopt(s3, SOL_PACKET, PACKET_RX_RING, &r3, sizeof(r3)))
		goto err;
	m1 = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, s1, 0);
	m2 = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_SHARED, s2, 0);
	m3 = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_SHARED, s3, 0);
	if (m1 == MAP_FAILED || m2 == MAP_FAILED || m3 == MAP_FAILED || bind_lo(s1, P1) ||
	    bind_lo(s2, P2) || bind_lo(s3, P3))
		goto err;
	t2 = m2 + 8192;
	/* the program's private area of V3's first block */
	b0 = (struct tpacket_block_desc *)m3;
	memcpy(m3 + b0->offset_to_priv, "private", 8);

	for (i = 0; i < 5; i++) {
		snprintf(what, sizeof(what), "a%d", i);
		if (send_frame(P1, what))
			goto err;
	}
	for (i = 0; i < 3; i++) {
		snprintf(what, sizeof(what), "a%d", i);
		if (take(m1, 0, i, what))
			return 1;
	}
	for (i = 0; i < 6; i++) {
		snprintf(what, sizeof(what), "c%d", i);
		if (send_frame(P2, what) || take(m2, 1, i, what))
			return 1;
	}
	test_daemon();
	test_waitsig();

	if (getint(s1, PACKET_VERSION) != TPACKET_V1 || getint(s2, PACKET_VERSION) != TPACKET_V2 ||
	    getint(s3, PACKET_VERSION) != TPACKET_V3 || getint(s2, PACKET_RESERVE) != 32 ||
	    getint(s2, PACKET_TIMESTAMP) != ts) {
		fail("versions %d %d %d, reserve %d, timestamp %d", getint(s1, PACKET_VERSION),
		     getint(s2, PACKET_VERSION), getint(s3, PACKET_VERSION),
		     getint(s2, PACKET_RESERVE), getint(s2, PACKET_TIMESTAMP));
		return 1;
	}
	if (memcmp(m3 + b0->offset_to_priv, "private", 8)) {
		fail("V3's private area lost");
		return 1;
	}
	/* the frames received before the dump, not read yet */
	if (take(m1, 0, 3, "a3") || take(m1, 0, 4, "a4"))
		return 1;
	for (i = 0, k = 5; i < 6; i++, k = (k + 1) % NFRAMES) {
		snprintf(what, sizeof(what), "b%d", i);
		if (send_frame(P1, what) || take(m1, 0, k, what))
			return 1;
	}
	for (i = 0, k = 6; i < 4; i++, k = (k + 1) % NFRAMES) {
		snprintf(what, sizeof(what), "d%d", i);
		if (send_frame(P2, what) || take(m2, 1, k, what))
			return 1;
	}
	/* V2's transmit ring, frame 0, to V3 */
	th = (struct tpacket2_hdr *)t2;
	{
		unsigned char *data = t2 + TPACKET2_HDRLEN - sizeof(struct sockaddr_ll);

		memset(data, 0, 64);
		data[12] = P3 >> 8;
		data[13] = P3 & 0xff;
		strcpy((char *)data + 14, "sent");
		th->tp_len = 64;
		th->tp_status = TP_STATUS_SEND_REQUEST;
	}
	if (send(s2, NULL, 0, 0) < 0) {
		fail("send through the transmit ring: %m");
		return 1;
	}
	for (k = 0; k < 5000 && !(b0->hdr.bh1.block_status & TP_STATUS_USER); k++)
		test_sleep_ms(1);
	if (!(b0->hdr.bh1.block_status & TP_STATUS_USER) || b0->hdr.bh1.num_pkts != 1) {
		fail("V3's first block: status %#x, %u packets", b0->hdr.bh1.block_status,
		     b0->hdr.bh1.num_pkts);
		return 1;
	}
	h3 = (struct tpacket3_hdr *)(m3 + b0->hdr.bh1.offset_to_first_pkt);
	if (strcmp((char *)h3 + h3->tp_mac + 14, "sent")) {
		fail("V3 got \"%.20s\"", (char *)h3 + h3->tp_mac + 14);
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
