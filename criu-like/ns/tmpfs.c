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
 * contents".
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
#include "util.h"

#include "tmpfs.pb-c.h"

/* Data is copied through a buffer of this size: a file is never held in memory whole. */
#define TMPFS_BUF (1u << 20)
/* Beyond this, a file's record would near the image layer's limit on a record (64 MiB). */
#define TMPFS_MAX_EXTENTS (1u << 20)
#define TMPFS_XATTR_MAX 65536 /* XATTR_SIZE_MAX */

/* ---- extended attributes, for both halves ------------------------------------------------- */

/*
 * An inode whose xattrs are read or written: through its own fd (regular
 * files, directories), or by its name in a directory, through /proc (FIFOs,
 * device nodes, sockets and symbolic links cannot be opened for that).
 */
struct xnode {
	int fd;
	int dfd;
	const char *name;
	char proc[64 + NAME_MAX];
};

static void xnode_init(struct xnode *x, int fd, int dfd, const char *name)
{
	x->fd = fd;
	x->dfd = dfd;
	x->name = name;
	if (fd < 0)
		snprintf(x->proc, sizeof(x->proc), "/proc/self/fd/%d/%s", dfd, name);
}

static ssize_t xlist(const struct xnode *x, char *buf, size_t size)
{
	return x->fd >= 0 ? flistxattr(x->fd, buf, size) : llistxattr(x->proc, buf, size);
}

static ssize_t xget(const struct xnode *x, const char *name, void *buf, size_t size)
{
	return x->fd >= 0 ? fgetxattr(x->fd, name, buf, size) : lgetxattr(x->proc, name, buf, size);
}

static int xset(const struct xnode *x, const char *name, const void *val, size_t len)
{
	return x->fd >= 0 ? fsetxattr(x->fd, name, val, len, XATTR_CREATE)
			  : lsetxattr(x->proc, name, val, len, XATTR_CREATE);
}

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

/* ---- restore ------------------------------------------------------------------------------ */

/* A record other records link to: its index and its path. */
struct tlink {
	uint32_t idx;
	char *path;
};

/* A directory whose mode and times are set at the end, once nothing is created in it. */
struct tdir {
	char *path;
	uint32_t mode;
	struct timespec times[2];
};

struct trestore {
	uint32_t id;
	int root; /* the root directory, O_RDONLY */
	struct cr_img *img, *data;
	uint64_t data_off, data_size; /* the next extent's data, all of it */
	uint64_t rec_off; /* the current record's offset in tmpfs-ID.img */
	uint32_t idx; /* the current record's number */
	char *buf;
	char *pdir; /* the parent directory of the last record, open at pfd */
	int pfd;
	struct tlink *links;
	size_t nr_links;
	struct tdir *dirs;
	size_t nr_dirs;
};

/* A bad record: the image, the record's offset, what is wrong. */
static int __attribute__((format(printf, 3, 4)))
bad(struct trestore *r, int err, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	pr_err("%s: offset %llu: record %u: %s\n", img_name(r->img), (unsigned long long)r->rec_off,
	       r->idx, why);
	return err;
}

/* @b as text for a message: what is not printable as '?', cut at 128 bytes. */
static const char *shown(const ProtobufCBinaryData *b, char *buf, size_t size)
{
	size_t n = min(b->len, size - 1);

	for (size_t i = 0; i < n; i++)
		buf[i] = b->data[i] >= 0x20 && b->data[i] < 0x7f ? (char)b->data[i] : '?';
	buf[n] = '\0';
	return buf;
}

/* Why @p is not a path this restore creates, or NULL when it is one. */
static const char *bad_path(const ProtobufCBinaryData *p, bool root)
{
	const char *s = (const char *)p->data, *end = s + p->len;

	if (root)
		return p->len ? "the first record is not the root directory's (path \"\")" : NULL;
	if (!p->len)
		return "an empty path (the root directory again)";
	if (p->len >= PATH_MAX)
		return "a path longer than PATH_MAX";
	if (memchr(s, '\0', p->len))
		return "a NUL byte in the path";
	while (s <= end) {
		const char *e = memchr(s, '/', end - s);
		size_t n = (e ? e : end) - s;

		if (!n)
			return "an empty component (a '/' at either end, or two together)";
		if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return "a \".\" or \"..\" component";
		if (n > NAME_MAX)
			return "a component longer than NAME_MAX";
		s += n + 1;
	}
	return NULL;
}

