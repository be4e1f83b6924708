// SPDX-License-Identifier: GPL-2.0
/*
 * Namespaces. A tree lives in criu-like's namespaces, or, for the kinds in
 * the table below, in namespaces of its own whose holder is the tree's root
 * (a container's): those are dumped (one image per namespace, written by
 * the kind's file) and created again for the restored root with clone3()'s
 * CLONE_NEW* flags. Every other case is refused at dump: each thread's ten
 * links under /proc/PID/task/TID/ns/ are compared (a thread can be in a
 * namespace of its own after unshare(2), and pid_for_children /
 * time_for_children differ from pid / time after an unshare that no fork
 * followed yet). The inventory records the dumper's namespaces, whether the
 * tree was in each, and the image of each the tree had of its own; the
 * restore refuses images that say anything else.
 */
#define LOG_PREFIX "ns: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kind.h"
#include "log.h"
#include "lsm.h"
#include "ns.h"
#include "options.h"
#include "restore.h"
#include "seize.h"
#include "util.h"

static const char *const ns_names[NS_NR] = {
	[NS_PID] = "pid",   [NS_PID_FOR_CHILDREN] = "pid_for_children",
	[NS_MNT] = "mnt",   [NS_NET] = "net",
	[NS_UTS] = "uts",   [NS_IPC] = "ipc",
	[NS_USER] = "user", [NS_CGROUP] = "cgroup",
	[NS_TIME] = "time", [NS_TIME_FOR_CHILDREN] = "time_for_children",
};

/* The kinds a tree may have of its own, one per line: each file holds both halves. */
/* clang-format off */
static const struct ns_type *const ns_types[NS_NR] = {
	[NS_PID] = &pid_ns_type,
	[NS_UTS] = &uts_ns_type,
	[NS_MNT] = &mnt_ns_type,
	[NS_NET] = &net_ns_type,
	[NS_IPC] = &ipc_ns_type,
	[NS_TIME] = &time_ns_type,
	[NS_USER] = &user_ns_type,
};
/* clang-format on */

static const struct cr_options *ns_opts;

/* --external net[INO]:KEY: a network namespace the caller owns (runc's extRootNetNS). */
static bool external_net_parse(const char *arg, uint64_t *ino, const char **key)
{
	unsigned long long n;
	char *end;

	if (strncmp(arg, "net[", 4) || arg[4] < '0' || arg[4] > '9')
		return false;
	errno = 0;
	n = strtoull(arg + 4, &end, 10);
	if (errno || strncmp(end, "]:", 2) || !end[2])
		return false;
	if (ino)
		*ino = n;
	if (key)
		*key = end + 2;
	return true;
}

int ns_set_options(const struct cr_options *o)
{
	int i;

	ns_opts = o;
	ns_net_reset();
	ns_user_reset();
	/* CRIU's other kinds (pid[], tty[], unix[], files...) are not there yet */
	for (i = 0; o && i < o->n_external; i++)
		if (!lsm_external(o->external[i]) &&
		    ((strncmp(o->external[i], "mnt[", 4) && strncmp(o->external[i], "veth[", 5) &&
		      strncmp(o->external[i], "macvlan[", 8)) ||
		     !strstr(o->external[i], "]:")) &&
		    !external_net_parse(o->external[i], NULL, NULL)) {
			pr_err("--external %s: only mnt[MOUNTPOINT]:NAME (dump), mnt[NAME]:PATH, "
			       "net[INO]:KEY (dump), veth[INSIDE]:OUTSIDE and "
			       "macvlan[INSIDE]:OUTSIDE "
			       "(restore) are "
			       "supported\n",
			       o->external[i]);
			return -EOPNOTSUPP;
		}
	if (o && o->join_ns_net && (!*o->join_ns_net || strchr(o->join_ns_net, ','))) {
		pr_err("--join-ns net:%s: not a pid or a path (no extra options for net)\n",
		       o->join_ns_net);
		return -EINVAL;
	}
	return 0;
}

/* The key of the first --external net[INO]:KEY, its inode in *@ino, or NULL. */
static const char *external_net(uint64_t *ino)
{
	const char *key;
	int i;

	for (i = 0; ns_opts && i < ns_opts->n_external; i++)
		if (external_net_parse(ns_opts->external[i], ino, &key))
			return key;
	return NULL;
}

/* The first --external mnt[...] given, or NULL. */
static const char *external_mnt(void)
{
	int i;

	for (i = 0; ns_opts && i < ns_opts->n_external; i++)
		if (!strncmp(ns_opts->external[i], "mnt[", 4))
			return ns_opts->external[i];
	return NULL;
}

