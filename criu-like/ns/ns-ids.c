// SPDX-License-Identifier: GPL-2.0
/*
 * A thread's namespaces as the inode numbers of its /proc/PID/task/TID/ns/
 * links (include/ns.h), one thread or a whole tree's side by side: a
 * process's first live thread of every kind, the others only of those a
 * thread can hold apart (NS_THREAD_KINDS).
 */
#define LOG_PREFIX "ns: "

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "ns.h"
#include "seize.h"
#include "task-bpf.h"
#include "util.h"

/*
 * The inode number of the namespace link @name in @dir from its text,
 * "type:[INO]": readlink() costs half of a stat(), which follows the link
 * to the namespace's nsfs inode. 0, or -errno (errno set too).
 */
static int ns_link_ino(int dir, const char *name, uint64_t *ino)
{
	char buf[64], *p, *end;
	ssize_t n = readlinkat(dir, name, buf, sizeof(buf) - 1);

	if (n < 0)
		return neg_errno();
	buf[n] = 0;
	p = strstr(buf, ":[");
	if (!p) {
		errno = EINVAL;
		return -EINVAL;
	}
	errno = 0;
	*ino = strtoull(p + 2, &end, 10);
	if (errno || *end != ']') {
		errno = EINVAL;
		return -EINVAL;
	}
	return 0;
}

/*
 * The ns directory is opened once and each link read in it: a whole
 * /proc/PID/task/TID/ns/NAME path per link costs a walk through /proc each
 * time, and a dump checks every thread of the tree.
 */
int ns_ids_read(pid_t pid, pid_t tid, struct ns_ids *ret)
{
	return ns_ids_read_kinds(pid, tid, (1U << NS_NR) - 1, ret);
}

int ns_ids_read_kinds(pid_t pid, pid_t tid, unsigned int kinds, struct ns_ids *ret)
{
	_cleanup_close_ int dir = -1;
	char path[96];
	int k;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/ns", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns");
	dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		if (tid && (errno == ENOENT || errno == ESRCH))
			return -ESRCH;
		pr_perror("cannot open %s", path);
		return neg_errno();
	}
	for (k = 0; k < NS_NR; k++) {
		ret->ino[k] = 0;
		if (!(kinds & (1U << k)) || !ns_link_ino(dir, ns_kind_name(k), &ret->ino[k]))
			continue;
		if (errno == ENOENT && !tid)
			continue; /* a kind this kernel lacks (time: 5.6) */
		if (errno == ENOENT) {
			char task[64];

			snprintf(task, sizeof(task), "/proc/%d/task/%d", pid, tid);
			if (access(task, F_OK))
				return -ESRCH;
			/*
			 * No link: pid_for_children (or time_for_children) of a task that
			 * unshared a new namespace and forked no child yet; 0 never
			 * matches criu-like's own.
			 */
			continue;
		}
		if (errno == ESRCH)
			return -ESRCH;
		pr_perror("cannot stat %s/%s", path, ns_kind_name(k));
		return neg_errno();
	}
	return 0;
}

struct ids_job {
	const pid_t *pids, *tids;
	const unsigned int *kinds;
	struct ns_ids *rets;
	int *errs;
	unsigned int n;
	atomic_uint next;
};

static void *ids_worker(void *arg)
{
	struct ids_job *j = arg;
	unsigned int i;

	while ((i = atomic_fetch_add(&j->next, 1)) < j->n)
		/* no kind: taken from another thread (ns_ids_read_tree()) */
		j->errs[i] = !j->kinds[i] ? 0
					  : ns_ids_read_kinds(j->pids[i], j->tids[i], j->kinds[i],
							      &j->rets[i]);
	return NULL;
}

/*
 * A thread read is an open and a readlink per kind, 9 to 12 syscalls: a
 * helper thread pays for its start past this many threads to read.
 */
#define IDS_PER_THREAD_MIN 64

