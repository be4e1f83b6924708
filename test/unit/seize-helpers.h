// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by test-seize.c and test-seize-refusals.c (one copy per
 * test binary): victim bookkeeping and /proc state checks; the log capture
 * is test/unit/lib/logcap.h.
 */
#ifndef SEIZE_HELPERS_H
#define SEIZE_HELPERS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "freezer.h"
#include "log.h"
#include "proc-parse.h"
#include "util.h"

#include "lib/logcap.h"

/* Counters shared with the victims (MAP_SHARED, set up before each fork). */
struct shared {
	volatile long progress;
	volatile long rt_seen;
	volatile long other_seen;
	volatile long sent;
	volatile int done;
};

static struct shared *sh;
static char cg_dir[256]; /* a cgroup made by a test, removed by teardown() */
static pid_t victims[16];
static unsigned int nr_victims;

/* ---- helpers ---------------------------------------------------------------- */

/*
 * What main() of a seize test binary needs first: root, the page shared
 * with the victims, and being a subreaper so orphans are reaped at once.
 * 0, or 1 (the exit status) after printing why.
 */
static inline int seize_test_init(const char *name, const char *needs)
{
	if (geteuid() != 0) {
		fprintf(stderr, "%s: must run as root (%s)\n", name, needs);
		return 1;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return 0;
}

static inline pid_t spawn(void (*fn)(void))
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		/* Its own process group, so teardown() kills its descendants too. */
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fn();
		_exit(0);
	}
	setpgid(pid, pid);
	if (nr_victims < ARRAY_SIZE(victims))
		victims[nr_victims++] = pid;
	return pid;
}

static inline char state_of(pid_t pid, pid_t tid)
{
	struct proc_stat st;

	return proc_parse_stat(pid, tid, &st) ? 0 : st.state;
}

static inline pid_t tracer_of(pid_t pid, pid_t tid)
{
	struct proc_status s;
	pid_t t;

	if (proc_parse_status(pid, tid, &s))
		return -ESRCH;
	t = s.tracer_pid;
	proc_status_fini(&s);
	return t;
}

static inline long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait up to @ms for the state of @pid to be one of @states. */
static inline bool wait_state(pid_t pid, const char *states, long ms)
{
	long end = now_ms() + ms;

	do {
		char c = state_of(pid, 0);

		if (c && strchr(states, c))
			return true;
		usleep(1000);
	} while (now_ms() < end);
	return false;
}

static inline bool wait_progress(long ms)
{
	long start = sh->progress, end = now_ms() + ms;

	while (now_ms() < end) {
		if (sh->progress != start)
			return true;
		usleep(1000);
	}
	return false;
}

/* Neither @pid nor any of its threads is left in a stop (t or T) or traced. */
static inline void assert_released(pid_t pid)
{
	_cleanup_free_ pid_t *tids = NULL;
	unsigned int nr, i;

	if (proc_list_threads(pid, &tids, &nr))
		return; /* gone */
	for (i = 0; i < nr; i++) {
		char c = state_of(pid, tids[i]);

		if (c == 't' || c == 'T')
			fail_msg("thread %d of %d left in state %c", tids[i], pid, c);
		if (tracer_of(pid, tids[i]) > 0)
			fail_msg("thread %d of %d still traced", tids[i], pid);
	}
}

static inline void reap_all(void)
{
	long end = now_ms() + 3000;

	while (now_ms() < end) {
		pid_t r = waitpid(-1, NULL, __WALL | WNOHANG);

		if (r < 0 && errno == ECHILD)
			return;
		if (r == 0)
			usleep(1000);
	}
}

static inline int setup(void **state __unused)
{
	memset(sh, 0, sizeof(*sh));
	nr_victims = 0;
	return 0;
}

static inline int teardown(void **state __unused)
{
	unsigned int i;

	logcap_stop(); /* a capture a failed test left running */
	for (i = 0; i < nr_victims; i++) {
		kill(-victims[i], SIGKILL); /* victims that made their own group */
		kill(victims[i], SIGKILL);
	}
	reap_all();
	if (cg_dir[0]) {
		bool v2;

		if (!freezer_detect(cg_dir, &v2))
			freezer_thaw(cg_dir, v2);
		reap_all();
		if (rmdir(cg_dir))
			fail_msg("cannot remove %s: %s", cg_dir, strerror(errno));
		cg_dir[0] = '\0';
	}
	return 0;
}

static inline void sleeper(void)
{
	for (;;)
		pause();
}

#endif
