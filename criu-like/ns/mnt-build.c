// SPDX-License-Identifier: GPL-2.0
/*
 * Mount namespaces, the restore (Documentation/namespaces.md, "Mount
 * namespaces"; the dump and the kind's table are in mnt.c): the builder, a
 * child of the controller that rebuilds the tree's mounts in a new mount
 * namespace with the new mount API. The propagation it sets is in
 * mnt-propagation.c, the ptys of bind mounts of a devpts in mnt-devpts.c,
 * the mounts the root makes after its clone (its procs) in mnt-root.c.
 */
#define LOG_PREFIX "ns: mnt: "

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "compat.h"
#include "image.h"
#include "kind.h"
#include "log.h"
#include "tmpfs.h"
#include "mnt.h"
#include "options.h"
#include "util.h"

/* ---- restore: the builder ------------------------------------------------------------------ */

/* The --external mnt[NAME]:PATH given at restore for @name, or NULL. */
static const char *external_path(const char *name)
{
	const struct cr_options *o = ns_options();
	const char *key, *val;
	size_t klen;
	int i;

	for (i = 0; o && i < o->n_external; i++)
		if (!mnt_external_split(o->external[i], &key, &klen, &val) &&
		    strlen(name) == klen && !strncmp(key, name, klen))
			return val;
	return NULL;
}

/* Where the dumped root's filesystem is here: a mount of the same device holding its root. */
static int find_root_source(const MntEntry *e, char *buf, size_t size)
{
	struct mount_list ml = { 0 };
	const struct mount_entry *best = NULL;
	unsigned int i;
	int err = proc_parse_mountinfo(getpid(), &ml);

	if (err)
		return err;
	for (i = 0; i < ml.nr; i++) {
		const struct mount_entry *m = &ml.mnts[i];

		if (m->major == e->major && m->minor == e->minor &&
		    mnt_path_under(e->root, m->root) &&
		    (!best || strlen(m->root) > strlen(best->root)))
			best = m;
	}
	err = -ENOENT;
	if (best) {
		const char *rest = e->root + (strcmp(best->root, "/") ? strlen(best->root) : 0);

		snprintf(buf, size, "%s%s", strcmp(best->mountpoint, "/") ? best->mountpoint : "",
			 *rest ? rest : "/");
		err = 0;
	}
	mount_list_fini(&ml);
	return err;
}

/* Configure the new filesystem @fs for @e with its superblock options @opts (cut up). */
static int new_fs_config(int fs, const MntEntry *e, char *opts)
{
	char *tok, *save = NULL;

	if (fsconfig(fs, FSCONFIG_SET_STRING, "source", e->source, 0)) {
		pr_perror("mount %s: source \"%s\"", e->mountpoint, e->source);
		return neg_errno();
	}
	for (tok = strtok_r(opts, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		int r;

		/* a read-only tmpfs is filled first, then made read-only (mnt_sb_ro_after()) */
		if (!strcmp(tok, "rw") || (!strcmp(tok, "ro") && e->tmpfs_data))
			continue;
		if (eq) {
			*eq = '\0';
			r = fsconfig(fs, FSCONFIG_SET_STRING, tok, eq + 1, 0);
		} else {
			r = fsconfig(fs, FSCONFIG_SET_FLAG, tok, NULL, 0);
		}
		if (r) {
			pr_perror("mount %s (%s): option %s%s%s", e->mountpoint, e->fstype, tok,
				  eq ? "=" : "", eq ? eq + 1 : "");
			return neg_errno();
		}
	}
	return 0;
}

/*
 * A cgroup mount whose root is one cgroup (a container's in its cgroup
 * namespace): the hierarchy @mfd cut to that cgroup, where the restore put
 * it (cgroup/ made it before the builder runs).
 */
static int cgroup_subtree(const MntEntry *e, int mfd)
{
	char root[PATH_MAX];
	int fd = -1,
	    err = cgroup_mount_root(e->fstype, e->super_options, e->root, root, sizeof(root));

	if (!err) {
		fd = open_tree(mfd, root + 1, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		err = fd < 0 ? neg_errno() : 0;
		if (err)
			pr_errno(err, "mount %s: cgroup %s of its %s filesystem", e->mountpoint,
				 root, e->fstype);
	}
	close(mfd);
	return err ? err : fd;
}

/* A new filesystem for @e, detached: fsopen(), its superblock options, fsmount(). */
static int new_fs(const MntEntry *e)
{
	_cleanup_close_ int fs = -1;
	char *opts = strdup(e->super_options);
	int mfd, err;

	if (!opts)
		return -ENOMEM;
	fs = fsopen(e->fstype, FSOPEN_CLOEXEC);
	if (fs < 0) {
		pr_perror("mount %s: fsopen(%s)", e->mountpoint, e->fstype);
		free(opts);
		return neg_errno();
	}
	err = new_fs_config(fs, e, opts);
	free(opts);
	if (err)
		return err;
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0)) {
		pr_perror("mount %s: cannot create its %s filesystem", e->mountpoint, e->fstype);
		return neg_errno();
	}
	mfd = fsmount(fs, FSMOUNT_CLOEXEC, 0);
	if (mfd < 0)
		pr_perror("mount %s: fsmount(%s)", e->mountpoint, e->fstype);
	if (mfd >= 0 && mnt_fstype_cgroup(e->fstype) && strcmp(e->root, "/"))
		return cgroup_subtree(e, mfd);
	return mfd < 0 ? neg_errno() : mfd;
}

