/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_AIO_RING_H
#define CRIU_LIKE_AIO_RING_H

/*
 * AIO contexts (io_setup()): the ring a context maps in the task ("/[aio]"),
 * read at dump, given back by the restorer (Documentation/memory.md, "AIO
 * rings"). The ring layout is the kernel's ABI (fs/aio.c, struct aio_ring),
 * which libaio reads too.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mm.pb-c.h"
#include "proc-parse.h"

#define AIO_RING_MAGIC 0xa10a10a1u
#define AIO_RING_HDR 32u /* struct aio_ring up to its io_events */
#define AIO_EVENT_SIZE 32u /* struct io_event */

struct aio_ring_hdr {
	uint32_t id, nr, head, tail;
	uint32_t magic, compat_features, incompat_features, header_length;
};

/* The VMA is the ring of an AIO context. */
bool vma_is_aio(const struct vma_entry *v);

/*
 * Check a ring header read from a @len bytes ring: magic, header length, nr
 * matching the size, head and tail inside. 0 or -EINVAL.
 */
int aio_ring_check(const struct aio_ring_hdr *h, uint64_t len);
/* Completed events not reaped yet, from @head to @tail in a ring of @nr. */
uint32_t aio_ring_unreaped(uint32_t head, uint32_t tail, uint32_t nr);
/*
 * The io_setup() argument that gives a ring of @nr events (the kernel doubles
 * what it is asked, adds 2 and rounds the ring up to whole pages), 0 when none
 * does.
 */
uint32_t aio_setup_nr(uint32_t nr);
/*
 * The entry of MmEntry.aios for the VMA_AIO VMA @v, checked (a ring size
 * io_setup() gives, head and tail inside, the unreaped events all there), or NULL.
 */
const AioRingEntry *rst_aio_find(const MmEntry *mm, const VmaEntry *v);

/* Read the ring of @v in task @pid (/proc/PID/mem) into @e; -EOPNOTSUPP, logged, when unusable. */
int aio_dump_ring(pid_t pid, const struct vma_entry *v, AioRingEntry *e);

#endif
