// SPDX-License-Identifier: GPL-2.0
/*
 * Cgroup sets: the cgroups a task or a thread is in, one per hierarchy.
 *
 * Dump: /proc/PID/task/TID/cgroup of every thread of every live task,
 * read while the tree is frozen, deduplicated into sets.
 *
 * Restore: each task, first thing after its fork, writes "0" (itself) into
 * cgroup.procs of each directory of its set through the fds the controller
 * opened (rst_cgroup_prepare()): that works whatever mount and pid namespace
 * it is in by then, and every page it restores is charged to its own memory
 * cgroup. A task whose set is its parent's inherited it with the fork. The
 * threads are made by the restorer blob inside the task: the controller
 * writes their tids into "tasks" (v1) or "cgroup.threads" (v2) once every
 * thread waits at the barrier, before any of them runs the tree's code.
 */
#define LOG_PREFIX "cgroup: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup-int.h"
#include "dump.h"
#include "fault.h"
#include "log.h"
#include "ns.h"
#include "restore.h"
#include "task-bpf.h"
#include "util.h"

/* ---- dump ------------------------------------------------------------------------------------ */

/* The paths of thread @tid of @pid, one per hierarchy of @d, into @row. */
static int read_row(struct cg_dump *d, pid_t pid, pid_t tid, char **row)
{
	char path[64], line[4096];
	_cleanup_fclose_ FILE *f = NULL;
	unsigned int seen = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", pid, tid);
	if (fault_hit("%s", path))
		return -EIO;
	f = fopen(path, "re");
	if (!f)
		return neg_errno();
	while (fgets(line, sizeof(line), f)) {
		char *ctrls, *p;
		int i;

		if (cg_parse_line(line, &ctrls, &p)) {
			pr_err("pid %d (thread %d): %s: cannot parse '%s'\n", pid, tid, path, line);
			return -EINVAL;
		}
		i = cg_hier_find(&d->hiers, ctrls);
		if (i < 0 && cg_hier_find(&d->skipped, ctrls) >= 0)
			continue; /* --cgroup-dump-controller left it out */
		if (i < 0 || row[i]) {
			pr_err("pid %d (thread %d): cgroup hierarchy '%s' is not criu-like's\n",
			       pid, tid, ctrls);
			return -EINVAL;
		}
		row[i] = strdup(p);
		if (!row[i])
			return -ENOMEM;
		seen++;
	}
	if (seen != d->hiers.n) {
		pr_err("pid %d (thread %d): %s lists %u hierarchies, criu-like's %u\n", pid, tid,
		       path, seen, d->hiers.n);
		return -EINVAL;
	}
	return 0;
}

static void free_row(char **row, unsigned int n)
{
	unsigned int i;

	for (i = 0; row && i < n; i++)
		free(row[i]);
	free(row);
}

