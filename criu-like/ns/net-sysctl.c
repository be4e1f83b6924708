// SPDX-License-Identifier: GPL-2.0
/*
 * Net sysctls of a network namespace (Documentation/namespaces.md, "Network
 * namespaces"): net-sysctl.h.
 *
 * /proc/sys/net resolves in the network namespace of the thread that looks
 * it up: the dumper's thread reads it inside the tree's namespace, and
 * inside a fresh one it makes (unshare) to know which global values are the
 * namespace's own: a value the same in both (a default, or a host-wide
 * sysctl shown in every namespace) is not saved. The per-link files are all
 * saved; at restore each is written only where the new namespace differs,
 * "all" and "default" before the links (a write to all/forwarding changes
 * every link's).
 */
#define LOG_PREFIX "ns: net: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "net-link.h"
#include "net-sysctl.h"
#include "util.h"

#define SYSCTL_ROOT "/proc/sys/net/"

static const char *const per_link_dirs[] = { "ipv4/conf/", "ipv6/conf/", "ipv4/neigh/",
					     "ipv6/neigh/" };

void net_sysctls_fini(struct net_sysctls *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->e[i].path);
		free(s->e[i].value);
	}
	free(s->e);
	memset(s, 0, sizeof(*s));
}

bool net_sysctl_per_link(const char *path)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(per_link_dirs); i++)
		if (!strncmp(path, per_link_dirs[i], strlen(per_link_dirs[i])))
			return true;
	return false;
}

bool net_sysctl_mtu6(const char *path)
{
	const char *base = strrchr(path, '/');

	return !strncmp(path, "ipv6/conf/", 10) && base && !strcmp(base, "/mtu");
}

bool net_sysctl_never(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, "flush") || strstr(path, "..") || path[0] == '/';
}

/*
 * stable_secret first: setting it switches the link to stable-privacy
 * addresses, which addr_gen_mode (after it) may switch back; the rest in
 * name order (base_reachable_time before base_reachable_time_ms: the finer
 * one last).
 */
static int rank(const char *path)
{
	const char *base = strrchr(path, '/');

	return base && !strcmp(base, "/stable_secret") ? 0 : 1;
}

int net_sysctl_cmp(const void *a, const void *b)
{
	const NetSysctlEntry *x = a, *y = b;

	return rank(x->path) != rank(y->path) ? rank(x->path) - rank(y->path)
					      : strcmp(x->path, y->path);
}

static int add(struct net_sysctls *s, const char *path, const char *value)
{
	NetSysctlEntry *e;

	if (s->n == s->size) {
		size_t n = s->size * 2 + 64;

		e = realloc(s->e, n * sizeof(*e));
		if (!e)
			return -ENOMEM;
		s->e = e;
		s->size = n;
	}
	e = &s->e[s->n];
	net_sysctl_entry__init(e);
	e->path = strdup(path);
	e->value = strdup(value);
	if (!e->path || !e->value) {
		free(e->path);
		free(e->value);
		return -ENOMEM;
	}
	s->n++;
	return 0;
}

/*
 * The value of a readable and writable sysctl into @value: 1, 0 (not one), or
 * -errno. @name is @path's last component in the directory @dfd (AT_FDCWD:
 * @path from the root): one lookup of one component, and its mode from the
 * file opened, where a stat and an open of the whole path each were the
 * most of reading a namespace's 436 sysctls inside the freeze.
 */
static int read_value_at(int dfd, const char *name, const char *path, char *value, size_t size)
{
	char full[600];
	const char *what = name;
	struct stat st;
	ssize_t len;
	int fd;

	if (net_sysctl_never(path))
		return 0;
	if (dfd == AT_FDCWD) {
		snprintf(full, sizeof(full), SYSCTL_ROOT "%s", path);
		what = full;
	}
	fd = openat(dfd, what, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == EACCES || errno == EPERM ? 0 : neg_errno();
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_mode & 0600) != 0600) {
		close(fd);
		return 0;
	}
	len = read(fd, value, size - 1);
	close(fd);
	/* stable_secret unset: EIO; a value too long for the buffer is not one */
	if (len < 0)
		return errno == EIO || errno == EPERM || errno == EINVAL ? 0 : neg_errno();
	if ((size_t)len == size - 1)
		return 0;
	while (len > 0 && value[len - 1] == '\n')
		len--;
	value[len] = 0;
	return 1;
}

static int read_into(struct net_sysctls *s, int dfd, const char *name, const char *path)
{
	char value[4096];
	int ok = read_value_at(dfd, name, path, value, sizeof(value));

	return ok > 0 ? add(s, path, value) : ok;
}

static bool is_dir(const struct dirent *de, const char *path)
{
	char full[600];
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	snprintf(full, sizeof(full), SYSCTL_ROOT "%s", path);
	return !stat(full, &st) && S_ISDIR(st.st_mode);
}

/*
 * The files of @dir (relative to /proc/sys/net/, "" or ending in '/'); with
 * @recurse those below it too, the per-link directories aside.
 */
