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
	assert_int_equal(ns_inventory_fill(&ie, NULL, &ns), 0);
	assert_true(ie.n_namespaces >= 8);
	assert_int_equal(ns_inventory_check(&ie, "dir"), 0);
	for (i = 0; i < ie.n_namespaces; i++)
		assert_true(ie.namespaces[i]->tree_in);
	ie.namespaces[2]->tree_in = false;
	assert_int_equal(ns_inventory_check(&ie, "dir"), -EOPNOTSUPP);
	ie.n_namespaces = 0;
	assert_int_equal(ns_inventory_check(&ie, "dir"), -EINVAL);
}

/* The tree's own namespaces: those of its root, for the kinds criu-like dumps. */
static void test_plan(void **state)
{
	struct ns_dump_plan plan;
	struct ns_ids task;
	int k;

	(void)state;
	memset(&plan, 0, sizeof(plan));
	for (k = 0; k < NS_NR; k++)
		plan.tool.ino[k] = plan.root.ino[k] = 100 + (uint64_t)k;
	ns_plan_root(&plan);
	for (k = 0; k < NS_NR; k++)
		assert_false(plan.own[k]);
	assert_int_equal(ns_plan_differ(&plan, &plan.root), NS_NR);

	/* a UTS namespace of the root's own: dumped; every task must share it */
	plan.root.ino[NS_UTS] = 900;
	ns_plan_root(&plan);
	assert_true(ns_kind_dumped(NS_UTS));
	assert_true(plan.own[NS_UTS]);
	assert_int_equal(ns_plan_differ(&plan, &plan.root), NS_NR);
	task = plan.tool;
	assert_int_equal(ns_plan_differ(&plan, &task), NS_UTS); /* a task back in the host's */
	task = plan.root;
	task.ino[NS_UTS] = 901;
	assert_int_equal(ns_plan_differ(&plan, &task), NS_UTS); /* another one */

	/* a user namespace of the root's own: dumped too; a task in another is refused */
	plan.root.ino[NS_USER] = 902;
	ns_plan_root(&plan);
	assert_true(ns_kind_dumped(NS_USER));
	assert_true(plan.own[NS_USER]);
	assert_int_equal(ns_plan_differ(&plan, &plan.root), NS_NR);
	task = plan.root;
	task.ino[NS_USER] = 905; /* a nested one */
	assert_int_equal(ns_plan_differ(&plan, &task), NS_USER);

	/* cgroup namespaces are any task's, handled by cgroup/cgns.c: ns.c lets them be */
	plan.root.ino[NS_CGROUP] = 906;
	ns_plan_root(&plan);
	assert_false(ns_kind_dumped(NS_CGROUP));
	assert_false(plan.own[NS_CGROUP]);
	assert_int_equal(ns_plan_differ(&plan, &plan.root), NS_NR);

	/*
	 * pid_for_children goes with pid: a root in criu-like's pid namespace that
	 * unshared a new one for its children is refused for pid_for_children,
	 * the first kind in /proc order
	 */
	plan.root = plan.tool;
	plan.root.ino[NS_PID_FOR_CHILDREN] = 0;
	plan.root.ino[NS_MNT] = 903;
	ns_plan_root(&plan);
	assert_false(plan.own[NS_PID]);
	assert_int_equal(ns_plan_differ(&plan, &plan.root), NS_PID_FOR_CHILDREN);

	/* the init of a pid namespace of its own: pid and pid_for_children are the tree's */
	plan.root = plan.tool;
	plan.root.ino[NS_PID] = plan.root.ino[NS_PID_FOR_CHILDREN] = 904;
	ns_plan_root(&plan);
	assert_true(ns_kind_dumped(NS_PID));
	assert_true(plan.own[NS_PID] && plan.own[NS_PID_FOR_CHILDREN]);
	assert_int_equal(ns_plan_differ(&plan, &plan.root), NS_NR);
	task = plan.root;
	task.ino[NS_PID_FOR_CHILDREN] = 0; /* a task inside that unshared again, no fork yet */
	assert_int_equal(ns_plan_differ(&plan, &task), NS_PID_FOR_CHILDREN);
	task = plan.tool; /* a task in criu-like's */
	assert_int_equal(ns_plan_differ(&plan, &task), NS_PID);
}