const struct cr_options *ns_options(void)
{
	return ns_opts;
}

bool ns_kind_dumped(enum ns_kind k)
{
	return k < NS_NR && ns_types[k];
}

const char *ns_kind_name(enum ns_kind k)
{
	return k < NS_NR ? ns_names[k] : "?";
}

/* The link text the kernel shows for @k ("pid:[I]" for pid_for_children too). */
static void ns_link_text(enum ns_kind k, uint64_t ino, char *buf, size_t size)
{
	const char *type = ns_names[k];

	if (k == NS_PID_FOR_CHILDREN)
		type = "pid";
	else if (k == NS_TIME_FOR_CHILDREN)
		type = "time";
	snprintf(buf, size, "%s:[%llu]", type, (unsigned long long)ino);
}

enum ns_kind ns_ids_differ(const struct ns_ids *tool, const struct ns_ids *task)
{
	int k;

	for (k = 0; k < NS_NR; k++)
		if (tool->ino[k] && task->ino[k] != tool->ino[k])
			return (enum ns_kind)k;
	return NS_NR;
}

static void who_text(pid_t pid, pid_t tid, char *buf, size_t size)
{
	if (tid == pid)
		snprintf(buf, size, "pid %d", pid);
	else
		snprintf(buf, size, "pid %d (thread %d)", pid, tid);
}

static int refuse(pid_t pid, pid_t tid, enum ns_kind k, const struct ns_ids *tool,
		  const struct ns_ids *task)
{
	char mine[64], theirs[64], who[48];

	ns_link_text(k, tool->ino[k], mine, sizeof(mine));
	if (task->ino[k])
		ns_link_text(k, task->ino[k], theirs, sizeof(theirs));
	else
		snprintf(theirs, sizeof(theirs), "a new one (unshared, no child forked yet)");
	who_text(pid, tid, who, sizeof(who));
	pr_err("%s: its %s namespace %s is not criu-like's (%s): %s namespaces are not dumped "
	       "yet, so this tree cannot be restored as it is\n",
	       who, ns_names[k], theirs, mine, ns_names[k]);
	return -EOPNOTSUPP;
}

/* A task of the tree outside the namespace that the tree's root has of its own. */
static int refuse_not_root(pid_t pid, pid_t tid, enum ns_kind k, const struct ns_dump_plan *plan,
			   const struct ns_ids *task)
{
	char root[64], theirs[64], who[48];

	ns_link_text(k, plan->root.ino[k], root, sizeof(root));
	if (task->ino[k])
		ns_link_text(k, task->ino[k], theirs, sizeof(theirs));
	else
		snprintf(theirs, sizeof(theirs), "a new one (unshared, no child forked yet)");
	who_text(pid, tid, who, sizeof(who));
	pr_err("%s: its %s namespace %s is not the one of the tree's root (%s): a tree whose "
	       "tasks are in different %s namespaces is not dumped yet\n",
	       who, ns_names[k], theirs, root, ns_names[k]);
	return -EOPNOTSUPP;
}

/* The kind whose namespace decides whether @k is the tree's own. */
static enum ns_kind ns_owner_kind(enum ns_kind k)
{
	if (k == NS_PID_FOR_CHILDREN)
		return NS_PID;
	if (k == NS_TIME_FOR_CHILDREN)
		return NS_TIME;
	return k;
}

void ns_plan_root(struct ns_dump_plan *plan)
{
	int k;

	for (k = 0; k < NS_NR; k++) {
		enum ns_kind o = ns_owner_kind((enum ns_kind)k);

		plan->own[k] = plan->tool.ino[o] && plan->root.ino[o] != plan->tool.ino[o] &&
			       ns_kind_dumped(o);
	}
}

enum ns_kind ns_plan_differ(const struct ns_dump_plan *plan, const struct ns_ids *task)
{
	int k;

	for (k = 0; k < NS_NR; k++) {
		/* in the tree's own namespace, its children too (pid_for_children == pid) */
		uint64_t want = plan->own[k] ? plan->root.ino[ns_owner_kind((enum ns_kind)k)]
					     : plan->tool.ino[k];

		/*
		 * A container's task may be in a pid namespace nested inside the
		 * root's (ns/pid.c checks how, by NSpid); its children must be born
		 * in its own (no unshare without a fork yet).
		 */
		if (k == NS_PID && plan->own[k] && task->ino[k] &&
		    task->ino[k] != plan->tool.ino[k])
			continue;
		if (k == NS_PID_FOR_CHILDREN && plan->own[k])
			want = task->ino[NS_PID];
		/* cgroup namespaces, any task's: criu-like/cgroup/cgns.c */
		if (k == NS_CGROUP)
			continue;
		if (plan->tool.ino[k] && task->ino[k] != want)
			return (enum ns_kind)k;
	}
	return NS_NR;
}

