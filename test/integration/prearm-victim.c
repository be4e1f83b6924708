// SPDX-License-Identifier: GPL-2.0
/*
 * The victim of snapshot-prearm.sh: a --snapshot armed before its freeze
 * (snapshot-prearm.c) must come back as one point in time although the
 * victim changed its memory's layout and flags between the arming and the
 * freeze.
 *
 * SLOTS regions of SLOT_PAGES pages, each page holding its slot and the
 * slot's generation (head and tail), are described by a table in a page of
 * its own (address, generation, a busy mark around each change). A bulk
 * area is swept without a pause (each page holds the sweep that wrote it,
 * positions below the cursor one more than those above), and between two
 * steps, slot after slot, one change:
 *  - while CTL/churn exists: a new mapping filled then swapped in (the old
 *    one unmapped), a move with mremap() then a rewrite, MADV_DONTNEED then
 *    a rewrite (pages that come back unprotected without a fault), and the
 *    two below;
 *  - while CTL/quiet exists: none (the bulk sweep only);
 *  - else: a round trip through PROT_NONE then a rewrite, MADV_HUGEPAGE or
 *    NOHUGEPAGE in turn then a rewrite (the flags change, not the layout);
 *    both are safe while a snapshot copies.
 * SIGUSR1: every slot not busy and the whole bulk area checked against the
 * table, "check ok CHANGES" or "check bad: why" printed.
 *
 *   prearm-victim CTL
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096UL
#define SLOTS 8
#define SLOT_PAGES 16
#define BULK_PAGES 24576UL /* 96 MiB: over the 64 MiB a task needs to be armed before */
#define STEP 64 /* bulk pages written between two changes */

static char why[256];
static volatile sig_atomic_t check_now;
static char churn_path[4096], quiet_path[4096];

static void on_usr1(int sig)
{
	(void)sig;
	check_now = 1;
}
struct slot {
	uint64_t addr, gen, busy;
};

struct table {
	struct slot s[SLOTS];
	uint64_t changes;
	uint64_t bulk_gen, bulk_pos;
};

static void fill(uint64_t addr, unsigned int slot, uint64_t gen)
{
	for (unsigned int i = 0; i < SLOT_PAGES; i++) {
		uint64_t *p = (uint64_t *)(addr + i * PG);

		p[0] = slot;
		p[1] = gen;
		p[PG / 8 - 1] = gen;
	}
}

static int check_slot(const struct table *t, unsigned int k)
{
	for (unsigned int i = 0; i < SLOT_PAGES; i++) {
		const uint64_t *p = (const uint64_t *)(t->s[k].addr + i * PG);

		if (p[0] != k || p[1] != t->s[k].gen || p[PG / 8 - 1] != t->s[k].gen) {
			snprintf(why, sizeof(why),
				 "slot %u page %u at %lx: slot %lu, generation %lu (tail %lu); the "
				 "table says generation %lu",
				 k, i, (unsigned long)t->s[k].addr, (unsigned long)p[0],
				 (unsigned long)p[1], (unsigned long)p[PG / 8 - 1],
				 (unsigned long)t->s[k].gen);
			return -EINVAL;
		}
	}
	return 0;
}

