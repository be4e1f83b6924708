// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroups of the threads of a process with many of them: a dump reads
 * the tasks file of its first thread's cgroups once and takes every thread
 * listed in all of them as in that thread's cgroups (cgroup/cgset.c); the
 * others are read one by one. The test makes zdtm.cgroup_threads.PID/main
 * and .../other below its own cgroups in the memory, pids and cpu
 * hierarchies, enters main with its 24 threads, then moves thread 3 to
 * other in cpu only, thread 20 to other in pids only and thread 22 to other
 * in all three. The runner removes the cgroups after the dump. After
 * SIGTERM every thread must be in the cgroup of each hierarchy it was in.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "cgroup-util.h"
#include "threads-util.h"

#define NCTRL 3
#define NTHREADS 24
static const char *const ctrls[NCTRL] = { "memory", "pids", "cpu" };

/* Which hierarchies each moved thread is in "other" for (bit c: ctrls[c]). */
static const struct {
	int idx, mask;
} moved[] = { { 3, 1 << 2 }, { 20, 1 << 1 }, { 22, 7 } };

static struct cg_fs fs[NCTRL];
static char base[NCTRL][CG_PATH], main_cg[NCTRL][CG_PATH * 4], other_cg[NCTRL][CG_PATH * 4];
static volatile pid_t tids[NTHREADS];
static volatile int stop;

static void *thread_fn(void *arg)
{
	tids[(long)arg] = (pid_t)syscall(SYS_gettid);
	while (!stop)
		test_sleep_ms(5);
	return NULL;
}

static int mask_of(int i)
{
	unsigned int m;

	for (m = 0; m < sizeof(moved) / sizeof(moved[0]); m++)
		if (moved[m].idx == i)
			return moved[m].mask;
	return 0;
}

static int setup(void)
{
	char tid[32];
	int c, i;

	for (c = 0; c < NCTRL; c++) {
		char own[CG_PATH - 64];

		if (cg_path_of(0, ctrls[c], own, sizeof(own)) || cg_fs_open(&fs[c], ctrls[c])) {
			fail("hierarchy %s: not found or not reachable: %m", ctrls[c]);
			return neg_errno();
		}
		snprintf(base[c], sizeof(base[c]), "%s/zdtm.cgroup_threads.%d",
			 strcmp(own, "/") ? own : "", getpid());
		snprintf(main_cg[c], sizeof(main_cg[c]), "%s/main", base[c]);
		snprintf(other_cg[c], sizeof(other_cg[c]), "%s/other", base[c]);
		if (cg_make(&fs[c], base[c]) || cg_make(&fs[c], main_cg[c]) ||
		    cg_make(&fs[c], other_cg[c])) {
			fail("cannot make the cgroups below %s:%s: %m", ctrls[c], base[c]);
			return neg_errno();
		}
		/* every thread: the process's, then each moved one where it goes */
		if (cg_write(&fs[c], main_cg[c], "cgroup.procs", "0")) {
			fail("cannot enter %s:%s", ctrls[c], main_cg[c]);
			return -EINVAL;
		}
		for (i = 0; i < NTHREADS; i++) {
			if (!(mask_of(i) & (1 << c)))
				continue;
			snprintf(tid, sizeof(tid), "%d", tids[i]);
			if (cg_write(&fs[c], other_cg[c], "tasks", tid)) {
				fail("cannot put thread %s in %s:%s", tid, ctrls[c], other_cg[c]);
				return -EINVAL;
			}
		}
		cg_fs_close(&fs[c]);
	}
	return 0;
}

static int check(void)
{
	int c, i;

	for (c = 0; c < NCTRL; c++) {
		if (cg_check_member(getpid(), ctrls[c], main_cg[c]))
			return -EINVAL;
		for (i = 0; i < NTHREADS; i++)
			if (cg_check_member(tids[i], ctrls[c],
					    mask_of(i) & (1 << c) ? other_cg[c] : main_cg[c]))
				return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t th[NTHREADS];
	long i;

	test_init(argc, argv);
	if (test_threads_start(th, NTHREADS, thread_fn))
		return 1;
	for (i = 0; i < NTHREADS; i++)
		while (!tids[i])
			test_sleep_ms(1);
	if (setup() || check())
		return 1;
	test_daemon();
	test_waitsig();
	if (check())
		return 1;
	stop = 1;
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	pass();
	return 0;
}