enum ns_time_refusal ns_time_plan(struct ns_time_task *tasks, unsigned int n, uint64_t tree_time,
				  uint64_t tool_time, struct ns_time_children *out,
				  unsigned int *bad)
{
	unsigned int i, j;

	out->n = 0;
	for (i = 0; i < n; i++) {
		struct ns_time_task *t = &tasks[i];
		const struct ns_time_task *p = t->parent < 0 ? NULL : &tasks[t->parent];

		*bad = i;
		t->early = false;
		if (t->zombie)
			continue;
		/*
		 * born in its parent's time_for_children, or before the parent
		 * unshared it, in the parent's own; the root in the tree's
		 */
		if (!p ? t->time != tree_time : t->time != p->tfc && t->time != p->time)
			return NS_TIME_NOT_PARENTS;
		t->early = p && t->time != p->tfc;
		if (t->tfc == t->time)
			continue;
		if (t->tfc == tree_time || t->tfc == tool_time)
			return NS_TIME_TFC_KNOWN;
		for (j = 0; j < out->n; j++)
			if (out->ino[j] == t->tfc)
				return NS_TIME_TFC_SHARED;
		if (out->n == NS_TIME_CHILDREN_MAX)
			return NS_TIME_TOO_MANY;
		out->pid[out->n] = t->pid;
		out->ino[out->n++] = t->tfc;
	}
	return NS_TIME_OK;
}

bool ns_time_early(const struct ns_dump_plan *plan, unsigned int idx)
{
	return plan->tfc.early && plan->tfc.early[idx];
}

uint32_t ns_img_of(const pid_t *pids, unsigned int n, pid_t pid, uint32_t base)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (pids[i] == pid)
			return base + i;
	return 0;
}

int ns_tree_parent(const struct pstree *tree, unsigned int i)
{
	const struct seized_task *p = tree->tasks[i]->parent;
	unsigned int j;

	for (j = 0; p && j < i; j++)
		if (tree->tasks[j] == p)
			return (int)j;
	return -1;
}

uint32_t ns_time_children_img(const struct ns_dump_plan *plan, pid_t pid)
{
	return ns_img_of(plan->tfc.pid, plan->tfc.n, pid, NS_TIME_CHILDREN_IMG_BASE);
}

/* Time namespaces of the tree's tasks, checked with the tree's structure (ns_time_plan()). */
static int check_time(const struct pstree *tree, struct ns_dump_plan *plan,
		      const uint64_t (*ids)[2])
{
	struct ns_time_task *tt = calloc(tree->nr_tasks + 1, sizeof(*tt));
	uint64_t tree_time = plan->own[NS_TIME] ? plan->root.ino[NS_TIME] : plan->tool.ino[NS_TIME];
	enum ns_time_refusal r;
	unsigned int i, bad = 0;
	char a[64], b[64];

	if (!tt)
		return -ENOMEM;
	for (i = 0; i < tree->nr_tasks; i++) {
		const struct seized_task *t = tree->tasks[i];

		tt[i].pid = t->pid;
		tt[i].zombie = t->state == TASK_ZOMBIE;
		tt[i].time = ids[i][0];
		tt[i].tfc = ids[i][1];
		tt[i].parent = ns_tree_parent(tree, i);
	}
	r = ns_time_plan(tt, tree->nr_tasks, tree_time, plan->tool.ino[NS_TIME], &plan->tfc, &bad);
	if (r == NS_TIME_OK) {
		plan->tfc.early = calloc(tree->nr_tasks + 1, sizeof(bool));
		for (i = 0; plan->tfc.early && i < tree->nr_tasks; i++)
			plan->tfc.early[i] = tt[i].early;
		free(tt);
		return plan->tfc.early ? 0 : -ENOMEM;
	}
	ns_link_text(NS_TIME, tt[bad].time, a, sizeof(a));
	ns_link_text(NS_TIME, tt[bad].tfc, b, sizeof(b));
	if (r == NS_TIME_NOT_PARENTS)
		pr_err("pid %d: its time namespace %s is neither its parent's nor the one its "
		       "parent's children are born in: a task that joined another time namespace "
		       "is not dumped\n",
		       tt[bad].pid, a);
	else if (r == NS_TIME_TFC_KNOWN)
		pr_err("pid %d: its time_for_children %s is the tree's or criu-like's time "
		       "namespace, not its own (%s): not dumped\n",
		       tt[bad].pid, b, a);
	else if (r == NS_TIME_TFC_SHARED)
		pr_err("pid %d: its time_for_children %s is another task's time_for_children "
		       "too: not dumped\n",
		       tt[bad].pid, b);
	else
		pr_err("pid %d: more than %d tasks have a time_for_children of their own: not "
		       "dumped\n",
		       tt[bad].pid, NS_TIME_CHILDREN_MAX);
	free(tt);
	return -EOPNOTSUPP;
}

