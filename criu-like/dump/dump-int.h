// SPDX-License-Identifier: GPL-2.0
/* Private to the dump's flow (dump.c, pre-dump.c) and the steps it runs in this folder. */
#ifndef CRIU_LIKE_DUMP_INT_H
#define CRIU_LIKE_DUMP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "dump.h"

/* ctx.c: the directory opened, the pre-dump hook run, the tree seized and checked. */
int dump_prepare(struct dump_ctx *ctx, const struct cr_options *o);
/* ctx.c: everything the dump holds released (an infected task cured first). */
void dump_ctx_fini(struct dump_ctx *ctx);

/* tasks.c: from the infection of the first task to the cure of the last (or its deferral). */
int dump_tasks(struct dump_ctx *ctx);
/* tasks.c: every infected task cured; the first failure is named and returned. */
int cure_tasks(struct dump_ctx *ctx);
/* tasks.c: a dump that kills the tree leaves the cure for a failure. */
bool cure_deferred(const struct dump_ctx *ctx);
/* tasks.c: after the tree was killed infected: the parasites' controls freed. */
void discard_parasites(struct dump_ctx *ctx);

/* pstree.c: every sid and pgid is a task of the tree (or the root's with --shell-job). */
int check_sessions(const struct dump_ctx *ctx);
/* pstree.c: pstree.img, one entry per task. */
int write_pstree(const struct dump_ctx *ctx);

/* inventory.c: inventory.img, @completed or not. */
int write_inventory(const struct dump_ctx *ctx, bool completed);
/* inventory.c: the page server has every image, flushed: the session ends. */
int ps_end(struct dump_ctx *ctx);
/* inventory.c: the images on disk (syncfs), unless --no-sync. */
int images_sync(const struct dump_ctx *ctx);
/* inventory.c: best effort: the directory marked incomplete again. */
void unmark_complete(const struct dump_ctx *ctx);

/* stats-dump.c: the last line for the user: how long the tree was frozen. */
void report_frozen(const char *what, const struct cr_options *o, uint64_t frozen_ns);
/* stats-dump.c: the stats-dump image. */
void write_stats(struct dump_ctx *ctx);

/* dump.c: --auto-dedup of the parents of a complete dump. */
int auto_dedup(const struct cr_options *o);
/* dump.c: @sh stands in for ctx->tree once it is unseized (the fields still needed copied). */
int shadow_tree(struct dump_ctx *ctx, struct pstree *sh, struct seized_task **copies);

#endif
