// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's position in a packet ring, as files/packet-ring.c reads it
 * from the ring's bytes: after the frame with the latest timestamp (the last
 * of a run of one tick), 0 for a ring never filled; a used transmit ring; a
 * TPACKET_V3 ring that never received.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/if_packet.h>
#include <string.h>

#include "../../criu-like/files/packet-ring.h"

#define FRAME 512
#define NFR 8

static uint8_t ring[NFR * FRAME];
static PacketRing geo = PACKET_RING__INIT;

static void setup_geo(void)
{
	memset(ring, 0, sizeof(ring));
	geo.block_size = 2048; /* 4 frames a block, 2 blocks */
	geo.block_nr = 2;
	geo.frame_size = FRAME;
	geo.frame_nr = NFR;
}

static void fill_v1(unsigned int i, unsigned int sec, unsigned int usec, unsigned long status)
{
	struct tpacket_hdr *h = (struct tpacket_hdr *)(ring + i * FRAME);

	h->tp_status = status;
	h->tp_len = 60;
	h->tp_sec = sec;
	h->tp_usec = usec;
}

static void fill_v2(unsigned int i, unsigned int sec, unsigned int nsec, uint32_t status)
{
	struct tpacket2_hdr *h = (struct tpacket2_hdr *)(ring + i * FRAME);

	h->tp_status = status;
	h->tp_len = 60;
	h->tp_sec = sec;
	h->tp_nsec = nsec;
}

static void test_rx_head_v1(void **state)
{
	(void)state;
	setup_geo();
	assert_int_equal(pk_rx_head(ring, &geo, TPACKET_V1), 0); /* never filled */
	fill_v1(0, 100, 1, TP_STATUS_KERNEL);
	fill_v1(1, 100, 2, TP_STATUS_KERNEL);
	fill_v1(2, 100, 3, TP_STATUS_USER);
	assert_int_equal(pk_rx_head(ring, &geo, TPACKET_V1), 3);
	/* frames of one tick: the last of the run */
	fill_v1(3, 100, 3, TP_STATUS_USER);
	fill_v1(4, 100, 3, TP_STATUS_USER);
	assert_int_equal(pk_rx_head(ring, &geo, TPACKET_V1), 5);
	/* went round: frame 0 is the latest */
	for (unsigned int i = 5; i < NFR; i++)
		fill_v1(i, 100, 10 + i, TP_STATUS_KERNEL);
	fill_v1(0, 101, 0, TP_STATUS_USER);
	assert_int_equal(pk_rx_head(ring, &geo, TPACKET_V1), 1);
	/* the last frame is the latest: back at 0 */
	fill_v1(0, 99, 0, TP_STATUS_KERNEL);
	assert_int_equal(pk_rx_head(ring, &geo, TPACKET_V1), 0);
}

static void test_rx_head_v2(void **state)
{
	(void)state;
	setup_geo();
	fill_v2(0, 5, 999999999, TP_STATUS_KERNEL);
	fill_v2(1, 6, 0, TP_STATUS_KERNEL);
	assert_int_equal(pk_rx_head(ring, &geo, TPACKET_V2), 2);
	/* a run of one tick across the end of the ring */
	fill_v2(NFR - 1, 6, 0, TP_STATUS_USER);
	fill_v2(0, 6, 0, TP_STATUS_USER);
	fill_v2(1, 5, 0, TP_STATUS_KERNEL);
	assert_int_equal(pk_rx_head(ring, &geo, TPACKET_V2), 1);
}

static void test_tx_used(void **state)
{
	(void)state;
	setup_geo();
	assert_false(pk_tx_used(ring, &geo, TPACKET_V2));
	fill_v2(5, 0, 0, TP_STATUS_AVAILABLE); /* a length written: used */
	assert_true(pk_tx_used(ring, &geo, TPACKET_V2));
}

static void test_v3_fresh(void **state)
{
	struct tpacket_block_desc *b0 = (struct tpacket_block_desc *)ring;
	struct tpacket_block_desc *b1 = (struct tpacket_block_desc *)(ring + 2048);

	(void)state;
	setup_geo();
	b0->hdr.bh1.seq_num = 1;
	b0->hdr.bh1.offset_to_first_pkt = 48;
	assert_true(pk_v3_fresh(ring, &geo));
	b0->hdr.bh1.num_pkts = 1; /* a packet in the open block */
	assert_false(pk_v3_fresh(ring, &geo));
	b0->hdr.bh1.num_pkts = 0;
	b1->hdr.bh1.seq_num = 2; /* the kernel moved on to block 1 */
	assert_false(pk_v3_fresh(ring, &geo));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rx_head_v1),
		cmocka_unit_test(test_rx_head_v2),
		cmocka_unit_test(test_tx_used),
		cmocka_unit_test(test_v3_fresh),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
