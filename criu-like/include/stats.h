/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_STATS_H
#define CRIU_LIKE_STATS_H

/*
 * Statistics as CRIU keeps them (image/stats.c, Documentation/stats.md):
 * stats-dump and stats-restore, one StatsEntry each, written once a dump or
 * a restore succeeded into the work directory (-W, else the images
 * directory); --display-stats prints them on stdout as CRIU does.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "options.h"

#include "stats.pb-c.h"

/* CLOCK_MONOTONIC in nanoseconds: every time the statistics measure. */
uint64_t stats_now_ns(void);
/* Nanoseconds as the images' microseconds (uint32 in CRIU's schema: saturated). */
uint32_t stats_us(uint64_t ns);

/*
 * Write @se (its dump or its restore part says which image) into the work
 * directory of @o, or @dirfd when there is no -W; print it with
 * --display-stats. The command has succeeded already: a failure is a warning.
 */
void stats_write(const struct cr_options *o, int dirfd, const StatsEntry *se);
/* The lines --display-stats prints for @se, CRIU's. */
void stats_display(FILE *f, const StatsEntry *se);

#endif
