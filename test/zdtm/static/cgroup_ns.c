// SPDX-License-Identifier: GPL-2.0
/*
 * A cgroup namespace: the test makes zdtm.cgroup_ns.PID and its child
 * "inner" below its own cgroups in the memory, pids and cpu hierarchies,
 * enters zdtm.cgroup_ns.PID in the three, unshares a cgroup namespace
 * there, then enters inner in memory only; a child it forks shares the
 * namespace and enters inner in pids. The runner removes the cgroups after
 * the dump. After SIGTERM /proc/self/cgroup, and the child's as read by the
 * test, must read as before the dump (inner paths relative to the
 * namespace's root: "/inner" and "/"), and both must still share one cgroup
 * namespace that is not the test's parent's.
 */
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "cgroup-util.h"

#define NCTRL 3
static const char *const ctrls[NCTRL] = { "memory", "pids", "cpu" };

static struct cg_fs fs[NCTRL];
static char base[NCTRL][CG_PATH], inner[NCTRL][CG_PATH * 4];

static int setup(void)
{
	int c;

	for (c = 0; c < NCTRL; c++) {
		char own[CG_PATH - 64];

		if (cg_path_of(0, ctrls[c], own, sizeof(own)) || cg_fs_open(&fs[c], ctrls[c])) {
			fail("hierarchy %s: not found or not reachable: %m", ctrls[c]);
			return neg_errno();
		}
		snprintf(base[c], sizeof(base[c]), "%s/zdtm.cgroup_ns.%d",
			 strcmp(own, "/") ? own : "", getpid());
		snprintf(inner[c], sizeof(inner[c]), "%s/inner", base[c]);
		if (cg_make(&fs[c], base[c]) || cg_make(&fs[c], inner[c]) ||
		    cg_write(&fs[c], base[c], "cgroup.procs", "0")) {
			fail("cannot make or enter %s:%s: %m", ctrls[c], base[c]);
			return neg_errno();
		}
	}
	return 0;
}

static int ns_ino(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/cgroup", pid);
	n = readlink(path, buf, size - 1);
	if (n <= 0)
		return neg_errno();
	buf[n] = '\0';
	return 0;
}

int main(int argc, char **argv)
{
	char self_before[4096], child_before[4096], after[4096], path[64];
	char ns_self[64], ns_child[64], ns_parent[64];
	int p[2], c;
	pid_t child;

	test_init(argc, argv);
	if (setup())
		return 1;
	if (unshare(CLONE_NEWCGROUP)) {
		fail("unshare(CLONE_NEWCGROUP): %m");
		return 1;
	}
	if (cg_write(&fs[0], inner[0], "cgroup.procs", "0")) {
		fail("cannot enter %s:%s inside the namespace: %m", ctrls[0], inner[0]);
		return 1;
	}
	if (pipe(p))
		return 1;
	child = fork();
	if (child == 0) {
		char x;

		close(p[1]);
		if (read(p[0], &x, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(p[0]);
	if (child < 0) {
		fail("fork: %m");
		return 1;
	}
	{
		char pid[32];

		snprintf(pid, sizeof(pid), "%d", child);
		if (cg_write(&fs[1], inner[1], "cgroup.procs", pid)) {
			fail("cannot put child %d in %s:%s: %m", child, ctrls[1], inner[1]);
			return 1;
		}
	}
	for (c = 0; c < NCTRL; c++)
		cg_fs_close(&fs[c]);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", child);
	if (test_read_file("/proc/self/cgroup", self_before, sizeof(self_before)) <= 0 ||
	    test_read_file(path, child_before, sizeof(child_before)) <= 0) {
		fail("cannot read the cgroup files");
		return 1;
	}
	test_msg("inside the namespace:\n%s", self_before);
	if (!strstr(self_before, ":memory:/inner\n") || !strstr(self_before, ":pids:/\n") ||
	    !strstr(child_before, ":pids:/inner\n")) {
		fail("the namespace does not show what it should:\n%s", self_before);
		return 1;
	}

	test_daemon();
	test_waitsig();

	if (test_read_file("/proc/self/cgroup", after, sizeof(after)) <= 0 ||
	    strcmp(after, self_before)) {
		fail("/proc/self/cgroup reads\n%s\nnot\n%s", after, self_before);
		return 1;
	}
	if (test_read_file(path, after, sizeof(after)) <= 0 || strcmp(after, child_before)) {
		fail("/proc/%d/cgroup (the child) reads\n%s\nnot\n%s", child, after, child_before);
		return 1;
	}
	if (ns_ino(getpid(), ns_self, sizeof(ns_self)) ||
	    ns_ino(child, ns_child, sizeof(ns_child)) ||
	    ns_ino(getppid(), ns_parent, sizeof(ns_parent))) {
		fail("cannot read the cgroup namespace links");
		return 1;
	}
	if (strcmp(ns_self, ns_child) || !strcmp(ns_self, ns_parent)) {
		fail("cgroup namespaces: test %s, child %s, parent %s", ns_self, ns_child,
		     ns_parent);
		return 1;
	}
	close(p[1]);
	if (waitpid(child, &c, 0) != child || !WIFEXITED(c) || WEXITSTATUS(c)) {
		fail("child %d did not exit well (0x%x)", child, c);
		return 1;
	}
	pass();
	return 0;
}
