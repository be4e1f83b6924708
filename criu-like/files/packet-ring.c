// SPDX-License-Identifier: GPL-2.0
/*
 * The mmap'ed rings of packet sockets (PACKET_RX_RING, PACKET_TX_RING;
 * Documentation/network.md, "Packet sockets"). Dump: the geometry from
 * packet_diag (PACKET_DIAG_RX_RING, PACKET_DIAG_TX_RING), the bytes of both
 * rings read through a mapping of the dumper's own (the kernel lets any
 * holder of the socket map it), and the kernel's frame position, which it
 * shows nowhere: for a TPACKET_V1/V2 receive ring it is the frame after the
 * one the kernel filled last, the one with the latest timestamp (the kernel
 * writes tp_sec and tp_usec/tp_nsec into each frame it fills, a program only
 * its status word); no frame filled yet: 0. Refused by name: a transmit ring
 * that has been used (its position moves with each frame sent, and only
 * sending would move it again), and a TPACKET_V3 ring that has received
 * anything (the kernel's active block and its fill offset cannot be set).
 *
 * The task's mapping of the ring shows in /proc/PID/maps as "socket:[INO]",
 * shared: mem.c saves no page of it (its policy is that of a shared file
 * mapping) and names the socket's description as the file to map
 * (packet_ring_mapping()); the restorer maps the socket again at the same
 * address, whole, as packet_mmap() wants it.
 *
 * Restore, in packet.c's open: the version and reserve, then the rings with
 * the same geometry; a receive ring whose position was H receives H
 * throw-away frames first (bound meanwhile to lo with the protocol
 * PK_REPLAY_PROTO, sent from a socket of criu-like's own); then the bytes of
 * both rings, status words included, are written back through a mapping of
 * the controller, and only then is the socket bound as it was.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/packet_diag.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "files-int.h"
#include "log.h"
#include "packet-ring.h"
#include "proc-parse.h"
#include "util.h"

/* The protocol of the throw-away frames that put a restored ring's position back. */
#define PK_REPLAY_PROTO 0x88b5 /* ETH_P_802_EX1, local experimental */

static bool all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

size_t pk_ring_bytes(const struct packet_diag_ring *r)
{
	return (size_t)r->pdr_block_size * r->pdr_block_nr;
}

/* Frame @i of a V1/V2 ring: frames do not cross blocks. */
static const uint8_t *frame_at(const uint8_t *ring, const PacketRing *r, uint32_t i)
{
	uint32_t per_block = r->block_size / r->frame_size;

	return ring + (size_t)(i / per_block) * r->block_size +
	       (size_t)(i % per_block) * r->frame_size;
}

/* A V1/V2 frame's status, length and timestamp (ns); all 0 for a frame never written. */
static void frame_info(const uint8_t *fr, uint32_t version, uint64_t *status, uint32_t *len,
		       uint64_t *ts)
{
	if (version == TPACKET_V1) {
		struct tpacket_hdr h;

		memcpy(&h, fr, sizeof(h));
		*status = h.tp_status;
		*len = h.tp_len;
		*ts = (uint64_t)h.tp_sec * 1000000000ULL + (uint64_t)h.tp_usec * 1000ULL;
	} else {
		struct tpacket2_hdr h;

		memcpy(&h, fr, sizeof(h));
		*status = h.tp_status;
		*len = h.tp_len;
		*ts = (uint64_t)h.tp_sec * 1000000000ULL + h.tp_nsec;
	}
}

uint32_t pk_rx_head(const uint8_t *ring, const PacketRing *r, uint32_t version)
{
	uint64_t best = 0, status, ts, next_ts;
	uint32_t i, len, n = r->frame_nr;

	for (i = 0; i < n; i++) {
		frame_info(frame_at(ring, r, i), version, &status, &len, &ts);
		if (ts > best)
			best = ts;
	}
	if (!best)
		return 0;
	/* the last frame of the run with the latest time (frames filled in one tick) */
	for (i = 0; i < n; i++) {
		frame_info(frame_at(ring, r, i), version, &status, &len, &ts);
		if (ts != best)
			continue;
		frame_info(frame_at(ring, r, (i + 1) % n), version, &status, &len, &next_ts);
		if (next_ts != best)
			return (i + 1) % n;
	}
	return 0; /* every frame of the same tick: the ring went round, back at 0 */
}

bool pk_tx_used(const uint8_t *ring, const PacketRing *r, uint32_t version)
{
	uint64_t status, ts;
	uint32_t i, len;

	for (i = 0; i < r->frame_nr; i++) {
		frame_info(frame_at(ring, r, i), version, &status, &len, &ts);
		if (status || len)
			return true;
	}
	return false;
}

bool pk_v3_fresh(const uint8_t *ring, const PacketRing *r)
{
	struct tpacket_block_desc b;
	uint32_t i;

	for (i = 0; i < r->block_nr; i++) {
		memcpy(&b, ring + (size_t)i * r->block_size, sizeof(b));
		if (i == 0 && (b.hdr.bh1.block_status != TP_STATUS_KERNEL || b.hdr.bh1.num_pkts))
			return false;
		if (i && (b.hdr.bh1.seq_num || b.hdr.bh1.block_status))
			return false;
	}
	return true;
}