static void *map_slot(void)
{
	return mmap(NULL, SLOT_PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
}

/* One change of slot @k, by the kind the count of changes and CTL say. */
static int change(struct table *t, unsigned int k)
{
	struct slot *s = &t->s[k];
	size_t len = SLOT_PAGES * PG;
	void *n, *old = (void *)s->addr;
	unsigned int kind = (unsigned int)(t->changes % 5);

	if (!access(quiet_path, F_OK))
		return 0;
	if (access(churn_path, F_OK))
		kind = 3 + kind % 2;
	switch (kind) {
	case 0: /* a new mapping swapped in */
		n = map_slot();
		if (n == MAP_FAILED)
			return -errno;
		fill((uint64_t)n, k, s->gen + 1);
		s->busy = 1;
		s->addr = (uint64_t)n;
		s->gen++;
		s->busy = 0;
		munmap(old, len);
		return 0;
	case 1: /* moved (MREMAP_FIXED) over a fresh mapping, then rewritten */
		n = map_slot();
		if (n == MAP_FAILED)
			return -errno;
		s->busy = 1;
		n = mremap(old, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, n);
		if (n == MAP_FAILED)
			return -errno;
		s->addr = (uint64_t)n;
		break;
	case 2: /* emptied: its pages come back without a fault */
		s->busy = 1;
		if (madvise(old, len, MADV_DONTNEED))
			return -errno;
		break;
	case 3: /* through PROT_NONE and back */
		s->busy = 1;
		if (mprotect(old, len, PROT_NONE) || mprotect(old, len, PROT_READ | PROT_WRITE))
			return -errno;
		break;
	default: /* the VMA's flags, not its layout */
		s->busy = 1;
		if (madvise(old, len, t->changes % 2 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
			return -errno;
		break;
	}
	fill(s->addr, k, s->gen + 1);
	s->gen++;
	s->busy = 0;
	return 0;
}

static uint64_t *bulk_page(uint8_t *bulk, uint64_t pos)
{
	return (uint64_t *)(bulk + ((pos * 1031UL) % BULK_PAGES) * PG);
}

static int bulk_check(const struct table *t, uint8_t *bulk, uint64_t pos)
{
	uint64_t want = pos < t->bulk_pos ? t->bulk_gen : t->bulk_gen - 1;

	if (bulk_page(bulk, pos)[0] == want)
		return 0;
	snprintf(why, sizeof(why), "bulk position %lu: generation %lu, expected %lu (cursor %lu)",
		 (unsigned long)pos, (unsigned long)bulk_page(bulk, pos)[0], (unsigned long)want,
		 (unsigned long)t->bulk_pos);
	return -EINVAL;
}

static int bulk_step(struct table *t, uint8_t *bulk)
{
	for (unsigned int i = 0; i < STEP; i++) {
		uint64_t *p = bulk_page(bulk, t->bulk_pos);

		if (bulk_check(t, bulk, t->bulk_pos))
			return -EINVAL;
		p[0] = t->bulk_gen;
		if (++t->bulk_pos == BULK_PAGES) {
			t->bulk_pos = 0;
			t->bulk_gen++;
		}
	}
	return 0;
}

static int check_all(const struct table *t, uint8_t *bulk)
{
	for (unsigned int k = 0; k < SLOTS; k++)
		if (!t->s[k].busy && check_slot(t, k))
			return -EINVAL;
	for (uint64_t pos = 0; pos < BULK_PAGES; pos++)
		if (bulk_check(t, bulk, pos))
			return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	struct table *t;
	uint8_t *bulk;
	unsigned int k;

	if (argc != 2)
		return 2;
	snprintf(churn_path, sizeof(churn_path), "%s/churn", argv[1]);
	snprintf(quiet_path, sizeof(quiet_path), "%s/quiet", argv[1]);
	signal(SIGUSR1, on_usr1);
	t = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bulk = mmap(NULL, BULK_PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	if (t == MAP_FAILED || bulk == MAP_FAILED)
		return 1;
	memset(bulk, 0, BULK_PAGES * PG);
	t->bulk_gen = 1;
	for (k = 0; k < SLOTS; k++) {
		void *m = map_slot();

		if (m == MAP_FAILED)
			return 1;
		t->s[k].addr = (uint64_t)m;
		fill(t->s[k].addr, k, 0);
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if (check_now) {
			check_now = 0;
			if (check_all(t, bulk))
				printf("check bad: %s\n", why);
			else
				printf("check ok %lu\n", (unsigned long)t->changes);
			fflush(stdout);
		}
		k = (unsigned int)(t->changes % SLOTS);
		if (!t->s[k].busy && check_slot(t, k))
			break;
		if (change(t, k)) {
			snprintf(why, sizeof(why), "change %lu of slot %u: %s",
				 (unsigned long)t->changes, k, strerror(errno));
			break;
		}
		t->changes++;
		if (bulk_step(t, bulk))
			break;
	}
	printf("bad: %s\n", why);
	fflush(stdout);
	return 1;
}
