// SPDX-License-Identifier: GPL-2.0
/*
 * Victims of the unit tests: a forked child set up by the test, which reports
 * what it set up through a pipe, then either sleeps until killed or, on
 * SIGUSR1, checks that its state was left intact and exits with the verdict.
 */
#ifndef UNIT_LIB_VICTIM_H
#define UNIT_LIB_VICTIM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The fd of the report pipe in the child, unless a test needs its fds lower. */
#define VICTIM_REPORT_FD 200

struct victim_ops {
	/*
	 * In the child: set it up as @arg says and fill @report; 0, or the
	 * child exits with status 1. The test's fd, if any, is at
	 * report_fd + 1; the report pipe is still open at report_fd.
	 */
	int (*setup)(void *arg, void *report);
	/*
	 * In the child, after SIGUSR1 (blocked from the fork on): its exit
	 * status, 0 when its state is as it was. NULL: the child sleeps until
	 * it is killed, SIGUSR1 not blocked.
	 */
	int (*check)(void *arg, const void *report);
	/* Where the report pipe goes; every other fd above 2 is closed first. */
	int report_fd;
	/* A session of its own first (the dump refuses a session leader outside the tree). */
	bool new_session;
};

/*
 * Fork a victim: the child keeps fds 0-2, the write end of the report pipe
 * at @ops->report_fd and @test_fd (if >= 0) at @ops->report_fd + 1, runs
 * @ops->setup, writes @size bytes of @report, closes the pipe and waits. The
 * parent reads the report and the end of file (every copy of the pipe's
 * write end closed). The child's pid, or -errno (the child killed).
 */
pid_t victim_start(const struct victim_ops *ops, void *arg, int test_fd, void *report, size_t size);

/*
 * A victim in a session of its own, set up by @setup(@arg, @report), which
 * then sleeps until it is killed; the test fails when it cannot be started.
 */
pid_t victim_start_sleeper(int (*setup)(void *arg, void *report), void *arg, void *report,
			   size_t size);

/*
 * In the child: stdin, stdout and stderr on one description of /dev/null
 * (nothing of the test runner's terminal). Its fd, or -errno.
 */
int victim_null_stdio(void);

/* Block SIGUSR1, so that victim_wait_usr1() finds it pending. */
void victim_block_usr1(void);
/* Wait for SIGUSR1, blocked by victim_block_usr1(). */
void victim_wait_usr1(void);

/* Wait for the child @pid: its exit status, or 128 + the signal that killed it. */
int child_status(pid_t pid);
/* Tell the victim *@pid to check its state (SIGUSR1): it must exit 0. *@pid is 0 after. */
void victim_finish(pid_t *pid);
/* Kill and reap the victim *@pid if there is one (> 0); *@pid is 0 after. */
void victim_kill(pid_t *pid);

/* Remove @path and everything below it. 0, or -1 when anything is left. */
int rm_rf(const char *path);

#endif
