// SPDX-License-Identifier: GPL-2.0
/*
 * User namespaces. A container's user namespace, a child of criu-like's,
 * is dumped as its uid_map, gid_map, setgroups and owner; every other
 * namespace the tree has of its own must be owned by it (ns.c asks
 * ns_user_check_owner()).
 *
 * Restore: load() creates the namespace first, in a child of the
 * controller that takes the owner's uid and unshares it; the controller
 * writes setgroups (before gid_map: the kernel wants it so), uid_map and
 * gid_map, and keeps it by fd. Every other namespace is then created from
 * inside it, so that it owns them as it did: the network and mount
 * namespaces by a child that joins it and unshares them (ns_user_make()),
 * the pid, UTS and IPC namespaces by the root's clone3() from a process that
 * joined it (restore-fork.c, ns_user_join()). The controller itself stays in
 * criu-like's user namespace, where it keeps every capability over them.
 *
 * The creds images keep host ids; a task sets them inside, translated
 * through the maps (ns_user_id_inside()).
 */
#define LOG_PREFIX "ns: user: "

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "compat.h"
#include "image.h"
#include "kind.h"
#include "log.h"
#include "user-map.h"
#include "util.h"

#include "ns.pb-c.h"

struct user_ns {
	struct id_map uid, gid;
	bool setgroups_allow;
	uint32_t owner;
	int fd; /* at restore: the new namespace; -1 */
	/* at restore, set by ns_user_join(): the groups every task starts with (host gids) */
	uint32_t *groups;
	size_t n_groups;
};

/*
 * The tree's user namespace: at dump, its maps once user_dump() read them
 * (for the creds check); at restore, from load() to fini(). NULL without one.
 */
static struct user_ns *tree_user;

void ns_user_reset(void)
{
	tree_user = NULL;
}

bool ns_user_own(void)
{
	return tree_user != NULL;
}

/* ---- dump ------------------------------------------------------------------------------------ */

static uint64_t ino_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (uint64_t)st.st_ino;
}

/* The inode of the user namespace owning /proc/@pid/ns/@name (its parent for "user"), or 0. */
static uint64_t owner_ino(pid_t pid, const char *name, unsigned long req)
{
	char path[64];
	uint64_t ino = 0;
	int fd, ufd;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ufd = ioctl(fd, req);
	if (ufd >= 0) {
		ino = ino_of(ufd);
		close(ufd);
	}
	close(fd);
	return ino;
}

int ns_user_check_owner(pid_t pid, const char *name, uint64_t ns_ino, uint64_t want)
{
	uint64_t owner;

	owner = owner_ino(pid, name, NS_GET_USERNS);
	if (!owner) {
		pr_perror("pid %d: cannot find the owner of its %s namespace", pid, name);
		return -EIO;
	}
	if (owner == want)
		return 0;
	pr_err("pid %d: its %s namespace %s:[%llu] is owned by user namespace user:[%llu], not by "
	       "the tree's user:[%llu]: it could not be created again as it is\n",
	       pid, name, name, (unsigned long long)ns_ino, (unsigned long long)owner,
	       (unsigned long long)want);
	return -EOPNOTSUPP;
}

static int read_map(pid_t pid, const char *name, struct id_map *m)
{
	char path[64];
	_cleanup_free_ char *text = NULL;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	text = read_file_at(AT_FDCWD, path, NULL);
	if (!text) {
		err = neg_errno();
		pr_perror("pid %d: cannot read %s", pid, path);
		return err;
	}
	err = id_map_parse(text, m);
	if (err)
		pr_errno(err, "pid %d: cannot parse its %s", pid, name);
	else if (!m->nr)
		pr_warn("pid %d: its %s is empty: every id inside is unmapped\n", pid, name);
	return err;
}

static int read_setgroups(pid_t pid, bool *allow)
{
	char path[64];
	_cleanup_free_ char *text = NULL;

	snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
	text = read_file_at(AT_FDCWD, path, NULL);
	if (!text) {
		pr_perror("pid %d: cannot read %s", pid, path);
		return -EIO;
	}
	*allow = !strncmp(text, "allow", 5);
	return 0;
}

/* Its user namespace is a child of criu-like's: a deeper one would come back one level up. */
static int check_parent(pid_t pid)
{
	char path[64];
	uint64_t parent = owner_ino(pid, "user", NS_GET_PARENT), mine;
	struct stat st;

	snprintf(path, sizeof(path), "/proc/self/ns/user");
	mine = stat(path, &st) ? 0 : (uint64_t)st.st_ino;
	if (parent && parent == mine)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	pr_err("pid %d: its user namespace user:[%llu] is not a child of criu-like's user:[%llu] "
	       "(its parent: user:[%llu]): nested user namespaces are not dumped yet\n",
	       pid, (unsigned long long)(stat(path, &st) ? 0 : st.st_ino), (unsigned long long)mine,
	       (unsigned long long)parent);
	return -EOPNOTSUPP;
}

