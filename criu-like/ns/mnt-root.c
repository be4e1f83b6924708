// SPDX-License-Identifier: GPL-2.0
/*
 * Mount namespaces, the restore (mnt-build.c): the mounts the root makes
 * after its clone, in the mount namespace the builder made: a proc of the
 * tree's own pid namespace, an mqueue of its own IPC namespace (both take
 * the namespace of the task that creates them), and every mount under them.
 */
#define LOG_PREFIX "ns: mnt: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "kind.h"
#include "log.h"
#include "mnt.h"
#include "tmpfs.h"
#include "util.h"

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
int mnt_mark_deferred(struct mnt_restore *mr)
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
		int p = e->how == MNT_HOW__MNT_ROOT ? -1 : mnt_find_idx(ne, e->parent_id);
		int src = e->how == MNT_HOW__MNT_BIND ? mnt_find_idx(ne, e->bind_of) : -1;
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
	/* a mount of the builder's waits for no peer group of the root's (mnt_set_propagation()) */
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
		fds[i] = mnt_make_mount(mr, i, fds, NULL);
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
	return mnt_set_propagation(ne, fds, mr->deferred);
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
		fd = fds[i] >= 0 ? fds[i] : mnt_make_mount((struct mnt_restore *)mr, i, fds, NULL);
		if (fd < 0) {
			err = fd;
			break;
		}
		fds[i] = fd;
		/*
		 * A clone of a shared mount is its peer: private until root_propagation(),
		 * so what is mounted on it later does not propagate to its source.
		 */
		err = mnt_set_prop(fd, MS_PRIVATE, e);
		/* the contents first: the mount or its superblock may be read-only */
		if (!err && e->tmpfs_data)
			err = tmpfs_restore(fd, dirfd, e->mnt_id);
		if (!err && e->tmpfs_data)
			err = mnt_sb_ro_after(fd, e);
		if (!err)
			err = mnt_set_attrs(fd, e);
		p = mnt_find_idx(ne, e->parent_id);
		if (!err && p >= 0 && mr->deferred[p]) {
			err = mnt_attach(fd, e, fds[p], ne->mounts[p]);
		} else if (!err && p >= 0) {
			pfd = open(ne->mounts[p]->mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (pfd < 0) {
				err = neg_errno();
				pr_perror("mount %s: cannot open its parent %s", e->mountpoint,
					  ne->mounts[p]->mountpoint);
			} else {
				err = mnt_attach(fd, e, pfd, ne->mounts[p]);
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
