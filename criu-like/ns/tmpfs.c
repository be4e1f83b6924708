// SPDX-License-Identifier: GPL-2.0
/*
 * The contents of a tmpfs: every name under its root with its inode, in
 * tmpfs-ID.img (one TmpfsEntry per name, images/tmpfs.proto), the data of
 * the regular files in tmpfs-data-ID.img, extent by extent (holes are
 * skipped with SEEK_DATA/SEEK_HOLE and stay holes), each extent with its
 * crc32c. The walk is depth first: a directory's record, the records of its
 * other entries, then its subdirectories one by one, so that at restore
 * the parent of most records is the directory created last.
 *
 * Nothing here follows a symbolic link: every call is relative to a
 * directory fd, with one name, and O_NOFOLLOW / AT_SYMLINK_NOFOLLOW. At
 * restore, the image is untrusted input: paths are checked component by
 * component, and directories are reached again by opening each component
 * with O_NOFOLLOW | O_DIRECTORY. Documentation/namespaces.md, "tmpfs
 * contents". The restore half is tmpfs-restore.c.
 */
#define LOG_PREFIX "tmpfs: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <search.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "crc32c.h"
#include "image.h"
#include "log.h"
#include "tmpfs.h"
#include "tmpfs-int.h"
#include "util.h"

#include "tmpfs.pb-c.h"

/* ---- dump --------------------------------------------------------------------------------- */

struct tmpfs_inode {
	uint64_t ino;
	uint32_t idx; /* its first record */
};

struct tdump {
	uint32_t id;
	struct cr_img *img, *data;
	uint64_t mnt_id; /* of the root: a name elsewhere is a mount point */
	uint32_t nr; /* records written */
	void *inodes; /* tsearch() tree of struct tmpfs_inode: the inodes with links */
	char *buf;
	size_t plen;
	char path[PATH_MAX]; /* of the name being dumped, relative to the root */
};

/* What a record owns until it is written. */
struct tentry {
	TmpfsEntry e;
	TmpfsExtent *ext;
	TmpfsExtent **extp;
	TmpfsXattr **xattrs;
	char *target;
};

static void tentry_fini(struct tentry *t)
{
	for (size_t i = 0; i < t->e.n_xattrs; i++) {
		free(t->xattrs[i]->name.data);
		free(t->xattrs[i]->value.data);
		free(t->xattrs[i]);
	}
	free(t->xattrs);
	free(t->ext);
	free(t->extp);
	free(t->target);
}

static const char *dpath(const struct tdump *t)
{
	return t->plen ? t->path : ".";
}

