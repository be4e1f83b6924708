// SPDX-License-Identifier: GPL-2.0
/*
 * The pure half of the IPC code: the text of a POSIX message queue's file
 * (mq_notify registrations, files/mqueue.c), the semops that keep a SysV
 * semaphore's value while giving it a last pid, and the table of last pids
 * read inside a pid namespace (ns/ipc-sysv-sem.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ipc-sysv.h"
#include "posix-mq.h"

static void test_notify_parse(void **state)
{
	struct mq_notify_info ni;

	(void)state;
	/* as ipc/mqueue.c prints it: "%-10lu", "%-5d", "%-5d", "%-6d" */
	assert_int_equal(mq_notify_parse("QSIZE:0          NOTIFY:0     SIGNO:37    "
					 "NOTIFY_PID:4242  \n",
					 &ni),
			 0);
	assert_int_equal(ni.notify, SIGEV_SIGNAL);
	assert_int_equal(ni.signo, 37);
	assert_int_equal(ni.pid, 4242);
	assert_int_equal(mq_notify_parse("QSIZE:12         NOTIFY:1     SIGNO:0     "
					 "NOTIFY_PID:7     \n",
					 &ni),
			 0);
	assert_int_equal(ni.notify, SIGEV_NONE);
	assert_int_equal(ni.pid, 7);
	/* none registered */
	assert_int_equal(mq_notify_parse("QSIZE:0          NOTIFY:0     SIGNO:0     "
					 "NOTIFY_PID:0     \n",
					 &ni),
			 0);
	assert_int_equal(ni.pid, 0);
	/* a field missing, not a number, a negative pid */
	assert_int_equal(mq_notify_parse("QSIZE:0 NOTIFY:0 NOTIFY_PID:3\n", &ni), -EINVAL);
	assert_int_equal(mq_notify_parse("QSIZE:0 NOTIFY:x SIGNO:0 NOTIFY_PID:3\n", &ni), -EINVAL);
	assert_int_equal(mq_notify_parse("QSIZE:0 NOTIFY:0 SIGNO:0 NOTIFY_PID:-3\n", &ni), -EINVAL);
	assert_int_equal(mq_notify_parse("", &ni), -EINVAL);
}

/*
 * Apply @ops in order as the kernel's slow path does: the value never leaves [0, 32767].
 * The new value, -EAGAIN where semop() would wait, -ERANGE out of range.
 */
static int apply(int value, const struct sembuf *ops, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!ops[i].sem_op && value)
			return -EAGAIN;
		value += ops[i].sem_op;
		if (value < 0)
			return -EAGAIN;
		if (value > 32767)
			return -ERANGE;
	}
	return value;
}

static void test_sem_keep_ops(void **state)
{
	static const unsigned int values[] = { 0, 1, 2, 100, 32766, 32767 };
	struct sembuf ops[2];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		memset(ops, 0xff, sizeof(ops));
		n = ipc_sem_keep_ops(3, values[i], ops);
		assert_true(n == 1 || n == 2);
		assert_int_equal(ops[0].sem_num, 3);
		assert_int_equal(ops[n - 1].sem_num, 3);
		assert_true(ops[0].sem_flg & IPC_NOWAIT);
		assert_int_equal(apply((int)values[i], ops, n), (int)values[i]);
	}
	assert_int_equal(ipc_sem_keep_ops(0, 0, ops), 1);
}

static void test_sem_pid_lookup(void **state)
{
	/* set 5 of 3 semaphores, set 9 of 1, the end */
	const int32_t tab[] = { 5, 3, 10, 0, 12, 9, 1, 77, -1 };

	(void)state;
	assert_int_equal(ipc_sem_pid_lookup(tab, 9, 5, 0), 10);
	assert_int_equal(ipc_sem_pid_lookup(tab, 9, 5, 1), 0);
	assert_int_equal(ipc_sem_pid_lookup(tab, 9, 5, 2), 12);
	assert_int_equal(ipc_sem_pid_lookup(tab, 9, 5, 3), -ENOENT);
	assert_int_equal(ipc_sem_pid_lookup(tab, 9, 9, 0), 77);
	assert_int_equal(ipc_sem_pid_lookup(tab, 9, 4, 0), -ENOENT);
	/* a table cut short: never read past it */
	assert_int_equal(ipc_sem_pid_lookup(tab, 6, 9, 0), -ENOENT);
	assert_int_equal(ipc_sem_pid_lookup(tab, 4, 5, 0), -ENOENT);
	assert_int_equal(ipc_sem_pid_lookup(NULL, 0, 5, 0), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify_parse),
		cmocka_unit_test(test_sem_keep_ops),
		cmocka_unit_test(test_sem_pid_lookup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
