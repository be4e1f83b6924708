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
#include <sys/stat.h>
#include <unistd.h>

#include "kind.h"
#include "log.h"
#include "ns.h"
#include "proc-parse.h"
#include "seize.h"
#include "util.h"

#define PIDNS_MAX_NESTED 8 /* levels below the tree's: the kernel allows 32 in all */

struct pid_pair {
	pid_t host, v;
	unsigned int nr_nested; /* pid namespaces nested inside the tree's */
	pid_t nested[PIDNS_MAX_NESTED]; /* its pid in each, outermost first */
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

static uint64_t pid_ns_ino(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

static int add_pair(pid_t host, const struct proc_status *st)
{
	unsigned int i;

	if (pd.nr == pd.cap) {
		size_t cap = pd.cap ? pd.cap * 2 : 64;
		struct pid_pair *m = realloc(pd.map, cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		pd.map = m;
		pd.cap = cap;
	}
	pd.map[pd.nr] = (struct pid_pair){ host, st->nspid[pd.level], 0, { 0 } };
	for (i = pd.level + 1; i < st->nspid_levels; i++)
		pd.map[pd.nr].nested[pd.map[pd.nr].nr_nested++] = st->nspid[i];
	pd.nr++;
	return 0;
}

/*
 * One task or thread: its NSpid must have the tree's levels, or more in a pid
 * namespace nested inside it (checked against its parent by check_nesting()).
 */
static int map_one(pid_t pid, pid_t tid, bool optional)
{
	struct proc_status st;
	int err = read_nspid(pid, tid ? tid : pid, &st);

	if (err == -ESRCH && optional)
		return 0;
	if (err)
		return err;
	if (st.nspid_levels < pd.level + 1 || st.nspid_levels > pd.level + 1 + PIDNS_MAX_NESTED) {
		char who[48];

		if (tid && tid != pid)
			snprintf(who, sizeof(who), "pid %d (thread %d)", pid, tid);
		else
			snprintf(who, sizeof(who), "pid %d", pid);
		pr_err("%s: %u pid levels (NSpid) where the tree's init has %u: not dumped (at "
		       "most %u pid namespaces nested inside the tree)\n",
		       who, st.nspid_levels, pd.level + 1, PIDNS_MAX_NESTED);
		proc_status_fini(&st);
		return -EOPNOTSUPP;
	}
	err = add_pair(tid ? tid : pid, &st);
	proc_status_fini(&st);
	return err;
}

static int check_nesting(const struct pstree *tree);

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
	return check_nesting(tree);
}

static const struct pid_pair *lookup(pid_t host)
{
	struct pid_pair key = { .host = host };

	return pd.own && host > 0 ? bsearch(&key, pd.map, pd.nr, sizeof(*pd.map), pair_cmp) : NULL;
}

pid_t pidns_vpid(pid_t host)
{
	const struct pid_pair *p = lookup(host);

	return p ? p->v : host;
}

bool pidns_vpid_known(pid_t host)
{
	return !pd.own || lookup(host);
}

unsigned int pidns_depth(pid_t host)
{
	const struct pid_pair *p = lookup(host);

	return p ? p->nr_nested : 0;
}

unsigned int pidns_nested(pid_t host, uint32_t *out, unsigned int max)
{
	const struct pid_pair *p = lookup(host);
	unsigned int i;

	for (i = 0; p && i < p->nr_nested && i < max; i++)
		out[i] = (uint32_t)p->nested[i];
	return i;
}

/*
 * A task in a nested pid namespace must be in its parent's, or the init of
 * one just below it (CLONE_NEWPID): the restore creates it that way. A
 * thread is in its leader's.
 */
static bool nesting_ok(const struct seized_task *t, const struct pid_pair *me, unsigned int dp)
{
	unsigned int d = me->nr_nested;

	if (d == dp + 1)
		return me->nested[d - 1] == 1; /* the init of a namespace below its parent's */
	if (d != dp)
		return false;
	/* its parent's namespace: the same inode (a zombie has no link left) */
	return !d || t->state == TASK_ZOMBIE || pid_ns_ino(t->pid) == pid_ns_ino(t->parent->pid);
}

static int check_nesting(const struct pstree *tree)
{
	unsigned int i;

	for (i = 0; i < tree->nr_tasks; i++) {
		const struct seized_task *t = tree->tasks[i];
		const struct pid_pair *me = lookup(t->pid), *pa;
		unsigned int dp;

		if (!me || !t->parent)
			continue;
		pa = lookup(t->parent->pid);
		dp = pa ? pa->nr_nested : 0;
		if (!nesting_ok(t, me, dp)) {
			pr_err("pid %d: in a pid namespace (%u levels below the tree's) that is "
			       "neither its parent %d's (%u levels) nor one it is the init of: not "
			       "restored\n",
			       t->pid, me->nr_nested, t->parent->pid, dp);
			return -EOPNOTSUPP;
		}
	}
	return 0;
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

/* The fields of the NSpid line of @path under @proc_fd, outermost first: how many. */
static int nspid_at(int proc_fd, const char *path, pid_t *v, int max)
{
	_cleanup_free_ char *s = read_file_at(proc_fd, path, NULL);
	char *l = s ? strstr(s, "\nNSpid:") : NULL;
	int n = 0;

	for (l = l ? l + 7 : NULL; l && *l && *l != '\n' && n < max;) {
		char *end;
		long x = strtol(l, &end, 10);

		if (end == l)
			break;
		v[n++] = (pid_t)x;
		l = end;
	}
	return n;
}

pid_t pidns_host_tid(int proc_fd, pid_t host_pid, pid_t vtid)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	pid_t v[33];
	char path[64];
	int fd, level;

	if (vtid == host_pid)
		return host_pid;
	/* the tree's level: the one just below criu-like's own */
	level = nspid_at(proc_fd, "self/status", v, 33);
	if (level <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "%d/task", host_pid);
	fd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		int err = neg_errno();

		if (fd >= 0)
			close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "%d/task/%d/status", host_pid, tid);
		if (nspid_at(proc_fd, path, v, 33) > level && v[level] == vtid)
			return tid;
	}
	return -ESRCH;
}

/* Nothing to read or write: the namespace is new and empty; the root's clone3() makes it. */
const struct ns_type pid_ns_type = {
	.kind = NS_PID,
	.clone_flag = CLONE_NEWPID,
};