static int clone_path(int dfd, const char *path, const char *what, const MntEntry *e)
{
	int fd = open_tree(dfd, path,
			   OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (*path ? 0 : AT_EMPTY_PATH));

	if (fd < 0)
		pr_perror("mount %s: cannot bind %s %s", e->mountpoint, what, path);
	return fd < 0 ? neg_errno() : fd;
}

/* The path of @e's root relative to the root of @src (the mount it is bound from). */
static const char *rel_root(const MntEntry *e, const MntEntry *src)
{
	const char *r = e->root + (strcmp(src->root, "/") ? strlen(src->root) : 0);

	while (*r == '/')
		r++;
	return r;
}

int mnt_make_mount(struct mnt_restore *mr, size_t i, int *fds, const char *staging)
{
	const MntEntry *e = mr->ne->mounts[i];
	const struct cr_options *o = ns_options();
	char buf[PATH_MAX];
	size_t j;

	(void)staging;
	switch (e->how) {
	case MNT_HOW__MNT_ROOT:
		if (o && o->root)
			return clone_path(AT_FDCWD, o->root, "--root", e);
		if (mnt_fstype_new(e->fstype) && strcmp(e->fstype, "devtmpfs"))
			return new_fs(e);
		if (find_root_source(e, buf, sizeof(buf))) {
			pr_err("the root of the tree (%s of %u:%u, %s) is not mounted here: give "
			       "--root DIR\n",
			       e->root, e->major, e->minor, e->fstype);
			return -ENOENT;
		}
		return clone_path(AT_FDCWD, buf, "the tree's root", e);
	case MNT_HOW__MNT_NEW:
		return new_fs(e);
	case MNT_HOW__MNT_EXTERNAL: {
		const char *p = external_path(e->external);

		if (!p) {
			pr_err("mount %s: external mount %s not given: --external mnt[%s]:PATH\n",
			       e->mountpoint, e->external, e->external);
			return -ENOENT;
		}
		return clone_path(AT_FDCWD, p, "external", e);
	}
	case MNT_HOW__MNT_BIND:
		for (j = 0; j < mr->ne->n_mounts; j++)
			if (mr->ne->mounts[j]->mnt_id == e->bind_of)
				break;
		if (j < mr->ne->n_mounts && fds[j] < 0) {
			/* made by the root, from a mount the builder made: by its path here */
			char src[PATH_MAX];
			const char *rel = rel_root(e, mr->ne->mounts[j]);

			snprintf(src, sizeof(src), "%s%s%s", mr->ne->mounts[j]->mountpoint,
				 *rel && strcmp(mr->ne->mounts[j]->mountpoint, "/") ? "/" : "",
				 rel);
			return clone_path(AT_FDCWD, src, "its source", e);
		}
		if (j < mr->ne->n_mounts && !strcmp(mr->ne->mounts[j]->fstype, "devpts")) {
			int err = mnt_devpts_make_pty(fds[j], rel_root(e, mr->ne->mounts[j]), e);

			if (err)
				return err;
		}
		return clone_path(fds[j],
				  *rel_root(e, mr->ne->mounts[j]) ? rel_root(e, mr->ne->mounts[j])
								  : "",
				  "its source", e);
	default:
		pr_err("mount %s: unknown kind %d in the image\n", e->mountpoint, e->how);
		return -EINVAL;
	}
}

