// SPDX-License-Identifier: GPL-2.0
/*
 * Namespaces nested in the tree's (include/ns.h): UTS (ns/uts.c) and IPC
 * (ns/ipc.c). Which task made each one (unshare()), so that at restore it
 * makes it again, first thing, before its children are born in it; what
 * cannot be made again so (a namespace joined with setns(), or one a child
 * was left out of) is refused at dump, by name.
 */
#define LOG_PREFIX "ns: "

#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "ns.h"
#include "seize.h"
#include "util.h"

static bool nested_known(const struct ns_nested *out, uint64_t ino)
{
	for (unsigned int j = 0; j < out->n; j++)
		if (out->ino[j] == ino)
			return true;
	return false;
}

enum ns_nested_refusal ns_nested_plan(const struct ns_nested_task *tasks, unsigned int n,
				      uint64_t tree_ino, uint64_t tool_ino, struct ns_nested *out,
				      unsigned int *bad)
{
	unsigned int i;

	out->n = 0;
	for (i = 0; i < n; i++) {
		const struct ns_nested_task *t = &tasks[i];
		uint64_t born_in = t->parent < 0 ? tree_ino : tasks[t->parent].ino;

		*bad = i;
		if (t->zombie || t->ino == born_in)
			continue;
		if (t->ino == tree_ino || t->ino == tool_ino || nested_known(out, t->ino))
			return NS_NESTED_NOT_PARENTS;
		if (out->n == NS_NESTED_MAX)
			return NS_NESTED_TOO_MANY;
		out->pid[out->n] = t->pid;
		out->ino[out->n++] = t->ino;
	}
	return NS_NESTED_OK;
}

int ns_check_nested(const struct pstree *tree, struct ns_dump_plan *plan, enum ns_kind k,
		    const uint64_t *ino, struct ns_nested *out)
{
	uint64_t tree_ino = plan->own[k] ? plan->root.ino[k] : plan->tool.ino[k];
	uint64_t user = plan->own[NS_USER] ? plan->root.ino[NS_USER] : plan->tool.ino[NS_USER];
	_cleanup_free_ struct ns_nested_task *tt = calloc(tree->nr_tasks + 1, sizeof(*tt));
	const char *name = ns_kind_name(k);
	enum ns_nested_refusal r;
	unsigned int i, bad = 0;
	int err;

	if (!tt)
		return -ENOMEM;
	for (i = 0; i < tree->nr_tasks; i++) {
		const struct seized_task *t = tree->tasks[i];

		tt[i].pid = t->pid;
		tt[i].zombie = t->state == TASK_ZOMBIE;
		tt[i].ino = ino[i];
		tt[i].parent = ns_tree_parent(tree, i);
	}
	r = ns_nested_plan(tt, tree->nr_tasks, tree_ino, plan->tool.ino[k], out, &bad);
	if (r == NS_NESTED_NOT_PARENTS) {
		pr_err("pid %d: its %s namespace %s:[%llu] is not its parent's, nor one it made "
		       "(one joined with setns(), or left when its parent unshared another after "
		       "forking it): not dumped\n",
		       tt[bad].pid, name, name, (unsigned long long)tt[bad].ino);
		return -EOPNOTSUPP;
	}
	if (r == NS_NESTED_TOO_MANY) {
		pr_err("pid %d: more than %d %s namespaces nested in the tree's: not dumped\n",
		       tt[bad].pid, NS_NESTED_MAX, name);
		return -EOPNOTSUPP;
	}
	for (i = 0; i < out->n; i++) {
		pr_info("pid %d: made the %s namespace %s:[%llu], nested in the tree's\n",
			out->pid[i], name, name, (unsigned long long)out->ino[i]);
		err = user ? ns_user_check_owner(out->pid[i], name, out->ino[i], user) : 0;
		if (err)
			return err;
	}
	return 0;
}