static int read_owner(pid_t pid, uint32_t *uid)
{
	char path[64];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, NS_GET_OWNER_UID, uid)) {
		err = neg_errno();
		pr_perror("pid %d: cannot read the owner of its user namespace", pid);
	}
	if (fd >= 0)
		close(fd);
	return err;
}

static void extents_fill(const struct id_map *m, UidGidExtent *e, UidGidExtent **p)
{
	size_t i;

	for (i = 0; i < m->nr; i++) {
		uid_gid_extent__init(&e[i]);
		e[i].inside = m->e[i].inside;
		e[i].outside = m->e[i].outside;
		e[i].count = m->e[i].count;
		p[i] = &e[i];
	}
}

static int user_dump(pid_t pid, int dirfd, uint32_t id)
{
	static struct user_ns dumped;
	UidGidExtent ue[ID_MAP_MAX], ge[ID_MAP_MAX], *up[ID_MAP_MAX], *gp[ID_MAP_MAX];
	UsernsEntry e = USERNS_ENTRY__INIT;
	struct user_ns *u = &dumped;
	int err;

	memset(u, 0, sizeof(*u));
	u->fd = -1;
	err = check_parent(pid);
	if (!err)
		err = read_map(pid, "uid_map", &u->uid);
	if (!err)
		err = read_map(pid, "gid_map", &u->gid);
	if (!err)
		err = read_setgroups(pid, &u->setgroups_allow);
	if (!err)
		err = read_owner(pid, &u->owner);
	if (err)
		return err;
	extents_fill(&u->uid, ue, up);
	extents_fill(&u->gid, ge, gp);
	e.n_uid_map = u->uid.nr;
	e.uid_map = up;
	e.n_gid_map = u->gid.nr;
	e.gid_map = gp;
	e.setgroups_allow = u->setgroups_allow;
	e.owner_uid = u->owner;
	pr_info("pid %d: %zu uid and %zu gid extents, setgroups %s, owner %u\n", pid, u->uid.nr,
		u->gid.nr, u->setgroups_allow ? "allow" : "deny", u->owner);
	tree_user = u;
	return img_write_one(dirfd, CR_IMG_USERNS, id, &e.base);
}

/* A task sets its ids from inside at restore: each must be mapped. */
static int check_id(pid_t pid, const struct id_map *m, uint32_t id, const char *what)
{
	uint32_t inside;

	if (id_map_to_inside(m, id, &inside))
		return 0;
	pr_err("pid %d: its %s %u is not mapped in its user namespace: it could not be set "
	       "again from inside\n",
	       pid, what, id);
	return -EOPNOTSUPP;
}

int ns_user_check_ids(pid_t pid, const uint32_t uid[4], const uint32_t gid[4])
{
	static const char *const names[4] = { "real", "effective", "saved", "fs" };
	char what[32];
	int i, err = 0;

	for (i = 0; tree_user && !err && i < 4; i++) {
		snprintf(what, sizeof(what), "%s uid", names[i]);
		err = check_id(pid, &tree_user->uid, uid[i], what);
		snprintf(what, sizeof(what), "%s gid", names[i]);
		if (!err)
			err = check_id(pid, &tree_user->gid, gid[i], what);
	}
	return err;
}

/* ---- restore --------------------------------------------------------------------------------- */

static int extents_load(UidGidExtent **e, size_t n, struct id_map *m, const char *what, uint32_t id)
{
	_cleanup_free_ char *text = calloc(n + 1, 40);
	size_t i, off = 0;
	int err;

	if (!text)
		return -ENOMEM;
	/* through the parser: the same checks as the kernel's (overlaps, wrapping) */
	for (i = 0; i < n; i++)
		off += (size_t)sprintf(text + off, "%u %u %u\n", e[i]->inside, e[i]->outside,
				       e[i]->count);
	err = n > ID_MAP_MAX ? -E2BIG : id_map_parse(text, m);
	if (err)
		pr_err("userns-%u.img: a bad %s\n", id, what);
	return err;
}

static int write_proc(pid_t pid, const char *name, const char *text)
{
	char path[64];
	size_t len = strlen(text);
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		err = neg_errno();
		pr_perror("cannot write \"%.*s\" to %s", (int)strcspn(text, "\n"), text, path);
	}
	if (fd >= 0)
		close(fd);
	return err;
}

