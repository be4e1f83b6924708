// SPDX-License-Identifier: GPL-2.0
/*
 * Mount namespaces, the restore (mnt-build.c): the propagation of the mounts
 * made again, their peer groups and masters, set by the builder for its
 * mounts and by the root for those it makes (mnt-root.c).
 */
#define LOG_PREFIX "ns: mnt: "

#include <errno.h>
#include <stdlib.h>
#include <sys/mount.h>

#include "compat.h"
#include "log.h"
#include "mnt.h"
#include "util.h"

static int set_group(int from, int to, const MntEntry *e)
{
	if (move_mount(from, "", to, "",
		       MOVE_MOUNT_SET_GROUP | MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)) {
		pr_perror("mount %s: cannot join its peer group", e->mountpoint);
		return neg_errno();
	}
	return 0;
}

int mnt_set_prop(int fd, uint64_t prop, const MntEntry *e)
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
 * @e's root (MOVE_MOUNT_SET_GROUP wants a source at least as wide): its index, -ENOENT when
 * there is none.
 */
static int peer_member(const MntnsEntry *ne, const int *fds, const bool *done, uint32_t g,
		       const MntEntry *e)
{
	size_t i;

	for (i = 0; i < ne->n_mounts; i++)
		if (done[i] && fds[i] >= 0 && ne->mounts[i]->shared == g &&
		    mnt_path_under(e->root, ne->mounts[i]->root))
			return (int)i;
	return -ENOENT;
}

/*
 * Peer groups and masters of the mounts @wanted names (each with its fd in @fds), the others
 * being set already (by the builder, for the root) and serving as members of their groups
 * where they have an fd. Each is made private first: a mount attached under a shared one is
 * shared already, a clone of a shared one its peer. Then the first mount of each group is
 * made shared (a slave first if it has a master), the others join it with
 * MOVE_MOUNT_SET_GROUP; a slave joins a mount of its master's group and is made a slave.
 * Until their group is there, mounts wait for another pass.
 */
int mnt_set_propagation(const MntnsEntry *ne, const int *fds, const bool *wanted)
{
	size_t n = ne->n_mounts, i, left = n;
	_cleanup_free_ bool *done = NULL;
	bool progress = true;
	int err;

	done = calloc(n + 1, sizeof(bool));
	if (!done)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (!wanted[i]) {
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
			err = mnt_set_prop(fds[i], MS_PRIVATE, e);
			if (!err && peer >= 0) {
				err = set_group(fds[peer], fds[i], e);
			} else if (!err) {
				err = m >= 0 ? set_group(fds[m], fds[i], e) : 0;
				if (!err && m >= 0)
					err = mnt_set_prop(fds[i], MS_SLAVE, e);
				if (!err && e->shared)
					err = mnt_set_prop(fds[i], MS_SHARED, e);
			}
			if (!err && e->unbindable)
				err = mnt_set_prop(fds[i], MS_UNBINDABLE, e);
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
