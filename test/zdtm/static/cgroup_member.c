// SPDX-License-Identifier: GPL-2.0
/*
 * Cgroup membership and limits: the test makes zdtm.cgroup_member.PID/main
 * and .../thread below its own cgroups in the memory, pids and cpu
 * hierarchies, with different limits in each (memory limits and
 * swappiness, pids.max, cpu shares and a CFS quota), enters main and puts
 * one of its threads in thread. The runner removes both after the dump
 * (runner/cgroups.c), so the restore must make them again with their limits.
 * After SIGTERM: the process and the thread are each in their own cgroup
 * again (the same path), and every limit reads as it was set.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "cgroup-util.h"

#define NCTRL 3
static const char *const ctrls[NCTRL] = { "memory", "pids", "cpu" };

static const struct {
	int c; /* index in ctrls */
	const char *file, *main_v, *thread_v;
} limits[] = {
	{ 0, "memory.limit_in_bytes", "268435456", "134217728" },
	{ 0, "memory.soft_limit_in_bytes", "67108864", "33554432" },
	{ 0, "memory.swappiness", "33", "44" },
	{ 1, "pids.max", "64", "32" },
	{ 2, "cpu.shares", "512", "256" },
	{ 2, "cpu.cfs_period_us", "50000", "100000" },
	{ 2, "cpu.cfs_quota_us", "25000", "-1" },
};

static struct cg_fs fs[NCTRL];
static char base[NCTRL][CG_PATH], main_cg[NCTRL][CG_PATH * 4], thread_cg[NCTRL][CG_PATH * 4];
static volatile pid_t thread_tid;
static volatile int thread_stop;

static void *thread_fn(void *arg)
{
	(void)arg;
	thread_tid = (pid_t)syscall(SYS_gettid);
	while (!thread_stop)
		test_sleep_ms(5);
	return NULL;
}

static int setup(void)
{
	char tid[32];
	int c, i, ret;

	for (c = 0; c < NCTRL; c++) {
		char own[CG_PATH - 64];

		if (cg_path_of(0, ctrls[c], own, sizeof(own)) || cg_fs_open(&fs[c], ctrls[c])) {
			fail("hierarchy %s: not found or not reachable: %m", ctrls[c]);
			return neg_errno();
		}
		snprintf(base[c], sizeof(base[c]), "%s/zdtm.cgroup_member.%d",
			 strcmp(own, "/") ? own : "", getpid());
		snprintf(main_cg[c], sizeof(main_cg[c]), "%s/main", base[c]);
		snprintf(thread_cg[c], sizeof(thread_cg[c]), "%s/thread", base[c]);
		if (cg_make(&fs[c], base[c]) || cg_make(&fs[c], main_cg[c]) ||
		    cg_make(&fs[c], thread_cg[c])) {
			fail("cannot make the cgroups below %s:%s: %m", ctrls[c], base[c]);
			return neg_errno();
		}
	}
	for (i = 0; i < (int)(sizeof(limits) / sizeof(limits[0])); i++) {
		c = limits[i].c;
		ret = cg_write(&fs[c], main_cg[c], limits[i].file, limits[i].main_v);
		if (!ret)
			ret = cg_write(&fs[c], thread_cg[c], limits[i].file, limits[i].thread_v);
		if (ret) {
			fail("cannot set %s: %s", limits[i].file, strerror(-ret));
			return -EINVAL;
		}
	}
	snprintf(tid, sizeof(tid), "%d", thread_tid);
	for (c = 0; c < NCTRL; c++)
		if (cg_write(&fs[c], main_cg[c], "cgroup.procs", "0") ||
		    cg_write(&fs[c], thread_cg[c], "tasks", tid)) {
			fail("cannot enter %s:%s or put thread %s in %s", ctrls[c], main_cg[c], tid,
			     thread_cg[c]);
			return -EINVAL;
		}
	for (c = 0; c < NCTRL; c++)
		cg_fs_close(&fs[c]);
	return 0;
}

static int check(void)
{
	char got[64];
	int c, i;

	for (c = 0; c < NCTRL; c++)
		if (cg_check_member(getpid(), ctrls[c], main_cg[c]) ||
		    cg_check_member(thread_tid, ctrls[c], thread_cg[c]))
			return neg_errno();
	for (c = 0; c < NCTRL; c++)
		if (cg_fs_open(&fs[c], ctrls[c])) {
			fail("hierarchy %s: not reachable after the restore: %m", ctrls[c]);
			return neg_errno();
		}
	for (i = 0; i < (int)(sizeof(limits) / sizeof(limits[0])); i++) {
		c = limits[i].c;
		if (cg_read(&fs[c], main_cg[c], limits[i].file, got, sizeof(got)) ||
		    strcmp(got, limits[i].main_v)) {
			fail("%s:%s %s reads '%s', not %s", ctrls[c], main_cg[c], limits[i].file,
			     got, limits[i].main_v);
			return -EINVAL;
		}
		if (cg_read(&fs[c], thread_cg[c], limits[i].file, got, sizeof(got)) ||
		    strcmp(got, limits[i].thread_v)) {
			fail("%s:%s %s reads '%s', not %s", ctrls[c], thread_cg[c], limits[i].file,
			     got, limits[i].thread_v);
			return -EINVAL;
		}
	}
	for (c = 0; c < NCTRL; c++)
		cg_fs_close(&fs[c]);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t th;

	test_init(argc, argv);
	if (pthread_create(&th, NULL, thread_fn, NULL)) {
		fail("pthread_create failed");
		return 1;
	}
	while (!thread_tid)
		test_sleep_ms(1);
	if (setup())
		return 1;
	test_daemon();
	test_waitsig();
	if (check())
		return 1;
	thread_stop = 1;
	pthread_join(th, NULL);
	pass();
	return 0;
}
