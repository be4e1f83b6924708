/* SPDX-License-Identifier: GPL-2.0 */
/* The mmap'ed rings of packet sockets (packet-ring.c), for packet.c and the unit tests. */
#ifndef CRIU_LIKE_PACKET_RING_H
#define CRIU_LIKE_PACKET_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/packet_diag.h>

#include "files.pb-c.h"

struct fd_info;

/* The bytes of the ring packet_diag shows: blocks times block size. */
size_t pk_ring_bytes(const struct packet_diag_ring *r);
/*
 * The frame a TPACKET_V1/V2 (@version) receive ring @ring of geometry @r is
 * filled at next: the one after the frame with the latest timestamp, the
 * last of a run with that time; 0 when no frame was ever filled. Pure.
 */
uint32_t pk_rx_head(const uint8_t *ring, const PacketRing *r, uint32_t version);
/* A V1/V2 transmit ring some frame of which was ever written (status or length). Pure. */
bool pk_tx_used(const uint8_t *ring, const PacketRing *r, uint32_t version);
/* A TPACKET_V3 receive ring that never received: block 0 open and empty, no other opened. Pure. */
bool pk_v3_fresh(const uint8_t *ring, const PacketRing *r);

/*
 * The rings of @f (version @version; @rx, @tx from packet_diag, NULL when
 * absent) into @rrx, @rtx, their bytes copied to @buf (the sum of both
 * sizes), pointed to by the entries. 0, or -EOPNOTSUPP (logged) for a ring
 * whose kernel position cannot be put back.
 */
int pk_rings_dump(const struct fd_info *f, uint32_t version, const struct packet_diag_ring *rx,
		  const struct packet_diag_ring *tx, PacketRing *rrx, PacketRing *rtx,
		  uint8_t *buf);
/* Restore: the rings of @e set on @sk (not bound yet), their position and bytes put back. */
int pk_rings_restore(const FileEntry *fe, int sk, const PacketSkEntry *e);

#endif