/*
 * A user namespace of the tree's own owns every other namespace of its own
 * (they are created from inside it at restore), and its pid namespace is
 * one of them: the restored tasks take their pids from inside it. Without
 * one, the tree's namespaces are criu-like's user namespace's.
 */
static int check_owners(pid_t pid, const struct ns_dump_plan *plan)
{
	uint64_t want = plan->own[NS_USER] ? plan->root.ino[NS_USER] : plan->tool.ino[NS_USER];
	int k, err;

	if (plan->own[NS_USER] && !plan->own[NS_PID]) {
		pr_err("pid %d: it is in a user namespace of its own, user:[%llu], but in "
		       "criu-like's pid namespace: its pids could not be set from inside; a user "
		       "namespace is dumped with a pid namespace of the tree's own only\n",
		       pid, (unsigned long long)plan->root.ino[NS_USER]);
		return -EOPNOTSUPP;
	}
	for (k = 0; k < NS_NR; k++) {
		if (!plan->own[k] || k == NS_USER || (int)ns_owner_kind((enum ns_kind)k) != k)
			continue;
		err = ns_user_check_owner(pid, ns_names[k], plan->root.ino[k], want);
		if (err)
			return err;
	}
	return 0;
}

/*
 * A namespace of kind @k (uts, ipc) that a task may have made nested in
 * the tree's: the same for every thread of @pid (thread @j, @tid), kept in
 * *@leader for ns_check_nested(), and taken as the tree's in @task for the
 * check of the other kinds.
 */
static int nested_thread(const struct ns_dump_plan *plan, enum ns_kind k, pid_t pid, pid_t tid,
			 unsigned int j, struct ns_ids *task, uint64_t *leader)
{
	if (!plan->tool.ino[k])
		return 0;
	if (j && task->ino[k] != *leader) {
		pr_err("pid %d (thread %d): its %s namespace %s:[%llu] is not its leader's "
		       "(%s:[%llu]): not dumped\n",
		       pid, tid, ns_names[k], ns_names[k], (unsigned long long)task->ino[k],
		       ns_names[k], (unsigned long long)*leader);
		return -EOPNOTSUPP;
	}
	*leader = task->ino[k];
	task->ino[k] = plan->own[k] ? plan->root.ino[k] : plan->tool.ino[k];
	return 0;
}

int ns_check_tree(const struct pstree *tree, const struct proc_threads *thr,
		  struct ns_dump_plan *plan)
{
	const struct seized_task *root = tree->root;
	_cleanup_free_ uint64_t(*times)[2] = NULL;
	_cleanup_free_ uint64_t *uts = NULL;
	_cleanup_free_ uint64_t *ipc = NULL;
	_cleanup_free_ struct ns_ids *all = NULL;
	_cleanup_free_ int *errs = NULL;
	const struct ns_ids *first;
	struct ns_ids task;
	unsigned int i, j, n;
	enum ns_kind k;
	int err;