/* The inventory of a tree with its own UTS namespace: restorable only with its image named. */
static void test_inventory_own(void **state)
{
	InventoryEntry ie = INVENTORY_ENTRY__INIT;
	struct ns_dump_plan plan;
	struct ns_inventory ns;
	size_t i;

	(void)state;
	memset(&plan, 0, sizeof(plan));
	assert_int_equal(ns_ids_read(getpid(), 0, &plan.tool), 0);
	plan.root = plan.tool;
	plan.root.ino[NS_UTS] = plan.tool.ino[NS_UTS] + 1;
	ns_plan_root(&plan);
	plan.img_id[NS_UTS] = 1;
	assert_int_equal(ns_inventory_fill(&ie, &plan, &ns), 0);
	for (i = 0; i < ie.n_namespaces; i++) {
		NamespaceEntry *e = ie.namespaces[i];

		if (strcmp(e->kind, "uts")) {
			assert_true(e->tree_in);
			continue;
		}
		assert_false(e->tree_in);
		assert_true(e->has_img_id && e->img_id == 1);
		assert_true(e->has_tree_ino && e->tree_ino == plan.root.ino[NS_UTS]);
		assert_int_equal(ns_inventory_check(&ie, "dir"), 0);
		e->has_img_id = false; /* no image: nothing to restore it from */
		assert_int_equal(ns_inventory_check(&ie, "dir"), -EOPNOTSUPP);
	}
}

/*
 * A container's pid namespace: no image (the restore makes a new one),
 * pid_for_children goes with it, the root is cloned with CLONE_NEWPID.
 */
static void test_inventory_pid(void **state)
{
	InventoryEntry ie = INVENTORY_ENTRY__INIT;
	struct ns_dump_plan plan;
	struct ns_inventory ns;
	struct ns_restore r;
	size_t i, own = 0;

	(void)state;
	memset(&plan, 0, sizeof(plan));
	assert_int_equal(ns_ids_read(getpid(), 0, &plan.tool), 0);
	plan.root = plan.tool;
	plan.root.ino[NS_PID] = plan.root.ino[NS_PID_FOR_CHILDREN] = plan.tool.ino[NS_PID] + 1;
	ns_plan_root(&plan);
	assert_true(plan.own[NS_PID] && plan.own[NS_PID_FOR_CHILDREN]);
	assert_int_equal(ns_dump_tree(&plan, getpid(), -1), 0); /* nothing to write */
	assert_int_equal(plan.img_id[NS_PID], 0);
	assert_int_equal(ns_inventory_fill(&ie, &plan, &ns), 0);
	for (i = 0; i < ie.n_namespaces; i++) {
		const NamespaceEntry *e = ie.namespaces[i];

		if (!e->tree_in) {
			own++;
			assert_true(!strcmp(e->kind, "pid") ||
				    !strcmp(e->kind, "pid_for_children"));
			assert_false(e->has_img_id);
		}
	}
	assert_int_equal(own, 2);
	assert_int_equal(ns_inventory_check(&ie, "dir"), 0);
	assert_int_equal(ns_restore_load(&ie, -1, &r), 0);
	assert_true(r.own[NS_PID]);
	assert_int_equal(r.clone_flags, CLONE_NEWPID);
	assert_int_equal(ns_restore_root(&r, -1), 0);
	ns_restore_fini(&r);
}

/*
 * time_for_children (ns_time_plan()): which tasks unshare a time namespace
 * for their children at restore, which children are forked before, and what
 * is refused. Namespaces: 1 criu-like's and the tree's, 2..5 others.
 */