/* The maps of the new namespace of @child, from outside: setgroups first, then the maps. */
static int write_maps(const struct user_ns *u, pid_t child)
{
	char buf[ID_MAP_MAX * 36];
	int err = 0;

	if (!u->setgroups_allow)
		err = write_proc(child, "setgroups", "deny");
	if (!err)
		err = id_map_format(&u->uid, buf, sizeof(buf));
	if (!err && u->uid.nr)
		err = write_proc(child, "uid_map", buf);
	if (!err)
		err = id_map_format(&u->gid, buf, sizeof(buf));
	if (!err && u->gid.nr)
		err = write_proc(child, "gid_map", buf);
	return err;
}

/*
 * A child that takes the owner's uid and unshares a user namespace, whose
 * maps the controller writes; the namespace is kept by the fd returned.
 */
static int make_userns(const struct user_ns *u)
{
	int go[2], ready[2], fd = -1, err = 0, status;
	char c = 0, path[64];
	pid_t child;

	if (pipe2(go, O_CLOEXEC))
		return neg_errno();
	if (pipe2(ready, O_CLOEXEC)) {
		err = neg_errno();
		close(go[0]);
		close(go[1]);
		return err;
	}
	child = fork();
	if (child == 0) {
		close(go[1]);
		close(ready[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		/* the owner: the uid of the task that made it (rootless: the user's) */
		if ((u->owner && setresuid(u->owner, u->owner, u->owner)) ||
		    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) || unshare(CLONE_NEWUSER))
			_exit(1);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (child < 0)
		err = neg_errno();
	else if (read(ready[0], &c, 1) != 1)
		err = -ECHILD;
	if (err)
		pr_errno(err, "cannot create a user namespace (owner uid %u)", u->owner);
	if (!err)
		err = write_maps(u, child);
	if (!err) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", child);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = neg_errno();
			pr_perror("cannot open %s", path);
		}
	}
	close(go[1]); /* the child goes */
	close(ready[0]);
	if (child > 0)
		waitpid(child, &status, 0);
	return err ? err : fd;
}

static void user_fini(void *priv)
{
	struct user_ns *u = priv;

	if (!u)
		return;
	if (tree_user == u)
		tree_user = NULL;
	if (u->fd >= 0)
		close(u->fd);
	free(u->groups);
	free(u);
}

static int user_load(int dirfd, uint32_t id, void **priv)
{
	struct user_ns *u = calloc(1, sizeof(*u));
	UsernsEntry *e = NULL;
	int err;

	if (!u)
		return -ENOMEM;
	u->fd = -1;
	err = img_read_one(dirfd, CR_IMG_USERNS, id, (ProtobufCMessage **)&e);
	if (!err)
		err = extents_load(e->uid_map, e->n_uid_map, &u->uid, "uid_map", id);
	if (!err)
		err = extents_load(e->gid_map, e->n_gid_map, &u->gid, "gid_map", id);
	if (!err) {
		u->setgroups_allow = e->setgroups_allow;
		u->owner = e->owner_uid;
		err = make_userns(u);
	}
	if (e)
		protobuf_c_message_free_unpacked(&e->base, NULL);
	if (err < 0) {
		user_fini(u);
		return err;
	}
	u->fd = err;
	pr_info("a user namespace with %zu uid and %zu gid extents, setgroups %s, owner %u\n",
		u->uid.nr, u->gid.nr, u->setgroups_allow ? "allow" : "deny", u->owner);
	tree_user = u;
	*priv = u;
	return 0;
}

static const char *ns_file(int flag)
{
	switch (flag) {
	case CLONE_NEWNET:
		return "net";
	case CLONE_NEWNS:
		return "mnt";
	case CLONE_NEWUTS:
		return "uts";
	case CLONE_NEWIPC:
		return "ipc";
	default:
		return NULL;
	}
}

/*
 * A child of the caller that joins the tree's user namespace and unshares
 * @flag there, then waits for EOF on @go; *@ret_child gets its pid once it did (-1 and
 * -errno if it could not).
 */
static int unshare_in_child(int flag, const int go[2], pid_t *ret_child)
{
	int ready[2], err = 0, status;
	char c = 0;
	pid_t child;

	if (pipe2(ready, O_CLOEXEC))
		return neg_errno();
	child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		close(ready[0]);
		close(go[1]);
		if (setns(tree_user->fd, CLONE_NEWUSER) || unshare(flag))
			_exit(1);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	if (child < 0)
		err = neg_errno();
	else if (read(ready[0], &c, 1) != 1)
		err = -EPERM; /* it exited: setns or unshare failed */
	close(ready[0]);
	if (err && child > 0)
		waitpid(child, &status, 0);
	*ret_child = err ? -1 : child;
	return err;
}