	memset(plan, 0, sizeof(*plan));
	err = ns_ids_read(getpid(), 0, &plan->tool);
	if (!err)
		err = ns_ids_read(root->pid, root->pid, &plan->root);
	if (err)
		return err;
	times = calloc(tree->nr_tasks + 1, sizeof(*times));
	uts = calloc(tree->nr_tasks + 1, sizeof(*uts));
	ipc = calloc(tree->nr_tasks + 1, sizeof(*ipc));
	if (!times || !uts || !ipc)
		return -ENOMEM;
	ns_plan_root(plan);
	for (k = 0; k < NS_NR; k++)
		if (plan->own[k] && ns_owner_kind(k) == k)
			pr_info("pid %d: the tree has its own %s namespace %s:[%llu]\n", root->pid,
				ns_names[k], ns_names[k], (unsigned long long)plan->root.ino[k]);
	err = ns_ids_read_tree(tree, thr, &all, &errs);
	if (err)
		return err;
	for (i = 0, n = 0; i < tree->nr_tasks; i++) {
		const struct seized_task *t = tree->tasks[i];

		/* a zombie's namespaces are gone with its exit */
		if (t->state == TASK_ZOMBIE)
			continue;
		for (j = 0, first = NULL; j < t->nr_threads; j++, n++) {
			pid_t tid = t->threads[j].tid;

			task = all[n];
			err = errs[n];
			if (err == -ESRCH && !t->threads[j].seized)
				continue; /* a leader that exited before its threads */
			if (err)
				return err;
			if (ns_ids_full(t, j))
				first = &all[n];
			else if (first && (err = ns_ids_from_first(t, tid, first, &task)))
				return err;
			/*
			 * time and time_for_children: the same for every thread, then
			 * checked against the tree's structure (check_time())
			 */
			if (plan->tool.ino[NS_TIME]) {
				if (!times[i][0]) { /* its first thread read */
					times[i][0] = task.ino[NS_TIME];
					times[i][1] = task.ino[NS_TIME_FOR_CHILDREN];
				} else if (task.ino[NS_TIME] != times[i][0] ||
					   task.ino[NS_TIME_FOR_CHILDREN] != times[i][1]) {
					k = task.ino[NS_TIME] != times[i][0] ? NS_TIME
									     : NS_TIME_FOR_CHILDREN;
					pr_err("pid %d (thread %d): its %s namespace is not its "
					       "leader's: not dumped\n",
					       t->pid, tid, ns_names[k]);
					return -EOPNOTSUPP;
				}
				task.ino[NS_TIME] = plan->own[NS_TIME] ? plan->root.ino[NS_TIME]
								       : plan->tool.ino[NS_TIME];
				task.ino[NS_TIME_FOR_CHILDREN] =
					plan->own[NS_TIME_FOR_CHILDREN]
						? plan->root.ino[NS_TIME]
						: plan->tool.ino[NS_TIME_FOR_CHILDREN];
			}
			/* uts and ipc: checked against the tree (ns/nested.c) */
			err = nested_thread(plan, NS_UTS, t->pid, tid, j, &task, &uts[i]);
			if (!err)
				err = nested_thread(plan, NS_IPC, t->pid, tid, j, &task, &ipc[i]);
			if (err)
				return err;
			k = ns_plan_differ(plan, &task);
			if (k == NS_NR)
				continue;
			if (plan->own[k])
				return refuse_not_root(t->pid, tid, k, plan, &task);
			return refuse(t->pid, tid, k, &plan->tool, &task);
		}
	}
	if (plan->tool.ino[NS_TIME]) {
		err = check_time(tree, plan, (const uint64_t(*)[2])times);
		if (err)
			return err;
	}
	if (plan->tool.ino[NS_UTS]) {
		err = ns_check_nested(tree, plan, NS_UTS, uts, &plan->utsn);
		if (err)
			return err;
	}
	if (plan->tool.ino[NS_IPC]) {
		err = ns_check_nested(tree, plan, NS_IPC, ipc, &plan->ipcn);
		if (err)
			return err;
	}
	return check_owners(root->pid, plan);
}

/*
 * --external net[INO]:KEY names the tree's own network namespace: one its
 * caller made and keeps (runc, for a container whose config names a netns
 * path: podman's). It is not dumped, only recorded with KEY.
 */
static int plan_external_net(struct ns_dump_plan *plan, pid_t pid)
{
	uint64_t ino = 0;
	const char *key = external_net(&ino);

	if (!key)
		return 0;
	if (!plan->own[NS_NET] || plan->root.ino[NS_NET] != ino) {
		pr_err("--external net[%llu]:%s: pid %d: the tree's network namespace is "
		       "net:[%llu]%s, not that one\n",
		       (unsigned long long)ino, key, pid,
		       (unsigned long long)plan->root.ino[NS_NET],
		       plan->own[NS_NET] ? "" : " (criu-like's own)");
		return -EINVAL;
	}
	plan->ext_key[NS_NET] = key;
	pr_info("pid %d: its network namespace net:[%llu] is external (%s): not dumped\n", pid,
		(unsigned long long)ino, key);
	return 0;
}

