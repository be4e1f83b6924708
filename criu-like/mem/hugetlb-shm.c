// SPDX-License-Identifier: GPL-2.0
/* Shared hugetlb memory at dump (include/hugetlb-shm.h). */
#define LOG_PREFIX "hugetlb: "
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hugetlb-shm.h"
#include "log.h"
#include "util.h"

static bool all_zero(const uint8_t *p, size_t len)
{
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}

static int runs_add(struct mem_runs *r, unsigned long start, unsigned long nr)
{
	struct mem_run *last = r->nr ? &r->runs[r->nr - 1] : NULL;

	if (last && last->start + last->nr_pages == start) {
		last->nr_pages += nr;
		return 0;
	}
	if (r->nr == r->cap) {
		unsigned int cap = r->cap ? r->cap * 2 : 16;
		struct mem_run *n = reallocarray(r->runs, cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->runs = n;
		r->cap = cap;
	}
	r->runs[r->nr++] = (struct mem_run){ start, nr, MEM_SAVE_SHMEM };
	return 0;
}

int hugetlb_shm_read(int fd, unsigned long size, unsigned long huge, struct mem_runs *runs,
		     int *copy)
{
	_cleanup_free_ uint8_t *buf = NULL;
	_cleanup_close_ int out = -1;
	unsigned long off;
	int err = 0;

	*copy = -1;
	memset(runs, 0, sizeof(*runs));
	if (!huge || huge % PAGE_SIZE || size % huge) {
		pr_err("object of %lu bytes in huge pages of %lu bytes\n", size, huge);
		return -EINVAL;
	}
	buf = malloc(huge);
	out = memfd_create("criu-like-hugetlb", MFD_CLOEXEC);
	if (!buf || out < 0)
		return buf ? neg_errno() : -ENOMEM;
	for (off = 0; !err && off < size; off += huge) {
		ssize_t n = pread(fd, buf, huge, (off_t)off);

		if (n < 0 || (size_t)n != huge) {
			err = n < 0 ? neg_errno() : -EIO;
			pr_errno(err, "reading the huge page at offset %lx", off);
			break;
		}
		if (all_zero(buf, huge))
			continue;
		if (pwrite(out, buf, huge, (off_t)off) != (ssize_t)huge) {
			err = neg_errno();
			pr_errno(err, "copying the huge page at offset %lx", off);
			break;
		}
		err = runs_add(runs, off / PAGE_SIZE, huge / PAGE_SIZE);
	}
	if (err) {
		mem_runs_fini(runs);
		return err;
	}
	*copy = TAKE_FD(out);
	return 0;
}
