// SPDX-License-Identifier: GPL-2.0
/*
 * The pure half of mount namespaces: which mount of a tree's mountinfo comes
 * back how (mnt_plan()), and in which order (mnt_restore_order()). A mount is
 *
 *   - the root: the one at "/" whose parent is not shown (the task's root is
 *     the root of a mount: after pivot_root, or a chroot into a bind mount);
 *   - external: named by --external mnt[MOUNTPOINT]:NAME, bound again from
 *     what --external mnt[NAME]:PATH gives at restore;
 *   - a bind mount of another mount of the list: the same filesystem
 *     (major:minor) whose root holds its root (a bind mount of a directory or
 *     a file of the container, or a second proc of the same pid namespace);
 *   - a new filesystem of a type criu-like creates (proc, sysfs, devpts,
 *     mqueue, cgroup, cgroup2, tmpfs, overlay, devtmpfs), when its whole root
 *     is mounted, or for cgroup and cgroup2, one cgroup of it (a container's
 *     cgroup namespace's root): made again, then cut to that cgroup.
 *
 * Anything else (a directory of the host bound in, a block device, autofs,
 * fuse, nfs...) is refused naming the mount point and its type.
 */
#define LOG_PREFIX "ns: mnt: "

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "log.h"
#include "mnt.h"
#include "util.h"

static const char *const new_types[] = {
	"proc", "sysfs", "devpts", "mqueue", "cgroup", "cgroup2", "tmpfs", "overlay", "devtmpfs",
};

/* Filesystems refused by name: their state is elsewhere (a daemon, a server). */
static const char *const refused_types[] = {
	"autofs", "fuse", "fuseblk", "nfs", "nfs4", "cifs", "smb3", "9p", "ceph",
};

bool mnt_fstype_cgroup(const char *fstype)
{
	return !strcmp(fstype, "cgroup") || !strcmp(fstype, "cgroup2");
}

bool mnt_fstype_new(const char *fstype)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(new_types); i++)
		if (!strcmp(fstype, new_types[i]))
			return true;
	return false;
}

/* --enable-fs: each argument FS[,FS...] or "all" (mnt_enable_fs()) */
static const char *const *enabled_fs;
static size_t n_enabled_fs;

void mnt_enable_fs(const char *const *args, size_t n)
{
	enabled_fs = args;
	n_enabled_fs = n;
}

bool mnt_fstype_enabled(const char *fstype)
{
	size_t i, len = strlen(fstype);

	for (i = 0; i < n_enabled_fs; i++) {
		const char *p = enabled_fs[i];

		while (*p) {
			size_t n = strcspn(p, ",");

			if ((n == 3 && !strncmp(p, "all", 3)) ||
			    (n == len && !strncmp(p, fstype, n)))
				return true;
			p += n + (p[n] == ',');
		}
	}
	return false;
}

static bool fstype_refused(const char *fstype)
{
	size_t i;

	if (!strncmp(fstype, "fuse.", 5))
		return true;
	for (i = 0; i < ARRAY_SIZE(refused_types); i++)
		if (!strcmp(fstype, refused_types[i]))
			return true;
	return false;
}

bool mnt_path_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (!strcmp(prefix, "/"))
		return path[0] == '/';
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

int mnt_external_split(const char *arg, const char **key, size_t *klen, const char **val)
{
	const char *end;

	if (strncmp(arg, "mnt[", 4))
		return -ENOENT;
	end = strstr(arg + 4, "]:");
	if (!end || end == arg + 4 || !end[2])
		return -EINVAL;
	*key = arg + 4;
	*klen = (size_t)(end - (arg + 4));
	*val = end + 2;
	return 0;
}

static int find(const struct mount_list *ml, int mnt_id)
{
	unsigned int i;

	for (i = 0; i < ml->nr; i++)
		if (ml->mnts[i].mnt_id == mnt_id)
			return (int)i;
	return -ENOENT;
}

static const char *find_external(const char *mp, const char *const *ext, size_t n_ext)
{
	size_t i, klen;
	const char *key, *val;

	for (i = 0; i < n_ext; i++)
		if (!mnt_external_split(ext[i], &key, &klen, &val) && strlen(mp) == klen &&
		    !strncmp(mp, key, klen))
			return val;
	return NULL;
}

/*
 * The mount @m is bound from: another of the same filesystem whose root holds
 * @m's, the widest (then the first); never an external one, nor one with the
 * same root that comes after @m (two mounts would be bound from each other).
 */
