// SPDX-License-Identifier: GPL-2.0
/*
 * Mount namespaces (Documentation/namespaces.md, "Mount namespaces").
 *
 * Dump: the root's /proc/PID/mountinfo, every line in order, each mount
 * classified by mnt_plan() (mnt-plan.c): the root, a bind mount of another
 * mount of the tree, a new filesystem, or an --external one. A tmpfs's
 * contents are dumped by the tmpfs library (ns/tmpfs.c) when it is linked in;
 * without it only an empty tmpfs is dumped.
 *
 * Restore: the tree is rebuilt by a builder, a child of the controller in a
 * new mount namespace, with the new mount API: every mount made detached
 * (fsmount() of a new filesystem, open_tree(OPEN_TREE_CLONE) of its bind
 * source or of --root / --external), its per-mount flags set
 * (mount_setattr()), then attached on its parent through the parent's own
 * fd (move_mount()), so overmounts and the mounts under them come back in
 * place. Then pivot_root() into the root, the old root detached, the
 * propagation set (shared groups and masters through
 * MOVE_MOUNT_SET_GROUP). The builder holds the namespace until the
 * controller has its fd.
 *
 * The files of the tree are opened by the controller before the root exists
 * (restore-files.c): the controller joins the new namespace for that
 * (mnt_enter(): setns(), so every path of the images resolves in the
 * container's tree), forks the root in it (the root inherits the namespace:
 * no CLONE_NEWNS), and goes back to its own (mnt_leave()).
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "image.h"
#include "kind.h"
#include "log.h"
#include "tmpfs.h"
#include "mnt.h"
#include "options.h"
#include "util.h"

/* ---- dump ---------------------------------------------------------------------------------- */

static int send_fd(int sk, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char b = 0;
	struct iovec iov = { &b, 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sk, &mh, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sk)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char b;
	struct iovec iov = { &b, 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sk, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* How many mounts are stacked on mount @mi at its own mount point (overmounts). */
static int mounts_above(const struct mount_list *ml, int mi)
{
	int n = 0, cur = ml->mnts[mi].mnt_id;
	unsigned int i;

	for (i = 0; i < ml->nr; i++) {
		if (ml->mnts[i].parent_id != cur ||
		    strcmp(ml->mnts[i].mountpoint, ml->mnts[mi].mountpoint))
			continue;
		cur = ml->mnts[i].mnt_id;
		n++;
		i = (unsigned int)-1; /* look for the one on top of it */
	}
	return n;
}

/*
 * In a child inside @pid's mount namespace and root: a detached copy of
 * mount @m alone. One hidden under @above overmounts is reached in a private
 * copy of the namespace (made private first, so that nothing propagates back)
 * where those are unmounted.
 */
static int clone_in_child(pid_t pid, const struct mount_entry *m, int above, int sk)
{
	char path[64];
	struct statx stx;
	int ns, root, fd, tree, i;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ns < 0 || root < 0 || setns(ns, CLONE_NEWNS) || fchdir(root) || chroot("."))
		return -errno;
	if (above && (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)))
		return -errno;
	for (i = 0; i < above; i++)
		if (umount2(m->mountpoint, MNT_DETACH))
			return -errno;
	fd = open(m->mountpoint, O_PATH | O_CLOEXEC);
	if (fd < 0 || statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx))
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID) || (!above && stx.stx_mnt_id != (uint64_t)m->mnt_id))
		return -EBUSY; /* its path leads to another mount */
	tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0 || send_fd(sk, tree))
		return -errno;
	return 0;
}

/* A detached copy of mount @mi of @pid without its children (open_tree(OPEN_TREE_CLONE)). */
static int mnt_clone_of(pid_t pid, const struct mount_list *ml, int mi)
{
	const struct mount_entry *m = &ml->mnts[mi];
	int above = mounts_above(ml, mi);
	int sk[2], status, fd;
	pid_t child;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sk))
		return neg_errno();
	child = fork();
	if (child == 0) {
		close(sk[0]);
		_exit(-clone_in_child(pid, m, above, sk[1]) & 0xff);
	}
	close(sk[1]);
	if (child < 0) {
		close(sk[0]);
		return neg_errno();
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
		int err = WIFEXITED(status) && WEXITSTATUS(status) ? -WEXITSTATUS(status) : -EIO;

		close(sk[0]);
		if (err == -EBUSY)
			pr_err("pid %d: mount %s (%s) is hidden under another mount: its contents "
			       "cannot be read\n",
			       pid, m->mountpoint, m->fstype);
		else
			pr_errno(err, "pid %d: mount %s (%s): cannot reach it in its namespace",
				 pid, m->mountpoint, m->fstype);
		return err;
	}
	fd = recv_fd(sk[0]);
	close(sk[0]);
	return fd < 0 ? -EIO : fd;
}

