// SPDX-License-Identifier: GPL-2.0
/* The figures of a dump or pre-dump: the stats-dump image and the last line for the user. */
#define LOG_PREFIX "dump: "

#include <stdint.h>
#include <stdio.h>

#include "dump-int.h"
#include "log.h"
#include "stats.h"

/*
 * The last line of a dump, for the user on stderr (without the log's time
 * stamp) and in the log: how long the application could not run.
 */
void report_frozen(const char *what, const struct cr_options *o, uint64_t frozen_ns)
{
	fprintf(stderr, "%s of %d complete in %s: the tree was frozen %.1f ms\n", what, o->tree,
		o->images_dir, (double)frozen_ns / 1e6);
	pr_info("%s of %d complete in %s (frozen %llu us)\n", what, o->tree, o->images_dir,
		(unsigned long long)(frozen_ns / 1000));
}

/* stats-dump: once the tree is resumed or killed, as CRIU (image/stats.c). */
void write_stats(struct dump_ctx *ctx)
{
	const struct dump_stats *s = &ctx->stats;
	DumpStatsEntry ds = DUMP_STATS_ENTRY__INIT;
	StatsEntry se = STATS_ENTRY__INIT;

	ds.freezing_time = stats_us(s->freezing_ns);
	ds.frozen_time = stats_us(s->frozen_ns);
	ds.memdump_time = stats_us(s->memdump_ns);
	ds.memwrite_time = stats_us(s->memwrite_ns);
	ds.pages_scanned = s->pages_scanned;
	ds.pages_written = s->pages_written - s->shpages_written;
	ds.pages_skipped_parent = s->pages_skipped_parent;
	ds.shpages_skipped_parent = s->shpages_skipped_parent;
	ds.has_page_pipes = ds.has_page_pipe_bufs = true;
	ds.page_pipes = s->page_pipes;
	ds.page_pipe_bufs = s->page_pipe_bufs;
	ds.has_shpages_scanned = ds.has_shpages_skipped_parent = ds.has_shpages_written = true;
	ds.shpages_scanned = s->shpages_scanned;
	ds.shpages_written = s->shpages_written;
	se.dump = &ds;
	pr_info("frozen %u us, memory %u us (writing %u us), %llu pages scanned, %llu written, "
		"%llu bytes\n",
		ds.frozen_time, ds.memdump_time, ds.memwrite_time,
		(unsigned long long)ds.pages_scanned, (unsigned long long)s->pages_written,
		(unsigned long long)s->bytes_written);
	stats_write(ctx->opts, ctx->dirfd, &se);
}