static int bind_source(const struct mount_list *ml, const struct mnt_plan_entry *plan, int mi)
{
	const struct mount_entry *m = &ml->mnts[mi];
	int i, best = -1;

	for (i = 0; i < (int)ml->nr; i++) {
		const struct mount_entry *s = &ml->mnts[i];

		if (i == mi || s->major != m->major || s->minor != m->minor ||
		    plan[i].how == MNT_HOW__MNT_EXTERNAL || !mnt_path_under(m->root, s->root))
			continue;
		if (!strcmp(s->root, m->root) && i > mi)
			continue;
		if (best < 0 || strlen(s->root) < strlen(ml->mnts[best].root))
			best = i;
	}
	return best;
}

static bool group_has_member(const struct mount_list *ml, int group)
{
	unsigned int i;

	for (i = 0; i < ml->nr; i++)
		if (ml->mnts[i].shared == group)
			return true;
	return false;
}

int mnt_plan(pid_t pid, const struct mount_list *ml, const char *const *ext, size_t n_ext,
	     struct mnt_plan_entry *plan)
{
	int root = -1, i, n = (int)ml->nr;
	size_t j, klen;

	/* every --external mnt[] names a mount point of the tree */
	for (j = 0; j < n_ext; j++) {
		const char *key, *val;
		int err = mnt_external_split(ext[j], &key, &klen, &val);

		if (err == -ENOENT)
			continue;
		for (i = 0; !err && i < n; i++)
			if (strlen(ml->mnts[i].mountpoint) == klen &&
			    !strncmp(ml->mnts[i].mountpoint, key, klen))
				break;
		if (err || i == n) {
			pr_err("--external %s: %s\n", ext[j],
			       err ? "not mnt[MOUNTPOINT]:NAME"
				   : "no mount of the tree's mount namespace is there");
			return -EINVAL;
		}
		if (!strcmp(ml->mnts[i].mountpoint, "/") && find(ml, ml->mnts[i].parent_id) < 0) {
			pr_err("--external %s: the root of the tree is given at restore by "
			       "--root\n",
			       ext[j]);
			return -EINVAL;
		}
	}
	for (i = 0; i < n; i++) {
		plan[i].how = 0;
		plan[i].bind_of = -1;
		plan[i].external = NULL;
		if (find(ml, ml->mnts[i].parent_id) >= 0)
			continue;
		if (root >= 0 || strcmp(ml->mnts[i].mountpoint, "/")) {
			pr_err("pid %d: mount %s (%s): its parent is not in its mount tree\n", pid,
			       ml->mnts[i].mountpoint, ml->mnts[i].fstype);
			return -EOPNOTSUPP;
		}
		root = i;
		plan[i].how = MNT_HOW__MNT_ROOT;
	}
	if (root < 0) {
		pr_err("pid %d: its root directory is not the root of a mount (a chroot into a "
		       "plain directory): its mount tree cannot be rebuilt; pivot_root, or chroot "
		       "into a bind mount\n",
		       pid);
		return -EOPNOTSUPP;
	}
	for (i = 0; i < n; i++)
		if (i != root)
			plan[i].external = find_external(ml->mnts[i].mountpoint, ext, n_ext);
	for (i = 0; i < n; i++)
		if (plan[i].external)
			plan[i].how = MNT_HOW__MNT_EXTERNAL;
	for (i = 0; i < n; i++) {
		const struct mount_entry *m = &ml->mnts[i];
		uint64_t attr;
		int src;

		if (m->master && !group_has_member(ml, m->master) &&
		    plan[i].how != MNT_HOW__MNT_EXTERNAL) {
			pr_err("pid %d: mount %s (%s): it is a slave of peer group %d, which is "
			       "outside its mount namespace: not restored\n",
			       pid, m->mountpoint, m->fstype, m->master);
			return -EOPNOTSUPP;
		}
		if (mnt_attr_parse(m->options, &attr)) {
			pr_err("pid %d: mount %s (%s): per-mount options \"%s\" not restored\n",
			       pid, m->mountpoint, m->fstype, m->options);
			return -EOPNOTSUPP;
		}
		if (plan[i].how)
			continue;
		if (fstype_refused(m->fstype)) {
			pr_err("pid %d: mount %s: %s filesystems are not supported (their state is "
			       "not in the kernel); name it with --external mnt[%s]:NAME\n",
			       pid, m->mountpoint, m->fstype, m->mountpoint);
			return -EOPNOTSUPP;
		}
		src = bind_source(ml, plan, i);
		if (src >= 0) {
			plan[i].how = MNT_HOW__MNT_BIND;
			plan[i].bind_of = src;
			continue;
		}
		/*
		 * a cgroup mount of one of its cgroups (a container's, in a cgroup
		 * namespace): mounted again and cut to that cgroup (cgroup/)
		 */
		if ((mnt_fstype_new(m->fstype) &&
		     (!strcmp(m->root, "/") || mnt_fstype_cgroup(m->fstype))) ||
		    (mnt_fstype_enabled(m->fstype) && !strcmp(m->root, "/"))) {
			plan[i].how = MNT_HOW__MNT_NEW;
			continue;
		}
		if (mnt_fstype_new(m->fstype))
			pr_err("pid %d: mount %s: a bind mount of %s inside a %s filesystem whose "
			       "root is not mounted in the tree: not restored\n",
			       pid, m->mountpoint, m->root, m->fstype);
		else if (!strcmp(m->root, "/") && !m->major)
			pr_err("pid %d: mount %s: a %s filesystem: made again (empty) only with "
			       "--enable-fs %s, or name it with --external mnt[%s]:NAME\n",
			       pid, m->mountpoint, m->fstype, m->fstype, m->mountpoint);
		else
			pr_err("pid %d: mount %s: a bind mount of %s of %s %s (%u:%u), which is "
			       "not inside the container's root: name it with --external "
			       "mnt[%s]:NAME\n",
			       pid, m->mountpoint, m->root, m->fstype, m->source, m->major,
			       m->minor, m->mountpoint);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int idx_of(MntEntry *const *e, size_t nr, uint32_t id)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (e[i]->mnt_id == id)
			return (int)i;
	return -ENOENT;
}

int mnt_restore_order(MntEntry *const *e, size_t nr, size_t *order)
{
	_cleanup_free_ bool *done = NULL;
	size_t n = 0, i;
	bool progress = true;

	done = calloc(nr ? nr : 1, sizeof(*done));
	if (!done)
		return -ENOMEM;
	while (n < nr && progress) {
		progress = false;
		for (i = 0; i < nr; i++) {
			int p = idx_of(e, nr, e[i]->parent_id);
			int s = e[i]->has_bind_of ? idx_of(e, nr, e[i]->bind_of) : -1;

			if (done[i])
				continue;
			if (e[i]->how != MNT_HOW__MNT_ROOT && (p < 0 || !done[p]))
				continue;
			if (e[i]->how == MNT_HOW__MNT_BIND && (s < 0 || !done[s]))
				continue;
			done[i] = true;
			order[n++] = i;
			progress = true;
		}
	}
	if (n < nr) {
		for (i = 0; i < nr && done[i]; i++)
			;
		pr_err("mount %s of the image: its parent or its source is missing, or they "
		       "depend on each other\n",
		       e[i]->mountpoint);
		return -EINVAL;
	}
	return 0;
}

/* The per-mount options of mountinfo as mount_setattr()'s attributes. */
static const struct {
	const char *name;
	uint64_t attr;
} mnt_attrs[] = {
	{ "ro", MOUNT_ATTR_RDONLY },
	{ "rw", 0 },
	{ "nosuid", MOUNT_ATTR_NOSUID },
	{ "nodev", MOUNT_ATTR_NODEV },
	{ "noexec", MOUNT_ATTR_NOEXEC },
	{ "noatime", MOUNT_ATTR_NOATIME },
	{ "relatime", MOUNT_ATTR_RELATIME },
	{ "nodiratime", MOUNT_ATTR_NODIRATIME },
	{ "nosymfollow", MOUNT_ATTR_NOSYMFOLLOW },
};

int mnt_attr_parse(const char *options, uint64_t *ret)
{
	const char *p = options;
	uint64_t attr = 0;
	bool atime = false;

	while (*p) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < ARRAY_SIZE(mnt_attrs); i++)
			if (strlen(mnt_attrs[i].name) == n && !strncmp(p, mnt_attrs[i].name, n))
				break;
		if (i == ARRAY_SIZE(mnt_attrs))
			return -EINVAL;
		attr |= mnt_attrs[i].attr;
		atime |= !strcmp(mnt_attrs[i].name, "noatime") ||
			 !strcmp(mnt_attrs[i].name, "relatime");
		p += n;
		if (*p == ',')
			p++;
	}
	/* no atime word: strictatime (MOUNT_ATTR_RELATIME is 0) */
	if (!atime)
		attr |= MOUNT_ATTR_STRICTATIME;
	*ret = attr;
	return 0;
}
