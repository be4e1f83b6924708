// SPDX-License-Identifier: GPL-2.0
/*
 * What the seize refuses, by name: a root that is no process of its own (pid
 * 1, a kernel thread, a thread), criu-like or one of its ancestors, and a
 * thread traced by someone else (Documentation/seize.md).
 */
#define LOG_PREFIX "seize: "

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"
#include "proc-parse.h"
#include "seize-int.h"
#include "util.h"

static void comm_of(pid_t pid, char *buf, size_t len)
{
	struct proc_stat st;

	if (proc_parse_stat(pid, 0, &st))
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%s", st.comm);
}

/* A thread that refused PTRACE_SEIZE: say who traces it, or 0 when nobody does. */
int check_tracer(pid_t pid, pid_t tid)
{
	struct proc_status s;
	char comm[64];
	pid_t tracer;

	if (proc_parse_status(pid, tid, &s))
		return 0;
	tracer = s.tracer_pid;
	proc_status_fini(&s);
	if (!tracer)
		return 0;
	comm_of(tracer, comm, sizeof(comm));
	if (tracer == getpid())
		pr_err("pid %d (thread %d) is already traced by this process (seized twice?)\n",
		       pid, tid);
	else
		pr_err("pid %d (thread %d) is already traced by pid %d (%s): detach it first\n",
		       pid, tid, tracer, comm);
	return -EBUSY;
}

static int check_not_ancestor(pid_t root)
{
	pid_t p = getpid();

	while (p > 0) {
		struct proc_stat st;

		if (p == root) {
			pr_err("pid %d is %s: refusing to seize it\n", root,
			       p == getpid() ? "this process" : "an ancestor of this process");
			return -EDEADLK;
		}
		if (proc_parse_stat(p, 0, &st))
			break;
		p = st.ppid;
	}
	return 0;
}

int check_root(pid_t root)
{
	struct proc_status s;
	struct proc_stat st;
	pid_t tgid;
	int err;

	if (root <= 0 || proc_parse_stat(root, 0, &st)) {
		pr_err("pid %d does not exist\n", root);
		return -ESRCH;
	}
	if (root == 1) {
		pr_err("pid 1 (%s) is the init of this pid namespace: refusing to seize it\n",
		       st.comm);
		return -EPERM;
	}
	if ((st.flags & PF_KTHREAD) || root == 2 || st.ppid == 2) {
		pr_err("pid %d (%s) is a kernel thread: refusing to seize it\n", root, st.comm);
		return -EPERM;
	}
	err = proc_parse_status(root, 0, &s);
	if (err) {
		pr_errno(err, "cannot read /proc/%d/status", root);
		return err;
	}
	tgid = s.tgid;
	proc_status_fini(&s);
	err = check_not_ancestor(root);
	if (err)
		return err;
	if (tgid == getpid()) {
		pr_err("pid %d is a thread of this process: refusing to seize it\n", root);
		return -EDEADLK;
	}
	if (tgid != root) {
		pr_err("pid %d is a thread of process %d, not a process: seize %d instead\n", root,
		       tgid, tgid);
		return -EINVAL;
	}
	return check_tracer(root, root);
}