int ns_dump_tree(struct ns_dump_plan *plan, pid_t pid, int dirfd)
{
	uint32_t next_id = 1;
	int k, err;

	if (external_mnt() && !plan->own[NS_MNT]) {
		pr_err("--external %s: pid %d: the tree has no mount namespace of its own\n",
		       external_mnt(), pid);
		return -EINVAL;
	}
	err = plan_external_net(plan, pid);
	if (err)
		return err;
	for (k = 0; k < NS_NR; k++) {
		if (plan->ext_key[k]) {
			err = ns_types[k]->dump_external(pid);
			if (err)
				return err;
			continue;
		}
		if (!plan->own[k] || !ns_types[k] || !ns_types[k]->dump)
			continue; /* pid: nothing to read, the restore makes a new one */
		plan->img_id[k] = next_id++;
		err = ns_types[k]->dump(pid, dirfd, plan->img_id[k]);
		if (err)
			return err;
	}
	for (k = 0; k < (int)plan->tfc.n; k++) {
		err = ns_time_children_dump(plan->tfc.pid[k], dirfd,
					    NS_TIME_CHILDREN_IMG_BASE + (uint32_t)k);
		if (err)
			return err;
	}
	err = ns_uts_dump_nested(plan, dirfd);
	return err ?: ns_ipc_dump_nested(plan, dirfd);
}

int ns_call_in(pid_t pid, enum ns_kind k, int (*fn)(void *buf, size_t size), void *buf, size_t size)
{
	struct {
		int err;
		char data[];
	} * sh;
	size_t len = sizeof(*sh) + size;
	char path[64];
	int status, fd, err;
	pid_t child;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns_names[k]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("cannot open %s", path);
		return neg_errno();
	}
	sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		close(fd);
		return -ENOMEM;
	}
	sh->err = -ECHILD;
	child = fork();
	if (child == 0) {
		if (setns(fd, 0)) {
			sh->err = neg_errno();
			_exit(1);
		}
		sh->err = fn(sh->data, size);
		_exit(0);
	}
	err = child < 0 ? neg_errno() : 0;
	close(fd);
	if (!err && waitpid(child, &status, 0) != child)
		err = neg_errno();
	if (!err)
		err = sh->err;
	if (!err)
		memcpy(buf, sh->data, size);
	else if (child > 0)
		pr_errno(err, "cannot work inside %s", path);
	munmap(sh, len);
	return err;
}

int ns_inventory_fill(InventoryEntry *ie, const struct ns_dump_plan *plan, struct ns_inventory *buf)
{
	struct ns_ids tool;
	size_t n = 0;
	int k, err;

	err = ns_ids_read(getpid(), 0, &tool);
	if (err)
		return err;
	for (k = 0; k < NS_NR; k++) {
		NamespaceEntry *e = &buf->e[n];

		if (!tool.ino[k])
			continue;
		namespace_entry__init(e);
		e->kind = (char *)ns_names[k];
		e->ino = tool.ino[k];
		e->tree_in = !plan || !plan->own[k];
		if (!e->tree_in) {
			e->has_tree_ino = true;
			e->tree_ino = plan->root.ino[k];
		}
		if (!e->tree_in && plan->ext_key[k])
			e->ext_key = (char *)plan->ext_key[k];
		if (!e->tree_in && plan->img_id[k]) {
			e->has_img_id = true;
			e->img_id = plan->img_id[k];
		}
		buf->p[n++] = e;
	}
	ie->n_namespaces = n;
	ie->namespaces = buf->p;
	return 0;
}

int ns_inventory_check(const InventoryEntry *ie, const char *dir)
{
	struct ns_ids tool;
	size_t i;
	int err;

	if (!ie->n_namespaces) {
		pr_err("image directory %s records no namespaces: it was written before criu-like "
		       "checked them, and its tree may have had namespaces of its own; dump it "
		       "again\n",
		       dir);
		return -EINVAL;
	}
	err = ns_ids_read(getpid(), 0, &tool);
	if (err)
		return err;
	for (i = 0; i < ie->n_namespaces; i++) {
		const NamespaceEntry *e = ie->namespaces[i];
		int k;

		for (k = 0; k < NS_NR && strcmp(e->kind, ns_names[k]); k++)
			;
		if (!e->tree_in && k < NS_NR && ns_kind_dumped(ns_owner_kind((enum ns_kind)k)) &&
		    (e->has_img_id || (int)ns_owner_kind((enum ns_kind)k) != k ||
		     !ns_types[k]->load || (e->ext_key && ns_types[k]->join)))
			continue; /* the tree's own, created again from its image */
		if (!e->tree_in) {
			pr_err("image directory %s: the tree had a %s namespace of its own, which "
			       "this criu-like does not restore\n",
			       dir, e->kind);
			return -EOPNOTSUPP;
		}
		/* same kind, another inode: another machine or boot, or a restore run elsewhere */
		if (k < NS_NR && tool.ino[k] && tool.ino[k] != e->ino)
			pr_info("the tree goes into criu-like's %s namespace %llu (the dump ran in "
				"%llu)\n",
				e->kind, (unsigned long long)tool.ino[k],
				(unsigned long long)e->ino);
	}
	return 0;
}

