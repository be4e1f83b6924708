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
 * Restore (mnt-build.c): the tree is rebuilt by a builder, a child of the controller in a
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
	return sendmsg(sk, &mh, 0) == 1 ? 0 : neg_errno();
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
	ssize_t n;
	int fd;

	n = recvmsg(sk, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return neg_errno();
	if (n != 1)
		return -EIO;
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
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
	mnt_enable_fs(o ? o->enable_fs : NULL, o ? (size_t)o->n_enable_fs : 0);
	if (!err)
		err = mnt_plan(pid, &ml, ext, n_ext, plan);
	if (err == -EOPNOTSUPP && o && o->ext_mnt_auto)
		pr_err("pid %d: --ext-mount-map auto: criu-like finds no external mount by "
		       "itself; name each with --external mnt[MOUNTPOINT]:NAME\n",
		       pid);
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

void mnt_leave(void *priv)
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

bool ns_mnt_made_by_root(const struct ns_restore *r, uint64_t mnt_id)
{
	const struct mnt_restore *mr = r->own[NS_MNT] ? r->priv[NS_MNT] : NULL;
	int i;

	if (!mr || !mr->deferred || mnt_id > UINT32_MAX)
		return false;
	i = mnt_find_idx(mr->ne, (uint32_t)mnt_id);
	return i >= 0 && mr->deferred[i];
}

void mnt_fini(void *priv)
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