int mnt_set_attrs(int fd, const MntEntry *e)
{
	struct mount_attr a = { 0 };
	uint64_t attr;

	if (mnt_attr_parse(e->options, &attr)) {
		pr_err("mount %s: per-mount options \"%s\" not known\n", e->mountpoint, e->options);
		return -EINVAL;
	}
	a.attr_set = attr;
	a.attr_clr = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |
		     MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME | MOUNT_ATTR_NOSYMFOLLOW;
	if (mount_setattr(fd, "", AT_EMPTY_PATH, &a, sizeof(a))) {
		pr_perror("mount %s: cannot set \"%s\"", e->mountpoint, e->options);
		return neg_errno();
	}
	return 0;
}

/* Attach @fd (mount @e) on its parent @pfd (mount @p) at @e's mount point. */
int mnt_attach(int fd, const MntEntry *e, int pfd, const MntEntry *p)
{
	const char *rel = e->mountpoint + (strcmp(p->mountpoint, "/") ? strlen(p->mountpoint) : 0);
	struct stat st;

	while (*rel == '/')
		rel++;
	/* a mount point on a tmpfs made empty (no contents restored): created again */
	if (*rel && fstatat(pfd, rel, &st, 0) && errno == ENOENT && !strcmp(p->fstype, "tmpfs")) {
		int r = e->is_dir ? mkdirat(pfd, rel, 0755)
				  : close(openat(pfd, rel, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
						 0644));

		if (r)
			pr_perror("mount %s: cannot create its mount point", e->mountpoint);
	}
	if (move_mount(fd, "", pfd, rel,
		       MOVE_MOUNT_F_EMPTY_PATH | (*rel ? 0 : MOVE_MOUNT_T_EMPTY_PATH))) {
		pr_perror("mount %s: cannot attach it", e->mountpoint);
		return neg_errno();
	}
	return 0;
}

int mnt_find_idx(const MntnsEntry *ne, uint32_t id)
{
	size_t i;

	for (i = 0; i < ne->n_mounts; i++)
		if (ne->mounts[i]->mnt_id == id)
			return (int)i;
	return -ENOENT;
}

/* The builder's share of mnt_set_propagation(): every mount but those the root makes. */
static int set_propagation_builder(const struct mnt_restore *mr, const int *fds)
{
	size_t n = mr->ne->n_mounts, i;
	_cleanup_free_ bool *wanted = calloc(n + 1, sizeof(bool));

	if (!wanted)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		wanted[i] = !(mr->deferred && mr->deferred[i]);
	return mnt_set_propagation(mr->ne, fds, wanted);
}

/* @e's superblock is read-only: make the new one @fd so, once its contents are in. */
int mnt_sb_ro_after(int fd, const MntEntry *e)
{
	_cleanup_close_ int fs = -1;
	char *opts = strdup(e->super_options), *tok, *save = NULL;
	bool ro = false;

	if (!opts)
		return -ENOMEM;
	for (tok = strtok_r(opts, ",", &save); tok && !ro; tok = strtok_r(NULL, ",", &save))
		ro = !strcmp(tok, "ro");
	free(opts);
	if (!ro)
		return 0;
	fs = fspick(fd, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC);
	if (fs < 0 || fsconfig(fs, FSCONFIG_SET_FLAG, "ro", NULL, 0) ||
	    fsconfig(fs, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0)) {
		pr_perror("mount %s (%s): cannot make it read-only", e->mountpoint, e->fstype);
		return neg_errno();
	}
	return 0;
}

