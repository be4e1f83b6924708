// SPDX-License-Identifier: GPL-2.0
/* stats-dump and stats-restore: written, and printed by --display-stats. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_PREFIX "stats: "
#include "image.h"
#include "log.h"
#include "stats.h"
#include "util.h"

uint64_t stats_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint32_t stats_us(uint64_t ns)
{
	return ns / 1000 > UINT32_MAX ? UINT32_MAX : (uint32_t)(ns / 1000);
}

static void line_pages(FILE *f, const char *what, uint64_t n)
{
	fprintf(f, "%s: %" PRIu64 " (0x%" PRIx64 ")\n", what, n, n);
}

void stats_display(FILE *f, const StatsEntry *se)
{
	const DumpStatsEntry *d = se->dump;
	const RestoreStatsEntry *r = se->restore;

	if (d) {
		fprintf(f, "Displaying dump stats:\n");
		fprintf(f, "Freezing time: %u us\n", d->freezing_time);
		fprintf(f, "Frozen time: %u us\n", d->frozen_time);
		fprintf(f, "Memory dump time: %u us\n", d->memdump_time);
		fprintf(f, "Memory write time: %u us\n", d->memwrite_time);
		if (d->has_irmap_resolve)
			fprintf(f, "IRMAP resolve time: %u us\n", d->irmap_resolve);
		line_pages(f, "Memory pages scanned", d->pages_scanned);
		line_pages(f, "Memory pages skipped from parent", d->pages_skipped_parent);
		line_pages(f, "Memory pages written", d->pages_written);
		line_pages(f, "Lazy memory pages", d->pages_lazy);
	}
	if (r) {
		fprintf(f, "Displaying restore stats:\n");
		line_pages(f, "Pages compared", r->pages_compared);
		line_pages(f, "Pages skipped COW", r->pages_skipped_cow);
		if (r->has_pages_restored)
			line_pages(f, "Pages restored", r->pages_restored);
		fprintf(f, "Restore time: %u us\n", r->restore_time);
		fprintf(f, "Forking time: %u us\n", r->forking_time);
	}
	fflush(f);
}

void stats_write(const struct cr_options *o, int dirfd, const StatsEntry *se)
{
	enum cr_img_kind kind = se->dump ? CR_IMG_STATS_DUMP : CR_IMG_STATS_RESTORE;
	_cleanup_close_ int wfd = -1;
	int err;

	if (o->work_dir) {
		wfd = img_dir_open(o->work_dir, true);
		dirfd = wfd;
	}
	err = dirfd < 0 ? dirfd : img_write_one(dirfd, kind, 0, &se->base);
	if (err)
		pr_warn("cannot write %s into %s: %s\n", img_desc(kind)->pattern,
			o->work_dir ? o->work_dir : o->images_dir, strerror(-err));
	else
		pr_info("%s written\n", img_desc(kind)->pattern);
	if (o->display_stats)
		stats_display(stdout, se);
}
