// SPDX-License-Identifier: GPL-2.0
/*
 * The restorer reads the pages with several threads of the task, one per
 * CPU, each taking the next batch of up to 2 MiB; an entry's crc32c is
 * joined from the pieces the threads read (Documentation/restore.md). Four
 * threads each write a region of their own, every page of which must come
 * back exactly:
 *
 *   - a long one, written whole (7 MiB and a page): one pagemap entry over
 *     several batches, not aligned to 2 MiB, so its pieces are read and
 *     checked by different threads;
 *   - one written every other page: many short runs in one batch;
 *   - one with every third page written, then one page in eight dropped:
 *     runs of varied lengths across batch boundaries;
 *   - one written whole again, but with a mprotect()ed read-only middle:
 *     three VMAs, the fill before the protection.
 *
 * Each thread checks its own region after SIGTERM, byte for byte (pages
 * never written or dropped must read as zeros), then the main thread checks
 * every region again.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PG 4096UL
#define NTHREADS 4
#define REGION_PAGES (7 * 256 + 1) /* 7 MiB and a page */

struct region {
	pthread_t thread;
	unsigned char *p;
	size_t pages;
	int kind; /* 0 whole, 1 every other page, 2 thirds with holes, 3 read-only middle */
	volatile int ready;
	volatile int bad; /* 1 + the first bad page, seen by the thread itself */
} __attribute__((aligned(64)));

static struct region regions[NTHREADS];
static volatile int stop_threads;

static uint64_t seed_of(int i, size_t page)
{
	return ((uint64_t)i << 32) + page + 1;
}

/* Is page @n of region @r's kind written (and not dropped)? */
static int written(const struct region *r, size_t n)
{
	switch (r->kind) {
	case 1:
		return n % 2 == 0;
	case 2:
		return n % 3 == 0 && n % 8 != 5;
	default:
		return 1;
	}
}

static void fill(struct region *r, int i)
{
	size_t n;

	for (n = 0; n < r->pages; n++)
		if (r->kind != 2 ? written(r, n) : n % 3 == 0)
			datagen(r->p + n * PG, PG, seed_of(i, n));
	if (r->kind == 2)
		for (n = 5; n < r->pages; n += 8)
			madvise(r->p + n * PG, PG, MADV_DONTNEED);
	if (r->kind == 3)
		mprotect(r->p + 256 * PG, 512 * PG, PROT_READ);
}

/* 0, or 1 + the first page of region @i that is not what it should be. */
static size_t check(const struct region *r, int i)
{
	static const unsigned char zero[PG];
	size_t n;

	for (n = 0; n < r->pages; n++) {
		const unsigned char *pg = r->p + n * PG;

		if (written(r, n) ? datachk(pg, PG, seed_of(i, n), NULL) != 0
				  : memcmp(pg, zero, PG) != 0)
			return n + 1;
	}
	return 0;
}

static void *thread_fn(void *arg)
{
	struct region *r = arg;
	int i = (int)(r - regions);

	fill(r, i);
	r->ready = 1;
	while (!stop_threads)
		usleep(1000);
	r->bad = (int)check(r, i);
	return NULL;
}

int main(int argc, char **argv)
{
	int i, ret = 0;

	test_init(argc, argv);
	for (i = 0; i < NTHREADS; i++) {
		struct region *r = &regions[i];

		r->kind = i;
		r->pages = REGION_PAGES + (size_t)i * 37;
		r->p = mmap(NULL, r->pages * PG, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r->p == MAP_FAILED) {
			fail("mmap region %d: %s", i, strerror(errno));
			return 1;
		}
		if (pthread_create(&r->thread, NULL, thread_fn, r)) {
			fail("pthread_create %d failed", i);
			return 1;
		}
	}
	for (i = 0; i < NTHREADS; i++)
		while (!regions[i].ready)
			usleep(1000);
	test_daemon();
	test_waitsig();

	stop_threads = 1;
	for (i = 0; i < NTHREADS; i++) {
		struct region *r = &regions[i];
		size_t bad;

		pthread_join(r->thread, NULL);
		if (r->bad) {
			fail("region %d (kind %d): page %d differs, seen by its thread", i, r->kind,
			     r->bad - 1);
			ret = 1;
		}
		bad = check(r, i);
		if (bad) {
			fail("region %d (kind %d): page %zu differs", i, r->kind, bad - 1);
			ret = 1;
		}
	}
	if (!ret)
		pass();
	return ret;
}