/*
 * With a user namespace: the tree, built in the builder's own namespace,
 * goes whole into the one made in the user namespace (a recursive clone
 * keeps the peer groups: the clones join them), the builder with it, and
 * pivot_root there. Unbindable mounts are not cloned: mnt_load() refused them.
 */
static int move_into_user_ns(struct mnt_restore *mr, const int *fds, size_t root,
			     const char *staging)
{
	_cleanup_close_ int t = -1;
	int err = set_propagation_builder(mr, fds);

	if (err)
		return err;
	t = open_tree(fds[root], "",
		      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
	if (t < 0 || setns(mr->user_mnt, CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    move_mount(t, "", AT_FDCWD, staging, MOVE_MOUNT_F_EMPTY_PATH) || fchdir(t) ||
	    syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) || chdir("/")) {
		pr_perror("cannot move the tree into a mount namespace of its user namespace");
		return neg_errno();
	}
	return 0;
}

static int build_tree(struct mnt_restore *mr, int dirfd, const char *staging, size_t *order,
		      int *fds)
{
	const MntnsEntry *ne = mr->ne;
	size_t n = ne->n_mounts, k;
	int err;

	err = mnt_restore_order(ne->mounts, n, order);
	if (err)
		return err;
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		pr_perror("cannot create a private mount namespace");
		return neg_errno();
	}
	for (k = 0; k < n; k++) {
		size_t i = order[k];
		const MntEntry *e = ne->mounts[i];
		int fd;

		fds[i] = -1;
		if (mr->deferred && mr->deferred[i])
			continue;
		fd = mnt_make_mount(mr, i, fds, staging);
		if (fd < 0)
			return fd;
		fds[i] = fd;
		err = 0;
		/* the contents first: the mount or its superblock may be read-only */
		if (e->tmpfs_data) {
			err = tmpfs_restore(fd, dirfd, e->mnt_id);
			if (err)
				pr_errno(err, "mount %s: cannot restore its tmpfs contents",
					 e->mountpoint);
			else
				err = mnt_sb_ro_after(fd, e);
		}
		if (!err)
			err = mnt_set_attrs(fd, e);
		if (!err && e->how == MNT_HOW__MNT_ROOT &&
		    move_mount(fd, "", AT_FDCWD, staging, MOVE_MOUNT_F_EMPTY_PATH)) {
			err = neg_errno();
			pr_perror("cannot mount the tree's root on %s", staging);
		} else if (!err && e->how != MNT_HOW__MNT_ROOT) {
			int p = mnt_find_idx(ne, e->parent_id);

			err = mnt_attach(fd, e, fds[p], ne->mounts[p]);
		}
		if (err)
			return err;
		pr_debug("mount %s (%s) done\n", e->mountpoint, e->fstype);
	}
	for (k = 0; k < n && ne->mounts[k]->how != MNT_HOW__MNT_ROOT; k++)
		;
	if (mr->user_mnt >= 0)
		return move_into_user_ns(mr, fds, k, staging);
	if (fchdir(fds[k]) || syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) ||
	    chdir("/")) {
		pr_perror("cannot pivot_root into the tree's root");
		return neg_errno();
	}
	return set_propagation_builder(mr, fds);
}

/* In the builder: the tree of @mr in a new mount namespace, pivot_root'ed into. */
static int build(struct mnt_restore *mr, int dirfd, const char *staging)
{
	size_t *order = calloc(mr->ne->n_mounts + 1, sizeof(size_t));
	int *fds = calloc(mr->ne->n_mounts + 1, sizeof(int));
	int err = order && fds ? build_tree(mr, dirfd, staging, order, fds) : -ENOMEM;

	free(order);
	free(fds);
	return err;
}