static void test_time_plan(void **state)
{
	struct ns_time_children out;
	unsigned int bad = 99;
	/* root unshared 2 after forking [1]; [2] born in 2 unshared 3, none forked; [3] in 2 */
	struct ns_time_task t[] = {
		{ .pid = 10, .parent = -1, .time = 1, .tfc = 2 },
		{ .pid = 11, .parent = 0, .time = 1, .tfc = 1 },
		{ .pid = 12, .parent = 0, .time = 2, .tfc = 3 },
		{ .pid = 13, .parent = 0, .time = 2, .tfc = 2 },
		{ .pid = 14, .parent = 2, .zombie = true },
	};

	(void)state;
	assert_int_equal(ns_time_plan(t, 5, 1, 1, &out, &bad), NS_TIME_OK);
	assert_int_equal(out.n, 2);
	assert_int_equal(out.pid[0], 10);
	assert_true(out.ino[0] == 2);
	assert_int_equal(out.pid[1], 12);
	assert_true(out.ino[1] == 3);
	assert_false(t[0].early);
	assert_true(t[1].early); /* forked before the root's unshare */
	assert_false(t[2].early);
	assert_false(t[3].early);
	/* nothing unshared: nobody */
	t[0].tfc = 1;
	t[2].time = t[2].tfc = t[3].time = t[3].tfc = 1;
	assert_int_equal(ns_time_plan(t, 4, 1, 1, &out, &bad), NS_TIME_OK);
	assert_int_equal(out.n, 0);
	/* a child that joined another one (setns): refused, named */
	t[3].time = t[3].tfc = 5;
	assert_int_equal(ns_time_plan(t, 4, 1, 1, &out, &bad), NS_TIME_NOT_PARENTS);
	assert_int_equal(bad, 3);
	/* a task whose children are born in criu-like's while it is in the tree's own (4) */
	t[0].time = t[1].time = t[2].time = t[0].tfc = t[1].tfc = t[2].tfc = 4;
	t[3].time = 4;
	t[3].tfc = 1;
	assert_int_equal(ns_time_plan(t, 4, 4, 1, &out, &bad), NS_TIME_TFC_KNOWN);
	assert_int_equal(bad, 3);
	/* two tasks with the same new time_for_children */
	t[3].tfc = 5;
	t[2].tfc = 5;
	assert_int_equal(ns_time_plan(t, 4, 4, 1, &out, &bad), NS_TIME_TFC_SHARED);
	assert_int_equal(bad, 3);
}

/*
 * UTS namespaces nested in the tree's (ns_nested_plan()): which tasks make one
 * again at restore, and what is refused. 1 the tree's, 9 criu-like's, 2..5
 * others.
 */
static void test_uts_plan(void **state)
{
	struct ns_nested out;
	unsigned int bad = 99;
	/* [1] made 2, [2] born in it made 3, [3] born in 3, [4] the root's, a zombie */
	struct ns_nested_task t[] = {
		{ .pid = 10, .parent = -1, .ino = 1 }, { .pid = 11, .parent = 0, .ino = 2 },
		{ .pid = 12, .parent = 1, .ino = 3 },  { .pid = 13, .parent = 2, .ino = 3 },
		{ .pid = 14, .parent = 0, .ino = 1 },  { .pid = 15, .parent = 3, .zombie = true },
	};

	(void)state;
	assert_int_equal(ns_nested_plan(t, 6, 1, 9, &out, &bad), NS_NESTED_OK);
	assert_int_equal(out.n, 2);
	assert_int_equal(out.pid[0], 11);
	assert_true(out.ino[0] == 2);
	assert_int_equal(out.pid[1], 12);
	assert_true(out.ino[1] == 3);
	/* none made: nobody */
	t[1].ino = t[2].ino = t[3].ino = 1;
	assert_int_equal(ns_nested_plan(t, 6, 1, 9, &out, &bad), NS_NESTED_OK);
	assert_int_equal(out.n, 0);
	/* left in the tree's when its parent made another after forking it */
	t[1].ino = 2;
	assert_int_equal(ns_nested_plan(t, 6, 1, 9, &out, &bad), NS_NESTED_NOT_PARENTS);
	assert_int_equal(bad, 2);
	/* one that joined criu-like's, or another task's (setns) */
	t[2].ino = t[3].ino = 9;
	assert_int_equal(ns_nested_plan(t, 6, 1, 9, &out, &bad), NS_NESTED_NOT_PARENTS);
	assert_int_equal(bad, 2);
	t[2].ino = t[3].ino = 2;
	t[4].ino = 2;
	assert_int_equal(ns_nested_plan(t, 6, 1, 9, &out, &bad), NS_NESTED_NOT_PARENTS);
	assert_int_equal(bad, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_differ),	      cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_read_child),    cmocka_unit_test(test_inventory),
		cmocka_unit_test(test_plan),	      cmocka_unit_test(test_inventory_own),
		cmocka_unit_test(test_inventory_pid), cmocka_unit_test(test_time_plan),
		cmocka_unit_test(test_uts_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