/*
 * Open @path (relative to the root, checked) one component at a time, never
 * following a symbolic link: O_PATH for the directories on the way, @flags
 * for the last one.
 */
static int open_path(struct trestore *r, const char *path, int flags)
{
	_cleanup_free_ char *copy = strdup(path);
	char *save = NULL, *c, *next;
	int fd, nfd;

	if (!copy)
		return -ENOMEM;
	c = strtok_r(copy, "/", &save);
	fd = openat(r->root, ".", (c ? O_PATH | O_DIRECTORY : flags) | O_CLOEXEC);
	for (; c && fd >= 0; c = next) {
		next = strtok_r(NULL, "/", &save);
		nfd = openat(fd, c, (next ? O_PATH | O_DIRECTORY : flags) | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = nfd;
	}
	return fd < 0 ? neg_errno() : fd;
}

/* The directory where @path is created, and its last component: the last one, or opened again. */
static int parent_of(struct trestore *r, const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = strndup(path, slash ? (size_t)(slash - path) : 0);
	int fd;

	*base = slash ? slash + 1 : path;
	if (!dir)
		return -ENOMEM;
	if (r->pdir && !strcmp(r->pdir, dir))
		return r->pfd;
	fd = open_path(r, dir, O_PATH | O_DIRECTORY);
	if (fd < 0) {
		pr_errno(fd, "tmpfs %u: /%s: cannot open the directory /%s", r->id, path, dir);
		return fd;
	}
	if (r->pfd >= 0)
		close(r->pfd);
	free(r->pdir);
	r->pdir = TAKE_PTR(dir);
	r->pfd = fd;
	return fd;
}

static bool attrs_complete(const TmpfsEntry *e)
{
	return e->has_mode && e->has_uid && e->has_gid && e->has_atime_sec && e->has_atime_nsec &&
	       e->has_mtime_sec && e->has_mtime_nsec && e->atime_nsec < 1000000000 &&
	       e->mtime_nsec < 1000000000 && !(e->mode & ~(S_IFMT | 07777));
}

static void entry_times(const TmpfsEntry *e, struct timespec ts[2])
{
	ts[0] = (struct timespec){ .tv_sec = e->atime_sec, .tv_nsec = e->atime_nsec };
	ts[1] = (struct timespec){ .tv_sec = e->mtime_sec, .tv_nsec = e->mtime_nsec };
}

static int restore_xattrs(struct trestore *r, const TmpfsEntry *e, const char *path,
			  const struct xnode *x)
{
	for (size_t i = 0; i < e->n_xattrs; i++) {
		const TmpfsXattr *xa = e->xattrs[i];
		char name[XATTR_NAME_MAX + 1], s[160];

		if (!xa->name.len || xa->name.len > XATTR_NAME_MAX ||
		    memchr(xa->name.data, '\0', xa->name.len) || xa->value.len > TMPFS_XATTR_MAX)
			return bad(r, -EBADMSG, "/%s: a bad xattr name \"%s\" or value (%zu bytes)",
				   path, shown(&xa->name, s, sizeof(s)), xa->value.len);
		memcpy(name, xa->name.data, xa->name.len);
		name[xa->name.len] = '\0';
		if (xset(x, name, xa->value.data, xa->value.len)) {
			pr_perror("tmpfs %u: /%s: cannot set its xattr %s", r->id, path, name);
			return neg_errno();
		}
	}
	return 0;
}

/* The extents of @e into @fd (its size is set): checked, then copied, each against its crc. */
static int restore_data(struct trestore *r, const TmpfsEntry *e, const char *path, int fd)
{
	uint64_t end = 0;

	for (size_t i = 0; i < e->n_extents; i++) {
		const TmpfsExtent *x = e->extents[i];
		uint64_t start = r->data_off;
		uint32_t crc = 0;

		if (!x->len || x->off < end || x->off > e->size || x->len > e->size - x->off)
			return bad(r, -EBADMSG,
				   "/%s: extent %zu [%llu, +%llu) out of order or past "
				   "the file's size %llu",
				   path, i, (unsigned long long)x->off, (unsigned long long)x->len,
				   (unsigned long long)e->size);
		if (x->len > r->data_size - r->data_off)
			return bad(r, -EBADMSG, "/%s: extent %zu of %llu bytes past the end of %s",
				   path, i, (unsigned long long)x->len, img_name(r->data));
		for (uint64_t done = 0; done < x->len;) {
			size_t n = min(x->len - done, (uint64_t)TMPFS_BUF);
			int ret = img_read_raw(r->data, r->data_off, r->buf, n);

			if (ret)
				return ret;
			crc = crc32c(crc, r->buf, n);
			if (pwrite(fd, r->buf, n, x->off + done) != (ssize_t)n) {
				pr_perror("tmpfs %u: /%s: cannot write at %llu", r->id, path,
					  (unsigned long long)(x->off + done));
				return errno ? neg_errno() : -EIO;
			}
			done += n;
			r->data_off += n;
		}
		if (crc != x->crc32c) {
			pr_err("%s: offset %llu: the data of /%s at [%llu, +%llu) does not match "
			       "its "
			       "crc32c (%#x, %s says %#x)\n",
			       img_name(r->data), (unsigned long long)(IMG_RAW_DATA_OFF + start),
			       path, (unsigned long long)x->off, (unsigned long long)x->len, crc,
			       img_name(r->img), x->crc32c);
			return -EBADMSG;
		}
		end = x->off + x->len;
	}
	return 0;
}

/* Owner, xattrs and mode of the inode open at @fd (the owner first: chown clears setuid). */
static int restore_fd_attrs(struct trestore *r, const TmpfsEntry *e, const char *path, int fd,
			    bool mode)
{
	struct xnode x;
	int ret;

	if (fchown(fd, e->uid, e->gid)) {
		pr_perror("tmpfs %u: /%s: cannot chown it to %u:%u", r->id, path, e->uid, e->gid);
		return neg_errno();
	}
	xnode_init(&x, fd, -1, "");
	ret = restore_xattrs(r, e, path, &x);
	if (!ret && mode && fchmod(fd, e->mode & 07777)) {
		pr_perror("tmpfs %u: /%s: cannot chmod it to %#o", r->id, path, e->mode & 07777);
		return neg_errno();
	}
	return ret;
}

static int restore_regular(struct trestore *r, const TmpfsEntry *e, const char *path, int pfd,
			   const char *base)
{
	_cleanup_close_ int fd = -1;
	struct timespec ts[2];
	int ret;

	if (!e->has_size || e->size > INT64_MAX)
		return bad(r, -EBADMSG, "/%s: a regular file without a size", path);
	fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, e->size)) {
		pr_perror("tmpfs %u: /%s: cannot create it with %llu bytes", r->id, path,
			  (unsigned long long)e->size);
		return neg_errno();
	}
	ret = restore_data(r, e, path, fd);
	ret = ret ? ret : restore_fd_attrs(r, e, path, fd, true);
	if (ret)
		return ret;
	/* last: writing the data and the attributes changed them */
	entry_times(e, ts);
	if (futimens(fd, ts)) {
		pr_perror("tmpfs %u: /%s: cannot set its times", r->id, path);
		return neg_errno();
	}
	return 0;
}

