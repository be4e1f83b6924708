// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp.c: the pure parts (status parsing, USER_NOTIF detection, chain
 * deduplication), then seccomp_dump_task() on real children held in a
 * ptrace stop: two stacked filters come back oldest first with their flags,
 * a filter that may return SECCOMP_RET_USER_NOTIF is refused, a strict-mode
 * child has no filter. The live tests need root (PTRACE_SECCOMP_GET_FILTER
 * needs CAP_SYS_ADMIN) and skip otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "seccomp.h"

#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif
#ifndef SECCOMP_FILTER_FLAG_LOG
#define SECCOMP_FILTER_FLAG_LOG (1UL << 1)
#endif

/* Return @errno_val for syscall @nr, allow the rest. */
#define ERRNO_FILTER(sysnr, errno_val)                                                 \
	{                                                                              \
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)), \
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (sysnr), 0, 1),            \
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (errno_val)),    \
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                  \
	}

static struct sock_filter uname_eperm[] = ERRNO_FILTER(SYS_uname, EPERM);
static struct sock_filter times_enolink[] = ERRNO_FILTER(SYS_times, ENOLINK);

static void test_parse_status(void **state)
{
	int mode = -1;

	(void)state;
	assert_int_equal(seccomp_parse_status("Name:\tx\nSeccomp:\t2\nSeccomp_filters:\t3\n",
					      &mode),
			 0);
	assert_int_equal(mode, 2);
	assert_int_equal(seccomp_parse_status("Name:\tx\nNoNewPrivs:\t0\n", &mode), 0);
	assert_int_equal(mode, 0); /* no CONFIG_SECCOMP */
	assert_int_equal(seccomp_parse_status("Name:\tx\nSeccomp:\t7\n", &mode), -EINVAL);
	assert_int_equal(seccomp_parse_status("Name:\tx\nSeccomp:\tz\n", &mode), -EINVAL);
}

