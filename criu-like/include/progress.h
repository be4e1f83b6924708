/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_PROGRESS_H
#define CRIU_LIKE_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The progress line of a dump or a restore on a terminal: shown once the
 * memory has taken PROGRESS_AFTER_NS, redrawn (a carriage return, no new
 * line) every PROGRESS_EVERY_NS, ended with a new line by progress_end().
 */
#define PROGRESS_AFTER_NS 1000000000ULL
#define PROGRESS_EVERY_NS 200000000ULL

struct progress {
	const char *what; /* "memory", "restore: memory" */
	uint64_t start_ns, last_ns;
	bool shown;
};

/*
 * Into @buf: "WHAT: DONE/TOTAL MiB, RATE MiB/s, N s left" (@elapsed_ns since
 * the start), "..., done in N.N s" once @done reaches @total. The length.
 */
int progress_format(char *buf, size_t len, const char *what, uint64_t done, uint64_t total,
		    uint64_t elapsed_ns);

/* Start the clock of @p (now). */
void progress_start(struct progress *p, const char *what);

/* Redraw @p on stderr if it is a terminal and the time has come (@last: always, if shown). */
void progress_show(struct progress *p, uint64_t done, uint64_t total, bool last);

/* The new line after a line that was shown. */
void progress_end(struct progress *p);

#endif