static int tmpfs_dump_one(pid_t pid, const struct mount_list *ml, int mi, int dirfd, bool *has_data)
{
	_cleanup_close_ int tree = mnt_clone_of(pid, ml, mi);

	*has_data = false;
	if (tree < 0)
		return tree;
	*has_data = true;
	return tmpfs_dump(tree, dirfd, (uint32_t)ml->mnts[mi].mnt_id);
}

static void entry_fill(MntEntry *e, const struct mount_entry *m)
{
	e->mnt_id = (uint32_t)m->mnt_id;
	e->parent_id = (uint32_t)m->parent_id;
	e->major = m->major;
	e->minor = m->minor;
	e->root = m->root;
	e->mountpoint = m->mountpoint;
	e->options = m->options;
	e->has_shared = !!m->shared;
	e->shared = (uint32_t)m->shared;
	e->has_master = !!m->master;
	e->master = (uint32_t)m->master;
	e->has_unbindable = m->unbindable;
	e->unbindable = m->unbindable;
	e->fstype = m->fstype;
	e->source = m->source;
	e->super_options = m->super_options;
}

/* Whether @pid's namespace of kind @name ("pid", "ipc") is not the dumper's. */
static bool ns_not_ours(pid_t pid, const char *name)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, name);
	if (stat(path, &a))
		return false;
	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	return !stat(path, &b) && a.st_ino != b.st_ino;
}

/*
 * The restored root makes the container's proc (in a pid namespace of its
 * own) and mqueue (in an IPC namespace of its own) itself (mnt_restore()),
 * with what is mounted under them: a bind of one of them elsewhere is refused
 * at dump already.
 */
