// SPDX-License-Identifier: GPL-2.0
/*
 * Writes its memory without a pause, so that a dump --snapshot copies it
 * while it changes, and checks that what comes back is one point in time.
 *
 * N pages are written in sweeps, in a scattered order (position i is page
 * i * STRIDE mod N); sweep g writes g into each page, after checking that the
 * page still holds g - 1, and a cursor page says which sweep and how far.
 * At any instant positions below the cursor hold g and the others g - 1: an
 * image made of pages copied at different times (one page older than the
 * cursor, or newer) breaks that at the first write after the restore, or at
 * the final check. Every sweep also read()s into a page from a pipe, a write
 * the kernel does on the task's behalf (it must wait for a protected page,
 * never fail with EFAULT), and each page carries its own index and a tail
 * copy of the generation (a torn page breaks the pair).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR_PAGES (16384UL) /* 64 MiB */
#define STRIDE 4099UL /* odd: a permutation of the pages */
#define PG 4096UL
#define KPAGES 64

struct cursor {
	uint64_t gen; /* the sweep under way */
	uint64_t pos; /* positions below this hold gen, the rest gen - 1 */
	uint64_t kreads; /* read()s into kbuf that returned a whole page */
};

static uint64_t *page(uint8_t *mem, uint64_t pos)
{
	return (uint64_t *)(mem + ((pos * STRIDE) % NR_PAGES) * PG);
}

static int check_page(uint8_t *mem, uint64_t pos, uint64_t want)
{
	uint64_t *p = page(mem, pos);
	uint64_t idx = (pos * STRIDE) % NR_PAGES;

	if (p[0] != want || p[PG / 8 - 1] != want || p[1] != idx) {
		fail("position %lu (page %lu): generation %lu (tail %lu), index %lu; expected %lu, "
		     "index %lu",
		     (unsigned long)pos, (unsigned long)idx, (unsigned long)p[0],
		     (unsigned long)p[PG / 8 - 1], (unsigned long)p[1], (unsigned long)want,
		     (unsigned long)idx);
		return -EINVAL;
	}
	return 0;
}

/* One read() into a page from the pipe: the kernel writes the task's memory. */
static int kernel_write(int p[2], uint8_t *kbuf, struct cursor *c)
{
	static uint8_t src[PG];
	uint8_t *dst = kbuf + (c->gen % KPAGES) * PG;
	ssize_t n;

	memset(src, (int)(c->gen & 0xff), sizeof(src));
	if (write(p[1], src, PG) != (ssize_t)PG) {
		fail("write to the pipe: %m");
		return neg_errno();
	}
	n = read(p[0], dst, PG);
	if (n != (ssize_t)PG || memcmp(dst, src, PG)) {
		fail("read() into a page of the task: %zd (%m)", n);
		return neg_errno();
	}
	c->kreads++;
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t *mem, *kbuf;
	struct cursor *c;
	uint64_t pos;
	int p[2];

	test_init(argc, argv);
	mem = mmap(NULL, NR_PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	kbuf = mmap(NULL, KPAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || kbuf == MAP_FAILED || c == MAP_FAILED || pipe(p)) {
		fail("mmap or pipe: %m");
		return 1;
	}
	memset(kbuf, 0, KPAGES * PG);
	for (pos = 0; pos < NR_PAGES; pos++) {
		uint64_t *pg = page(mem, pos);

		pg[0] = pg[PG / 8 - 1] = 0;
		pg[1] = (pos * STRIDE) % NR_PAGES;
	}
	c->gen = 1;
	c->pos = 0;
	test_daemon();

	while (test_go()) {
		uint64_t *pg;

		if (check_page(mem, c->pos, c->gen - 1))
			return 1;
		pg = page(mem, c->pos);
		pg[0] = c->gen;
		pg[PG / 8 - 1] = c->gen;
		if (++c->pos == NR_PAGES) {
			if (kernel_write(p, kbuf, c))
				return 1;
			c->pos = 0;
			c->gen++;
		}
	}
	/* the whole memory against the cursor */
	for (pos = 0; pos < NR_PAGES; pos++)
		if (check_page(mem, pos, pos < c->pos ? c->gen : c->gen - 1))
			return 1;
	test_msg("stopped in sweep %lu at position %lu, %lu kernel writes\n", (unsigned long)c->gen,
		 (unsigned long)c->pos, (unsigned long)c->kreads);
	pass();
	return 0;
}
