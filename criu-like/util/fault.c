// SPDX-License-Identifier: GPL-2.0
/*
 * CRIU_LIKE_FAULT: make the N-th failure point of a run fail (fault.h).
 * Not CRIU's CRIU_FAULT, which names a fault by id; here a point is named by
 * its place in the run, so a script can walk every one of them in turn.
 */
#define LOG_PREFIX "fault injection: "
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fault.h"
#include "log.h"

enum fault_mode {
	FAULT_OFF,
	FAULT_NTH,
	FAULT_LIST
};

static enum fault_mode mode;
static unsigned long target;
static pid_t owner; /* the process that prints the count at exit */
static unsigned long *counter; /* shared with every fork */

static void fault_report(void)
{
	if (getpid() == owner)
		fprintf(stderr, "fault injection: %lu points passed\n",
			__atomic_load_n(counter, __ATOMIC_ACQUIRE));
}

void fault_init(void)
{
	const char *e = getenv("CRIU_LIKE_FAULT");
	char *end;
	void *p;

	if (!e || !*e || counter)
		return;
	if (!strcmp(e, "list")) {
		mode = FAULT_LIST;
	} else {
		errno = 0;
		target = strtoul(e, &end, 10);
		if (errno || *end || !target) {
			pr_warn("CRIU_LIKE_FAULT=%s: neither a point number (1, 2, ...) nor "
				"\"list\"; "
				"ignored\n",
				e);
			return;
		}
		mode = FAULT_NTH;
	}
	p = mmap(NULL, sizeof(*counter), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		pr_perror("cannot map the fault counter");
		mode = FAULT_OFF;
		return;
	}
	counter = p;
	owner = getpid();
	if (mode == FAULT_LIST)
		atexit(fault_report);
}

static bool fault_vhit(const char *fmt, va_list ap)
{
	unsigned long n;
	char where[160];

	n = __atomic_add_fetch(counter, 1, __ATOMIC_ACQ_REL);
	if (mode == FAULT_NTH && n != target)
		return false;
	vsnprintf(where, sizeof(where), fmt, ap);
	if (mode == FAULT_LIST) {
		/* the log (-v4), not stderr: a restoring task's fd 2 may already be its own */
		pr_debug("point %lu: %s (pid %d)\n", n, where, getpid());
		return false;
	}
	pr_err("failing point %lu (%s) in pid %d\n", n, where, getpid());
	return true;
}

bool fault_hit(const char *fmt, ...)
{
	va_list ap;
	bool hit;

	if (mode == FAULT_OFF)
		return false;
	va_start(ap, fmt);
	hit = fault_vhit(fmt, ap);
	va_end(ap);
	return hit;
}

int fault_err(int err, const char *fmt, ...)
{
	va_list ap;
	bool hit;

	if (mode == FAULT_OFF)
		return 0;
	va_start(ap, fmt);
	hit = fault_vhit(fmt, ap);
	va_end(ap);
	if (!hit)
		return 0;
	errno = -err;
	return err;
}

void fault_kill_point(void)
{
	/* Process-wide on purpose: one step counter for the whole run. */
	static long step, limit = -1;

	if (limit < 0) {
		const char *e = getenv("CRIU_LIKE_FAULT_STEP");

		limit = e ? atol(e) : 0;
	}
	if (limit > 0 && __atomic_add_fetch(&step, 1, __ATOMIC_RELAXED) == limit)
		kill(getpid(), SIGKILL);
}