static void ring_geometry(const struct packet_diag_ring *d, PacketRing *r)
{
	packet_ring__init(r);
	r->block_size = d->pdr_block_size;
	r->block_nr = d->pdr_block_nr;
	r->frame_size = d->pdr_frame_size;
	r->frame_nr = d->pdr_frame_nr;
	r->has_retire_tmo = r->has_sizeof_priv = r->has_features = true;
	r->retire_tmo = d->pdr_retire_tmo;
	r->sizeof_priv = d->pdr_sizeof_priv;
	r->features = d->pdr_features;
}

int pk_rings_dump(const struct fd_info *f, uint32_t version, const struct packet_diag_ring *rx,
		  const struct packet_diag_ring *tx, PacketRing *rrx, PacketRing *rtx, uint8_t *buf)
{
	size_t nrx = rx ? pk_ring_bytes(rx) : 0, ntx = tx ? pk_ring_bytes(tx) : 0;
	void *m;

	if ((rx && (!rx->pdr_frame_size || rx->pdr_block_size < rx->pdr_frame_size)) ||
	    (tx && (!tx->pdr_frame_size || tx->pdr_block_size < tx->pdr_frame_size))) {
		pr_err("pid %d fd %d: %s: packet_diag shows a ring of no frame\n", f->pid, f->fd,
		       f->link);
		return -EINVAL;
	}
	m = mmap(NULL, nrx + ntx, PROT_READ, MAP_SHARED, f->dfd, 0);
	if (m == MAP_FAILED) {
		pr_perror("pid %d fd %d: cannot map the rings of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	memcpy(buf, m, nrx + ntx);
	munmap(m, nrx + ntx);
	if (rx) {
		ring_geometry(rx, rrx);
		rrx->data.data = buf;
		rrx->data.len = nrx;
		if (version == TPACKET_V3 && !pk_v3_fresh(buf, rrx)) {
			pr_err("pid %d fd %d: %s has a TPACKET_V3 receive ring that has received "
			       "packets: the kernel's active block and its fill offset cannot be "
			       "put back\n",
			       f->pid, f->fd, f->link);
			return -EOPNOTSUPP;
		}
		if (version != TPACKET_V3)
			rrx->head = pk_rx_head(buf, rrx, version);
	}
	if (tx) {
		ring_geometry(tx, rtx);
		rtx->data.data = buf + nrx;
		rtx->data.len = ntx;
		if (version != TPACKET_V3 ? pk_tx_used(buf + nrx, rtx, version)
					  : !all_zero(buf + nrx, ntx)) {
			pr_err("pid %d fd %d: %s has sent through its transmit ring: the kernel's "
			       "position in it cannot be put back without sending\n",
			       f->pid, f->fd, f->link);
			return -EOPNOTSUPP;
		}
	}
	pr_debug("pid %d fd %d: rings rx %zu bytes (position %u), tx %zu bytes\n", f->pid, f->fd,
		 nrx, rx ? rrx->head : 0, ntx);
	return 0;
}

int packet_ring_mapping(struct dump_ctx *ctx, pid_t pid, const struct vma_entry *v, uint32_t *id)
{
	struct file_table *ft = file_table_get(ctx);
	struct file_desc *d = NULL;
	const PacketSkEntry *e;
	size_t size = 0;

	if (!ft)
		return -errno;
	while ((d = file_desc_next(ft, makedev(v->dev_major, v->dev_minor), v->ino, d)))
		if (d->fe.type == FILE_TYPE__FILE_PACKETSK && d->fe.packetsk)
			break;
	if (!d) {
		pr_err("pid %d: VMA %lx-%lx maps %s, which is not a packet socket it holds an fd "
		       "of: not supported\n",
		       pid, v->start, v->end, v->path);
		return -EOPNOTSUPP;
	}
	e = d->fe.packetsk;
	if (!v->shared) {
		pr_err("pid %d: VMA %lx-%lx is a private mapping of the rings of %s: not "
		       "supported\n",
		       pid, v->start, v->end, v->path);
		return -EOPNOTSUPP;
	}
	if (e->rx_ring)
		size += e->rx_ring->data.len;
	if (e->tx_ring)
		size += e->tx_ring->data.len;
	if (v->pgoff || v->end - v->start != size) {
		pr_err("pid %d: VMA %lx-%lx maps a part of the rings of %s (offset %lx, %zu bytes "
		       "of rings): only a whole mapping is supported\n",
		       pid, v->start, v->end, v->path, (unsigned long)v->pgoff, size);
		return -EOPNOTSUPP;
	}
	*id = d->id;
	return 0;
}

/* ---- restore ---- */

static int set_ring(const FileEntry *fe, int sk, int opt, uint32_t version, const PacketRing *r)
{
	struct tpacket_req3 req = { .tp_block_size = r->block_size,
				    .tp_block_nr = r->block_nr,
				    .tp_frame_size = r->frame_size,
				    .tp_frame_nr = r->frame_nr };
	socklen_t len = sizeof(struct tpacket_req);

	if (version == TPACKET_V3) {
		req.tp_retire_blk_tov = r->retire_tmo;
		req.tp_sizeof_priv = r->sizeof_priv;
		req.tp_feature_req_word = r->features;
		len = sizeof(req);
	}
	if (r->data.len != (size_t)r->block_size * r->block_nr) {
		pr_err("files.img: file %u: a packet ring of %zu bytes for %u blocks of %u\n",
		       fe->id, r->data.len, r->block_nr, r->block_size);
		return -EINVAL;
	}
	if (setsockopt(sk, SOL_PACKET, opt, &req, len)) {
		pr_perror("file %u: cannot set the %s ring (%u blocks of %u, %u frames of %u)",
			  fe->id, opt == PACKET_RX_RING ? "receive" : "transmit", r->block_nr,
			  r->block_size, r->frame_nr, r->frame_size);
		return neg_errno();
	}
	return 0;
}

/* Frame @head - 1 of the receive ring at @m filled by the kernel: 0, or -ETIMEDOUT. */
static int wait_filled(const uint8_t *m, const PacketRing *r, uint32_t version, uint32_t head)
{
	struct timespec ts = { 0, 1000000 };
	uint64_t status, t;
	uint32_t len;
	int i;

	for (i = 0; i < 1000; i++) {
		frame_info(frame_at(m, r, head - 1), version, &status, &len, &t);
		if (status & TP_STATUS_USER)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -ETIMEDOUT;
}

/*
 * The receive ring's position put back: @head throw-away frames on lo, which
 * the socket, bound to lo with PK_REPLAY_PROTO meanwhile, receives at frames
 * 0 to @head - 1. Its statistics are read (and so reset) after.
 */
static int replay(const FileEntry *fe, int sk, const PacketRing *r, uint32_t version,
		  const uint8_t *m)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(PK_REPLAY_PROTO) };
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);
	_cleanup_close_ int tx = -1;
	uint32_t i;
	int err;

	ll.sll_ifindex = (int)if_nametoindex("lo");
	if (!ll.sll_ifindex) {
		pr_perror("file %u: packet ring: no lo to put its position back through", fe->id);
		return neg_errno();
	}
	if (bind(sk, (struct sockaddr *)&ll, sizeof(ll))) {
		pr_perror("file %u: packet ring: cannot bind to lo", fe->id);
		return neg_errno();
	}
	tx = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (tx < 0) {
		pr_perror("file %u: packet ring: socket()", fe->id);
		return neg_errno();
	}
	ll.sll_halen = ETH_ALEN;
	for (i = 0; i < r->head; i++)
		if (sendto(tx, "criu-like", 9, 0, (struct sockaddr *)&ll, sizeof(ll)) != 9) {
			pr_perror("file %u: packet ring: cannot send on lo (is it up?)", fe->id);
			return neg_errno();
		}
	err = wait_filled(m, r, version, r->head);
	if (err) {
		pr_err("file %u: packet ring: %u frames sent on lo did not all come in\n", fe->id,
		       r->head);
		return err;
	}
	getsockopt(sk, SOL_PACKET, PACKET_STATISTICS, &st, &len);
	return 0;
}