/*
 * Fork the builder: it makes the tree in a new mount namespace and waits;
 * its namespace is held by the fd returned. A failure is logged by the builder.
 */
static int build_ns(struct mnt_restore *mr, int dirfd)
{
	char staging[] = "/tmp/criu-like-root.XXXXXX";
	int res[2], hold[2], err = 0, status, nsfd = -1;
	char path[64];
	pid_t b;

	if (!mkdtemp(staging)) {
		pr_perror("cannot create a directory to build the mount tree in");
		return neg_errno();
	}
	if (pipe2(res, O_CLOEXEC) || pipe2(hold, O_CLOEXEC)) {
		rmdir(staging);
		return neg_errno();
	}
	b = fork();
	if (b == 0) {
		char c;

		close(res[0]);
		close(hold[1]);
		err = build(mr, dirfd, staging);
		if (write(res[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		/* the ptys made for bind mounts, for the controller */
		if (!err && mnt_devpts_send(res[1]))
			_exit(1);
		if (read(hold[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(res[1]);
	close(hold[0]);
	if (b < 0)
		err = neg_errno();
	else if (read(res[0], &err, sizeof(err)) != sizeof(err))
		err = -ECHILD;
	if (!err)
		err = mnt_devpts_take_from(b, res[0]);
	if (!err) {
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", b);
		nsfd = open(path, O_RDONLY | O_CLOEXEC);
		if (nsfd < 0)
			err = neg_errno();
	}
	close(res[0]);
	close(hold[1]);
	if (b > 0)
		waitpid(b, &status, 0);
	rmdir(staging);
	if (err) {
		pr_errno(err, "cannot rebuild the tree's mount namespace");
		return err;
	}
	return nsfd;
}

/* The tree has a user namespace: the mount namespace is made in it (move_into_user_ns()). */
static int prepare_user_ns(struct mnt_restore *mr, uint32_t id)
{
	size_t i;

	for (i = 0; i < mr->ne->n_mounts; i++)
		if (mr->ne->mounts[i]->unbindable) {
			pr_err("mntns-%u.img: mount %s is unbindable: not restored in a user "
			       "namespace yet\n",
			       id, mr->ne->mounts[i]->mountpoint);
			return -EOPNOTSUPP;
		}
	mr->user_mnt = ns_user_make(CLONE_NEWNS);
	return mr->user_mnt < 0 ? mr->user_mnt : 0;
}

int mnt_load(int dirfd, uint32_t id, void **priv)
{
	struct mnt_restore *mr = calloc(1, sizeof(*mr));
	size_t i, roots = 0;
	int err;

	if (!mr)
		return -ENOMEM;
	mr->nsfd = mr->host_ns = mr->host_root = mr->host_cwd = -1;
	mr->user_mnt = mr->visible_proc = -1;
	err = img_read_one(dirfd, CR_IMG_MNTNS, id, (ProtobufCMessage **)&mr->ne);
	if (err) {
		mnt_fini(mr);
		return err;
	}
	for (i = 0; i < mr->ne->n_mounts; i++) {
		const MntEntry *e = mr->ne->mounts[i];

		roots += e->how == MNT_HOW__MNT_ROOT;
		if (e->how == MNT_HOW__MNT_EXTERNAL && !e->external)
			roots = 2;
		if (e->mountpoint[0] != '/' || strstr(e->mountpoint, "/../") ||
		    strstr(e->root, "/../"))
			roots = 2;
	}
	if (roots != 1) {
		pr_err("mntns-%u.img: not one root, or a mount without its name or with a path "
		       "going up\n",
		       id);
		mnt_fini(mr);
		return -EINVAL;
	}
	err = mnt_mark_deferred(mr);
	if (!err && ns_user_own())
		err = prepare_user_ns(mr, id);
	if (!err)
		err = build_ns(mr, dirfd);
	if (err < 0) {
		mnt_fini(mr);
		return err;
	}
	mr->nsfd = err;
	*priv = mr;
	return 0;
}
