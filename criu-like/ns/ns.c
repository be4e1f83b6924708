// SPDX-License-Identifier: GPL-2.0
/*
 * Namespaces. None is dumped yet, so the only tree a dump may take is one
 * living entirely in criu-like's own namespaces: each thread's ten links
 * under /proc/PID/task/TID/ns/ are compared with /proc/self/ns/ (a thread
 * can be in a mount, UTS, IPC, net, cgroup or time namespace of its own
 * after unshare(2), and pid_for_children / time_for_children differ from
 * pid / time after an unshare that no fork followed yet). The inventory
 * records the dumper's namespaces and that the tree was in each, and the
 * restore refuses images that do not say so: a tree is never brought back
 * into other namespaces than it was dumped in without an option saying so.
 */
#define LOG_PREFIX "ns: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "ns.h"
#include "seize.h"
#include "util.h"

static const char *const ns_names[NS_NR] = {
	[NS_PID] = "pid",   [NS_PID_FOR_CHILDREN] = "pid_for_children",
	[NS_MNT] = "mnt",   [NS_NET] = "net",
	[NS_UTS] = "uts",   [NS_IPC] = "ipc",
	[NS_USER] = "user", [NS_CGROUP] = "cgroup",
	[NS_TIME] = "time", [NS_TIME_FOR_CHILDREN] = "time_for_children",
};

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

int ns_ids_read(pid_t pid, pid_t tid, struct ns_ids *ret)
{
	char path[96];
	struct stat st;
	int k;

	for (k = 0; k < NS_NR; k++) {
		if (tid)
			snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/%s", pid, tid,
				 ns_names[k]);
		else
			snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_names[k]);
		ret->ino[k] = 0;
		if (!stat(path, &st)) {
			ret->ino[k] = (uint64_t)st.st_ino;
			continue;
		}
		if (errno == ENOENT && !tid)
			continue; /* a kind this kernel lacks (time: 5.6) */
		if (errno == ENOENT) {
			char dir[64];

			snprintf(dir, sizeof(dir), "/proc/%d/task/%d", pid, tid);
			if (access(dir, F_OK))
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
		pr_perror("cannot stat %s", path);
		return neg_errno();
	}
	return 0;
}

enum ns_kind ns_ids_differ(const struct ns_ids *tool, const struct ns_ids *task)
{
	int k;

	for (k = 0; k < NS_NR; k++)
		if (tool->ino[k] && task->ino[k] != tool->ino[k])
			return (enum ns_kind)k;
	return NS_NR;
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
	if (tid == pid)
		snprintf(who, sizeof(who), "pid %d", pid);
	else
		snprintf(who, sizeof(who), "pid %d (thread %d)", pid, tid);
	pr_err("%s: its %s namespace %s is not criu-like's (%s): namespaces are not dumped yet, "
	       "so this tree cannot be restored as it is\n",
	       who, ns_names[k], theirs, mine);
	return -EOPNOTSUPP;
}

int ns_check_tree(const struct pstree *tree)
{
	struct ns_ids tool, task;
	unsigned int i, j;
	int err;

	err = ns_ids_read(getpid(), 0, &tool);
	if (err)
		return err;
	for (i = 0; i < tree->nr_tasks; i++) {
		const struct seized_task *t = tree->tasks[i];

		/* a zombie's namespaces are gone with its exit */
		if (t->state == TASK_ZOMBIE)
			continue;
		for (j = 0; j < t->nr_threads; j++) {
			pid_t tid = t->threads[j].tid;
			enum ns_kind k;

			err = ns_ids_read(t->pid, tid, &task);
			if (err == -ESRCH && !t->threads[j].seized)
				continue; /* a leader that exited before its threads */
			if (err)
				return err;
			k = ns_ids_differ(&tool, &task);
			if (k != NS_NR)
				return refuse(t->pid, tid, k, &tool, &task);
		}
	}
	return 0;
}

int ns_inventory_fill(InventoryEntry *ie, struct ns_inventory *buf)
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
		e->tree_in = true;
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
		if (!e->tree_in) {
			pr_err("image directory %s: the tree had a %s namespace of its own; "
			       "namespaces are not restored yet\n",
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