/* --join-ns KIND:... given for @k (only net can be joined) */
static const char *join_given(enum ns_kind k)
{
	return k == NS_NET && ns_opts ? ns_opts->join_ns_net : NULL;
}

/*
 * The tree's namespace @e of kind @k is joined, not made: the one --join-ns
 * names, else the caller's descriptor for its external key (runc passes the
 * container's new network namespace as --inherit-fd fd[N]:extRootNetNS).
 */
static int join_kind(const NamespaceEntry *e, enum ns_kind k, void **priv)
{
	const char *j = join_given(k);
	char path[PATH_MAX];
	int fd, err;

	if (!j) {
		fd = rst_inherited_fd(ns_opts, e->ext_key);
		if (fd < 0) {
			pr_err("the tree's %s namespace was external (%s) and is not restored: "
			       "give "
			       "one with --inherit-fd fd[N]:%s or --join-ns %s:PID|PATH\n",
			       ns_names[k], e->ext_key, e->ext_key, ns_names[k]);
			return -EINVAL;
		}
		pr_info("the tree joins the %s namespace of fd %d (%s)\n", ns_names[k], fd,
			e->ext_key);
		return ns_types[k]->join(fd, priv);
	}
	if (strspn(j, "0123456789") == strlen(j))
		snprintf(path, sizeof(path), "/proc/%s/ns/%s", j, ns_names[k]);
	else
		snprintf(path, sizeof(path), "%s", j);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("--join-ns %s:%s: cannot open %s", ns_names[k], j, path);
		return neg_errno();
	}
	pr_info("--join-ns %s:%s: the tree joins it%s\n", ns_names[k], j,
		e->ext_key ? "" : " (its dumped namespace is not restored)");
	err = ns_types[k]->join(fd, priv);
	close(fd);
	return err;
}

/*
 * --inherit-fd keys that are not pipes name external namespaces; --join-ns
 * replaces a namespace the tree had of its own. Anything else is refused.
 */
static int check_join_keys(const InventoryEntry *ie)
{
	const char *key;
	size_t i;
	int n, fd;

	if (ns_opts && ns_opts->join_ns_net && !ns_restore_tree_own(NS_NET)) {
		pr_err("--join-ns net:%s: the tree was dumped in criu-like's network namespace, "
		       "not one of its own: joining another is not supported by this version "
		       "yet\n",
		       ns_opts->join_ns_net);
		return -EOPNOTSUPP;
	}
	for (n = 0; ns_opts && n < ns_opts->n_inherit_fd; n++) {
		if (inherit_fd_parse(ns_opts->inherit_fd[n], &fd, &key) ||
		    !strncmp(key, "pipe:[", 6))
			continue;
		for (i = 0; i < ie->n_namespaces; i++)
			if (ie->namespaces[i]->ext_key && !strcmp(ie->namespaces[i]->ext_key, key))
				break;
		if (i == ie->n_namespaces) {
			pr_err("--inherit-fd %s: the images have no pipe or external namespace "
			       "with key '%s'\n",
			       ns_opts->inherit_fd[n], key);
			return -EINVAL;
		}
	}
	return 0;
}

/* The order of creation: the user namespace owns the others, the others are made in the net one. */
static int load_phase(enum ns_kind k)
{
	return k == NS_USER ? 0 : k == NS_NET ? 1 : 2;
}

static int load_kind(const InventoryEntry *ie, int dirfd, struct ns_restore *r, enum ns_kind want)
{
	size_t i;
	int k, err;

	for (i = 0; i < ie->n_namespaces; i++) {
		const NamespaceEntry *e = ie->namespaces[i];

		if (e->tree_in)
			continue;
		for (k = 0; k < NS_NR && strcmp(e->kind, ns_names[k]); k++)
			;
		if (k < NS_NR && (int)ns_owner_kind((enum ns_kind)k) != k)
			continue; /* pid_for_children: comes with pid */
		if (k == NS_NR || !ns_types[k] ||
		    (ns_types[k]->load && !e->has_img_id && !(e->ext_key && ns_types[k]->join)))
			return -EOPNOTSUPP; /* ns_inventory_check() said why */
		if (load_phase((enum ns_kind)k) != load_phase(want))
			continue;
		/*
		 * --empty-ns net: an empty one instead, below; not for a namespace
		 * that is joined (runc asks for empty_ns net on every restore, and
		 * for the external one of podman's containers, its fd too)
		 */
		if (k == NS_NET && ns_opts && ns_opts->empty_ns_net && !e->ext_key &&
		    !join_given(NS_NET))
			continue;
		if (ns_types[k]->join && (e->ext_key || join_given((enum ns_kind)k)))
			err = join_kind(e, (enum ns_kind)k, &r->priv[k]);
		else
			err = ns_types[k]->load ? ns_types[k]->load(dirfd, e->img_id, &r->priv[k])
						: 0;
		if (err)
			return err;
		r->own[k] = true;
		if (!(ns_types[k]->user_enters && ns_user_own()))
			r->clone_flags |= ns_types[k]->clone_flag;
	}
	return 0;
}

