// SPDX-License-Identifier: GPL-2.0
/*
 * Mount namespaces, the restore (Documentation/namespaces.md, "Mount
 * namespaces"; the dump and the kind's table are in mnt.c): the builder, a
 * child of the controller that rebuilds the tree's mounts in a new mount
 * namespace with the new mount API, the propagation it sets, the mounts the
 * root makes after its clone (its procs), and the controller's entry into
 * and exit from the namespace while it opens the tree's files.
 */
#define LOG_PREFIX "ns: mnt: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
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

		/* a read-only tmpfs is filled first, then made read-only (sb_ro_after()) */
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

/*
 * The ptys a bind mount of the tree names (runc's /dev/console: a bind of
 * pts/N of the container's devpts, N its terminal). The fresh devpts has
 * none: the builder makes pty N there by opening its ptmx until that index
 * comes, binds it, and the controller takes its master (ns_devpts_pty_take())
 * so that it lives on, for the restore of the terminal (files/chr.c).
 */
#define DEVPTS_PREMADE_MAX 8
#define DEVPTS_INDEX_MAX 64
static struct {
	unsigned int index;
	int fd;
} premade[DEVPTS_PREMADE_MAX];
static size_t n_premade;

static int devpts_make_pty(int dfd, const char *name, const MntEntry *e)
{
	int extra[DEVPTS_INDEX_MAX], n = 0, err = 0, unlock = 0;
	unsigned long want;
	unsigned int got;
	char *end;

	errno = 0;
	want = strtoul(name, &end, 10);
	if (!*name || *end || errno || !faccessat(dfd, name, F_OK, 0) || errno != ENOENT)
		return 0;
	if (want >= DEVPTS_INDEX_MAX || n_premade == DEVPTS_PREMADE_MAX) {
		pr_err("mount %s: a bind of pty %lu, which cannot be made again here\n",
		       e->mountpoint, want);
		return -EOPNOTSUPP;
	}
	for (;;) {
		int fd = openat(dfd, "ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);

		if (fd < 0 || ioctl(fd, TIOCGPTN, &got)) {
			err = neg_errno();
			pr_perror("mount %s: cannot make pty %lu again", e->mountpoint, want);
			if (fd >= 0)
				close(fd);
			break;
		}
		if (got == want) {
			ioctl(fd, TIOCSPTLCK, &unlock);
			premade[n_premade].index = got;
			premade[n_premade++].fd = fd;
			pr_info("mount %s: pty %u made again for it\n", e->mountpoint, got);
			break;
		}
		if (got > want || n == DEVPTS_INDEX_MAX) {
			close(fd);
			pr_err("mount %s: pty %lu is taken in the new devpts\n", e->mountpoint,
			       want);
			err = -EBUSY;
			break;
		}
		extra[n++] = fd;
	}
	while (n)
		close(extra[--n]);
	return err;
}

int ns_devpts_pty_take(unsigned int index)
{
	size_t i;
	int fd;

	for (i = 0; i < n_premade; i++) {
		if (premade[i].index != index)
			continue;
		fd = premade[i].fd;
		premade[i] = premade[--n_premade];
		return fd;
	}
	return -1;
}

/* In the controller: the builder @b's masters, its fds told through @rd, taken as ours. */
static int devpts_take_from(pid_t b, int rd)
{
	int pidfd, n = 0, i, err = 0;

	if (read(rd, &n, sizeof(n)) != sizeof(n) || n < 0 || n > DEVPTS_PREMADE_MAX)
		return -ECHILD;
	if (!n)
		return 0;
	pidfd = (int)syscall(__NR_pidfd_open, b, 0);
	if (pidfd < 0)
		return neg_errno();
	for (i = 0; i < n && !err; i++) {
		int pair[2], fd;

		if (read(rd, pair, sizeof(pair)) != sizeof(pair)) {
			err = -ECHILD;
			break;
		}
		fd = (int)syscall(__NR_pidfd_getfd, pidfd, pair[1], 0);
		if (fd < 0) {
			err = neg_errno();
			pr_perror("cannot take the master of pty %d from the mount builder",
				  pair[0]);
			break;
		}
		premade[n_premade].index = (unsigned int)pair[0];
		premade[n_premade++].fd = fd;
	}
	close(pidfd);
	return err;
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

static int make_mount(struct mnt_restore *mr, size_t i, int *fds, const char *staging)
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
			int err = devpts_make_pty(fds[j], rel_root(e, mr->ne->mounts[j]), e);

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

static int set_attrs(int fd, const MntEntry *e)
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
static int attach(int fd, const MntEntry *e, int pfd, const MntEntry *p)
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

static int find_idx(const MntnsEntry *ne, uint32_t id)
{
	size_t i;

	for (i = 0; i < ne->n_mounts; i++)
		if (ne->mounts[i]->mnt_id == id)
			return (int)i;
	return -1;
}

static int set_group(int from, int to, const MntEntry *e)
{
	if (move_mount(from, "", to, "",
		       MOVE_MOUNT_SET_GROUP | MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)) {
		pr_perror("mount %s: cannot join its peer group", e->mountpoint);
		return neg_errno();
	}
	return 0;
}

static int set_prop(int fd, uint64_t prop, const MntEntry *e)
{
	struct mount_attr a = { .propagation = prop };

	if (mount_setattr(fd, "", AT_EMPTY_PATH, &a, sizeof(a))) {
		pr_perror("mount %s: cannot set its propagation", e->mountpoint);
		return neg_errno();
	}
	return 0;
}

/*
 * A mount of peer group @g whose propagation is set and that has an fd here, its root holding
 * @e's root (MOVE_MOUNT_SET_GROUP wants a source at least as wide).
 */
static int peer_member(const MntnsEntry *ne, const int *fds, const bool *done, uint32_t g,
		       const MntEntry *e)
{
	size_t i;

	for (i = 0; i < ne->n_mounts; i++)
		if (done[i] && fds[i] >= 0 && ne->mounts[i]->shared == g &&
		    mnt_path_under(e->root, ne->mounts[i]->root))
			return (int)i;
	return -1;
}

/*
 * Peer groups and masters of the mounts @todo names (each with its fd in @fds), the others
 * being set already (by the builder, for the root) and serving as members of their groups
 * where they have an fd. Each is made private first: a mount attached under a shared one is
 * shared already, a clone of a shared one its peer. Then the first mount of each group is
 * made shared (a slave first if it has a master), the others join it with
 * MOVE_MOUNT_SET_GROUP; a slave joins a mount of its master's group and is made a slave.
 * Until their group is there, mounts wait for another pass.
 */
static int set_propagation(const MntnsEntry *ne, const int *fds, const bool *todo)
{
	size_t n = ne->n_mounts, i, left = n;
	_cleanup_free_ bool *done = NULL;
	bool progress = true;
	int err;

	done = calloc(n + 1, sizeof(bool));
	if (!done)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (!todo[i]) {
			done[i] = true;
			left--;
		}
	while (left && progress) {
		progress = false;
		for (i = 0; i < n; i++) {
			const MntEntry *e = ne->mounts[i];
			int peer = -1, m = -1;

			if (done[i])
				continue;
			if (e->shared)
				peer = peer_member(ne, fds, done, e->shared, e);
			if (e->master && peer < 0) {
				m = peer_member(ne, fds, done, e->master, e);
				if (m < 0)
					continue; /* its master's group is not there yet */
			}
			err = set_prop(fds[i], MS_PRIVATE, e);
			if (!err && peer >= 0) {
				err = set_group(fds[peer], fds[i], e);
			} else if (!err) {
				err = m >= 0 ? set_group(fds[m], fds[i], e) : 0;
				if (!err && m >= 0)
					err = set_prop(fds[i], MS_SLAVE, e);
				if (!err && e->shared)
					err = set_prop(fds[i], MS_SHARED, e);
			}
			if (!err && e->unbindable)
				err = set_prop(fds[i], MS_UNBINDABLE, e);
			if (err)
				return err;
			done[i] = true;
			left--;
			progress = true;
		}
	}
	for (i = 0; i < n; i++)
		if (!done[i]) {
			pr_err("mount %s: peer group %u of its master has no mount it can join\n",
			       ne->mounts[i]->mountpoint, ne->mounts[i]->master);
			return -EINVAL;
		}
	return 0;
}

/* The builder's share of set_propagation(): every mount but those the root makes. */
static int set_propagation_builder(const struct mnt_restore *mr, const int *fds)
{
	size_t n = mr->ne->n_mounts, i;
	_cleanup_free_ bool *todo = calloc(n + 1, sizeof(bool));

	if (!todo)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		todo[i] = !(mr->deferred && mr->deferred[i]);
	return set_propagation(mr->ne, fds, todo);
}

/* @e's superblock is read-only: make the new one @fd so, once its contents are in. */
static int sb_ro_after(int fd, const MntEntry *e)
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
		fd = make_mount(mr, i, fds, staging);
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
				err = sb_ro_after(fd, e);
		}
		if (!err)
			err = set_attrs(fd, e);
		if (!err && e->how == MNT_HOW__MNT_ROOT &&
		    move_mount(fd, "", AT_FDCWD, staging, MOVE_MOUNT_F_EMPTY_PATH)) {
			err = neg_errno();
			pr_perror("cannot mount the tree's root on %s", staging);
		} else if (!err && e->how != MNT_HOW__MNT_ROOT) {
			int p = find_idx(ne, e->parent_id);

			err = attach(fd, e, fds[p], ne->mounts[p]);
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
		/* the ptys made for bind mounts: their count, then index and fd of each */
		if (!err) {
			int k = (int)n_premade;
			size_t i;

			if (write(res[1], &k, sizeof(k)) != sizeof(k))
				_exit(1);
			for (i = 0; i < n_premade; i++) {
				int pair[2] = { (int)premade[i].index, premade[i].fd };

				if (write(res[1], pair, sizeof(pair)) != sizeof(pair))
					_exit(1);
			}
		}
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
		err = devpts_take_from(b, res[0]);
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

/*
 * Whether a mount at @e's mount point on its parent @p would propagate: another mount of the
 * image is a peer or a slave of @p's group, and its root holds that place of the filesystem.
 */
static bool group_propagates(const MntnsEntry *ne, size_t p, const MntEntry *e)
{
	const MntEntry *pe = ne->mounts[p];
	const char *rel = e->mountpoint +
			  (strcmp(pe->mountpoint, "/") ? strlen(pe->mountpoint) : 0);
	uint32_t g = pe->shared;
	char where[PATH_MAX];
	size_t j;

	snprintf(where, sizeof(where), "%s%s", strcmp(pe->root, "/") ? pe->root : "", rel);
	for (j = 0; g && j < ne->n_mounts; j++)
		if (j != p && (ne->mounts[j]->shared == g || ne->mounts[j]->master == g) &&
		    mnt_path_under(where, ne->mounts[j]->root))
			return true;
	return false;
}

/* Whether peer group @g has a mount the builder makes. */
static bool builder_group(const struct mnt_restore *mr, uint32_t g)
{
	size_t j;

	for (j = 0; j < mr->ne->n_mounts; j++)
		if (!mr->deferred[j] && mr->ne->mounts[j]->shared == g)
			return true;
	return false;
}

static bool made_by_root(const MntEntry *e, bool pid, bool ipc)
{
	return e->how == MNT_HOW__MNT_NEW &&
	       ((pid && !strcmp(e->fstype, "proc")) || (ipc && !strcmp(e->fstype, "mqueue")));
}

/*
 * Which mounts the root makes (mnt_restore()): a proc of the tree's own pid
 * namespace, an mqueue of its own IPC namespace, every mount under them. The
 * builder makes the others first; what would tie the two halves is refused.
 */
static int mark_deferred(struct mnt_restore *mr)
{
	const MntnsEntry *ne = mr->ne;
	bool pid = ns_restore_tree_own(NS_PID), ipc = ns_restore_tree_own(NS_IPC);
	size_t n = ne->n_mounts, i, k, any = 0;
	_cleanup_free_ size_t *order = NULL;
	int err;

	if (!pid && !ipc)
		return 0;
	order = calloc(n + 1, sizeof(size_t));
	mr->deferred = calloc(n + 1, sizeof(bool));
	if (!order || !mr->deferred)
		return -ENOMEM;
	err = mnt_restore_order(ne->mounts, n, order);
	if (err)
		return err;
	for (k = 0; k < n; k++) {
		const MntEntry *e = ne->mounts[order[k]];
		int p = e->how == MNT_HOW__MNT_ROOT ? -1 : find_idx(ne, e->parent_id);
		int src = e->how == MNT_HOW__MNT_BIND ? find_idx(ne, e->bind_of) : -1;
		bool under = p >= 0 && mr->deferred[p];

		i = order[k];
		mr->deferred[i] = under || made_by_root(e, pid, ipc);
		any += mr->deferred[i];
		/* the root binds what the builder made by its path; not the other way */
		if (src >= 0 && mr->deferred[src] && !mr->deferred[i]) {
			pr_err("mount %s: a bind of %s, %s the container's own %s: not supported "
			       "yet\n",
			       e->mountpoint, ne->mounts[src]->mountpoint,
			       mr->deferred[i] ? "under" : "outside", ne->mounts[src]->fstype);
			return -EOPNOTSUPP;
		}
		/*
		 * Attached under a mount of the builder's whose group has other mounts (or
		 * slaves) there, it would propagate to them when the root makes it: copies
		 * the image has already. (The root's own mounts are private until all are
		 * made: root_propagation().)
		 */
		if (mr->deferred[i] && p >= 0 && !mr->deferred[p] &&
		    group_propagates(ne, (size_t)p, e)) {
			pr_err("mount %s (%s): made in the container's own namespace under %s, "
			       "whose peer group %u has other mounts or slaves: not restored yet\n",
			       e->mountpoint, e->fstype, ne->mounts[p]->mountpoint,
			       ne->mounts[p]->shared);
			return -EOPNOTSUPP;
		}
	}
	/* a mount of the builder's waits for no peer group of the root's (set_propagation()) */
	for (i = 0; i < n; i++) {
		const MntEntry *e = ne->mounts[i];

		if (!mr->deferred[i] && e->master && !builder_group(mr, e->master)) {
			pr_err("mount %s (%s): a slave of peer group %u, whose mounts are all made "
			       "in the container's own namespace: not restored yet\n",
			       e->mountpoint, e->fstype, e->master);
			return -EOPNOTSUPP;
		}
	}
	if (!any) {
		free(mr->deferred);
		mr->deferred = NULL;
	}
	return 0;
}

/*
 * In a user namespace, a new proc can be made (fsmount()) only while another
 * proc is visible in the mount namespace: criu-like's, put over its root by
 * mnt_enter(). The root makes every proc of its own now, then removes that one.
 */
static int make_procs_first(struct mnt_restore *mr, int *fds)
{
	_cleanup_close_ int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t i;

	for (i = 0; i < mr->ne->n_mounts; i++) {
		const MntEntry *e = mr->ne->mounts[i];

		if (!mr->deferred[i] || e->how != MNT_HOW__MNT_NEW || strcmp(e->fstype, "proc"))
			continue;
		fds[i] = make_mount(mr, i, fds, NULL);
		if (fds[i] < 0)
			return fds[i];
	}
	if (cwd < 0 || fchdir(mr->visible_proc) || umount2(".", MNT_DETACH) || fchdir(cwd)) {
		pr_perror("cannot remove criu-like's proc from the tree's mount namespace");
		return neg_errno();
	}
	return 0;
}

/*
 * In the root, once it made its mounts: their peer groups and masters. A group
 * the builder's mounts are in is joined through one of them, opened by its
 * mount point (what is mounted there on top, the last one made).
 */
static int root_propagation(const struct mnt_restore *mr, int *fds)
{
	const MntnsEntry *ne = mr->ne;
	size_t n = ne->n_mounts, i, j;

	for (j = 0; j < n; j++) {
		const MntEntry *b = ne->mounts[j];
		bool wanted = false;

		if (mr->deferred[j] || !b->shared)
			continue;
		for (i = 0; i < n && !wanted; i++)
			wanted = mr->deferred[i] && (ne->mounts[i]->shared == b->shared ||
						     ne->mounts[i]->master == b->shared);
		if (!wanted || fds[j] >= 0)
			continue;
		fds[j] = open(b->mountpoint, O_PATH | O_CLOEXEC);
		if (fds[j] < 0) {
			pr_perror("mount %s: cannot open it to join its peer group %u",
				  b->mountpoint, b->shared);
			return neg_errno();
		}
	}
	return set_propagation(ne, fds, mr->deferred);
}

/*
 * In the restored root, in its new pid and IPC namespaces and in the mount
 * namespace the builder made: the deferred mounts, parents first, attached
 * on their parent (a deferred one by its fd, another by its mount point).
 */
int mnt_restore(const void *priv, int dirfd)
{
	const struct mnt_restore *mr = priv;
	const MntnsEntry *ne = mr->ne;
	size_t n = ne->n_mounts, i, k;
	_cleanup_free_ size_t *order = NULL;
	_cleanup_free_ int *fds = NULL;
	int err = 0;

	if (!mr->deferred)
		return 0;
	order = calloc(n + 1, sizeof(size_t));
	fds = calloc(n + 1, sizeof(int));
	if (!order || !fds)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		fds[i] = -1;
	err = mnt_restore_order(ne->mounts, n, order);
	if (!err && mr->visible_proc >= 0)
		err = make_procs_first((struct mnt_restore *)mr, fds);
	for (k = 0; !err && k < n; k++) {
		const MntEntry *e = ne->mounts[order[k]];
		int p, pfd, fd;

		i = order[k];
		if (!mr->deferred[i])
			continue;
		fd = fds[i] >= 0 ? fds[i] : make_mount((struct mnt_restore *)mr, i, fds, NULL);
		if (fd < 0) {
			err = fd;
			break;
		}
		fds[i] = fd;
		/*
		 * A clone of a shared mount is its peer: private until root_propagation(),
		 * so what is mounted on it later does not propagate to its source.
		 */
		err = set_prop(fd, MS_PRIVATE, e);
		/* the contents first: the mount or its superblock may be read-only */
		if (!err && e->tmpfs_data)
			err = tmpfs_restore(fd, dirfd, e->mnt_id);
		if (!err && e->tmpfs_data)
			err = sb_ro_after(fd, e);
		if (!err)
			err = set_attrs(fd, e);
		p = find_idx(ne, e->parent_id);
		if (!err && p >= 0 && mr->deferred[p]) {
			err = attach(fd, e, fds[p], ne->mounts[p]);
		} else if (!err && p >= 0) {
			pfd = open(ne->mounts[p]->mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (pfd < 0) {
				err = neg_errno();
				pr_perror("mount %s: cannot open its parent %s", e->mountpoint,
					  ne->mounts[p]->mountpoint);
			} else {
				err = attach(fd, e, pfd, ne->mounts[p]);
				close(pfd);
			}
		}
		if (!err)
			pr_debug("mount %s (%s) made in the container's namespaces\n",
				 e->mountpoint, e->fstype);
	}
	if (!err)
		err = root_propagation(mr, fds);
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return err;
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
	err = mark_deferred(mr);
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
