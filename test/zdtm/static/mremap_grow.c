// SPDX-License-Identifier: GPL-2.0
/*
 * Mappings reshaped by mremap(): an anonymous area grown in place (its
 * neighbour's room kept free), one moved to a new place then grown there,
 * and one shrunk; each checksummed, pages written after the growth too.
 * After the restore: the same bounds, the data byte for byte, and each still
 * grows again in place.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PG 4096UL

struct area {
	const char *name;
	uint8_t *addr;
	size_t len;
	uint64_t seed;
};

static struct area a[3] = { { "grown in place" }, { "moved, then grown" }, { "shrunk" } };

/* A reservation of @pages: the first @use mapped read-write, the rest given back. */
static uint8_t *reserve(size_t pages, size_t use)
{
	uint8_t *r = mmap(NULL, pages * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED)
		return NULL;
	if ((use < pages && munmap(r + use * PG, (pages - use) * PG)) ||
	    mprotect(r, use * PG, PROT_READ | PROT_WRITE))
		return NULL;
	return r;
}

static int setup(void)
{
	uint8_t *p, *q;

	/* grown in place: 4 pages into the 16 kept free after them */
	p = reserve(16, 4);
	if (!p)
		return neg_errno();
	datagen(p, 4 * PG, 11);
	if (mremap(p, 4 * PG, 12 * PG, 0) != p)
		return neg_errno();
	a[0] = (struct area){ a[0].name, p, 12 * PG, 1 };
	datagen(p, 12 * PG, 1);
	/* moved to a free spot, then grown there */
	p = reserve(8, 3);
	q = reserve(32, 1);
	if (!p || !q || munmap(q, PG))
		return neg_errno();
	datagen(p, 3 * PG, 22);
	if (mremap(p, 3 * PG, 3 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, q) != q ||
	    mremap(q, 3 * PG, 9 * PG, 0) != q)
		return neg_errno();
	a[1] = (struct area){ a[1].name, q, 9 * PG, 2 };
	datagen(q + 3 * PG, 6 * PG, 99);
	if (datachk(q, 3 * PG, 22, &(size_t){ 0 }))
		return neg_errno();
	datagen(q, 9 * PG, 2);
	/* shrunk */
	p = reserve(10, 10);
	if (!p)
		return neg_errno();
	datagen(p, 10 * PG, 33);
	if (mremap(p, 10 * PG, 5 * PG, 0) != p)
		return neg_errno();
	a[2] = (struct area){ a[2].name, p, 5 * PG, 33 };
	return 0;
}

static int check(struct area *x)
{
	unsigned long s, e;
	char perms[5];
	size_t off;

	if (test_vma_find(x->addr, &s, &e, perms) || s > (unsigned long)x->addr ||
	    e < (unsigned long)x->addr + x->len) {
		fail("%s: %p+%zu is not one mapping after the restore", x->name, x->addr, x->len);
		return -EINVAL;
	}
	if (datachk(x->addr, x->len, x->seed, &off)) {
		fail("%s: data differ at offset %zu", x->name, off);
		return -EINVAL;
	}
	/* room after it: it grows in place again */
	if (!munmap(x->addr + x->len, PG) && mremap(x->addr, x->len, x->len + PG, 0) != x->addr) {
		fail("%s: cannot grow in place any more: %m", x->name);
		return neg_errno();
	}
	return 0;
}

int main(int argc, char **argv)
{
	int i;

	test_init(argc, argv);
	if (setup()) {
		fail("setup: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();
	for (i = 0; i < 3; i++)
		if (check(&a[i]))
			return 1;
	pass();
	return 0;
}