int ns_user_make(int flag)
{
	const char *name = ns_file(flag);
	int go[2], fd = -1, err, status;
	char path[64];
	pid_t child;

	if (!tree_user || tree_user->fd < 0 || !name)
		return -EINVAL;
	if (pipe2(go, O_CLOEXEC))
		return neg_errno();
	err = unshare_in_child(flag, go, &child);
	close(go[0]);
	if (!err) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", child, name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			err = neg_errno();
	}
	close(go[1]); /* the child goes */
	if (child > 0)
		waitpid(child, &status, 0);
	if (err) {
		pr_errno(err, "cannot create a %s namespace in the tree's user namespace", name);
		return err;
	}
	return fd;
}

int ns_user_unshare(int flag)
{
	int fd, err = 0;

	if (!tree_user)
		return unshare(flag) ? neg_errno() : 0;
	fd = ns_user_make(flag);
	if (fd < 0)
		return fd;
	if (setns(fd, flag))
		err = neg_errno();
	close(fd);
	return err;
}

int ns_user_open(const char *path, int flags, mode_t mode)
{
	int res[2], go[2], fd = -1, cfd = -EIO, pidfd, status;
	char c = 0;
	pid_t child;

	if (!tree_user || tree_user->fd < 0)
		return -EINVAL;
	if (pipe2(res, O_CLOEXEC))
		return neg_errno();
	if (pipe2(go, O_CLOEXEC)) {
		close(res[0]);
		close(res[1]);
		return neg_errno();
	}
	child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		close(res[0]);
		close(go[1]);
		if (setns(tree_user->fd, CLONE_NEWUSER))
			cfd = neg_errno();
		else if ((cfd = open(path, flags, mode)) < 0)
			cfd = neg_errno();
		/* held open until the controller took it */
		if (write(res[1], &cfd, sizeof(cfd)) != sizeof(cfd) || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(res[1]);
	close(go[0]);
	if (child < 0)
		cfd = neg_errno();
	else if (read(res[0], &cfd, sizeof(cfd)) != sizeof(cfd))
		cfd = -ECHILD;
	if (cfd >= 0) {
		pidfd = (int)syscall(__NR_pidfd_open, child, 0);
		fd = pidfd < 0 ? -1 : (int)syscall(__NR_pidfd_getfd, pidfd, cfd, 0);
		cfd = fd < 0 ? neg_errno() : fd;
		if (pidfd >= 0)
			close(pidfd);
	}
	close(res[0]);
	close(go[1]); /* the child goes */
	if (child > 0)
		waitpid(child, &status, 0);
	if (cfd < 0)
		pr_errno(cfd, "cannot open %s from the tree's user namespace", path);
	return cfd;
}

int ns_user_join(const uint32_t *groups, size_t n)
{
	struct user_ns *u = tree_user;

	if (!u)
		return 0;
	/* as criu-like still: setgroups may be denied inside (the host gids as they are) */
	if (setgroups(n, (const gid_t *)groups)) {
		pr_perror("cannot take the root's %zu groups", n);
		return neg_errno();
	}
	u->groups = calloc(n + 1, sizeof(uint32_t));
	if (!u->groups)
		return -ENOMEM;
	memcpy(u->groups, groups, n * sizeof(uint32_t));
	u->n_groups = n;
	if (setns(u->fd, CLONE_NEWUSER)) {
		pr_perror("cannot join the tree's new user namespace");
		return neg_errno();
	}
	/*
	 * Still criu-like's uid 0, unmapped there, with every capability inside:
	 * the tasks read the images (criu-like's, mode 0600) until each sets its
	 * own ids, last.
	 */
	return 0;
}

int ns_user_id_inside(bool gid, uint32_t host, uint32_t *ret)
{
	if (!tree_user) {
		*ret = host;
		return 0;
	}
	return id_map_to_inside(gid ? &tree_user->gid : &tree_user->uid, host, ret) ? 0 : -ERANGE;
}

int ns_user_id_outside(bool gid, uint32_t inside, uint32_t *ret)
{
	if (!tree_user)
		return -ENOENT;
	return id_map_to_outside(gid ? &tree_user->gid : &tree_user->uid, inside, ret) ? 0
										       : -ERANGE;
}

bool ns_user_groups_kept(const uint32_t *groups, size_t n)
{
	return tree_user && tree_user->groups && n == tree_user->n_groups &&
	       (!n || !memcmp(groups, tree_user->groups, n * sizeof(uint32_t)));
}

const struct ns_type user_ns_type = {
	.kind = NS_USER,
	.clone_flag = 0, /* created by load(); the root is cloned from inside it */
	.dump = user_dump,
	.load = user_load,
	.fini = user_fini,
};
