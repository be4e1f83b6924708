// SPDX-License-Identifier: GPL-2.0
/*
 * The contents of a tmpfs, the restore half (tmpfs.c has the dump and the
 * image layout): the records of tmpfs-ID.img made again under the root of a
 * new tmpfs, the data of tmpfs-data-ID.img written extent by extent (holes
 * stay holes), each checked against its crc32c. The image is untrusted
 * input: paths are checked component by component, and directories are
 * reached again by opening each component with O_NOFOLLOW | O_DIRECTORY.
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
