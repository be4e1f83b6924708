/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_H
#define CRIU_LIKE_NS_H

/*
 * Namespaces (criu-like/ns/). Until they are dumped, a tree must live in
 * criu-like's own namespaces, every kind of them: a task in any other is
 * refused at dump, and the restore refuses images that do not say so. A
 * tree is never restored into other namespaces than it was dumped in
 * without an option saying so (Documentation/namespaces.md).
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "inventory.pb-c.h"

struct pstree;

enum ns_kind {
	NS_PID,
	NS_PID_FOR_CHILDREN,
	NS_MNT,
	NS_NET,
	NS_UTS,
	NS_IPC,
	NS_USER,
	NS_CGROUP,
	NS_TIME,
	NS_TIME_FOR_CHILDREN,
	NS_NR
};

/* The name of @k in /proc/PID/ns/ ("pid_for_children", ...). */
const char *ns_kind_name(enum ns_kind k);

/* A thread's namespaces: the inode of each /proc/PID/task/TID/ns/ link, 0 when the kernel has none. */
struct ns_ids {
	uint64_t ino[NS_NR];
};

/*
 * The namespaces of thread @tid of @pid (criu-like's own for tid 0: /proc/self).
 * 0, -ESRCH when it is gone, or -errno (logged).
 */
int ns_ids_read(pid_t pid, pid_t tid, struct ns_ids *ret);
/*
 * Pure: the first kind where @task differs from @tool (a kind the kernel
 * lacks on either side is skipped), or NS_NR when they agree.
 */
enum ns_kind ns_ids_differ(const struct ns_ids *tool, const struct ns_ids *task);
/*
 * Every live thread of @tree in criu-like's namespaces: 0, or -EOPNOTSUPP
 * logged as "pid P (thread T): its uts namespace uts:[I] is not criu-like's
 * (uts:[J]): ...".
 */
int ns_check_tree(const struct pstree *tree);
/* The inventory's namespace records: criu-like's own, every kind, the tree in each. */
struct ns_inventory {
	NamespaceEntry e[NS_NR];
	NamespaceEntry *p[NS_NR];
};
/* Fill @buf from criu-like's namespaces and point @ie at it: 0 or -errno (logged). */
int ns_inventory_fill(InventoryEntry *ie, struct ns_inventory *buf);
/* At restore: 0 when the images say the tree lived in its dumper's namespaces, else -errno (logged). */
int ns_inventory_check(const InventoryEntry *ie, const char *dir);

#endif
