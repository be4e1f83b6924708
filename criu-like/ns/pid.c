// SPDX-License-Identifier: GPL-2.0
/*
 * PID namespaces. A tree whose root is the init (pid 1) of a pid namespace
 * of its own is a container: its images name every task and thread by its
 * pid in that namespace (its "virtual" pid, what getpid() returns inside),
 * never by the host pid the dumper sees; the restore creates a new pid
 * namespace for the root (CLONE_NEWPID, set_tid {1}) and each other task
 * with clone3(set_tid) at the tree's level, and the host pids are whatever
 * is free. For a tree in criu-like's own pid namespace the two are the same
 * and nothing changes. Documentation/namespaces.md, "The pid model".
 *
 * The dump side keeps one table, host pid -> virtual pid, for every task
 * and thread of the tree (pidns_vpid()), filled from NSpid of
 * /proc/PID/task/TID/status once the tree is seized: the images are written
 * from it wherever a pid of the tree goes into one (pstree, image names,
 * pidfds, lock owners, epoll owners, SCM credentials, timer targets).
 */
#define LOG_PREFIX "ns: pid: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kind.h"
#include "log.h"
#include "ns.h"
#include "proc-parse.h"
#include "seize.h"
#include "util.h"

struct pid_pair {
	pid_t host, v;
};

static struct {
	bool own; /* the tree's root is the init of a pid namespace of its own */
	unsigned int level; /* the tree's level in the dumper's NSpid lines (0: the dumper's) */
	size_t nr, cap;
	struct pid_pair *map; /* sorted by host pid once filled */
} pd;

static int pair_cmp(const void *a, const void *b)
{
	const struct pid_pair *x = a, *y = b;

	return (x->host > y->host) - (x->host < y->host);
}

/* The NSpid line of @pid's thread @tid (0: the process) as the dumper sees it. */
static int read_nspid(pid_t pid, pid_t tid, struct proc_status *st)
{
	int err = proc_parse_status(pid, tid, st);

	if (err)
		return err;
	if (!st->nspid_levels) {
		proc_status_fini(st);
		pr_err("pid %d: no NSpid in its status (Linux < 4.1): its pid in its own pid "
		       "namespace cannot be read\n",
		       pid);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int add_pair(pid_t host, pid_t v)
{
	if (pd.nr == pd.cap) {
		size_t cap = pd.cap ? pd.cap * 2 : 64;
		struct pid_pair *m = realloc(pd.map, cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		pd.map = m;
		pd.cap = cap;
	}
	pd.map[pd.nr++] = (struct pid_pair){ host, v };
	return 0;
}

/* One task or thread: its NSpid must have exactly the tree's levels. */
static int map_one(pid_t pid, pid_t tid, bool optional)
{
	struct proc_status st;
	int err = read_nspid(pid, tid ? tid : pid, &st);

	if (err == -ESRCH && optional)
		return 0;
	if (err)
		return err;
	if (st.nspid_levels != pd.level + 1) {
		char who[48];

		if (tid && tid != pid)
			snprintf(who, sizeof(who), "pid %d (thread %d)", pid, tid);
		else
			snprintf(who, sizeof(who), "pid %d", pid);
		pr_err("%s: %u pid levels (NSpid) where the tree's init has %u: a nested pid "
		       "namespace inside the tree is not dumped yet\n",
		       who, st.nspid_levels, pd.level + 1);
		proc_status_fini(&st);
		return -EOPNOTSUPP;
	}
	err = add_pair(tid ? tid : pid, st.nspid[pd.level]);
	proc_status_fini(&st);
	return err;
}

int pidns_dump_prepare(const struct pstree *tree, bool own)
{
	const struct seized_task *root = tree->root;
	struct proc_status st;
	unsigned int i, j;
	int err;

	pidns_dump_fini();
	if (!own)
		return 0;
	err = read_nspid(root->pid, root->pid, &st);
	if (err)
		return err;
	pd.own = true;
	pd.level = st.nspid_levels - 1;
	if (st.nspid[pd.level] != 1) {
		pr_err("pid %d: the root of the tree is pid %d of its pid namespace, not its init "
		       "(1): a pid namespace is dumped from its init only\n",
		       root->pid, st.nspid[pd.level]);
		proc_status_fini(&st);
		return -EOPNOTSUPP;
	}
	proc_status_fini(&st);
	pr_info("pid %d: the init of the tree's pid namespace (level %u below criu-like's)\n",
		root->pid, pd.level);
	for (i = 0; i < tree->nr_tasks; i++) {
		const struct seized_task *t = tree->tasks[i];

		err = map_one(t->pid, 0, false);
		for (j = 1; !err && t->state != TASK_ZOMBIE && j < t->nr_threads; j++)
			err = map_one(t->pid, t->threads[j].tid, false);
		if (err)
			return err;
	}
	qsort(pd.map, pd.nr, sizeof(*pd.map), pair_cmp);
	return 0;
}

pid_t pidns_vpid(pid_t host)
{
	struct pid_pair key = { host, 0 }, *p;

	if (!pd.own || host <= 0)
		return host;
	p = bsearch(&key, pd.map, pd.nr, sizeof(*pd.map), pair_cmp);
	return p ? p->v : host;
}

bool pidns_vpid_known(pid_t host)
{
	struct pid_pair key = { host, 0 };

	return !pd.own || bsearch(&key, pd.map, pd.nr, sizeof(*pd.map), pair_cmp);
}

unsigned int pidns_dump_levels(void)
{
	return pd.own ? pd.level + 1 : 1;
}

void pidns_dump_fini(void)
{
	free(pd.map);
	memset(&pd, 0, sizeof(pd));
}

/* ---- restore ------------------------------------------------------------------------------- */

pid_t pidns_host_tid(int proc_fd, pid_t host_pid, pid_t vtid)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	char path[64];
	int fd;

	if (vtid == host_pid)
		return host_pid;
	snprintf(path, sizeof(path), "%d/task", host_pid);
	fd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((de = readdir(d))) {
		_cleanup_free_ char *s = NULL;
		char *l;
		pid_t tid = (pid_t)atoi(de->d_name), last = -1;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "%d/task/%d/status", host_pid, tid);
		s = read_file_at(proc_fd, path, NULL);
		l = s ? strstr(s, "\nNSpid:") : NULL;
		if (!l)
			continue;
		/* the last field: the tid in the task's own (innermost) pid namespace */
		for (l += 7; *l && *l != '\n';) {
			char *end;
			long v = strtol(l, &end, 10);

			if (end == l)
				break;
			last = (pid_t)v;
			l = end;
		}
		if (last == vtid)
			return tid;
	}
	return -1;
}

/* Nothing to read or write: the namespace is new and empty; the root's clone3() makes it. */
const struct ns_type pid_ns_type = {
	.kind = NS_PID,
	.clone_flag = CLONE_NEWPID,
};