void ns_ids_read_many(const pid_t *pids, const pid_t *tids, const unsigned int *kinds,
		      unsigned int n, struct ns_ids *rets, int *errs)
{
	struct ids_job j = {
		.pids = pids, .tids = tids, .kinds = kinds, .rets = rets, .errs = errs, .n = n
	};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t th[8];
	unsigned int nth = 0, want = cpus > 1 ? (unsigned int)cpus - 1 : 0, i, reads = 0;

	for (i = 0; i < n; i++)
		reads += kinds[i] != 0;
	want = min(min(want, (unsigned int)ARRAY_SIZE(th)), reads / IDS_PER_THREAD_MIN);
	atomic_init(&j.next, 0);
	while (nth < want && !pthread_create(&th[nth], NULL, ids_worker, &j))
		nth++;
	ids_worker(&j);
	while (nth)
		pthread_join(th[--nth], NULL);
}

bool ns_ids_full(const struct seized_task *t, unsigned int j)
{
	return j == 0 || (j == 1 && !t->threads[0].seized);
}

/* The index of @t's first thread, the one read of every kind (ns_ids_full()). */
static unsigned int first_thread(const struct seized_task *t)
{
	return t->nr_threads > 1 && !t->threads[0].seized ? 1 : 0;
}

int ns_ids_read_tree(const struct pstree *tree, const struct proc_threads *thr,
		     struct ns_ids **ret_ids, int **ret_errs)
{
	unsigned int i, j, n = 0, f;
	_cleanup_free_ pid_t *pids = NULL, *tids = NULL;
	_cleanup_free_ unsigned int *kinds = NULL, *from = NULL;

	for (i = 0; i < tree->nr_tasks; i++)
		n += tree->tasks[i]->state == TASK_ZOMBIE ? 0 : tree->tasks[i]->nr_threads;
	pids = calloc(n + 1, sizeof(*pids));
	tids = calloc(n + 1, sizeof(*tids));
	kinds = calloc(n + 1, sizeof(*kinds));
	from = calloc(n + 1, sizeof(*from));
	*ret_ids = calloc(n + 1, sizeof(**ret_ids));
	*ret_errs = calloc(n + 1, sizeof(**ret_errs));
	if (!pids || !tids || !kinds || !from || !*ret_ids || !*ret_errs)
		return -ENOMEM;
	for (i = 0, n = 0; i < tree->nr_tasks; i++) {
		const struct seized_task *t = tree->tasks[i];

		for (j = 0, f = n + first_thread(t); t->state != TASK_ZOMBIE && j < t->nr_threads;
		     j++, n++) {
			pids[n] = t->pid;
			tids[n] = t->threads[j].tid;
			kinds[n] = ns_ids_full(t, j) ? (1U << NS_NR) - 1 : NS_THREAD_KINDS;
			/* the first thread's nsproxy: its namespaces (from[n] is f + 1) */
			if (!ns_ids_full(t, j) && thr &&
			    threads_same(&thr[i], tids[f], tids[n], THR_NSPROXY)) {
				kinds[n] = 0;
				from[n] = f + 1;
			}
		}
	}
	ns_ids_read_many(pids, tids, kinds, n, *ret_ids, *ret_errs);
	for (i = 0; i < n; i++)
		if (from[i]) {
			(*ret_ids)[i] = (*ret_ids)[from[i] - 1];
			(*ret_errs)[i] = (*ret_errs)[from[i] - 1];
		}
	return 0;
}

int ns_ids_from_first(const struct seized_task *t, pid_t tid, const struct ns_ids *first,
		      struct ns_ids *task)
{
	task->ino[NS_PID] = first->ino[NS_PID];
	task->ino[NS_USER] = first->ino[NS_USER];
	task->ino[NS_TIME] = first->ino[NS_TIME];
	if (task->ino[NS_CGROUP] == first->ino[NS_CGROUP])
		return 0;
	pr_err("pid %d: thread %d is in cgroup namespace cgroup:[%llu], the process in "
	       "cgroup:[%llu]: threads in different cgroup namespaces are not restored\n",
	       t->pid, tid, (unsigned long long)task->ino[NS_CGROUP],
	       (unsigned long long)first->ino[NS_CGROUP]);
	return -EOPNOTSUPP;
}
