// SPDX-License-Identifier: GPL-2.0
/*
 * Cgroup namespaces. A cgroup namespace is a view: its root in each
 * hierarchy is the cgroup its creator was in when it called
 * unshare(CLONE_NEWCGROUP), and /proc/PID/cgroup read inside shows paths
 * relative to it. Dump: for a task whose namespace is not criu-like's, a
 * child of the dumper joins it (setns) and reads the task's
 * /proc/PID/cgroup there: the full path less that relative one is the root.
 * Restore: the task enters the roots of its namespace, unshares a new one
 * there, then enters its own set (cgset.c), so it reads the same
 * /proc/self/cgroup. A task in its parent's namespace inherits it.
 *
 * Refused: threads of one process in different cgroup namespaces (ns/ns.c
 * checks them with the other kinds, ns_check_tree()), a task
 * outside its namespace's root (moved out after the unshare: it reads
 * "/.."), a task in criu-like's namespace below one in a namespace of its
 * own, and, with --manage-cgroups=ignore, any namespace at all.
 */
#define LOG_PREFIX "cgroup: "

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup-int.h"
#include "dump.h"
#include "log.h"
#include "ns.h"
#include "util.h"

static int ns_ino(pid_t pid, pid_t tid, uint64_t *ret)
{
	char path[80];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/cgroup", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/cgroup");
	if (stat(path, &st))
		return neg_errno();
	*ret = (uint64_t)st.st_ino;
	return 0;
}

/*
 * The cgroup namespace of @t, its first live thread's; 0 for criu-like's.
 * ns_check_tree() refused a thread in another one than that thread's.
 */
static int task_ns(const struct seized_task *t, uint64_t mine, uint64_t *ret)
{
	uint64_t ino = 0;
	unsigned int j;
	int err = 0;

	for (j = 0; j < t->nr_threads; j++) {
		err = ns_ino(t->pid, t->threads[j].tid, &ino);
		if (err == -ENOENT && !t->threads[j].seized)
			continue;
		if (err)
			pr_errno(err, "pid %d thread %d: its cgroup namespace", t->pid,
				 t->threads[j].tid);
		break;
	}
	if (err)
		return err;
	*ret = ino == mine ? 0 : ino;
	return 0;
}

int cg_ns_refuse_ignored(const struct dump_ctx *ctx)
{
	uint64_t mine, ino;
	unsigned int i;
	int err = ns_ino(0, 0, &mine);

	for (i = 0; !err && i < ctx->tree->nr_tasks; i++) {
		const struct seized_task *t = ctx->tree->tasks[i];

		if (t->state == TASK_ZOMBIE)
			continue;
		err = task_ns(t, mine, &ino);
		if (!err && ino) {
			pr_err("pid %d: in cgroup namespace cgroup:[%llu] of its own: "
			       "--manage-cgroups=ignore would restore it in criu-like's\n",
			       t->pid, (unsigned long long)ino);
			err = -EOPNOTSUPP;
		}
	}
	return err;
}

/* In a child that joined @pid's cgroup namespace: its /proc/PID/cgroup into @wfd. */
static void read_inside(pid_t pid, int nsfd, int wfd)
{
	char path[64], buf[16384];
	int fd;
	ssize_t n;

	if (setns(nsfd, CLONE_NEWCGROUP))
		_exit(2);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(3);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write_all(wfd, buf, (size_t)n))
			_exit(4);
	_exit(n < 0 ? 5 : 0);
}