static void test_may_notify(void **state)
{
	struct sock_filter notify[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_filter computed[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};

	(void)state;
	assert_false(seccomp_prog_may_notify(uname_eperm, 4));
	assert_true(seccomp_prog_may_notify(notify, 1));
	assert_true(seccomp_prog_may_notify(computed, 2));
}

/* Chains [A], [A, B], [A, B], [B], [A] with LOG: the shared prefix is stored once. */
static void test_add_chain(void **state)
{
	struct seccomp_prog a = { uname_eperm, 4, 0 }, b = { times_enolink, 4, 0 };
	struct seccomp_prog a_log = { uname_eperm, 4, SECCOMP_FILTER_FLAG_LOG };
	struct seccomp_prog ab[] = { a, b };
	struct seccomp_dump sd = { 0 };
	uint32_t id;

	(void)state;
	assert_int_equal(seccomp_add_chain(&sd, &a, 1, &id), 0);
	assert_int_equal(id, 1);
	assert_int_equal(seccomp_add_chain(&sd, ab, 2, &id), 0);
	assert_int_equal(id, 2);
	assert_int_equal(seccomp_add_chain(&sd, ab, 2, &id), 0);
	assert_int_equal(id, 2);
	assert_int_equal(sd.n, 2);
	assert_int_equal(sd.e[1].prev, 1);
	/* B alone is not B on top of A. */
	assert_int_equal(seccomp_add_chain(&sd, &b, 1, &id), 0);
	assert_int_equal(id, 3);
	assert_int_equal(sd.e[2].prev, 0);
	/* Same program, other flags: another filter. */
	assert_int_equal(seccomp_add_chain(&sd, &a_log, 1, &id), 0);
	assert_int_equal(id, 4);
	assert_int_equal(sd.e[3].flags, SECCOMP_FILTER_FLAG_LOG);
	assert_int_equal(seccomp_add_chain(&sd, NULL, 0, &id), 0);
	assert_int_equal(id, 0);
	assert_int_equal(sd.n, 4);
	assert_memory_equal(sd.e[1].insns.data, times_enolink, sizeof(times_enolink));
	seccomp_dump_fini(&sd);
}

enum victim_kind {
	TWO_FILTERS,
	NOTIFY,
	STRICT
};

static pid_t victim; /* killed by the teardown too, when an assertion failed */

static int install(struct sock_filter *f, unsigned short len, unsigned int flags)
{
	struct sock_fprog prog = { len, f };

	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

/* A child in @kind's seccomp state, seized and held in a PTRACE_EVENT_STOP. */
static pid_t start_victim(enum victim_kind kind)
{
	struct sock_filter notify[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_uname, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	int p[2], hold[2], status;
	char c = 0;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(hold), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid > 0)
		victim = pid;
	if (pid == 0) {
		int err = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);

		if (!err && kind == TWO_FILTERS)
			err = install(uname_eperm, 4, SECCOMP_FILTER_FLAG_LOG) ||
			      install(times_enolink, 4, 0);
		if (!err && kind == NOTIFY)
			err = install(notify, 4, 0);
		if (!err && kind == STRICT)
			err = (int)syscall(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_STRICT);
		/* write() is allowed in strict mode: the parent sees the final state. */
		c = err ? 'e' : 'r';
		if (syscall(SYS_write, p[1], &c, 1) != 1)
			syscall(SYS_exit, 1);
		for (;;) /* only read() is left in strict mode: block in it */
			syscall(SYS_read, hold[0], &c, 1);
	}
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(c, 'r');
	close(p[0]);
	close(p[1]);
	close(hold[0]);
	close(hold[1]);
	assert_int_equal(ptrace(PTRACE_SEIZE, pid, NULL, NULL), 0);
	assert_int_equal(ptrace(PTRACE_INTERRUPT, pid, NULL, NULL), 0);
	assert_int_equal(waitpid(pid, &status, __WALL), pid);
	assert_true(WIFSTOPPED(status));
	return pid;
}

static void stop_victim(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	victim = 0;
}

static int teardown(void **state)
{
	(void)state;
	if (victim > 0)
		stop_victim(victim);
	return 0;
}

static int dump(pid_t pid, ThreadCoreEntry *th, TaskCoreEntry *tc, struct seccomp_dump *sd)
{
	ThreadCoreEntry *thp[1] = { th };

	thread_core_entry__init(th);
	task_core_entry__init(tc);
	th->tid = (uint32_t)pid;
	return seccomp_dump_task(NULL, pid, thp, 1, tc, sd);
}

static void test_dump_two_filters(void **state)
{
	struct seccomp_dump sd = { 0 };
	ThreadCoreEntry th;
	TaskCoreEntry tc;
	pid_t pid;

	(void)state;
	if (geteuid())
		skip();
	pid = start_victim(TWO_FILTERS);
	assert_int_equal(dump(pid, &th, &tc, &sd), 0);
	stop_victim(pid);
	assert_int_equal(tc.seccomp_mode, SECCOMP_MODE__SECCOMP_FILTER);
	assert_true(th.has_seccomp_mode && th.has_seccomp_filter);
	assert_int_equal(th.seccomp_mode, SECCOMP_MODE__SECCOMP_FILTER);
	assert_int_equal(tc.n_seccomp, 2);
	/* The newest is times(), sitting on uname() which was installed with LOG. */
	assert_int_equal(th.seccomp_filter, 2);
	assert_int_equal(tc.seccomp[1]->prev, 1);
	assert_int_equal(tc.seccomp[0]->prev, 0);
	assert_int_equal(tc.seccomp[1]->insns.len, sizeof(times_enolink));
	assert_memory_equal(tc.seccomp[1]->insns.data, times_enolink, sizeof(times_enolink));
	assert_memory_equal(tc.seccomp[0]->insns.data, uname_eperm, sizeof(uname_eperm));
	assert_int_equal(tc.seccomp[0]->flags, SECCOMP_FILTER_FLAG_LOG);
	assert_int_equal(tc.seccomp[1]->flags, 0);
	seccomp_dump_fini(&sd);
}

static void test_dump_notify_refused(void **state)
{
	struct seccomp_dump sd = { 0 };
	ThreadCoreEntry th;
	TaskCoreEntry tc;
	pid_t pid;

	(void)state;
	if (geteuid())
		skip();
	pid = start_victim(NOTIFY);
	assert_int_equal(dump(pid, &th, &tc, &sd), -EOPNOTSUPP);
	stop_victim(pid);
	seccomp_dump_fini(&sd);
}

static void test_dump_strict(void **state)
{
	struct seccomp_dump sd = { 0 };
	ThreadCoreEntry th;
	TaskCoreEntry tc;
	pid_t pid;

	(void)state;
	if (geteuid())
		skip();
	pid = start_victim(STRICT);
	assert_int_equal(dump(pid, &th, &tc, &sd), 0);
	assert_int_equal(seize_seccomp_options(pid, pid), 1L << 21);
	stop_victim(pid);
	assert_int_equal(tc.seccomp_mode, SECCOMP_MODE__SECCOMP_STRICT);
	assert_int_equal(th.seccomp_mode, SECCOMP_MODE__SECCOMP_STRICT);
	assert_false(th.has_seccomp_filter);
	assert_int_equal(tc.n_seccomp, 0);
	assert_int_equal(seize_seccomp_options(getpid(), getpid()), 0);
	seccomp_dump_fini(&sd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_may_notify),
		cmocka_unit_test(test_add_chain),
		cmocka_unit_test_teardown(test_dump_two_filters, teardown),
		cmocka_unit_test_teardown(test_dump_notify_refused, teardown),
		cmocka_unit_test_teardown(test_dump_strict, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
