/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_LAZY_DUMP_H
#define CRIU_LIKE_LAZY_DUMP_H

/*
 * `dump --lazy-pages` (Documentation/lazy-pages.md, "A lazy dump"): every
 * image is written but the data of the private anonymous pages, which the
 * pagemap still lists; the tree stays frozen and a page server reads those
 * pages from the tasks' own memory for one `lazy-pages --page-server`. Once
 * that daemon says the restore is complete (DONE), the tree is killed;
 * should the daemon or the link go first, the tree resumes.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"

struct dump_ctx;
struct dump_task;

/* ---- the pure part (lazy-dump-runs.c) ---- */

/* A VMA as the restore will see it: lazy when rst_lazy_vma() says so. */
struct ld_vma {
	uint64_t start, end;
	bool lazy;
};

/* A piece of a run: wholly in the pages image (data), or wholly left in the task (lazy). */
struct ld_piece {
	uint64_t vaddr;
	uint64_t nr_pages;
	bool lazy;
};

/*
 * Cut the runs (@nr of them, address and page count, sorted) into pieces by
 * the VMAs @v (@nv, sorted, disjoint) and the pages @eager (@ne page
 * addresses, sorted: the rseq areas', which the restore reads itself):
 * a piece is lazy where its VMA is lazy and it holds no eager page. Adjacent
 * pieces of the same kind are merged. 0 or -ENOMEM; *@out freed by the caller.
 */
int ld_split(const uint64_t *start, const uint64_t *nr_pages, size_t nr, const struct ld_vma *v,
	     size_t nv, const uint64_t *eager, size_t ne, struct ld_piece **out, size_t *n_out);

/* Where a lazy piece's bytes are: in pages-@pages_id.img at @off, in task @pid at @vaddr. */
struct ld_span {
	uint32_t pages_id;
	pid_t pid;
	uint64_t off, len, vaddr;
};

struct ld_index {
	struct ld_span *s; /* by pages_id, then off */
	size_t n, cap;
};

/* Append a span (spans of one image are added in offset order). 0 or -ENOMEM. */
int ld_index_add(struct ld_index *ix, const struct ld_span *s);
/* The first span of pages-@id.img that ends after @off, or NULL. */
const struct ld_span *ld_index_find(const struct ld_index *ix, uint32_t id, uint64_t off);
void ld_index_fini(struct ld_index *ix);

/* ---- the dump's side (lazy-dump.c) ---- */

/* dump_ctx.lazy: what a lazy dump keeps between its steps. */
struct lazy_dump {
	struct ld_index ix; /* the holes of the pages images */
	int lfd; /* where the lazy-pages daemon connects, kept for the keeper */
	bool keep; /* killed on DONE, the daemon may not have heard it: a keeper answers it */
};

/*
 * What the options allow: 0, or -EINVAL naming the option that makes no
 * sense with it (a pre-dump's is refused by the CLI and the RPC already).
 */
int lazy_dump_check_opts(const struct cr_options *o);
/* The id of this lazy dump's images (InventoryEntry.lazy_dump.id): random, never 0. */
uint64_t lazy_dump_new_id(void);
/*
 * The task's pagemap and pages image in place of dump_private_pages(): the
 * data of what stays lazy is a hole, its pagemap entries without crc32c.
 */
int lazy_dump_task_pages(struct dump_ctx *ctx, struct dump_task *dt);
/*
 * Once the images are complete, with the tree frozen: listen at
 * --address/--port, serve one lazy-pages daemon. 0 once it said DONE (every
 * task has been sent SIGKILL before the answer), else -errno: the tree is to
 * resume.
 */
int lazy_dump_serve(struct dump_ctx *ctx);
/*
 * Once the tree is resumed or killed: when it was killed on DONE and the
 * daemon may not have heard it (no END came after the answer), a keeper
 * process answers the daemon's DONE asked again on the same socket for a
 * while. Then frees ctx->lazy.
 */
void lazy_dump_fini(struct dump_ctx *ctx);

#endif
