/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_MNT_H
#define CRIU_LIKE_NS_MNT_H

/*
 * Mount namespaces (mnt.c, mnt-plan.c; Documentation/namespaces.md, "Mount
 * namespaces"). Not a public interface: the unit tests use the pure half.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc-parse.h"

#include "mnt.pb-c.h"

/* How each mount of a tree's mountinfo comes back (mnt-plan.c). */
struct mnt_plan_entry {
	MntHow how;
	int bind_of; /* index in the list of the mount it is bound from (MNT_BIND), else -1 */
	const char *external; /* its name (MNT_EXTERNAL), inside the --external argument */
};

/*
 * Pure: classify every mount of @ml (a task's mountinfo, parent before child)
 * into @plan (ml->nr entries) with the --external arguments @ext (@n_ext of
 * them, "mnt[MOUNTPOINT]:NAME"; the others are skipped). 0, or -EOPNOTSUPP
 * after logging, for @pid, which mount cannot be restored and why.
 */
int mnt_plan(pid_t pid, const struct mount_list *ml, const char *const *ext, size_t n_ext,
	     struct mnt_plan_entry *plan);

/*
 * Split "mnt[KEY]:VALUE" into its parts (pointers into @arg, @key's length in
 * *@klen). 0, -ENOENT when @arg is not an mnt[] argument, -EINVAL when malformed.
 */
int mnt_external_split(const char *arg, const char **key, size_t *klen, const char **val);

/* Whether criu-like creates a new filesystem of type @fstype at restore (proc, tmpfs...). */
bool mnt_fstype_new(const char *fstype);
/* cgroup or cgroup2: mounted again whatever cgroup is its root (cgroup/) */
bool mnt_fstype_cgroup(const char *fstype);

/* Whether @path is @prefix or below it ("/a" holds "/a" and "/a/b", not "/ab"). */
bool mnt_path_under(const char *path, const char *prefix);

/* The per-mount options of mountinfo ("rw,nosuid,relatime") as MOUNT_ATTR_*: 0 or -EINVAL. */
int mnt_attr_parse(const char *options, uint64_t *ret);

/* Pure: restore order: *@order gets the indices of @e (nr of them), each after its parent and
 * the mount it is bound from. 0, or -EINVAL (logged) for a cycle or a parent not in the list. */
int mnt_restore_order(MntEntry *const *e, size_t nr, size_t *order);

#endif
