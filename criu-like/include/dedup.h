/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_DEDUP_H
#define CRIU_LIKE_DEDUP_H

/*
 * `dedup` and --auto-dedup (mem/dedup.c, Documentation/memory.md section 3,
 * "Dedup"): the pages of a chain's parents that the newest image supersedes
 * are punched out of their pages images, and the parents' pagemap entries are
 * split so that the punched parts are flagged PE_DEDUPED. The planning is
 * pure (test/unit/test-dedup.c).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"
#include "restore-mem.h"

struct dedup_range {
	uint64_t start, end; /* addresses, page aligned */
};

struct dedup_ranges {
	size_t n, cap;
	struct dedup_range *r; /* sorted, not touching */
};

/*
 * For the chain @lv[0..@nlv) of one task (level 0 the newest image), fill
 * @out[k] (1 <= k < nlv) with the PE_PRESENT parts of level k that a restore
 * of level 0 never reads: inside level 0's entries, but found at a level
 * above k first (PE_PRESENT there, or not populated there). 0 or -ENOMEM.
 */
int dedup_superseded(pid_t pid, const struct rst_chain_level *lv, unsigned int nlv,
		     struct dedup_ranges *out);

/* One entry of a rewritten pagemap. */
struct dedup_piece {
	uint64_t vaddr;
	uint32_t nr_pages;
	uint32_t flags;
	size_t entry; /* its entry in the old pagemap */
	uint64_t off; /* data offset in the pages image (PE_PRESENT and PE_DEDUPED) */
	bool punch; /* PE_PRESENT before, PE_DEDUPED now: its data is to be punched */
	bool split; /* a PE_PRESENT part of a split entry: needs a crc32c of its own */
};

/*
 * Split the @n entries @pe of a pagemap at the edges of @punch: every
 * PE_PRESENT part inside @punch becomes a PE_DEDUPED piece, the rest keeps
 * its flags. Data offsets are those of the old pagemap (PE_PRESENT and
 * PE_DEDUPED count). *@out (malloc'd, *@nout pieces), 0 or -ENOMEM.
 */
int dedup_split(PagemapEntry *const *pe, size_t n, const struct dedup_ranges *punch,
		struct dedup_piece **out, size_t *nout);

/* Dedup the chain of image directory @dir (`dedup -D DIR`, --auto-dedup). */
int dedup_dir(const char *dir);

int cr_dedup(const struct cr_options *o);

#endif