static const InventoryEntry *restore_ie;

bool ns_restore_tree_own(enum ns_kind k)
{
	size_t i;

	for (i = 0; restore_ie && i < restore_ie->n_namespaces; i++)
		if (!restore_ie->namespaces[i]->tree_in &&
		    !strcmp(restore_ie->namespaces[i]->kind, ns_names[k]))
			return true;
	return false;
}

int ns_restore_load(const InventoryEntry *ie, int dirfd, struct ns_restore *r)
{
	int err, saved = -1;

	memset(r, 0, sizeof(*r));
	restore_ie = ie;
	err = check_join_keys(ie);
	if (err)
		return err;
	/*
	 * The user namespace first: every other one is created from inside it
	 * (ns_user_make(), the root's clone3() from inside: ns/user.c). Then the
	 * network namespace: the other kinds are made inside it (the mount
	 * builder's sysfs shows the links of the namespace it is mounted in).
	 */
	err = load_kind(ie, dirfd, r, NS_USER);
	if (!err)
		err = load_kind(ie, dirfd, r, NS_NET);
	if (!err && ns_opts && ns_opts->empty_ns_net && !r->own[NS_NET]) {
		err = ns_net_load_empty(&r->priv[NS_NET]);
		r->own[NS_NET] = !err;
	}
	if (!err)
		err = ns_net_enter_tree(&saved);
	if (!err) {
		err = load_kind(ie, dirfd, r, NS_NR);
		ns_net_leave_tree(saved);
	}
	if (err)
		return err;
	if (ns_opts && (ns_opts->root || external_mnt()) && !r->own[NS_MNT]) {
		pr_err("%s: the tree was dumped without a mount namespace of its own\n",
		       ns_opts->root ? "--root" : "--external");
		return -EINVAL;
	}
	return 0;
}

int ns_restore_before_clone(const struct ns_restore *r)
{
	int k, err;

	for (k = 0; k < NS_NR; k++) {
		if (!r->own[k] || !ns_types[k]->before_clone)
			continue;
		err = ns_types[k]->before_clone(r->priv[k]);
		if (err) {
			ns_restore_after_clone(r);
			return err;
		}
	}
	return 0;
}

void ns_restore_after_clone(const struct ns_restore *r)
{
	int k;

	for (k = 0; k < NS_NR; k++)
		if (r->own[k] && ns_types[k]->after_clone)
			ns_types[k]->after_clone(r->priv[k]);
}

int ns_restore_root(const struct ns_restore *r, int dirfd)
{
	int k, err;

	for (k = 0; k < NS_NR; k++) {
		if (!r->own[k] || !ns_types[k]->restore)
			continue;
		err = ns_types[k]->restore(r->priv[k], dirfd);
		if (err)
			return err;
	}
	return 0;
}

int ns_restore_late(const struct ns_restore *r, int dirfd, pid_t root)
{
	int k, err;

	for (k = 0; k < NS_NR; k++) {
		if (!r->own[k] || !ns_types[k]->late)
			continue;
		err = ns_types[k]->late(r->priv[k], dirfd, root);
		if (err)
			return err;
	}
	return 0;
}

int ns_restore_enter(struct ns_restore *r)
{
	int k, err;

	for (k = 0; k < NS_NR; k++) {
		if (!r->own[k] || !ns_types[k]->enter)
			continue;
		err = ns_types[k]->enter(r->priv[k]);
		if (err)
			return err;
	}
	return 0;
}

void ns_restore_leave(struct ns_restore *r)
{
	int k;

	for (k = 0; k < NS_NR; k++)
		if (r->own[k] && ns_types[k]->leave)
			ns_types[k]->leave(r->priv[k]);
}

void ns_restore_fini(struct ns_restore *r)
{
	int k;

	for (k = 0; k < NS_NR; k++)
		if (r->own[k] && ns_types[k]->fini)
			ns_types[k]->fini(r->priv[k]);
	memset(r, 0, sizeof(*r));
}
