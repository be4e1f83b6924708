/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_SNAPSHOT_H
#define CRIU_LIKE_SNAPSHOT_H

/*
 * dump --snapshot (Documentation/memory.md, "Live snapshot"): the private
 * anonymous memory of every task is write-protected with a synchronous
 * userfaultfd while the tree is frozen, and copied after it runs again; a
 * write to a page not copied yet waits until that page is saved.
 */
#include <stdbool.h>
#include <stdint.h>

#include "compat.h"
#include "mem-scan.h"

struct dump_ctx;
struct dump_task;

/* Where each page of a task's runs lies in its pages image (pure, snapshot-plan.c). */
struct snap_layout {
	const struct mem_runs *runs;
	uint64_t *first; /* run i's first page is page first[i] of the image; nr + 1 entries */
};

int snap_layout_init(struct snap_layout *l, const struct mem_runs *runs);
void snap_layout_fini(struct snap_layout *l);
/* The image page holding @addr, or -ENOENT when no run has it; *@ret_run: its run. */
int64_t snap_page_index(const struct snap_layout *l, unsigned long addr, unsigned int *ret_run);

/* State of each image page. */
enum {
	SNAP_UNSAVED = 0,
	SNAP_COPIED, /* by the copy, in order */
	SNAP_FAULTED, /* by the fault handler, before the copy reached it */
};

/*
 * A chunk of @nr_pages from @addr (@state: theirs) was read: every page not
 * saved by the handler must still be write-protected and present or swapped,
 * as @reg (PAGEMAP_SCAN regions of such pages, sorted) says; otherwise it
 * changed without a write fault (unmapped, moved, discarded). The index of
 * the first page that fails, or -ENOENT.
 */
long snap_chunk_check(const uint8_t *state, unsigned long addr, unsigned long nr_pages,
		      const struct page_region *reg, unsigned int nr_reg);

/* The engine (snapshot.c). */
struct snapshot;

/* Before anything is seized: the fault handler, the uffd device. 0 or -errno. */
int snapshot_start(struct dump_ctx *ctx);
/*
 * After snapshot_start(), before the dump's own seize (snapshot-prearm.c): a
 * short freeze registers each task's private anonymous memory with a
 * synchronous uffd, and it is write-protected while the tree runs, so that
 * the snapshot's freeze protects only what was written since. Not on top of
 * a pre-dump. Only -ENOMEM fails: a task not armed before is armed in the
 * freeze.
 */
int snapshot_prearm(struct dump_ctx *ctx);
/*
 * The task armed before the freeze, infected (@area: the parasite's): its
 * smaps as read before the freeze, into *@ret, if its VMAs' layout (@maps,
 * read frozen) and kernel flags are still the same. 0, or -ENOENT/-ESTALE:
 * read smaps now.
 */
struct vma_list;
int snapshot_task_vmas(struct dump_ctx *ctx, struct dump_task *dt, const struct vma_list *maps,
		       const unsigned long area[2], struct vma_list *ret);
/* @dt adopted a uffd armed before the freeze: its plan's scan reports MEM_SCAN_UNPROTECTED. */
bool snapshot_task_prearmed(struct dump_ctx *ctx, struct dump_task *dt);
/* The tree seized: each task's state, the uffds armed before adopted. 0 or -errno. */
int snapshot_open(struct dump_ctx *ctx);
/*
 * In place of the pages of dump_task_mm(), the task frozen and infected: open
 * its pages image, copy the runs that are not private anonymous memory, and
 * write-protect the VMAs of the others. 0 or -errno.
 */
int snapshot_task_arm(struct dump_ctx *ctx, struct dump_task *dt);
/*
 * Right after the infection, before smaps is read: register the private
 * anonymous VMAs of @maps (/proc/PID/maps, read frozen before the
 * infection) and write-protect them in background threads, which
 * snapshot_task_arm() waits for once the plan is known (then it unregisters
 * what holds nothing to save and arms what was missed). A write fault before
 * the plan saves the page aside. Not on top of a pre-dump (its tracking
 * uffd holds the VMAs until the written pages are scanned). A failure only
 * leaves the arming to snapshot_task_arm(), as without it. 0 or -ENOMEM.
 */
int snapshot_task_early_arm(struct dump_ctx *ctx, struct dump_task *dt,
			    const struct vma_list *maps);
/*
 * The tree runs again: copy every protected page (faults first), release
 * the tree, write the pagemaps. 0 or -errno (the tree is released either way).
 */
int snapshot_copy(struct dump_ctx *ctx);
/*
 * The same in a thread of its own while this one (the tracer) keeps the
 * leaders of @h held at their exit (seize/exit-hold.c) until the copy ends.
 */
struct exit_hold;
int snapshot_copy_holding(struct dump_ctx *ctx, struct exit_hold *h);
/* Release the tree (close the uffds) and free; NULL is fine. */
void snapshot_fini(struct snapshot *s);

#endif
