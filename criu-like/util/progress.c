// SPDX-License-Identifier: GPL-2.0
/* The progress line of a long dump or restore (progress.h). */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

static uint64_t progress_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int progress_format(char *buf, size_t len, const char *what, uint64_t done, uint64_t total,
		    uint64_t elapsed_ns)
{
	double mib = (double)done / (1 << 20), rate = 0;
	int n;

	if (elapsed_ns)
		rate = mib * 1e9 / (double)elapsed_ns;
	n = snprintf(buf, len, "%s: %.0f/%.0f MiB, %.0f MiB/s", what, mib,
		     (double)total / (1 << 20), rate);
	if (n < 0 || (size_t)n >= len)
		return n;
	if (done >= total)
		return n + snprintf(buf + n, len - (size_t)n, ", done in %.1f s",
				    (double)elapsed_ns / 1e9);
	if (done && elapsed_ns)
		return n +
		       snprintf(buf + n, len - (size_t)n, ", %.0f s left",
				(double)(total - done) * ((double)elapsed_ns / 1e9) / (double)done);
	return n;
}

void progress_start(struct progress *p, const char *what)
{
	p->what = what;
	p->start_ns = progress_now_ns();
	p->last_ns = 0;
	p->shown = false;
}

void progress_show(struct progress *p, uint64_t done, uint64_t total, bool last)
{
	uint64_t now = progress_now_ns(), el = now - p->start_ns;
	char line[160];
	int n;

	if (last ? !p->shown : el < PROGRESS_AFTER_NS || now - p->last_ns < PROGRESS_EVERY_NS)
		return;
	if (!p->shown && !isatty(STDERR_FILENO))
		return;
	p->last_ns = now;
	p->shown = true;
	n = progress_format(line, sizeof(line), p->what, done, total, el);
	if (n > 0)
		fprintf(stderr, "\r%s\033[K", line);
}

void progress_end(struct progress *p)
{
	if (p->shown)
		fputc('\n', stderr);
	p->shown = false;
}
