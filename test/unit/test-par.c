// SPDX-License-Identifier: GPL-2.0
/*
 * Worker threads (util/par.c, dump/dump-par.c): par_for() runs every index
 * once and returns the first failure in index order, starting none after a
 * failure; dump_tasks_par() starts a task only once its parent is done (with
 * after_parent), runs every par_tracer_run() request on the calling thread,
 * runs the job's tracer part there, and after a failure starts no more
 * tasks, returning the first failure in the tasks' order. A worker of
 * par_for() other than the caller shares no fs context with it (setns() into
 * a mount namespace right after would fail while its exit still holds it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/kcmp.h>

#include "dump.h"
#include "log.h"
#include "par.h"

#define N 64

static atomic_int runs[N];

static int count_run(void *arg, unsigned int i)
{
	int *fail_at = arg;

	atomic_fetch_add(&runs[i], 1);
	return fail_at && (i == (unsigned int)fail_at[0] || i == (unsigned int)fail_at[1])
		       ? -(int)(EIO + (i == (unsigned int)fail_at[1]))
		       : 0;
}

static void test_par_for_all(void **state)
{
	int errs[N];
	bool ran[N];

	(void)state;
	memset(runs, 0, sizeof(runs));
	assert_int_equal(par_for(N, count_run, NULL, errs, ran), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(atomic_load(&runs[i]), 1);
		assert_true(ran[i]);
		assert_int_equal(errs[i], 0);
	}
}

static pid_t caller;
static atomic_int shared_fs;

/* 0 from kcmp(): this thread's fs context is the caller's */
static int check_fs(void *arg, unsigned int i)
{
	pid_t self = (pid_t)syscall(SYS_gettid);

	(void)arg;
	(void)i;
	if (self != caller && !syscall(SYS_kcmp, getpid(), self, KCMP_FS, 0, 0) &&
	    !syscall(SYS_kcmp, caller, self, KCMP_FS, 0, 0))
		atomic_fetch_add(&shared_fs, 1);
	usleep(1000); /* every worker takes some */
	return 0;
}

static void test_par_for_own_fs(void **state)
{
	int errs[N];

	(void)state;
	caller = (pid_t)syscall(SYS_gettid);
	atomic_store(&shared_fs, 0);
	assert_int_equal(par_for(N, check_fs, NULL, errs, NULL), 0);
	assert_int_equal(atomic_load(&shared_fs), 0);
}

static void test_par_for_first_failure(void **state)
{
	int fail_at[2] = { 10, 30 }, errs[N];
	bool ran[N];

	(void)state;
	memset(runs, 0, sizeof(runs));
	/* 10 is always taken before 30: its failure is the one returned */
	assert_int_equal(par_for(N, count_run, fail_at, errs, ran), -EIO);
	assert_true(ran[10]);
	assert_int_equal(errs[10], -EIO);
	for (int i = 0; i < N; i++)
		assert_true(atomic_load(&runs[i]) <= 1);
}

/* A tree: task 0 the root, i's parent (i - 1) / 3. */
static struct seized_task seized[N];
static struct dump_task dts[N], *ptrs[N];
static atomic_int seq, started[N], done[N];
static pid_t tracer_tid;
static atomic_int tracer_calls, wrong_thread, early;
static int fail_task = -1;

static int on_tracer(void *arg)
{
	(void)arg;
	if (syscall(SYS_gettid) != tracer_tid)
		atomic_fetch_add(&wrong_thread, 1);
	atomic_fetch_add(&tracer_calls, 1);
	return 0;
}

static int one_task(struct dump_ctx *ctx, struct dump_task *dt)
{
	int i = (int)(dt - dts);

	(void)ctx;
	atomic_store(&started[i], atomic_fetch_add(&seq, 1) + 1);
	if (i && !atomic_load(&done[(i - 1) / 3]))
		atomic_fetch_add(&early, 1);
	par_tracer_run(on_tracer, NULL);
	usleep(100);
	atomic_store(&done[i], atomic_fetch_add(&seq, 1) + 1);
	return i == fail_task ? -ENOSPC : 0;
}

static int tracer_part(struct dump_ctx *ctx, struct dump_task **d, unsigned int n)
{
	(void)ctx;
	(void)d;
	(void)n;
	return on_tracer(NULL);
}

static void tree_init(void)
{
	memset(seized, 0, sizeof(seized));
	memset(dts, 0, sizeof(dts));
	for (int i = 0; i < N; i++) {
		seized[i].pid = 1000 + i;
		seized[i].parent = i ? &seized[(i - 1) / 3] : NULL;
		dts[i].t = &seized[i];
		ptrs[i] = &dts[i];
		atomic_store(&started[i], 0);
		atomic_store(&done[i], 0);
	}
	atomic_store(&seq, 0);
	atomic_store(&tracer_calls, 0);
	atomic_store(&wrong_thread, 0);
	atomic_store(&early, 0);
	tracer_tid = (pid_t)syscall(SYS_gettid);
}

static void test_tasks_par_order(void **state)
{
	static const struct par_job job = { .fn = one_task,
					    .after_parent = true,
					    .tracer = tracer_part };
	struct dump_ctx ctx = { 0 };

	(void)state;
	tree_init();
	fail_task = -1;
	assert_int_equal(dump_tasks_par(&ctx, ptrs, N, &job), 0);
	for (int i = 0; i < N; i++)
		assert_true(atomic_load(&done[i]) > 0);
	assert_int_equal(atomic_load(&early), 0);
	assert_int_equal(atomic_load(&wrong_thread), 0);
	assert_int_equal(atomic_load(&tracer_calls), N + 1);
}

static void test_tasks_par_failure(void **state)
{
	static const struct par_job job = { .fn = one_task, .after_parent = true };
	struct dump_ctx ctx = { 0 };

	(void)state;
	tree_init();
	fail_task = 1; /* its children 4, 5, 6 and theirs are never started */
	assert_int_equal(dump_tasks_par(&ctx, ptrs, N, &job), -ENOSPC);
	assert_int_equal(atomic_load(&started[4]), 0);
	assert_int_equal(atomic_load(&started[13]), 0);
	assert_int_equal(atomic_load(&early), 0);
	fail_task = -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_par_for_all),
		cmocka_unit_test(test_par_for_first_failure),
		cmocka_unit_test(test_par_for_own_fs),
		cmocka_unit_test(test_tasks_par_order),
		cmocka_unit_test(test_tasks_par_failure),
	};

	log_set_level(LOG_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
