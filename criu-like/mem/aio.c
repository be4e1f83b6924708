// SPDX-License-Identifier: GPL-2.0
/*
 * AIO rings at dump (include/aio-ring.h); the restorer part is in
 * parasite/restorer/mem.c (restore_aios()).
 */
#define LOG_PREFIX "aio: "
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aio-ring.h"
#include "log.h"
#include "util.h"

bool vma_is_aio(const struct vma_entry *v)
{
	return v->kind == VMA_FILE && v->shared && v->path && !strcmp(v->path, "/[aio]");
}

int aio_ring_check(const struct aio_ring_hdr *h, uint64_t len)
{
	if (h->magic != AIO_RING_MAGIC || h->header_length != AIO_RING_HDR || h->incompat_features)
		return -EINVAL;
	if (len < AIO_RING_HDR || len % PAGE_SIZE ||
	    h->nr != (len - AIO_RING_HDR) / AIO_EVENT_SIZE || !h->nr)
		return -EINVAL;
	if (h->head >= h->nr || h->tail >= h->nr)
		return -EINVAL;
	return 0;
}

uint32_t aio_ring_unreaped(uint32_t head, uint32_t tail, uint32_t nr)
{
	return head <= tail ? tail - head : nr - (head - tail);
}

uint32_t aio_setup_nr(uint32_t nr)
{
	uint64_t want, size;

	/* nr = (pages * PAGE_SIZE - header) / event: the kernel asked for 2 * want + 2 */
	if (nr < 4)
		return 0;
	want = (nr - 2) / 2;
	size = AIO_RING_HDR + (2 * want + 2) * AIO_EVENT_SIZE;
	size = (size + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE;
	if ((size - AIO_RING_HDR) / AIO_EVENT_SIZE != nr || want > UINT32_MAX)
		return 0;
	return (uint32_t)want;
}

const AioRingEntry *rst_aio_find(const MmEntry *mm, const VmaEntry *v)
{
	for (size_t i = 0; i < mm->n_aios; i++) {
		const AioRingEntry *e = mm->aios[i];
		struct aio_ring_hdr h = { .nr = e->nr_events,
					  .head = e->head,
					  .tail = e->tail,
					  .magic = AIO_RING_MAGIC,
					  .header_length = AIO_RING_HDR };

		if (e->addr != v->start)
			continue;
		if (e->len != v->end - v->start || aio_ring_check(&h, e->len) ||
		    !aio_setup_nr(e->nr_events) ||
		    (e->has_events ? e->events.len : 0) !=
			    (size_t)aio_ring_unreaped(e->head, e->tail, e->nr_events) *
				    AIO_EVENT_SIZE)
			return NULL;
		return e;
	}
	return NULL;
}

int aio_dump_ring(pid_t pid, const struct vma_entry *v, AioRingEntry *e)
{
	uint64_t len = v->end - v->start;
	struct aio_ring_hdr h;
	_cleanup_close_ int fd = -1;
	uint32_t n, first;
	char path[64];
	uint8_t *ev;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("pid %d: open %s", pid, path);
		return neg_errno();
	}
	if (pread(fd, &h, sizeof(h), (off_t)v->start) != (ssize_t)sizeof(h)) {
		pr_perror("pid %d: reading the AIO ring at %lx", pid, v->start);
		return -EIO;
	}
	if (aio_ring_check(&h, len)) {
		pr_err("pid %d: AIO ring %lx-%lx: not a ring this kernel makes (magic %x, nr %u, "
		       "head %u, tail %u)\n",
		       pid, v->start, v->end, h.magic, h.nr, h.head, h.tail);
		return -EOPNOTSUPP;
	}
	if (!aio_setup_nr(h.nr)) {
		pr_err("pid %d: AIO ring %lx-%lx: no io_setup() gives %u events again\n", pid,
		       v->start, v->end, h.nr);
		return -EOPNOTSUPP;
	}
	aio_ring_entry__init(e);
	e->addr = v->start;
	e->len = len;
	e->nr_events = h.nr;
	e->head = h.head;
	e->tail = h.tail;
	n = aio_ring_unreaped(h.head, h.tail, h.nr);
	if (!n)
		return 0;
	ev = malloc((size_t)n * AIO_EVENT_SIZE);
	if (!ev)
		return -ENOMEM;
	/* head..end of the ring, then 0..tail when it wraps */
	first = h.head + n <= h.nr ? n : h.nr - h.head;
	if (pread(fd, ev, (size_t)first * AIO_EVENT_SIZE,
		  (off_t)(v->start + AIO_RING_HDR + (uint64_t)h.head * AIO_EVENT_SIZE)) !=
		    (ssize_t)first * AIO_EVENT_SIZE ||
	    (n > first &&
	     pread(fd, ev + (size_t)first * AIO_EVENT_SIZE, (size_t)(n - first) * AIO_EVENT_SIZE,
		   (off_t)(v->start + AIO_RING_HDR)) != (ssize_t)(n - first) * AIO_EVENT_SIZE)) {
		pr_perror("pid %d: reading the events of the AIO ring at %lx", pid, v->start);
		free(ev);
		return -EIO;
	}
	e->has_events = true;
	e->events.data = ev;
	e->events.len = (size_t)n * AIO_EVENT_SIZE;
	pr_debug("pid %d: AIO ring %lx-%lx: %u events, head %u, tail %u, %u unreaped\n", pid,
		 v->start, v->end, h.nr, h.head, h.tail, n);
	return 0;
}