static int read_tree(struct net_sysctls *s, const char *dir, bool recurse)
{
	_cleanup_closedir_ DIR *d = NULL;
	char full[600], path[512];
	struct dirent *de;
	int err = 0;

	snprintf(full, sizeof(full), SYSCTL_ROOT "%s", dir);
	d = opendir(full);
	if (!d)
		return errno == ENOENT ? 0 : neg_errno();
	while (!err && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s%s", dir, de->d_name);
		if (!is_dir(de, path)) {
			err = read_into(s, dirfd(d), de->d_name, path);
		} else if (recurse) {
			strncat(path, "/", sizeof(path) - strlen(path) - 1);
			if (!net_sysctl_per_link(path))
				err = read_tree(s, path, true);
		}
	}
	return err;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const NetSysctlEntry *)a)->path, ((const NetSysctlEntry *)b)->path);
}

int net_sysctls_fresh(struct net_sysctls *fresh)
{
	int saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC), err;

	if (saved < 0 || unshare(CLONE_NEWNET)) {
		err = neg_errno();
		pr_perror("cannot make a fresh network namespace to compare the sysctls with");
		if (saved >= 0)
			close(saved);
		return err;
	}
	err = read_tree(fresh, "", true);
	if (setns(saved, CLONE_NEWNET)) {
		pr_perror("cannot go back to criu-like's network namespace");
		abort(); /* criu-like in the wrong namespace would do harm: stop here */
	}
	close(saved);
	if (err)
		pr_errno(err, "cannot read the sysctls of a fresh network namespace");
	else
		qsort(fresh->e, fresh->n, sizeof(*fresh->e), cmp_path);
	return err;
}

/* The files of one per-link directory @dir ("ipv4/conf/all/"...), in the order they are written. */
static int read_dir(struct net_sysctls *s, const char *dir)
{
	size_t first = s->n;
	int err = read_tree(s, dir, false);

	if (!err)
		qsort(s->e + first, s->n - first, sizeof(*s->e), net_sysctl_cmp);
	return err;
}

static int read_link(struct net_sysctls *s, const char *name)
{
	char dir[128];
	size_t i;
	int err = 0;

	for (i = 0; !err && i < ARRAY_SIZE(per_link_dirs); i++) {
		snprintf(dir, sizeof(dir), "%s%s/", per_link_dirs[i], name);
		err = read_dir(s, dir);
	}
	return err;
}

int net_sysctls_read(pid_t pid, const struct nl_buf *links, const struct net_sysctls *fresh,
		     struct net_sysctls *out)
{
	struct net_sysctls all = { 0 };
	const struct nlmsghdr *n;
	size_t i, off;
	int err = read_tree(&all, "", true);

