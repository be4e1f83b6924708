// SPDX-License-Identifier: GPL-2.0
/*
 * Namespaces (criu-like/ns/ns.c): the comparison of a thread's namespaces
 * with criu-like's, the reading of /proc, and the inventory records a dump
 * writes and a restore checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "ns.h"

static void test_differ(void **state)
{
	struct ns_ids tool = { { 0 } }, task;
	int k;

	(void)state;
	for (k = 0; k < NS_NR; k++)
		tool.ino[k] = 4026531830u + (unsigned int)k;
	task = tool;
	assert_int_equal(ns_ids_differ(&tool, &task), NS_NR);
	task.ino[NS_UTS]++;
	assert_int_equal(ns_ids_differ(&tool, &task), NS_UTS);
	/* the first kind that differs is named */
	task.ino[NS_MNT]++;
	assert_int_equal(ns_ids_differ(&tool, &task), NS_MNT);
	/* no link (pid_for_children unshared, never forked): never criu-like's */
	task = tool;
	task.ino[NS_PID_FOR_CHILDREN] = 0;
	assert_int_equal(ns_ids_differ(&tool, &task), NS_PID_FOR_CHILDREN);
	/* a kind the kernel lacks (no link for criu-like either) is not compared */
	task = tool;
	tool.ino[NS_TIME] = task.ino[NS_TIME] = 0;
	tool.ino[NS_TIME_FOR_CHILDREN] = 0;
	task.ino[NS_TIME_FOR_CHILDREN] = 7;
	assert_int_equal(ns_ids_differ(&tool, &task), NS_NR);
	assert_string_equal(ns_kind_name(NS_PID_FOR_CHILDREN), "pid_for_children");
	assert_string_equal(ns_kind_name(NS_MNT), "mnt");
}

static void test_read_self(void **state)
{
	struct ns_ids self, thread;
	struct stat st;

	(void)state;
	assert_int_equal(ns_ids_read(getpid(), 0, &self), 0);
	assert_int_equal(stat("/proc/self/ns/uts", &st), 0);
	assert_int_equal(self.ino[NS_UTS], (uint64_t)st.st_ino);
	assert_int_equal(ns_ids_read(getpid(), getpid(), &thread), 0);
	assert_int_equal(ns_ids_differ(&self, &thread), NS_NR);
	/* a thread that is gone */
	assert_int_equal(ns_ids_read(getpid(), 0x7ffffff0, &thread), -ESRCH);
}

/* A child in a UTS namespace of its own differs in exactly that kind. */
static void test_read_child(void **state)
{
	struct ns_ids self, child;
	int p[2], st;
	pid_t pid;
	char c;

	(void)state;
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(p[0]);
		if (unshare(CLONE_NEWUTS) || write(p[1], "u", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(ns_ids_read(getpid(), 0, &self), 0);
	assert_int_equal(ns_ids_read(pid, pid, &child), 0);
	assert_int_equal(ns_ids_differ(&self, &child), NS_UTS);
	child.ino[NS_UTS] = self.ino[NS_UTS];
	assert_int_equal(ns_ids_differ(&self, &child), NS_NR);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(p[0]);
}

/* What a dump records passes the restore's check; a namespace of the tree's own does not. */
static void test_inventory(void **state)
{
	InventoryEntry ie = INVENTORY_ENTRY__INIT;
	struct ns_inventory ns;
	size_t i;

	(void)state;
	assert_int_equal(ns_inventory_fill(&ie, &ns), 0);
	assert_true(ie.n_namespaces >= 8);
	assert_int_equal(ns_inventory_check(&ie, "dir"), 0);
	for (i = 0; i < ie.n_namespaces; i++)
		assert_true(ie.namespaces[i]->tree_in);
	ie.namespaces[2]->tree_in = false;
	assert_int_equal(ns_inventory_check(&ie, "dir"), -EOPNOTSUPP);
	ie.n_namespaces = 0;
	assert_int_equal(ns_inventory_check(&ie, "dir"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_differ),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_read_child),
		cmocka_unit_test(test_inventory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