static int check_remade(pid_t pid, const struct mount_list *ml, const struct mnt_plan_entry *plan)
{
	bool own_pid = ns_not_ours(pid, "pid"), own_ipc = ns_not_ours(pid, "ipc");
	unsigned int i, j;

	for (i = 0; i < ml->nr; i++) {
		const struct mount_entry *m = &ml->mnts[i];
		bool proc = !strcmp(m->fstype, "proc");

		if (plan[i].how != MNT_HOW__MNT_NEW ||
		    !((own_pid && proc) || (own_ipc && !strcmp(m->fstype, "mqueue"))))
			continue;
		for (j = 0; j < ml->nr; j++) {
			unsigned int up = j, hops = 0;

			if (plan[j].bind_of != (int)i || j == i)
				continue;
			/* under the proc itself (runc's read-only /proc/bus...): the root makes it */
			while (up != i && hops++ < ml->nr) {
				unsigned int k;

				for (k = 0;
				     k < ml->nr && ml->mnts[k].mnt_id != ml->mnts[up].parent_id;
				     k++)
					;
				if (k == ml->nr)
					break;
				up = k;
			}
			if (up == i)
				continue;
			pr_err("pid %d: mount %s: a bind mount of the %s at %s, of the container's "
			       "own %s namespace: not restored yet\n",
			       pid, ml->mnts[j].mountpoint, m->fstype, m->mountpoint,
			       proc ? "pid" : "ipc");
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/*
 * The RPC's ext_mnt pairs (o->ext_mnt_optional): runc names every device
 * node and masked path it could have bound, mount or not, and CRIU ignores
 * the pairs that name no mount. Keep in @out those whose mount point is one
 * of @ml's (and every other --external), log the others.
 */
static size_t mnt_ext_used(const struct cr_options *o, const struct mount_list *ml,
			   const char **out)
{
	size_t n = 0, klen;
	unsigned int i;
	int j;

	for (j = 0; j < o->n_external; j++) {
		const char *key, *val;
		bool keep = !o->ext_mnt_optional ||
			    mnt_external_split(o->external[j], &key, &klen, &val);

		for (i = 0; !keep && i < ml->nr; i++)
			keep = strlen(ml->mnts[i].mountpoint) == klen &&
			       !strncmp(ml->mnts[i].mountpoint, key, klen);
		if (keep)
			out[n++] = o->external[j];
		else
			pr_info("ext_mnt %s: no mount there, not used (as CRIU)\n", o->external[j]);
	}
	out[n] = NULL;
	return n;
}

static int mnt_dump(pid_t pid, int dirfd, uint32_t id)
{
	_cleanup_free_ const char **ext = NULL;
	size_t n_ext = 0;
	const struct cr_options *o = ns_options();
	_cleanup_free_ struct mnt_plan_entry *plan = NULL;
	_cleanup_free_ MntEntry *ents = NULL;
	_cleanup_free_ MntEntry **ptrs = NULL;
	struct mount_list ml = { 0 };
	MntnsEntry ne = MNTNS_ENTRY__INIT;
	unsigned int i;
	int err;

	err = proc_parse_mountinfo(pid, &ml);
	if (err) {
		pr_errno(err, "pid %d: cannot read its mountinfo", pid);
		return err;
	}
	plan = calloc(ml.nr + 1, sizeof(*plan));
	ents = calloc(ml.nr + 1, sizeof(*ents));
	ptrs = calloc(ml.nr + 1, sizeof(*ptrs));
	if (o)
		ext = calloc(o->n_external + 1, sizeof(*ext));
	err = plan && ents && ptrs && (!o || ext) ? 0 : -ENOMEM;
	if (!err && o)
		n_ext = mnt_ext_used(o, &ml, ext);
	if (!err)
		err = mnt_plan(pid, &ml, ext, n_ext, plan);
	if (!err)
		err = check_remade(pid, &ml, plan);
	for (i = 0; !err && i < ml.nr; i++) {
		const struct mount_entry *m = &ml.mnts[i];
		MntEntry *e = &ents[i];
		char path[PATH_MAX + 32];
		struct stat st;

		mnt_entry__init(e);
		entry_fill(e, m);
		e->how = plan[i].how;
		if (plan[i].bind_of >= 0) {
			e->has_bind_of = true;
			e->bind_of = (uint32_t)ml.mnts[plan[i].bind_of].mnt_id;
		}
		e->external = (char *)plan[i].external;
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, m->mountpoint);
		if (stat(path, &st)) {
			err = neg_errno();
			pr_perror("pid %d: mount %s: cannot stat %s", pid, m->mountpoint, path);
			break;
		}
		e->has_is_dir = true;
		e->is_dir = S_ISDIR(st.st_mode);
		if (e->external && (m->shared || m->master))
			pr_warn("pid %d: external mount %s comes back private (it was %s%d)\n", pid,
				m->mountpoint, m->shared ? "shared:" : "master:",
				m->shared ? m->shared : m->master);
		if (!strcmp(m->fstype, "tmpfs") &&
		    (e->how == MNT_HOW__MNT_NEW || e->how == MNT_HOW__MNT_ROOT)) {
			bool data;

			err = tmpfs_dump_one(pid, &ml, (int)i, dirfd, &data);
			e->has_tmpfs_data = data;
			e->tmpfs_data = data;
		}
		pr_info("pid %d: mount %d %s (%s %s) how %d\n", pid, m->mnt_id, m->mountpoint,
			m->fstype, m->root, e->how);
		ptrs[i] = e;
	}
	if (!err) {
		ne.n_mounts = ml.nr;
		ne.mounts = ptrs;
		err = img_write_one(dirfd, CR_IMG_MNTNS, id, &ne.base);
	}
	mount_list_fini(&ml);
	return err;
}

/* ---- restore: the builder ------------------------------------------------------------------ */

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

/* A mount already done of peer group @g whose root holds @e's root (MOVE_MOUNT_SET_GROUP). */
static int peer_member(const MntnsEntry *ne, const bool *done, uint32_t g, const MntEntry *e)
{
	size_t i;

	for (i = 0; i < ne->n_mounts; i++)
		if (done[i] && ne->mounts[i]->shared == g &&
		    mnt_path_under(e->root, ne->mounts[i]->root))
			return (int)i;
	return -1;
}

/*
 * Peer groups and masters, once the tree is built: the first mount of each
 * group is made shared (a slave first if it has a master), the others join it
 * with MOVE_MOUNT_SET_GROUP; a slave joins a mount of its master's group and
 * is made a slave. Until their group is there, mounts wait for another pass.
 */
static int set_propagation(const MntnsEntry *ne, const int *fds, const bool *deferred)
{
	size_t n = ne->n_mounts, i, left = n;
	_cleanup_free_ bool *done = NULL;
	bool progress = true;
	int err;

	done = calloc(n + 1, sizeof(bool));
	if (!done)
		return -ENOMEM;
	for (i = 0; deferred && i < n; i++)
		if (deferred[i]) { /* private: mnt_load() checked it; the root makes them */
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
				peer = peer_member(ne, done, e->shared, e);
			if (e->master && peer < 0) {
				m = peer_member(ne, done, e->master, e);
				if (m < 0)
					continue; /* its master's group is not there yet */
			}
			if (peer >= 0) {
				err = set_group(fds[peer], fds[i], e);
			} else {
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
	int err = set_propagation(mr->ne, fds, mr->deferred);

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
	return set_propagation(ne, fds, mr->deferred);
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

static void mnt_fini(void *priv);

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
		if (mr->deferred[i] && (e->shared || e->master)) {
			pr_err("mount %s (%s): shared or slave, made in the container's own "
			       "namespace: its propagation is not restored yet\n",
			       e->mountpoint, e->fstype);
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
 * In the restored root, in its new pid and IPC namespaces and in the mount
 * namespace the builder made: the deferred mounts, parents first, attached
 * on their parent (a deferred one by its fd, another by its mount point).
 */
static int mnt_restore(const void *priv, int dirfd)
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
		/* the contents first: the mount or its superblock may be read-only */
		err = e->tmpfs_data ? tmpfs_restore(fd, dirfd, e->mnt_id) : 0;
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
		if (!err && e->unbindable)
			err = set_prop(fd, MS_UNBINDABLE, e);
		if (!err)
			pr_debug("mount %s (%s) made in the container's namespaces\n",
				 e->mountpoint, e->fstype);
	}
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

static int mnt_load(int dirfd, uint32_t id, void **priv)
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

/* ---- restore: the controller in the tree's namespace --------------------------------------- */

/* Whether the root makes a proc (mnt_restore()). */
static bool root_makes_proc(const struct mnt_restore *mr)
{
	size_t i;

	for (i = 0; mr->deferred && i < mr->ne->n_mounts; i++)
		if (mr->deferred[i] && !strcmp(mr->ne->mounts[i]->fstype, "proc"))
			return true;
	return false;
}

/* A proc of criu-like's pid namespace, detached: made here, where the kernel allows it. */
static int visible_proc(void)
{
	_cleanup_close_ int fs = fsopen("proc", FSOPEN_CLOEXEC);
	int mfd = -1;

	if (fs >= 0 && !fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		mfd = fsmount(fs, FSMOUNT_CLOEXEC,
			      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (mfd < 0)
		pr_perror("cannot make a proc for the tree's user namespace");
	return mfd < 0 ? neg_errno() : mfd;
}

static int mnt_enter(void *priv)
{
	struct mnt_restore *mr = priv;

	if (mr->user_mnt >= 0 && root_makes_proc(mr)) {
		mr->visible_proc = visible_proc();
		if (mr->visible_proc < 0)
			return mr->visible_proc;
	}
	mr->host_ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	mr->host_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	mr->host_cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (mr->host_ns < 0 || mr->host_root < 0 || mr->host_cwd < 0 ||
	    setns(mr->nsfd, CLONE_NEWNS)) {
		pr_perror("cannot enter the tree's mount namespace");
		return neg_errno();
	}
	/*
	 * Over its root, once the controller is in (setns() would take it for the
	 * root): the tasks forked from here keep the root under it.
	 */
	if (mr->visible_proc >= 0 &&
	    move_mount(mr->visible_proc, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH)) {
		pr_perror("cannot put a proc in the tree's mount namespace");
		return neg_errno();
	}
	return 0;
}

static void mnt_leave(void *priv)
{
	struct mnt_restore *mr = priv;

	if (mr->host_ns < 0)
		return;
	if (setns(mr->host_ns, CLONE_NEWNS) || fchdir(mr->host_root) || chroot(".") ||
	    fchdir(mr->host_cwd))
		pr_perror("cannot go back to criu-like's own mount namespace");
	close(mr->host_ns);
	close(mr->host_root);
	close(mr->host_cwd);
	mr->host_ns = mr->host_root = mr->host_cwd = -1;
}

static void mnt_fini(void *priv)
{
	struct mnt_restore *mr = priv;

	if (!mr)
		return;
	mnt_leave(mr);
	if (mr->nsfd >= 0)
		close(mr->nsfd);
	if (mr->user_mnt >= 0)
		close(mr->user_mnt);
	if (mr->visible_proc >= 0)
		close(mr->visible_proc);
	if (mr->ne)
		protobuf_c_message_free_unpacked(&mr->ne->base, NULL);
	free(mr->deferred);
	free(mr);
}

const struct ns_type mnt_ns_type = {
	.kind = NS_MNT,
	.clone_flag = 0, /* the root is forked inside the namespace the builder made */
	.dump = mnt_dump,
	.load = mnt_load,
	.restore = mnt_restore,
	.enter = mnt_enter,
	.leave = mnt_leave,
	.fini = mnt_fini,
};