	qsort(all.e, all.n, sizeof(*all.e), cmp_path);
	/* only what is the namespace's own: not there or not the same in a fresh one */
	for (i = 0; !err && i < all.n; i++) {
		const NetSysctlEntry *f = bsearch(&all.e[i], fresh->e, fresh->n, sizeof(*fresh->e),
						  cmp_path);

		if (!f || strcmp(f->value, all.e[i].value))
			err = add(out, all.e[i].path, all.e[i].value);
	}
	net_sysctls_fini(&all);
	if (!err)
		err = read_link(out, "all");
	if (!err)
		err = read_link(out, "default");
	for (off = 0; !err && off < links->len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		struct rtattr *tb[IFLA_MAX + 1];
		const char *name, *kind;

		n = (const struct nlmsghdr *)(links->data + off);
		link_info(n, tb, &name, &kind);
		if (strchr(name, '/') || !strcmp(name, "all") || !strcmp(name, "default") ||
		    !strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		err = read_link(out, name);
	}
	if (err)
		pr_errno(err, "pid %d: cannot read the sysctls of its network namespace", pid);
	return err;
}

/* net_sysctl_set() of @name in the directory @dfd (AT_FDCWD: @path from the root). */
static int set_at(int dfd, const char *name, const char *path, const char *value)
{
	char full[600];
	const char *what = name;
	int fd, err = 0;

	if (dfd == AT_FDCWD) {
		snprintf(full, sizeof(full), SYSCTL_ROOT "%s", path);
		what = full;
	}
	fd = openat(dfd, what, O_WRONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		pr_warn("sysctl net/%s does not exist here: not set\n", path);
		return 0;
	}
	if (fd < 0 || write(fd, value, strlen(value)) < 0)
		err = neg_errno();
	if (fd >= 0)
		close(fd);
	if (err)
		pr_errno(err, "cannot set sysctl net/%s to \"%s\"", path, value);
	return err;
}

int net_sysctl_set(const char *path, const char *value)
{
	return set_at(AT_FDCWD, NULL, path, value);
}

/*
 * The directory of sysctl @path, kept open in @c from one sysctl to the
 * next of the same directory (the images list them by directory), and @path's
 * last component in *@name; AT_FDCWD (and @path) when it cannot be opened.
 * A directory of /proc/sys/net belongs to the namespace it was opened in:
 * @c lives for one loop, in one namespace.
 */
struct sysctl_dir {
	char dir[512];
	int fd;
};

static int dir_of(struct sysctl_dir *c, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;
	char full[600];

	*name = path;
	if (!slash || len >= sizeof(c->dir))
		return AT_FDCWD;
	if (c->fd < 0 || strncmp(c->dir, path, len) || c->dir[len]) {
		if (c->fd >= 0)
			close(c->fd);
		snprintf(c->dir, sizeof(c->dir), "%.*s", (int)len, path);
		snprintf(full, sizeof(full), SYSCTL_ROOT "%s", c->dir);
		c->fd = open(full, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (c->fd < 0)
		return AT_FDCWD;
	*name = slash + 1;
	return c->fd;
}

/* 1: written, 0: the value was already @s's, or -errno. */
static int restore_one(struct sysctl_dir *c, const NetSysctlEntry *s)
{
	char now[4096];
	const char *name;
	int dfd, err;

	if (net_sysctl_never(s->path)) {
		pr_err("sysctl net/%s refused: not one that is written\n", s->path);
		return -EINVAL;
	}
	dfd = dir_of(c, s->path, &name);
	if (read_value_at(dfd, name, s->path, now, sizeof(now)) > 0 && !strcmp(now, s->value))
		return 0;
	err = set_at(dfd, name, s->path, s->value);
	return err ?: 1;
}

/*
 * Every sysctl of a namespace made ahead of its restore (a migration's
 * destination), read in it once it is as the restore will find it: the
 * restore's configuration then skips, without reading it, each of the
 * image's that has the same value there (436 files read: 3.5-4 ms of the
 * freeze; the image of a container seldom differs from a fresh namespace).
 * Only up to the first write: a write may change others (all/forwarding
 * every link's), so from there each is read and compared as without.
 */
static struct net_sysctls known;

void net_sysctls_known_drop(void)
{
	net_sysctls_fini(&known);
}

int net_sysctls_known_read(void)
{
	int err;

	net_sysctls_known_drop();
	err = read_tree(&known, "", true);
	for (size_t i = 0; !err && i < ARRAY_SIZE(per_link_dirs); i++) {
		char full[64];
		_cleanup_closedir_ DIR *d = NULL;
		struct dirent *de;

		snprintf(full, sizeof(full), SYSCTL_ROOT "%s", per_link_dirs[i]);
		d = opendir(full);
		while (!err && d && (de = readdir(d))) {
			char dir[512];

			if (de->d_name[0] == '.')
				continue;
			snprintf(dir, sizeof(dir), "%s%s/", per_link_dirs[i], de->d_name);
			err = read_tree(&known, dir, false);
		}
	}
	if (err) {
		net_sysctls_known_drop();
		return err;
	}
	qsort(known.e, known.n, sizeof(*known.e), cmp_path);
	return 0;
}

static bool known_same(const NetSysctlEntry *s)
{
	const NetSysctlEntry *k = known.n ? bsearch(s, known.e, known.n, sizeof(*known.e), cmp_path)
					  : NULL;

	return k && !strcmp(k->value, s->value);
}

int net_sysctls_restore(const NetnsEntry *ne, bool mtu6_only)
{
	struct sysctl_dir c = { .fd = -1 };
	bool trust = !mtu6_only && known.n;
	size_t i, skipped = 0, written = 0;
	int err = 0;

	for (i = 0; err >= 0 && i < ne->n_sysctls; i++) {
		if (mtu6_only && !net_sysctl_mtu6(ne->sysctls[i]->path))
			continue;
		if (trust && known_same(ne->sysctls[i]) &&
		    !net_sysctl_never(ne->sysctls[i]->path)) {
			skipped++;
			continue;
		}
		err = restore_one(&c, ne->sysctls[i]);
		if (err > 0) {
			trust = false;
			written++;
		}
	}
	if (c.fd >= 0)
		close(c.fd);
	if (!mtu6_only && known.n)
		pr_debug(
			"%zu of %zu sysctls the same as in the namespace made ahead, %zu written\n",
			skipped, ne->n_sysctls, written);
	/* once: the namespace changes from here on */
	if (!mtu6_only)
		net_sysctls_known_drop();
	return err < 0 ? err : 0;
}

int net_sysctl_mtu6_tun(const NetnsEntry *ne, const char *path)
{
	size_t len;

	if (!net_sysctl_mtu6(path))
		return 0;
	for (size_t i = 0; i < ne->n_links; i++) {
		const NetLinkEntry *l = ne->links[i];

		len = strlen(l->name);
		if (l->kind == NET_LINK_KIND__NET_LINK_TUN && !strncmp(path, "ipv6/conf/", 10) &&
		    !strncmp(path + 10, l->name, len) && !strcmp(path + 10 + len, "/mtu"))
			return (int)l->ifindex;
	}
	return 0;
}

int net_sysctl_mtu6_restore(const NetnsEntry *ne)
{
	return net_sysctls_restore(ne, true);
}
