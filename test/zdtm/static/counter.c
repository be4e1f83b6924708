// SPDX-License-Identifier: GPL-2.0
/*
 * A busy counter in its own page, with a shadow copy on the stack checked at
 * every step: a restore that restarts the program, loses a page or mixes old
 * and new pages breaks the pair. A datagen buffer keeps its checksum.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "zdtmtst.h"

#define BUF_SIZE (4 << 20)
#define SEED 0xc0c0ULL

#define STEPS_AFTER_SIGTERM 1000000

/* One step of the count; -EILSEQ when the counter and its shadow disagree. */
static int step(volatile uint64_t *counter, volatile uint64_t *shadow)
{
	uint64_t v = *counter;

	if (v != *shadow) {
		fail("counter is %lu but its shadow is %lu", (unsigned long)v,
		     (unsigned long)*shadow);
		return -EILSEQ;
	}
	*counter = v + 1;
	*shadow = v + 1;
	return 0;
}

int main(int argc, char **argv)
{
	volatile uint64_t *counter;
	volatile uint64_t shadow = 0;
	unsigned char *buf;
	uint64_t csum, at_term;
	size_t off;

	test_init(argc, argv);
	buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || counter == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	datagen(buf, BUF_SIZE, SEED);
	csum = test_csum(buf, BUF_SIZE);
	test_daemon();

	while (test_go())
		if (step(counter, &shadow))
			return 1;
	/* Still counting after SIGTERM (after a restore): it continues, it does not restart. */
	at_term = *counter;
	while (*counter < at_term + STEPS_AFTER_SIGTERM)
		if (step(counter, &shadow))
			return 1;
	test_msg("counter was %lu at SIGTERM, now %lu\n", (unsigned long)at_term,
		 (unsigned long)*counter);
	if (test_csum(buf, BUF_SIZE) != csum) {
		datachk(buf, BUF_SIZE, SEED, &off);
		fail("buffer checksum changed; first bad byte at %zu", off);
		return 1;
	}
	pass();
	return 0;
}