static int add_dir(struct trestore *r, const TmpfsEntry *e, const char *path)
{
	struct tdir *d = realloc(r->dirs, (r->nr_dirs + 1) * sizeof(*d));

	if (!d)
		return -ENOMEM;
	r->dirs = d;
	d = &r->dirs[r->nr_dirs];
	d->path = strdup(path);
	if (!d->path)
		return -ENOMEM;
	d->mode = e->mode & 07777;
	entry_times(e, d->times);
	r->nr_dirs++;
	return 0;
}

static int restore_dir(struct trestore *r, const TmpfsEntry *e, const char *path, int pfd,
		       const char *base)
{
	_cleanup_close_ int fd = -1;
	int ret;

	if (!*path) {
		fd = openat(r->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		/* u+rwx until the end: everything in it is created first */
		if (mkdirat(pfd, base, 0700)) {
			pr_perror("tmpfs %u: /%s: cannot create the directory", r->id, path);
			return neg_errno();
		}
		fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		pr_perror("tmpfs %u: /%s: cannot open the directory", r->id, path);
		return neg_errno();
	}
	ret = restore_fd_attrs(r, e, path, fd, false);
	return ret ? ret : add_dir(r, e, path);
}

/* A symbolic link, FIFO, socket file or device node: by its name in @pfd. */
static int restore_node(struct trestore *r, const TmpfsEntry *e, const char *path, int pfd,
			const char *base)
{
	bool lnk = S_ISLNK(e->mode);
	struct timespec ts[2];
	struct xnode x;
	char s[160];
	int ret;

	if (lnk) {
		_cleanup_free_ char *target = NULL;

		if (!e->has_target || !e->target.len || e->target.len >= PATH_MAX ||
		    memchr(e->target.data, '\0', e->target.len))
			return bad(r, -EBADMSG,
				   "/%s: a symbolic link without a proper target "
				   "(\"%s\")",
				   path, shown(&e->target, s, sizeof(s)));
		target = strndup((const char *)e->target.data, e->target.len);
		if (!target)
			return -ENOMEM;
		ret = symlinkat(target, pfd, base);
	} else {
		/* a socket file: the inode alone (a socket still bound there is bound again) */
		ret = mknodat(pfd, base, (e->mode & S_IFMT) | 0600, e->has_rdev ? e->rdev : 0);
	}
	if (ret) {
		pr_perror("tmpfs %u: /%s: cannot create it", r->id, path);
		return neg_errno();
	}
	if (fchownat(pfd, base, e->uid, e->gid, AT_SYMLINK_NOFOLLOW)) {
		pr_perror("tmpfs %u: /%s: cannot chown it to %u:%u", r->id, path, e->uid, e->gid);
		return neg_errno();
	}
	xnode_init(&x, -1, pfd, base);
	ret = restore_xattrs(r, e, path, &x);
	if (ret)
		return ret;
	/* not a symbolic link (created just now, by this name): fchmodat follows nothing */
	if (!lnk && fchmodat(pfd, base, e->mode & 07777, 0)) {
		pr_perror("tmpfs %u: /%s: cannot chmod it to %#o", r->id, path, e->mode & 07777);
		return neg_errno();
	}
	entry_times(e, ts);
	if (utimensat(pfd, base, ts, AT_SYMLINK_NOFOLLOW)) {
		pr_perror("tmpfs %u: /%s: cannot set its times", r->id, path);
		return neg_errno();
	}
	return 0;
}

static const struct tlink *find_link(const struct trestore *r, uint32_t idx)
{
	size_t lo = 0, hi = r->nr_links;

	while (lo < hi) { /* the records are added in order */
		size_t mid = lo + (hi - lo) / 2;

		if (r->links[mid].idx == idx)
			return &r->links[mid];
		if (r->links[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* One more name of an inode restored before. */
static int restore_link(struct trestore *r, const TmpfsEntry *e, const char *path, int pfd,
			const char *base)
{
	const struct tlink *l = find_link(r, e->link);
	_cleanup_close_ int tfd = -1;
	char tdir[PATH_MAX];
	const char *slash;

	if (!l)
		return bad(r, -EBADMSG, "/%s: a link to record %u, not an earlier one with links",
			   path, e->link);
	/* the first name's directory (the path was checked: shorter than PATH_MAX) */
	slash = strrchr(l->path, '/');
	snprintf(tdir, sizeof(tdir), "%.*s", slash ? (int)(slash - l->path) : 0, l->path);
	tfd = open_path(r, tdir, O_PATH | O_DIRECTORY);
	if (tfd < 0 || linkat(tfd, slash ? slash + 1 : l->path, pfd, base, 0)) {
		pr_perror("tmpfs %u: /%s: cannot link it to /%s", r->id, path, l->path);
		return tfd < 0 ? tfd : neg_errno();
	}
	return 0;
}

static int add_link(struct trestore *r, const char *path)
{
	struct tlink *l = realloc(r->links, (r->nr_links + 1) * sizeof(*l));

	if (!l)
		return -ENOMEM;
	r->links = l;
	l[r->nr_links].idx = r->idx;
	l[r->nr_links].path = strdup(path);
	if (!l[r->nr_links].path)
		return -ENOMEM;
	r->nr_links++;
	return 0;
}

static int restore_entry(struct trestore *r, const TmpfsEntry *e)
{
	_cleanup_free_ char *path = NULL;
	const char *why = bad_path(&e->path, r->idx == 0), *base = "";
	char s[160];
	int pfd = -1, ret;

	if (why)
		return bad(r, -EBADMSG, "path \"%s\" refused: %s", shown(&e->path, s, sizeof(s)),
			   why);
	path = strndup((const char *)e->path.data, e->path.len);
	if (!path)
		return -ENOMEM;
	if (r->idx && !e->has_link && !attrs_complete(e))
		return bad(r, -EBADMSG, "/%s: no mode, owner or times, or bad ones", path);
	if (!r->idx && (e->has_link || !attrs_complete(e) || !S_ISDIR(e->mode)))
		return bad(r, -EBADMSG, "the root is not a directory with its attributes");
	if (r->idx) {
		pfd = parent_of(r, path, &base);
		if (pfd < 0)
			return pfd;
	}
	if (e->has_link)
		return restore_link(r, e, path, pfd, base);
	switch (e->mode & S_IFMT) {
	case S_IFREG:
		ret = restore_regular(r, e, path, pfd, base);
		break;
	case S_IFDIR:
		return restore_dir(r, e, path, pfd, base);
	case S_IFLNK:
	case S_IFIFO:
	case S_IFSOCK:
	case S_IFCHR:
	case S_IFBLK:
		ret = restore_node(r, e, path, pfd, base);
		break;
	default:
		return bad(r, -EBADMSG, "/%s: an inode of unknown type %#o", path,
			   e->mode & S_IFMT);
	}
	if (!ret && e->has_nlink && e->nlink > 1)
		ret = add_link(r, path);
	return ret;
}

/* The directories' modes and times, last: the deepest first, the root last. */
static int finish_dirs(struct trestore *r)
{
	for (size_t i = r->nr_dirs; i-- > 0;) {
		const struct tdir *d = &r->dirs[i];
		_cleanup_close_ int fd = open_path(r, d->path, O_RDONLY | O_DIRECTORY);

		if (fd < 0 || fchmod(fd, d->mode) || futimens(fd, d->times)) {
			if (fd < 0)
				errno = -fd;
			pr_perror("tmpfs %u: /%s: cannot set the directory's mode and times", r->id,
				  d->path);
			return fd < 0 ? fd : neg_errno();
		}
	}
	return 0;
}

static int check_empty(struct trestore *r)
{
	int fd = openat(r->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_closedir_ DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;

	if (!d) {
		pr_perror("tmpfs %u: cannot read the directory to restore into", r->id);
		if (fd >= 0)
			close(fd);
		return neg_errno();
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			pr_err("tmpfs %u: the directory to restore into is not empty (%s)\n", r->id,
			       de->d_name);
			return -ENOTEMPTY;
		}
	return 0;
}

static int restore_records(struct trestore *r)
{
	TmpfsEntry *e;
	int ret;

	for (;; r->idx++) {
		r->rec_off = img_offset(r->img);
		ret = img_read_record(r->img, &tmpfs_entry__descriptor, (ProtobufCMessage **)&e);
		if (ret <= 0)
			break;
		ret = restore_entry(r, e);
		protobuf_c_message_free_unpacked(&e->base, NULL);
		if (ret)
			return ret;
	}
	if (ret)
		return ret;
	if (!r->idx)
		return bad(r, -EBADMSG, "no record, not even the root directory's");
	if (r->data_off != r->data_size) {
		pr_err("%s: offset %llu: %llu bytes of data that no file has\n", img_name(r->data),
		       (unsigned long long)(IMG_RAW_DATA_OFF + r->data_off),
		       (unsigned long long)(r->data_size - r->data_off));
		return -EBADMSG;
	}
	return finish_dirs(r);
}

int tmpfs_restore(int root_fd, int dirfd, uint32_t id)
{
	struct trestore r = { .id = id, .pfd = -1 };
	int ret;

	r.root = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r.root < 0) {
		pr_perror("tmpfs %u: cannot open the directory to restore into", id);
		return neg_errno();
	}
	ret = check_empty(&r);
	if (!ret) {
		r.buf = malloc(TMPFS_BUF);
		r.img = img_open(dirfd, CR_IMG_TMPFS, id, IMG_READ);
		r.data = r.img ? img_open(dirfd, CR_IMG_TMPFS_DATA, id, IMG_READ) : NULL;
		if (!r.buf || !r.img || !r.data)
			ret = r.buf ? neg_errno() : -ENOMEM;
	}
	if (!ret) {
		r.data_size = img_raw_size(r.data);
		ret = restore_records(&r);
	}
	if (!ret)
		pr_info("tmpfs %u: %u names restored\n", id, r.idx);
	img_close(r.data);
	img_close(r.img);
	for (size_t i = 0; i < r.nr_links; i++)
		free(r.links[i].path);
	for (size_t i = 0; i < r.nr_dirs; i++)
		free(r.dirs[i].path);
	free(r.links);
	free(r.dirs);
	free(r.pdir);
	free(r.buf);
	if (r.pfd >= 0)
		close(r.pfd);
	close(r.root);
	return ret;
}