/* @pid's /proc/PID/cgroup as read inside its cgroup namespace, into @buf. */
static int read_view(pid_t pid, char *buf, size_t size)
{
	char path[64];
	_cleanup_close_ int nsfd = -1;
	int p[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t child;

	snprintf(path, sizeof(path), "/proc/%d/ns/cgroup", pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0 || pipe2(p, O_CLOEXEC))
		return neg_errno();
	child = fork();
	if (child == 0) {
		close(p[0]);
		read_inside(pid, nsfd, p[1]);
	}
	close(p[1]);
	while (child > 0 && len < size - 1 && (n = read(p[0], buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	buf[len] = '\0';
	if (child < 0)
		return neg_errno();
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		return -EIO;
	return 0;
}

/* Full path @full less its tail @rel ("/" or "/c/d") seen inside the namespace. */
static char *strip_view(const char *full, const char *rel)
{
	size_t fl = strlen(full), rl = strlen(rel);

	if (!strcmp(rel, "/"))
		return strdup(full);
	if (rl > fl || strcmp(full + fl - rl, rel))
		return NULL;
	return fl == rl ? strdup("/") : strndup(full, fl - rl);
}

/* The roots of @pid's namespace, from its set @set and its view. */
static int read_roots(struct cg_dump *d, pid_t pid, unsigned int set, char **row)
{
	char buf[16384], *line, *save = NULL;
	unsigned int seen = 0;
	int err = read_view(pid, buf, sizeof(buf));

	if (err) {
		pr_errno(err, "pid %d: cannot read its cgroups inside its cgroup namespace", pid);
		return err;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *ctrls, *rel;
		int i;

		if (cg_parse_line(line, &ctrls, &rel))
			return -EINVAL;
		i = cg_hier_find(&d->hiers, ctrls);
		if (i < 0 && cg_hier_find(&d->skipped, ctrls) >= 0)
			continue; /* --cgroup-dump-controller left it out */
		if (i < 0)
			return -EINVAL;
		if (!strncmp(rel, "/..", 3)) {
			pr_err("pid %d: in cgroup " CG_FMT ", outside the root of its cgroup "
			       "namespace (%s): not restored\n",
			       pid, CG_NAME(&d->hiers.h[i]), d->sets[set][i], rel);
			return -EOPNOTSUPP;
		}
		row[i] = strip_view(d->sets[set][i], rel);
		if (!row[i])
			return -EINVAL;
		seen++;
	}
	return seen == d->hiers.n ? 0 : -EINVAL;
}

/* The index + 1 of @ino's namespace in @d, read from task @pid if new. */
static int add_ns(struct cg_dump *d, uint64_t ino, pid_t pid, unsigned int set, unsigned int *ret)
{
	char **row;
	unsigned int i;
	int err;

	for (i = 0; i < d->nr_nss; i++)
		if (d->ns_ino[i] == ino) {
			*ret = i + 1;
			return 0;
		}
	row = calloc(d->hiers.n + 1, sizeof(*row));
	if (!row)
		return -ENOMEM;
	err = read_roots(d, pid, set, row);
	if (!err) {
		char ***n = realloc(d->nss, (d->nr_nss + 1) * sizeof(*n));
		uint64_t *ni = realloc(d->ns_ino, (d->nr_nss + 1) * sizeof(*ni));

		if (n)
			d->nss = n;
		if (ni)
			d->ns_ino = ni;
		err = n && ni ? 0 : -ENOMEM;
	}
	if (err) {
		for (i = 0; i < d->hiers.n; i++)
			free(row[i]);
		free(row);
		return err;
	}
	d->nss[d->nr_nss] = row;
	d->ns_ino[d->nr_nss] = ino;
	*ret = ++d->nr_nss;
	return 0;
}

static struct cg_member *leader_of(struct cg_dump *d, pid_t vpid)
{
	unsigned int i;

	for (i = 0; i < d->nr_members; i++)
		if (d->members[i].pid == vpid)
			return &d->members[i];
	return NULL;
}

int cg_ns_read(const struct dump_ctx *ctx, struct cg_dump *d)
{
	uint64_t mine, ino;
	unsigned int i, j, ns;
	int err = ns_ino(0, 0, &mine);

	for (i = 0; !err && i < ctx->tree->nr_tasks; i++) {
		const struct seized_task *t = ctx->tree->tasks[i];
		struct cg_member *m = leader_of(d, pidns_vpid(t->pid));

		if (t->state == TASK_ZOMBIE || !m)
			continue;
		err = task_ns(t, mine, &ino);
		if (err || !ino)
			continue;
		err = add_ns(d, ino, t->pid, m->set, &ns);
		for (j = 0; !err && j < d->nr_members; j++)
			if (d->members[j].pid == m->pid)
				d->members[j].ns = ns;
	}
	/* parents come before their children in the tree */
	for (i = 0; !err && i < ctx->tree->nr_tasks; i++) {
		const struct seized_task *t = ctx->tree->tasks[i];
		struct cg_member *m = leader_of(d, pidns_vpid(t->pid)), *pm;

		pm = t->parent ? leader_of(d, pidns_vpid(t->parent->pid)) : NULL;
		if (m && pm && pm->ns && !m->ns) {
			pr_err("pid %d: in criu-like's cgroup namespace, its parent %d in one of "
			       "its own: not restored\n",
			       t->pid, t->parent->pid);
			err = -EOPNOTSUPP;
		}
	}
	return err;
}

int cg_ns_enter(const struct rst_cgroup *cg, pid_t pid, uint32_t ns, uint32_t parent_ns)
{
	int idx, err;

	if (!ns || ns == parent_ns)
		return 0;
	idx = cg_ns_idx(cg->e, ns);
	err = cg_enter_row(cg, cg->ns_fds + (size_t)idx * cg->hiers.n, NULL, pid,
			   "cgroup namespace's roots");
	if (!err && unshare(CLONE_NEWCGROUP)) {
		err = neg_errno();
		pr_perror("pid %d: unshare(CLONE_NEWCGROUP)", pid);
	}
	return err;
}
