/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_MNT_H
#define CRIU_LIKE_NS_MNT_H

/*
 * Mount namespaces (mnt.c, mnt-plan.c; the restore: mnt-build.c, mnt-root.c,
 * mnt-propagation.c, mnt-devpts.c; Documentation/namespaces.md, "Mount
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
/*
 * --enable-fs: mounts of these types (@args: @n arguments FS[,FS...] or "all", kept) are
 * made again at restore, empty, when their whole root is mounted. Until called again.
 */
void mnt_enable_fs(const char *const *args, size_t n);
/* Whether @fstype is among those mnt_enable_fs() named. */
bool mnt_fstype_enabled(const char *fstype);
/* cgroup or cgroup2: mounted again whatever cgroup is its root (cgroup/) */
bool mnt_fstype_cgroup(const char *fstype);

/* Whether @path is @prefix or below it ("/a" holds "/a" and "/a/b", not "/ab"). */
bool mnt_path_under(const char *path, const char *prefix);

/* The per-mount options of mountinfo ("rw,nosuid,relatime") as MOUNT_ATTR_*: 0 or -EINVAL. */
int mnt_attr_parse(const char *options, uint64_t *ret);

/* Pure: restore order: *@order gets the indices of @e (nr of them), each after its parent and
 * the mount it is bound from. 0, or -EINVAL (logged) for a cycle or a parent not in the list. */
int mnt_restore_order(MntEntry *const *e, size_t nr, size_t *order);

/* The restore's state of the tree's mount namespace (mnt-build.c, mnt-root.c, mnt.c). */
struct mnt_restore {
	MntnsEntry *ne;
	int nsfd; /* the namespace built, held by the controller */
	int host_ns, host_root, host_cwd; /* the controller's own, while it is inside; -1 */
	/*
	 * Made by the root after its clone, not by the builder: proc when the tree
	 * has a pid namespace of its own, mqueue when it has an IPC namespace (both
	 * take the namespace of the task that creates them), and the mounts under
	 * them. NULL when none is.
	 */
	bool *deferred;
	/*
	 * With a user namespace of the tree's own: the mount namespace made in it
	 * (ns_user_make()), which the builder moves the tree into; and a proc of
	 * criu-like's, over its root from mnt_enter() until the root made the
	 * container's procs (the kernel lets a proc be mounted in a user
	 * namespace only where one is visible already). -1 otherwise.
	 */
	int user_mnt, visible_proc;
};

/* The restore half of the kind (mnt.c's mnt_ns_type): mnt-build.c, mnt-root.c. */
int mnt_load(int dirfd, uint32_t id, void **priv);
int mnt_restore(const void *priv, int dirfd);
/* mnt.c: the controller's way in and out of the tree's namespace, and the end */
void mnt_leave(void *priv);
void mnt_fini(void *priv);

/* ---- between the files of the restore; each returns 0, an fd or -errno (logged) ---- */
/*
 * mnt-build.c: mount @i of @mr, made and detached: its fd. @fds: the fds of
 * those made before it by index (-1: made by the root, reached by its path).
 */
int mnt_make_mount(struct mnt_restore *mr, size_t i, int *fds, const char *staging);
/* The per-mount options of @e on @fd. */
int mnt_set_attrs(int fd, const MntEntry *e);
/* Attach @fd (mount @e) on its parent @pfd (mount @p) at @e's mount point. */
int mnt_attach(int fd, const MntEntry *e, int pfd, const MntEntry *p);
/* @e's superblock is read-only: make the new one @fd so, once its contents are in. */
int mnt_sb_ro_after(int fd, const MntEntry *e);
/* The index of mount @id in @ne, -ENOENT when it is not there. */
int mnt_find_idx(const MntnsEntry *ne, uint32_t id);

/* mnt-root.c: mr->deferred, the mounts the root makes (NULL: none). */
int mnt_mark_deferred(struct mnt_restore *mr);

/* mnt-propagation.c: propagation @prop (MS_SHARED...) of @fd, mount @e. */
int mnt_set_prop(int fd, uint64_t prop, const MntEntry *e);
/* The peer groups and masters of the mounts @wanted names, each with its fd in @fds. */
int mnt_set_propagation(const MntnsEntry *ne, const int *fds, const bool *wanted);

/*
 * mnt-devpts.c: in the builder, pty @name of the new devpts @dfd (a bind
 * mount @e of it names it) made again when it is missing; the ptys made, to
 * the controller through @wr; in the controller, those of builder @b read
 * from @rd, for ns_devpts_pty_take().
 */
int mnt_devpts_make_pty(int dfd, const char *name, const MntEntry *e);
int mnt_devpts_send(int wr);
int mnt_devpts_take_from(pid_t b, int rd);

#endif