/* The index of the set @row is (added if new; then @row belongs to @d). */
static int add_set(struct cg_dump *d, char **row, unsigned int *ret)
{
	unsigned int s, i;
	char ***n;

	for (s = 0; s < d->nr_sets; s++) {
		for (i = 0; i < d->hiers.n; i++)
			if (strcmp(d->sets[s][i], row[i]))
				break;
		if (i == d->hiers.n) {
			free_row(row, d->hiers.n);
			*ret = s;
			return 0;
		}
	}
	n = realloc(d->sets, (d->nr_sets + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	d->sets = n;
	d->sets[d->nr_sets] = row;
	*ret = d->nr_sets++;
	return 0;
}

static int add_member(struct cg_dump *d, pid_t pid, pid_t tid, unsigned int set)
{
	struct cg_member *n = realloc(d->members, (d->nr_members + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	d->members = n;
	n[d->nr_members++] = (struct cg_member){ .pid = pidns_vpid(pid),
						 .tid = pidns_vpid(tid),
						 .set = set };
	return 0;
}

/*
 * The threads of a large process are mostly in its first thread's cgroups:
 * the "tasks" file (cgroup v1; "cgroup.threads" on cgroup2) of each of those
 * cgroups is read once, and a thread listed in every one has the first
 * thread's set, without a read of its own /proc/PID/task/TID/cgroup. The
 * others are read one by one, as every thread of a smaller process: below
 * this many threads the files cost more than they save.
 */
#define CG_LISTED_MIN_THREADS 16

struct tid_idx {
	pid_t tid;
	unsigned int j;
};

static int tid_idx_cmp(const void *a, const void *b)
{
	const struct tid_idx *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/*
 * Count in @hits[j] each cgroup of @set (one per hierarchy) whose tasks file
 * lists thread j of @t. A file that cannot be read counts for no thread: those
 * are then read one by one.
 */
static void count_listed(const struct cg_dump *d, const struct seized_task *t, char **set,
			 unsigned char *hits)
{
	_cleanup_free_ struct tid_idx *idx = calloc(t->nr_threads, sizeof(*idx));
	unsigned int i, j;

	if (!idx)
		return;
	for (j = 0; j < t->nr_threads; j++)
		idx[j] = (struct tid_idx){ t->threads[j].tid, j };
	qsort(idx, t->nr_threads, sizeof(*idx), tid_idx_cmp);
	for (i = 0; i < d->hiers.n; i++) {
		const struct cg_hier *h = &d->hiers.h[i];
		_cleanup_free_ char *text = NULL;
		char path[PATH_MAX], *p, *end;
		size_t len = 0;

		if (cg_host_path(h, set[i], path, sizeof(path) - 16))
			continue;
		strcat(path, cg_hier_v2(h) ? "/cgroup.threads" : "/tasks");
		text = read_file_at(AT_FDCWD, path, &len);
		if (!text) {
			pr_debug("pid %d: %s: %m: its threads' cgroups read one by one\n", t->pid,
				 path);
			continue;
		}
		for (p = text; p < text + len; p = end + 1) {
			struct tid_idx key = { (pid_t)strtol(p, &end, 10), 0 }, *hit;

			if (end == p)
				break;
			hit = bsearch(&key, idx, t->nr_threads, sizeof(*idx), tid_idx_cmp);
			if (hit)
				hits[hit->j]++;
		}
	}
}

/*
 * The set of every thread of @t, live or not, as a member of @d. A thread
 * listed in @thr (NULL: none, task-bpf.h) with the css_set of the first
 * thread read has its set, no file read.
 */
static int task_members(struct cg_dump *d, const struct seized_task *t,
			const struct proc_threads *thr)
{
	_cleanup_free_ unsigned char *hits = NULL;
	unsigned int j, set, first = 0;
	pid_t first_tid = 0;
	int err;

	for (j = 0; j < t->nr_threads; j++) {
		pid_t tid = t->threads[j].tid;
		char **row;

		if ((hits && hits[j] == d->hiers.n) ||
		    (first_tid && threads_same(thr, first_tid, tid, THR_CGROUPS))) {
			err = add_member(d, t->pid, tid, first);
			if (err)
				return err;
			continue;
		}
		row = calloc(d->hiers.n + 1, sizeof(*row));
		if (!row)
			return -ENOMEM;
		err = read_row(d, t->pid, tid, row);
		if (err == -ENOENT && !t->threads[j].seized) {
			free_row(row, d->hiers.n);
			continue; /* a leader that exited before its threads */
		}
		if (err) {
			free_row(row, d->hiers.n);
			if (err != -EINVAL)
				pr_errno(err, "pid %d (thread %d): cannot read its cgroups", t->pid,
					 tid);
			return err;
		}
		err = add_set(d, row, &set);
		if (err) {
			free_row(row, d->hiers.n);
			return err;
		}
		err = add_member(d, t->pid, tid, set);
		if (err)
			return err;
		if (first_tid)
			continue;
		first_tid = tid;
		first = set;
		if (!threads_find(thr, tid) && t->nr_threads - j > CG_LISTED_MIN_THREADS &&
		    d->hiers.n < 256) {
			hits = calloc(t->nr_threads, 1);
			if (hits)
				count_listed(d, t, d->sets[set], hits);
		}
	}
	return 0;
}

int cg_members_read(const struct dump_ctx *ctx, struct cg_dump *d)
{
	unsigned int i;
	int err;

	for (i = 0; i < ctx->tree->nr_tasks; i++) {
		const struct seized_task *t = ctx->tree->tasks[i];

		/* a zombie left its cgroups; it is made again in its parent's */
		if (t->state == TASK_ZOMBIE)
			continue;
		err = task_members(d, t, ctx->thr ? &ctx->thr[i] : NULL);
		if (err)
			return err;
	}
	return 0;
}

void cg_dump_fini(struct cg_dump *d)
{
	unsigned int i;

	for (i = 0; i < d->nr_sets; i++)
		free_row(d->sets[i], d->hiers.n);
	free(d->sets);
	for (i = 0; i < d->nr_nss; i++)
		free_row(d->nss[i], d->hiers.n);
	free(d->nss);
	free(d->ns_ino);
	free(d->members);
	cg_hiers_fini(&d->hiers);
	cg_hiers_fini(&d->skipped);
	cg_spec_fini(&d->spec);
}

/* ---- restore --------------------------------------------------------------------------------- */

int cg_set_idx(const CgroupEntry *e, uint32_t id)
{
	size_t i;

	for (i = 0; i < e->n_sets; i++)
		if (e->sets[i]->id == id)
			return (int)i;
	return -ENOENT;
}

int cg_ns_idx(const CgroupEntry *e, uint32_t id)
{
	size_t i;

	for (i = 0; i < e->n_namespaces; i++)
		if (e->namespaces[i]->id == id)
			return (int)i;
	return -ENOENT;
}

int cg_open_dirs(struct rst_cgroup *cg, char **const *paths, size_t count, int base, int *fds)
{
	size_t r, i, nh = cg->hiers.n;
	char host[4096];

	for (r = 0; r < count; r++)
		for (i = 0; i < nh; i++) {
			const struct cg_hier *h = &cg->hiers.h[i];
			_cleanup_free_ char *abs = cg_join(h->root, paths[r][i]);
			int fd, err;

			if (!abs)
				return -ENOMEM;
			err = cg_host_path(h, abs, host, sizeof(host));
			fd = err ? -1 : open(host, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0) {
				err = err ?: neg_errno();
				pr_errno(err, "cgroup " CG_FMT ": cannot open it", CG_NAME(h), abs);
				return err;
			}
			fds[r * nh + i] = fcntl(fd, F_DUPFD_CLOEXEC, base);
			close(fd);
			if (fds[r * nh + i] < 0)
				return neg_errno();
		}
	return 0;
}

/* Write @text into @name under directory fd @dfd. */
static int write_at(int dfd, const char *name, const char *text)
{
	_cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return neg_errno();
	if (write(fd, text, strlen(text)) < 0)
		return neg_errno();
	return 0;
}

/* Hierarchy @i of @paths is where criu-like itself is (so is a task it forked). */
static bool is_own(const struct rst_cgroup *cg, char *const *paths, unsigned int i)
{
	_cleanup_free_ char *abs = paths ? cg_join(cg->hiers.h[i].root, paths[i]) : NULL;

	return abs && !strcmp(abs, cg->hiers.h[i].own);
}

int cg_enter_row(const struct rst_cgroup *cg, const int *fds, char *const *skip_own, pid_t pid,
		 const char *what)
{
	unsigned int i;
	int err;

	for (i = 0; i < cg->hiers.n; i++) {
		if (is_own(cg, skip_own, i))
			continue;
		err = fault_err(-EIO, "pid %d: entering its %s", pid, what)
			      ?: write_at(fds[i], "cgroup.procs", "0");
		if (err) {
			pr_errno(err, "pid %d: cannot enter its %s in cgroup hierarchy %s", pid,
				 what, CG_NAME(&cg->hiers.h[i]));
			return err;
		}
	}
	return 0;
}

static const CgroupMemberEntry *find_member(const CgroupEntry *e, uint32_t pid, uint32_t tid)
{
	size_t i;

	for (i = 0; i < e->n_members; i++)
		if (e->members[i]->pid == pid && e->members[i]->tid == tid)
			return e->members[i];
	return NULL;
}

int rst_cgroup_enter(struct restore_ctx *ctx, const struct rst_task *t)
{
	const struct rst_cgroup *cg = ctx->cgroup;
	const CgroupMemberEntry *m, *pm = NULL;
	uint32_t pid = t->pe->pid;
	size_t idx;
	int err;

	if (!cg)
		return 0;
	m = find_member(cg->e, pid, pid);
	if (!m)
		return 0; /* a zombie: it stays in its parent's */
	if (t->parent)
		pm = find_member(cg->e, t->parent->pe->pid, t->parent->pe->pid);
	err = cg_ns_enter(cg, (pid_t)pid, m->ns, pm ? pm->ns : 0);
	if (err)
		return err;
	/* the same set as its parent's, namespace and all: inherited with the fork */
	if (pm && pm->set == m->set && pm->ns == m->ns)
		return 0;
	idx = (size_t)cg_set_idx(cg->e, m->set);
	/*
	 * The root was forked by criu-like, in its cgroups: those it need not
	 * enter (in a user namespace of the tree's own, it could not write there)
	 */
	return cg_enter_row(cg, cg->set_fds + idx * cg->hiers.n,
			    t->parent || m->ns ? NULL : cg->e->sets[idx]->paths, (pid_t)pid,
			    "cgroups");
}

void rst_cgroup_why_eagain(const struct restore_ctx *ctx, const struct rst_task *parent)
{
	const struct rst_cgroup *cg = ctx->cgroup;
	const CgroupMemberEntry *m;
	unsigned int i;
	size_t s;

	if (!cg || !parent)
		return;
	m = find_member(cg->e, parent->pe->pid, parent->pe->pid);
	if (!m)
		return;
	s = (size_t)cg_set_idx(cg->e, m->set);
	for (i = 0; i < cg->hiers.n; i++) {
		int fd = cg->set_fds[s * cg->hiers.n + i];
		_cleanup_free_ char *max = read_file_at(fd, "pids.max", NULL);
		_cleanup_free_ char *cur = read_file_at(fd, "pids.current", NULL);
		_cleanup_free_ char *abs = cg_join(cg->hiers.h[i].root, cg->e->sets[s]->paths[i]);

		if (!max || !cur || !abs || !strncmp(max, "max", 3) || atol(cur) < atol(max))
			continue;
		pr_err("pid %u: its pids cgroup " CG_FMT " allows %ld tasks and holds %ld: the "
		       "tree's tasks do not fit\n",
		       parent->pe->pid, CG_NAME(&cg->hiers.h[i]), abs, atol(max), atol(cur));
	}
}

/* Thread @m of task @t into its set where it differs from its leader's @lm. */
static int move_thread(struct restore_ctx *ctx, const struct rst_task *t,
		       const CgroupMemberEntry *m, const CgroupMemberEntry *lm)
{
	const struct rst_cgroup *cg = ctx->cgroup;
	size_t s = (size_t)cg_set_idx(cg->e, m->set), ls = (size_t)cg_set_idx(cg->e, lm->set);
	pid_t tid = rst_host_tid(ctx, t, (pid_t)m->tid);
	char buf[32];
	unsigned int i;
	int err;

	if (tid <= 0) {
		pr_err("thread %u of pid %u: its host tid is unknown\n", m->tid, m->pid);
		return -ESRCH;
	}
	snprintf(buf, sizeof(buf), "%d", tid);
	for (i = 0; i < cg->hiers.n; i++) {
		const struct cg_hier *h = &cg->hiers.h[i];

		if (!strcmp(cg->e->sets[s]->paths[i], cg->e->sets[ls]->paths[i]))
			continue;
		err = write_at(cg->set_fds[s * cg->hiers.n + i],
			       cg_hier_v2(h) ? "cgroup.threads" : "tasks", buf);
		if (err) {
			pr_errno(err, "pid %u thread %u: cannot move it into cgroup " CG_FMT,
				 m->pid, m->tid, CG_NAME(h), cg->e->sets[s]->paths[i]);
			return err;
		}
	}
	return 0;
}

int rst_cgroup_threads(struct restore_ctx *ctx)
{
	const struct rst_cgroup *cg = ctx->cgroup;
	size_t i;
	int err;

	if (!cg)
		return 0;
	for (i = 0; i < cg->e->n_members; i++) {
		const CgroupMemberEntry *m = cg->e->members[i], *lm;
		const struct rst_task *t;

		if (m->pid == m->tid)
			continue;
		lm = find_member(cg->e, m->pid, m->pid);
		t = rst_find_task(ctx, (pid_t)m->pid);
		if (!t) {
			pr_err("cgroup.img: thread %u of pid %u, not in the tree\n", m->tid,
			       m->pid);
			return -EINVAL;
		}
		/* a leader gone before its threads: they are in the first thread's set */
		if (!lm || lm->set == m->set)
			continue;
		err = move_thread(ctx, t, m, lm);
		if (err)
			return err;
	}
	return 0;
}
