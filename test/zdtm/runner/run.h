/* SPDX-License-Identifier: GPL-2.0 */
#ifndef ZDTM_RUN_H
#define ZDTM_RUN_H

/* One test in one mode: its run (run.c) and what its mode does (run-modes.c). */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "runner.h"

struct run {
	struct runner *r;
	const struct test_desc *d;
	const char *mode;
	struct result *res;
	char dir[PATH_MAX / 2]; /* leaves room for file names below it */
	char pidfile[PATH_MAX];
	char outfile[PATH_MAX];
	char ovl[PATH_MAX]; /* ns-root: overlay: the tmpfs of its upper and work directories */
	pid_t pid; /* the test's daemon (test.pid), a host pid */
	/*
	 * The root of the tree dumped: the test's daemon, or in mode ns the init
	 * of the fresh pid namespace the daemon runs under. A restore may give
	 * them other host pids in a pid namespace: they are checked and found
	 * again by their pids at the root's innermost level (levels - 1), vroot
	 * and vpid, which stay.
	 */
	pid_t root, vroot, vpid;
	unsigned int levels;
	int64_t deadline;
	char timeout_text[32]; /* " after N s" */
	bool harness_failed; /* a failure of the runner's own checks, never inverted */
	bool test_failed; /* the test program's own FAIL verdict */
	pid_t criu_pids[8]; /* every criu-like run for this test: their network locks */
	int ncriu;
	pid_t lazy_pid; /* mode lazy: the lazy-pages daemon, waited for after the verdict */
};

/* The first failure is the reason shown; later ones are consequences. */
void __attribute__((format(printf, 2, 3))) harness_fail(struct run *t, const char *fmt, ...);
/* With --verbose: the test's step @what. */
void run_step(struct run *t, const char *what);
/* A -errno of the waits (-ETIMEDOUT, -EINTR...) in words. */
const char *run_errstr(int ret);
/* criu-like CMD ARGS... @opts, output to DIR/@tag.out; 0 when it exits 0. */
int run_criu(struct run *t, char **args, const struct word_list *opts, const char *tag);

/* run-modes.c: the ns and userns modes (a container), the userns ones only. */
bool mode_ns(const char *mode);
bool mode_snapshot(const char *mode);
bool mode_userns(const char *mode);
/* What t->mode does between the start and SIGTERM. */
int run_mode(struct run *t);
/* Mode lazy, after the verdict: the lazy-pages daemon served every page and exited 0. */
void lazy_wait(struct run *t);

#endif