static int tmpfs_inode_cmp(const void *a, const void *b)
{
	const struct tmpfs_inode *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int path_push(struct tdump *t, const char *name)
{
	size_t n = strlen(name), sep = t->plen ? 1 : 0;

	if (t->plen + sep + n >= sizeof(t->path)) {
		pr_err("tmpfs %u: %s/%s: the path is longer than PATH_MAX\n", t->id, dpath(t),
		       name);
		return -ENAMETOOLONG;
	}
	if (sep)
		t->path[t->plen++] = '/';
	memcpy(t->path + t->plen, name, n + 1);
	t->plen += n;
	return 0;
}

static void path_pop(struct tdump *t, size_t plen)
{
	t->plen = plen;
	t->path[plen] = '\0';
}

static int do_statx(struct tdump *t, int dfd, const char *name, struct statx *st)
{
	int flags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (*name ? 0 : AT_EMPTY_PATH);

	if (statx(dfd, name, flags, STATX_BASIC_STATS | STATX_MNT_ID, st))
		return neg_errno();
	if (!(st->stx_mask & STATX_MNT_ID)) {
		pr_err("tmpfs %u: %s: statx() gives no mount id\n", t->id, dpath(t));
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Open @name in @dfd without following it or touching its atime when we may. */
static int open_noatime(int dfd, const char *name, int flags)
{
	int fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);

	if (fd < 0 && errno == EPERM) /* O_NOATIME: neither the owner nor CAP_FOWNER */
		fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

static int dump_xattrs(struct tdump *t, const struct xnode *x, struct tentry *te)
{
	_cleanup_free_ char *list = NULL;
	ssize_t len;

	len = xlist(x, NULL, 0);
	if (len < 0 && (errno == EOPNOTSUPP || errno == ENOTSUP))
		return 0;
	while (len > 0) {
		free(list);
		list = malloc(len);
		if (!list)
			return -ENOMEM;
		len = xlist(x, list, len);
		if (len >= 0 || errno != ERANGE)
			break;
		len = xlist(x, NULL, 0);
	}
	if (len < 0) {
		pr_perror("tmpfs %u: %s: cannot list its xattrs", t->id, dpath(t));
		return neg_errno();
	}
	for (char *n = list; n < list + len; n += strlen(n) + 1) {
		TmpfsXattr *xa, **v;
		ssize_t vlen;

		v = realloc(te->xattrs, (te->e.n_xattrs + 1) * sizeof(*v));
		xa = v ? calloc(1, sizeof(*xa)) : NULL;
		if (v)
			te->xattrs = te->e.xattrs = v;
		if (!xa)
			return -ENOMEM;
		tmpfs_xattr__init(xa);
		te->xattrs[te->e.n_xattrs++] = xa;
		xa->name.len = strlen(n);
		xa->name.data = (uint8_t *)strdup(n);
		xa->value.data = malloc(TMPFS_XATTR_MAX);
		if (!xa->name.data || !xa->value.data)
			return -ENOMEM;
		vlen = xget(x, n, xa->value.data, TMPFS_XATTR_MAX);
		if (vlen < 0) {
			pr_perror("tmpfs %u: %s: cannot read its xattr %s", t->id, dpath(t), n);
			return neg_errno();
		}
		xa->value.len = vlen;
	}
	return 0;
}

static int add_extent(struct tentry *te, uint64_t off, uint64_t len, uint32_t crc)
{
	size_t n = te->e.n_extents;
	TmpfsExtent *x;

	if (!(n & (n - 1)) || !n) { /* grow at powers of two */
		size_t cap = n ? 2 * n : 4;

		x = realloc(te->ext, cap * sizeof(*x));
		if (!x)
			return -ENOMEM;
		te->ext = x;
	}
	x = &te->ext[n];
	tmpfs_extent__init(x);
	x->off = off;
	x->len = len;
	x->crc32c = crc;
	te->e.n_extents = n + 1;
	return 0;
}

/* Copy [@off, @off + @len) of @fd to the data image, through the buffer. */
static int dump_extent(struct tdump *t, int fd, uint64_t off, uint64_t len, struct tentry *te)
{
	uint32_t crc = 0;
	int ret;

	if (te->e.n_extents >= TMPFS_MAX_EXTENTS) {
		pr_err("tmpfs %u: %s: more than %u runs of data between holes\n", t->id, dpath(t),
		       TMPFS_MAX_EXTENTS);
		return -E2BIG;
	}
	for (uint64_t done = 0; done < len;) {
		ssize_t n = pread(fd, t->buf, min(len - done, (uint64_t)TMPFS_BUF), off + done);

		if (n <= 0) {
			ret = n ? neg_errno() : -ENODATA;
			pr_errno(ret, "tmpfs %u: %s: cannot read at %llu", t->id, dpath(t),
				 (unsigned long long)(off + done));
			return ret;
		}
		crc = crc32c(crc, t->buf, n);
		ret = img_write_raw(t->data, t->buf, n);
		if (ret)
			return ret;
		done += n;
	}
	return add_extent(te, off, len, crc);
}

/* The data of a regular file: its runs between holes, in order. */
static int dump_data(struct tdump *t, int fd, uint64_t size, struct tentry *te)
{
	uint64_t off = 0;
	int ret;

	while (off < size) {
		off_t d = lseek(fd, off, SEEK_DATA), h;

		if (d < 0 && errno == ENXIO)
			break; /* a hole to the end */
		h = d < 0 ? -1 : lseek(fd, d, SEEK_HOLE);
		if (h < 0) {
			pr_perror("tmpfs %u: %s: cannot find its data and holes", t->id, dpath(t));
			return neg_errno();
		}
		if ((uint64_t)d >= size)
			break;
		ret = dump_extent(t, fd, d, min((uint64_t)h, size) - d, te);
		if (ret)
			return ret;
		off = h;
	}
	te->extp = malloc(max(te->e.n_extents, (size_t)1) * sizeof(*te->extp));
	if (!te->extp)
		return -ENOMEM;
	for (size_t i = 0; i < te->e.n_extents; i++)
		te->extp[i] = &te->ext[i];
	te->e.extents = te->extp;
	return 0;
}

static int dump_regular(struct tdump *t, int dfd, const char *name, const struct statx *st,
			struct tentry *te, int *ret_fd)
{
	struct stat fst;
	int fd;

	/* O_NONBLOCK, O_NOCTTY: if the name is no longer a regular file, opening it does nothing */
	fd = open_noatime(dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		pr_perror("tmpfs %u: %s: cannot open it", t->id, dpath(t));
		return neg_errno();
	}
	*ret_fd = fd;
	if (fstat(fd, &fst) || fst.st_ino != st->stx_ino || !S_ISREG(fst.st_mode)) {
		pr_err("tmpfs %u: %s: changed while it was dumped\n", t->id, dpath(t));
		return -EAGAIN;
	}
	te->e.has_size = true;
	te->e.size = st->stx_size;
	return dump_data(t, fd, st->stx_size, te);
}

static int dump_symlink(struct tdump *t, int dfd, const char *name, const struct statx *st,
			struct tentry *te)
{
	size_t size = st->stx_size + 1;
	ssize_t n;

	te->target = malloc(size);
	if (!te->target)
		return -ENOMEM;
	n = readlinkat(dfd, name, te->target, size);
	if (n < 0 || (size_t)n != st->stx_size) {
		pr_err("tmpfs %u: %s: cannot read the symbolic link (%zd bytes of %llu)\n", t->id,
		       dpath(t), n, (unsigned long long)st->stx_size);
		return n < 0 ? neg_errno() : -EAGAIN;
	}
	te->e.has_target = true;
	te->e.target.data = (uint8_t *)te->target;
	te->e.target.len = n;
	return 0;
}

static void entry_attrs(TmpfsEntry *e, const struct statx *st)
{
	e->has_mode = e->has_uid = e->has_gid = e->has_nlink = true;
	e->mode = st->stx_mode;
	e->uid = st->stx_uid;
	e->gid = st->stx_gid;
	e->nlink = st->stx_nlink;
	e->has_atime_sec = e->has_atime_nsec = e->has_mtime_sec = e->has_mtime_nsec = true;
	e->atime_sec = st->stx_atime.tv_sec;
	e->atime_nsec = st->stx_atime.tv_nsec;
	e->mtime_sec = st->stx_mtime.tv_sec;
	e->mtime_nsec = st->stx_mtime.tv_nsec;
	if (S_ISCHR(st->stx_mode) || S_ISBLK(st->stx_mode)) {
		e->has_rdev = true;
		e->rdev = makedev(st->stx_rdev_major, st->stx_rdev_minor);
	}
}

/* A name already dumped under another name: its record says which. 1 if so, 0 if not. */
static int dump_link(struct tdump *t, const struct statx *st, TmpfsEntry *e)
{
	struct tmpfs_inode key = { .ino = st->stx_ino }, *in, **found;

	if (S_ISDIR(st->stx_mode) || st->stx_nlink < 2)
		return 0;
	found = tfind(&key, &t->inodes, tmpfs_inode_cmp);
	if (found) {
		e->has_link = true;
		e->link = (*found)->idx;
		return 1;
	}
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	*in = (struct tmpfs_inode){ .ino = st->stx_ino, .idx = t->nr };
	if (!tsearch(in, &t->inodes, tmpfs_inode_cmp)) {
		free(in);
		return -ENOMEM;
	}
	return 0;
}

/*
 * The record of the name t->path, @name in @dfd (a directory: @fd open on
 * it; the root: @name ""), with its data for a regular file.
 */
static int dump_entry(struct tdump *t, int dfd, const char *name, const struct statx *st, int fd)
{
	struct tentry te = { .e = TMPFS_ENTRY__INIT };
	_cleanup_close_ int own = -1;
	struct xnode x;
	int ret;

	te.e.path.data = (uint8_t *)t->path;
	te.e.path.len = t->plen;
	ret = dump_link(t, st, &te.e);
	if (ret)
		goto out;
	entry_attrs(&te.e, st);
	switch (st->stx_mode & S_IFMT) {
	case S_IFREG:
		ret = dump_regular(t, dfd, name, st, &te, &own);
		fd = own;
		break;
	case S_IFLNK:
		ret = dump_symlink(t, dfd, name, st, &te);
		break;
	case S_IFDIR:
	case S_IFIFO:
	case S_IFSOCK:
	case S_IFCHR:
	case S_IFBLK:
		break;
	default:
		pr_err("tmpfs %u: %s: an inode of unknown type %#o\n", t->id, dpath(t),
		       st->stx_mode & S_IFMT);
		ret = -EOPNOTSUPP;
	}
	if (!ret) {
		xnode_init(&x, fd, dfd, name);
		ret = dump_xattrs(t, &x, &te);
	}
out:
	if (ret >= 0)
		ret = img_write_record(t->img, &te.e.base);
	if (!ret)
		t->nr++;
	tentry_fini(&te);
	return ret;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The names in directory @fd, sorted (the image is the same from one dump to the next). */
static int read_names(struct tdump *t, int fd, char ***ret, size_t *ret_n)
{
	_cleanup_closedir_ DIR *d = NULL;
	char **names = NULL;
	struct dirent *de;
	size_t n = 0;
	int dfd;

	dfd = open_noatime(fd, ".", O_RDONLY | O_DIRECTORY); /* a new file: not at its end */
	d = dfd < 0 ? NULL : fdopendir(dfd);
	if (!d) {
		pr_perror("tmpfs %u: %s: cannot read the directory", t->id, dpath(t));
		if (dfd >= 0)
			close(dfd);
		return neg_errno();
	}
	while ((errno = 0, de = readdir(d))) {
		char **v;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		v = realloc(names, (n + 1) * sizeof(*v));
		if (!v || !(v[n] = strdup(de->d_name))) {
			free_names(v ? v : names, n);
			return -ENOMEM;
		}
		names = v;
		n++;
	}
	if (errno) {
		pr_perror("tmpfs %u: %s: cannot read the directory", t->id, dpath(t));
		free_names(names, n);
		return neg_errno();
	}
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	*ret = names;
	*ret_n = n;
	return 0;
}

/* statx of @name in @fd: 1 if it is to be dumped, 0 if it went away, or -errno. */
static int stat_name(struct tdump *t, int fd, const char *name, struct statx *st)
{
	int ret = do_statx(t, fd, name, st);

	if (ret == -ENOENT) {
		/* The tree is frozen: this can only be someone outside it, racing the dump. */
		pr_warn("tmpfs %u: %s went away during the dump\n", t->id, dpath(t));
		return 0;
	}
	if (ret) {
		pr_errno(ret, "tmpfs %u: %s: cannot stat it", t->id, dpath(t));
		return ret;
	}
	if (st->stx_mnt_id != t->mnt_id) {
		pr_err("tmpfs %u: %s is a mount point: the directory under it cannot be read (no "
		       "private copy of the mount)\n",
		       t->id, dpath(t));
		return -EBUSY;
	}
	return 1;
}

static int dump_dir(struct tdump *t, int fd);

static int dump_subdir(struct tdump *t, int fd, const char *name)
{
	_cleanup_close_ int sub = -1;
	struct statx st;
	struct stat fst;
	int ret;

	ret = stat_name(t, fd, name, &st);
	if (ret <= 0)
		return ret;
	sub = open_noatime(fd, name, O_RDONLY | O_DIRECTORY);
	if (sub < 0) {
		pr_perror("tmpfs %u: %s: cannot open the directory", t->id, dpath(t));
		return neg_errno();
	}
	if (fstat(sub, &fst) || fst.st_ino != st.stx_ino) {
		pr_err("tmpfs %u: %s: changed while it was dumped\n", t->id, dpath(t));
		return -EAGAIN;
	}
	ret = dump_entry(t, fd, name, &st, sub);
	return ret ? ret : dump_dir(t, sub);
}

/* Everything in directory @fd (t->path), whose own record is written. */
static int dump_dir(struct tdump *t, int fd)
{
	size_t n, plen = t->plen;
	char **names;
	bool *isdir;
	int ret;

	ret = read_names(t, fd, &names, &n);
	if (ret)
		return ret;
	isdir = calloc(n + 1, sizeof(*isdir));
	ret = isdir ? 0 : -ENOMEM;
	/* first the names that are not directories, then each directory with all it holds */
	for (size_t i = 0; i < n && !ret; i++) {
		struct statx st;

		ret = path_push(t, names[i]);
		ret = ret ? ret : stat_name(t, fd, names[i], &st);
		if (ret == 1 && S_ISDIR(st.stx_mode))
			isdir[i] = true;
		else if (ret == 1)
			ret = dump_entry(t, fd, names[i], &st, -1);
		ret = ret > 0 ? 0 : ret;
		path_pop(t, plen);
	}
	for (size_t i = 0; i < n && !ret; i++) {
		if (!isdir[i])
			continue;
		ret = path_push(t, names[i]);
		ret = ret ? ret : dump_subdir(t, fd, names[i]);
		path_pop(t, plen);
	}
	free(isdir);
	free_names(names, n);
	return ret;
}

/*
 * A private copy of the mount of @root_fd, alone (none of the mounts under
 * it): what is hidden under them is seen, and nothing of another file
 * system is walked. Read-only, nodev, noatime: the dump changes nothing,
 * not even an atime, and opens no device. The directory of @root_fd in it,
 * or -errno when the copy cannot be made (*@tree stays -1).
 */
static int private_view(struct tdump *t, int root_fd, int *tree)
{
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			    MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOATIME | MOUNT_ATTR_NOSYMFOLLOW,
		.attr_clr = MOUNT_ATTR__ATIME,
	};
	int fd;

	*tree = open_tree(root_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (*tree < 0) {
		pr_info("tmpfs %u: no private copy of the mount (%m): walking it in place\n",
			t->id);
		return neg_errno();
	}
	if (mount_setattr(*tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)))
		pr_debug("tmpfs %u: the private copy stays writable: %m\n", t->id);
	fd = openat(*tree, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? neg_errno() : fd;
}

static int dump_root(struct tdump *t, int root_fd)
{
	_cleanup_close_ int tree = -1, fd = -1;
	struct statx st;
	int ret;

	fd = private_view(t, root_fd, &tree);
	if (fd < 0)
		fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("tmpfs %u: cannot open its root directory", t->id);
		return neg_errno();
	}
	ret = do_statx(t, fd, "", &st);
	if (ret) {
		pr_errno(ret, "tmpfs %u: cannot stat its root directory", t->id);
		return ret;
	}
	t->mnt_id = st.stx_mnt_id;
	ret = dump_entry(t, fd, "", &st, fd);
	return ret ? ret : dump_dir(t, fd);
}

int tmpfs_dump(int root_fd, int dirfd, uint32_t id)
{
	struct tdump *t;
	int ret, r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->id = id;
	t->buf = malloc(TMPFS_BUF);
	t->img = img_open(dirfd, CR_IMG_TMPFS, id, IMG_WRITE);
	t->data = t->img ? img_open(dirfd, CR_IMG_TMPFS_DATA, id, IMG_WRITE) : NULL;
	if (!t->buf || !t->img || !t->data)
		ret = t->buf ? -errno : -ENOMEM;
	else
		ret = dump_root(t, root_fd);
	r = img_close(t->data);
	ret = ret ? ret : r;
	r = img_close(t->img);
	ret = ret ? ret : r;
	if (!ret)
		pr_info("tmpfs %u: %u names dumped\n", id, t->nr);
	tdestroy(t->inodes, free);
	free(t->buf);
	free(t);
	return ret;
}