int pk_rings_restore(const FileEntry *fe, int sk, const PacketSkEntry *e)
{
	size_t nrx = e->rx_ring ? e->rx_ring->data.len : 0;
	size_t ntx = e->tx_ring ? e->tx_ring->data.len : 0;
	uint8_t *m;
	int err = 0;

	if (!nrx && !ntx)
		return 0;
	if (e->rx_ring)
		err = set_ring(fe, sk, PACKET_RX_RING, e->version, e->rx_ring);
	if (!err && e->tx_ring)
		err = set_ring(fe, sk, PACKET_TX_RING, e->version, e->tx_ring);
	if (err)
		return err;
	if (e->rx_ring && e->rx_ring->head >= e->rx_ring->frame_nr) {
		pr_err("files.img: file %u: position %u in a ring of %u frames\n", fe->id,
		       e->rx_ring->head, e->rx_ring->frame_nr);
		return -EINVAL;
	}
	m = mmap(NULL, nrx + ntx, PROT_READ | PROT_WRITE, MAP_SHARED, sk, 0);
	if (m == MAP_FAILED) {
		pr_perror("file %u: cannot map its packet rings", fe->id);
		return neg_errno();
	}
	if (e->rx_ring && e->rx_ring->head && e->version != TPACKET_V3)
		err = replay(fe, sk, e->rx_ring, e->version, m);
	if (!err) {
		if (nrx)
			memcpy(m, e->rx_ring->data.data, nrx);
		if (ntx)
			memcpy(m + nrx, e->tx_ring->data.data, ntx);
	}
	munmap(m, nrx + ntx);
	if (!err)
		pr_debug("file %u: packet rings of %zu and %zu bytes set, position %u\n", fe->id,
			 nrx, ntx, e->rx_ring ? e->rx_ring->head : 0);
	return err;
}
