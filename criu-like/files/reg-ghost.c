// SPDX-License-Identifier: GPL-2.0
/*
 * The contents of unlinked open files (reg.c): a file open but unlinked
 * (st_nlink 0, memfds and O_TMPFILE files included) has them saved in
 * ghost-ID.img, data extent by extent (holes stay holes, in the image and
 * in the file restored), with the crc32c of every byte. At restore they are
 * written into a new file at the original path, or next to it under a
 * temporary name if the path is taken (memfds: into a new memfd of the same
 * name), which is opened with the saved flags and unlinked again, so the task
 * finds an unlinked file with the same contents at the same position.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define LOG_PREFIX "files: "
#include "crc32c.h"
#include "compat.h"
#include "files-int.h"
#include "image.h"
#include "log.h"
#include "node-attrs.h"
#include "ns.h"
#include "reg.h"
#include "restore-files-int.h"
#include "util.h"

#define GHOST_CHUNK (1u << 20)
#define MEMFD_PREFIX "/memfd:"

/* ---- dump ----------------------------------------------------------------------------------- */

/* @len bytes at @off, all of them, or -ENODATA when the file ends before. */
static int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return neg_errno();
		if (n == 0)
			return -ENODATA; /* the file shrank under us */
		done += (size_t)n;
	}
	return 0;
}

static int pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return neg_errno();
		done += (size_t)n;
	}
	return 0;
}

/*
 * The next data extent of @fd at or after @off, below @size: [*ret_start, *ret_end).
 * 0 when there is none (the rest is a hole). A file system without holes
 * reports all of it as data.
 */
static int next_extent(int fd, uint64_t off, uint64_t size, uint64_t *ret_start, uint64_t *ret_end)
{
	off_t d = lseek(fd, (off_t)off, SEEK_DATA);
	off_t h;

	if (d < 0 && errno == ENXIO)
		return 0;
	if (d < 0)
		return neg_errno();
	if ((uint64_t)d >= size)
		return 0;
	h = lseek(fd, d, SEEK_HOLE);
	if (h < 0)
		return neg_errno();
	*ret_start = (uint64_t)d;
	*ret_end = min((uint64_t)h, size);
	return 1;
}

/*
 * Copy the first @size bytes of @src, from @src_base on, into @dst at
 * @dst_base on, extent by extent: the holes of @src stay holes in @dst
 * (a sparse file of 1 GiB with a few pages of data costs a few pages), and
 * the crc32c covers every byte, the holes as zeros.
 */
static int ghost_copy_sparse(int src, uint64_t src_base, int dst, uint64_t dst_base, uint64_t size,
			     uint32_t *ret_crc)
{
	_cleanup_free_ uint8_t *buf = malloc(GHOST_CHUNK);
	uint64_t off = 0, start, end;
	uint32_t crc = 0;
	int r;

	if (!buf)
		return -ENOMEM;
	while (off < size) {
		r = next_extent(src, src_base + off, src_base + size, &start, &end);
		if (r < 0)
			return r;
		if (r == 0)
			start = end = src_base + size;
		start -= src_base;
		end -= src_base;
		crc = crc32c_zeros(crc, start - off);
		for (off = start; off < end;) {
			size_t n = (size_t)min(end - off, (uint64_t)GHOST_CHUNK);

			r = pread_full(src, buf, n, src_base + off);
			if (!r)
				r = pwrite_full(dst, buf, n, dst_base + off);
			if (r)
				return r;
			crc = crc32c(crc, buf, n);
			off += n;
		}
	}
	/* the size, with the hole at the end */
	if (ftruncate(dst, (off_t)(dst_base + size)))
		return neg_errno();
	*ret_crc = crc;
	return 0;
}

/*
 * A memfd made with MFD_HUGETLB lives on hugetlbfs, which has no write():
 * note its huge page size for the restore (create_memfd()). pread() reads it
 * (holes as zeros: hugetlbfs has no SEEK_DATA, so the whole is copied). Any
 * other unlinked hugetlbfs file is refused by name.
 */
static int ghost_huge(pid_t pid, int fd, const char *path, RegFileEntry *e)
{
	struct statfs sfs;
	struct stat st;

	if (fstatfs(fd, &sfs) || fstat(fd, &st)) {
		pr_perror("pid %d: stat of unlinked %s", pid, path);
		return neg_errno();
	}
	if ((unsigned long)sfs.f_type != HUGETLBFS_MAGIC)
		return 0;
	if (strncmp(path, MEMFD_PREFIX, strlen(MEMFD_PREFIX))) {
		pr_err("pid %d: unlinked %s is on a hugetlbfs: only MFD_HUGETLB memfds are "
		       "supported there\n",
		       pid, path);
		return -EOPNOTSUPP;
	}
	if (st.st_blksize < 8192 || e->size % (uint64_t)st.st_blksize) {
		pr_err("pid %d: hugetlb memfd %s: %llu bytes in pages of %ld bytes\n", pid, path,
		       (unsigned long long)e->size, (long)st.st_blksize);
		return -EOPNOTSUPP;
	}
	e->has_huge_page_kb = true;
	e->huge_page_kb = (uint32_t)(st.st_blksize / 1024);
	return 0;
}

/*
 * Copy the contents of the unlinked file behind @fd into ghost-ID.img. A new
 * description is opened through /proc/self/fd: reading the drained one would
 * move the task's file position, and it may be write-only.
 */
int ghost_dump(struct dump_ctx *ctx, pid_t pid, int fd, uint32_t id, RegFileEntry *e)
{
	const char *path = (const char *)e->path.data; /* NUL-terminated by reg.c */
	_cleanup_close_ int src = -1;
	struct cr_img *img;
	char self[64];
	uint32_t crc = 0;
	int err, cerr;

	/*
	 * --ghost-limit, as CRIU: a larger unlinked file fails the dump (0: no
	 * limit). Its size, not the data it holds, as CRIU counts it; memfds are
	 * not ghosts to CRIU and have no limit.
	 */
	if (ctx->opts && ctx->opts->ghost_limit && e->size > ctx->opts->ghost_limit &&
	    strncmp(path, MEMFD_PREFIX, strlen(MEMFD_PREFIX))) {
		pr_err("pid %d fd %d: unlinked %s has %llu bytes, more than --ghost-limit %llu "
		       "(1M by default, as CRIU's): dump with a larger --ghost-limit\n",
		       pid, fd, path, (unsigned long long)e->size, ctx->opts->ghost_limit);
		return -EFBIG;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	/* O_NOATIME: reading the contents must not change the file the task keeps (-R) */
	src = open(self, O_RDONLY | O_CLOEXEC | O_NOATIME);
	if (src < 0 && errno == EPERM)
		src = open(self, O_RDONLY | O_CLOEXEC);
	if (src < 0) {
		pr_perror("pid %d: cannot reopen unlinked %s for its contents", pid, path);
		return neg_errno();
	}
	err = ghost_huge(pid, src, path, e);
	if (err)
		return err;
	img = img_open(ctx->dirfd, CR_IMG_GHOST, id, IMG_WRITE);
	if (!img)
		return -errno;
	err = ghost_copy_sparse(src, 0, img_raw_fd(img), IMG_RAW_DATA_OFF, e->size, &crc);
	cerr = img_close(img);
	if (err) {
		pr_errno(err, "pid %d: cannot copy unlinked %s into ghost-%u.img", pid, path, id);
		return err;
	}
	if (cerr)
		return cerr;
	e->has_ghost_crc32c = true;
	e->ghost_crc32c = crc;
	pr_debug("pid %d: ghost-%u.img: %llu bytes of unlinked %s\n", pid, id,
		 (unsigned long long)e->size, path);
	return 0;
}

void ghost_attrs_fill(RegFileEntry *e, const struct stat *st)
{
	e->has_uid = e->has_gid = e->has_atime_ns = e->has_mtime_ns = true;
	e->uid = st->st_uid;
	e->gid = st->st_gid;
	e->atime_ns = (uint64_t)st->st_atim.tv_sec * 1000000000ULL + (uint64_t)st->st_atim.tv_nsec;
	e->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + (uint64_t)st->st_mtim.tv_nsec;
}

#define XATTR_ALIGN 8

/* The list of names of @fd's extended attributes (malloc'ed, *@ret_len bytes), NULL if none. */
static int xattr_list(int fd, char **ret, size_t *ret_len)
{
	char self[64];
	ssize_t n;

	*ret = NULL;
	*ret_len = 0;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = listxattr(self, NULL, 0);
	if (n < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP))
		return 0;
	if (n <= 0)
		return n < 0 ? neg_errno() : 0;
	*ret = malloc((size_t)n);
	if (!*ret)
		return -ENOMEM;
	n = listxattr(self, *ret, (size_t)n);
	if (n < 0) {
		free(*ret);
		*ret = NULL;
		return neg_errno();
	}
	*ret_len = (size_t)n;
	return 0;
}

ssize_t ghost_xattrs_size(int fd)
{
	_cleanup_free_ char *list = NULL;
	size_t len, total = XATTR_ALIGN;
	char self[64];
	int err = xattr_list(fd, &list, &len);

	if (err || !list)
		return err;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	for (size_t off = 0; off < len; off += strlen(list + off) + 1) {
		ssize_t v = getxattr(self, list + off, NULL, 0);

		if (v < 0)
			return neg_errno();
		total += sizeof(XattrEntry) + sizeof(XattrEntry *) + strlen(list + off) + (size_t)v;
	}
	return (ssize_t)total;
}

int ghost_xattrs_fill(int fd, RegFileEntry *e, char *buf, size_t size)
{
	_cleanup_free_ char *list = NULL;
	char *end = buf + size, *at, self[64];
	XattrEntry *x, **v;
	size_t len, n = 0;
	int err = xattr_list(fd, &list, &len);

	if (err || !list)
		return err;
	for (size_t off = 0; off < len; off += strlen(list + off) + 1)
		n++;
	at = buf + (XATTR_ALIGN - (uintptr_t)buf % XATTR_ALIGN) % XATTR_ALIGN;
	x = (XattrEntry *)at;
	v = (XattrEntry **)(x + n);
	at = (char *)(v + n);
	if (at > end)
		return -EAGAIN; /* changed since ghost_xattrs_size() */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = 0;
	for (size_t off = 0; off < len; off += strlen(list + off) + 1, n++) {
		size_t nl = strlen(list + off);
		ssize_t vl;

		if (at + nl > end)
			return -EAGAIN;
		xattr_entry__init(&x[n]);
		memcpy(at, list + off, nl);
		x[n].name.data = (uint8_t *)at;
		x[n].name.len = nl;
		at += nl;
		vl = getxattr(self, list + off, at, (size_t)(end - at));
		if (vl < 0)
			return errno == ERANGE ? -EAGAIN : neg_errno();
		x[n].value.data = (uint8_t *)at;
		x[n].value.len = (size_t)vl;
		at += vl;
		v[n] = &x[n];
	}
	e->xattrs = v;
	e->n_xattrs = n;
	return 0;
}

/* ---- restore: the messages keep the restore's prefix ---------------------------------------- */

/*
 * The owner, mode, extended attributes and times of the unlinked file @fe on
 * @fd, in that order: chown() clears set-id bits, so the mode after it, and
 * the times last, after everything that changes them.
 */
static int ghost_attrs_set(int fd, const FileEntry *fe, const char *path)
{
	const RegFileEntry *r = fe->reg;
	struct timespec ts[2];

	if (r->has_uid && r->has_gid && fchown(fd, r->uid, r->gid)) {
		pr_perror("unlinked %s: cannot give it to %u:%u", path, r->uid, r->gid);
		return neg_errno();
	}
	if (fchmod(fd, r->mode & 07777)) {
		pr_perror("unlinked %s: cannot set its mode %o", path, r->mode & 07777);
		return neg_errno();
	}
	for (size_t i = 0; i < r->n_xattrs; i++) {
		const XattrEntry *x = r->xattrs[i];
		char name[256];

		if (!x->name.len || x->name.len >= sizeof(name) ||
		    memchr(x->name.data, 0, x->name.len)) {
			pr_err("files.img: file %u: a bad extended attribute name\n", fe->id);
			return -EINVAL;
		}
		memcpy(name, x->name.data, x->name.len);
		name[x->name.len] = '\0';
		if (fsetxattr(fd, name, x->value.data, x->value.len, 0)) {
			pr_perror("unlinked %s: cannot set its extended attribute %s", path, name);
			return neg_errno();
		}
	}
	if (!r->has_atime_ns || !r->has_mtime_ns)
		return 0;
	ts[0].tv_sec = (time_t)(r->atime_ns / 1000000000ULL);
	ts[0].tv_nsec = (long)(r->atime_ns % 1000000000ULL);
	ts[1].tv_sec = (time_t)(r->mtime_ns / 1000000000ULL);
	ts[1].tv_nsec = (long)(r->mtime_ns % 1000000000ULL);
	if (futimens(fd, ts)) {
		pr_perror("unlinked %s: cannot set its times", path);
		return neg_errno();
	}
	return 0;
}

static int ghost_copy(struct cr_img *img, const FileEntry *fe, int dst, const char *path)
{
	uint64_t size = img_raw_size(img);
	uint32_t crc = 0;
	int err;

	if (size != fe->reg->size) {
		pr_err("ghost-%u.img holds %llu bytes, unlinked %s had %llu\n", fe->id,
		       (unsigned long long)size, path, (unsigned long long)fe->reg->size);
		return -EBADMSG;
	}
	/* the image's holes are the file's (the dump copied data extents only) */
	err = ghost_copy_sparse(img_raw_fd(img), IMG_RAW_DATA_OFF, dst, 0, size, &crc);
	if (err) {
		pr_errno(err, "ghost-%u.img: cannot copy its data into unlinked %s", fe->id, path);
		return err;
	}
	if (fe->reg->has_ghost_crc32c && crc != fe->reg->ghost_crc32c) {
		pr_err("ghost-%u.img: crc32c %08x, the dump saved %08x\n", fe->id, crc,
		       fe->reg->ghost_crc32c);
		return -EBADMSG;
	}
	return 0;
}

/*
 * An MFD_HUGETLB memfd (hugetlbfs has no write()): sized, then filled through
 * a shared mapping, huge page by huge page; a page of zeros is left out (not
 * allocated, it reads the same). The pool must have the others.
 */
static int ghost_copy_huge(struct cr_img *img, const FileEntry *fe, int dst, const char *path)
{
	uint64_t size = img_raw_size(img), huge = (uint64_t)fe->reg->huge_page_kb * 1024, off;
	uint8_t *buf;
	uint32_t crc = 0;
	uint8_t *mem;
	int err = 0;

	if (size != fe->reg->size || !huge || size % huge) {
		pr_err("ghost-%u.img holds %llu bytes, hugetlb memfd %s had %llu in pages of "
		       "%llu\n",
		       fe->id, (unsigned long long)size, path, (unsigned long long)fe->reg->size,
		       (unsigned long long)huge);
		return -EBADMSG;
	}
	if (!size)
		return 0;
	if (ftruncate(dst, (off_t)size)) {
		pr_perror("hugetlb memfd %s: ftruncate to %llu", path, (unsigned long long)size);
		return neg_errno();
	}
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, dst, 0);
	if (mem == MAP_FAILED) {
		pr_perror("hugetlb memfd %s: mmap of %llu bytes", path, (unsigned long long)size);
		return neg_errno();
	}
	buf = malloc(huge);
	err = buf ? 0 : -ENOMEM;
	for (off = 0; !err && off < size; off += huge) {
		err = pread_full(img_raw_fd(img), buf, huge, IMG_RAW_DATA_OFF + off);
		if (err)
			break;
		crc = crc32c(crc, buf, huge);
		if (buf[0] || memcmp(buf, buf + 1, huge - 1))
			memcpy(mem + off, buf, huge);
	}
	munmap(mem, size);
	free(buf);
	if (err) {
		pr_errno(err, "ghost-%u.img: cannot read it for hugetlb memfd %s", fe->id, path);
		return err;
	}
	if (fe->reg->has_ghost_crc32c && crc != fe->reg->ghost_crc32c) {
		pr_err("ghost-%u.img: crc32c %08x, the dump saved %08x\n", fe->id, crc,
		       fe->reg->ghost_crc32c);
		return -EBADMSG;
	}
	return 0;
}

/* Copy the ghost image data into @dst, checking its size and crc32c. */
static int ghost_fill(struct restore_ctx *ctx, const FileEntry *fe, int dst, const char *path)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_GHOST, fe->id, IMG_READ);
	int err;

	if (!img)
		return neg_errno();
	err = fe->reg->has_huge_page_kb ? ghost_copy_huge(img, fe, dst, path)
					: ghost_copy(img, fe, dst, path);
	img_close(img);
	return err;
}

/* The fd of an earlier description of the same unlinked inode (to reopen it), or -ENOENT. */
static int same_ghost(const struct restore_ctx *ctx, size_t pos)
{
	const struct rst_files *f = ctx->files;
	const struct rst_kind *k = rst_kind_get(ctx, &reg_kind);
	const RegFileEntry *r = f->idx.by_id[pos]->reg;
	size_t i;

	if (!r->has_dev || !r->has_ino)
		return -ENOENT;
	for (i = 0; i < k->n && k->pos[i] < pos; i++) {
		const RegFileEntry *o = f->idx.by_id[k->pos[i]]->reg;

		if (f->fds[k->pos[i]] >= 0 && o->has_unlinked && o->unlinked && o->has_dev &&
		    o->has_ino && o->dev == r->dev && o->ino == r->ino)
			return f->fds[k->pos[i]];
	}
	return -ENOENT;
}

/*
 * An O_TMPFILE file (3.11) never had a name (/proc shows "DIR/#INO"): made
 * again in its directory with its own flags, so it stays linkable with
 * linkat(AT_EMPTY_PATH), or not with O_EXCL, as it was.
 */
static int create_tmpfile(struct restore_ctx *ctx, const FileEntry *fe, const char *path)
{
	_cleanup_free_ char *dir = strdup(path);
	int fd, err;

	if (!dir)
		return -ENOMEM;
	/* without O_APPEND while filled: pwrite() would append, holes or not */
	int flags = (int)(fe->reg->flags & ~(uint32_t)(O_CREAT | O_TRUNC | O_NOCTTY | O_APPEND)) |
		    O_CLOEXEC;

	/*
	 * In a tree's user namespace, opened from inside it: linkat(AT_EMPTY_PATH)
	 * wants CAP_DAC_READ_SEARCH in the opener's user namespace, which the
	 * tree's root has in its own, not in criu-like's.
	 */
	if (ns_user_own()) {
		fd = ns_user_open(dirname(dir), flags, 0600);
		if (fd < 0)
			return fd;
	} else {
		fd = open(dirname(dir), flags, 0600);
	}
	if (fd < 0) {
		pr_perror("unlinked %s: cannot make an O_TMPFILE file in %s", path, dir);
		return neg_errno();
	}
	err = ghost_fill(ctx, fe, fd, path);
	if (!err)
		err = ghost_attrs_set(fd, fe, path);
	if (!err && (fe->reg->flags & O_APPEND) &&
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_APPEND) < 0)
		err = neg_errno();
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Status flags F_SETFL takes: the rest of a memfd_create() file's f_flags is O_RDWR|O_LARGEFILE. */
#define MEMFD_SETFL_FLAGS ((uint32_t)(O_APPEND | O_NONBLOCK | O_NOATIME | O_DIRECT))

/*
 * The seals go on after the contents, which F_SEAL_WRITE and the size seals
 * would refuse: a memfd sealed against writes refuses them again.
 *
 * The description memfd_create() made is not counted as a writer of the
 * inode, a reopen for writing is: execveat() of the memfd then fails with
 * ETXTBSY. A read-write description (the first of the memfd: the one
 * memfd_create() returned, as programs keep it) gets the created file
 * itself. Executable modes ask for MFD_EXEC (6.3), which vm.memfd_noexec may
 * otherwise deny with F_SEAL_EXEC.
 */
static int create_memfd(struct restore_ctx *ctx, const FileEntry *fe, const char *path)
{
	bool seals = fe->reg->has_seals;
	bool exec = (fe->reg->mode & 0111) != 0;
	unsigned int huge = fe->reg->has_huge_page_kb ? fe->reg->huge_page_kb * 1024 : 0;
	/* the huge page size as a log2 above MFD_HUGE_SHIFT, as mmap()'s MAP_HUGE_SHIFT */
	unsigned int mflags = MFD_CLOEXEC | (seals ? MFD_ALLOW_SEALING : 0) |
			      (huge ? MFD_HUGETLB |
					       ((unsigned int)__builtin_ctz(huge) << MFD_HUGE_SHIFT)
				    : 0);
	const char *name = path + strlen(MEMFD_PREFIX);
	_cleanup_close_ int fd = memfd_create(name, mflags | (exec ? MFD_EXEC : 0));
	uint32_t fl = fe->reg->flags & ~(uint32_t)CR_O_LARGEFILE_KERNEL;
	int err;

	if (fd < 0 && exec && errno == EINVAL) /* before 6.3: no MFD_EXEC, and no noexec either */
		fd = memfd_create(name, mflags);
	if (fd < 0) {
		pr_perror("cannot create memfd %s", path);
		return neg_errno();
	}
	err = ghost_fill(ctx, fe, fd, path);
	if (!err)
		err = ghost_attrs_set(fd, fe, path);
	if (err)
		return err;
	if (seals && fe->reg->seals && fcntl(fd, F_ADD_SEALS, (int)fe->reg->seals) < 0) {
		pr_perror("memfd %s: cannot add its seals %#x", path, fe->reg->seals);
		return neg_errno();
	}
	if ((fl & O_ACCMODE) != O_RDWR || (fl & ~(uint32_t)O_ACCMODE & ~MEMFD_SETFL_FLAGS)) {
		pr_debug("memfd %s: reopened with flags %#x\n", path, fe->reg->flags);
		return rst_reopen_fd(fd, fe->reg->flags);
	}
	pr_debug("memfd %s: the memfd_create() description itself\n", path);
	if ((fl & MEMFD_SETFL_FLAGS) && fcntl(fd, F_SETFL, (int)(fl & MEMFD_SETFL_FLAGS))) {
		pr_perror("memfd %s: cannot set its flags %#x", path, fl);
		return neg_errno();
	}
	return TAKE_FD(fd);
}

/*
 * Where to create the file: at its own path when that is free, so that
 * /proc/PID/fd shows the same "PATH (deleted)" as before the dump; else under
 * a temporary name in the same directory (the same file system, as it was).
 */
static char *ghost_name(const char *path, uint32_t id)
{
	_cleanup_free_ char *dir = NULL;
	char *name;

	if (access(path, F_OK) && errno == ENOENT)
		return strdup(path);
	dir = strdup(path);
	if (!dir || asprintf(&name, "%s/.criu-like-ghost.%u.%d", dirname(dir), id, getpid()) < 0)
		return NULL;
	return name;
}

static int create_file(struct restore_ctx *ctx, const FileEntry *fe, const char *path)
{
	_cleanup_free_ char *tmp = ghost_name(path, fe->id);
	_cleanup_close_ int wfd = -1;
	struct dir_times dt;
	int fd, err;

	if (!tmp)
		return -ENOMEM;
	dir_times_save(&dt, tmp);
	wfd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (wfd < 0) {
		pr_perror("unlinked %s: cannot create %s for its contents", path, tmp);
		free(dt.dir);
		return neg_errno();
	}
	err = ghost_fill(ctx, fe, wfd, path);
	/* the saved owner, mode (which the umask would have cut at creation) and times */
	if (!err)
		err = ghost_attrs_set(wfd, fe, path);
	fd = err ? err
		 : open(tmp, (int)(fe->reg->flags & ~(uint32_t)(O_CREAT | O_TRUNC | O_EXCL)) |
				     O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && !err) {
		err = neg_errno();
		pr_perror("unlinked %s: cannot open %s", path, tmp);
	}
	if (unlink(tmp) && !err) {
		err = neg_errno();
		pr_perror("unlinked %s: cannot unlink %s", path, tmp);
	}
	dir_times_put_back(&dt);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}

/*
 * A directory removed while open (empty, then): made again at its path, or
 * next to it when the path is taken (its own removed parents made for it and
 * removed after), with its owner, mode, attributes and times, opened and
 * removed again.
 */
static int create_dir(const FileEntry *fe, const char *path)
{
	_cleanup_free_ char *name = ghost_name(path, fe->id);
	unsigned int made = 0;
	struct dir_times dt;
	int fd = -1, err;

	if (!name)
		return -ENOMEM;
	dir_times_save(&dt, name);
	err = mkdir_missing_parents(name, &made);
	if (!err && mkdir(name, 0700))
		err = neg_errno();
	if (err) {
		pr_errno(err, "removed directory %s: cannot make it again as %s", path, name);
		rmdir_made_parents(name, made);
		dir_times_put_back(&dt);
		return err;
	}
	fd = open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = fd < 0 ? neg_errno() : ghost_attrs_set(fd, fe, path);
	if (rmdir(name) && !err)
		err = neg_errno();
	if (rmdir_made_parents(name, made) && !err)
		err = neg_errno();
	dir_times_put_back(&dt);
	if (!err && (fe->reg->flags & O_PATH)) {
		int pfd = rst_reopen_fd(fd, fe->reg->flags);

		close(fd);
		fd = pfd;
		err = pfd < 0 ? pfd : 0;
	}
	if (err) {
		pr_errno(err, "removed directory %s: cannot make it again", path);
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}

int rst_ghost_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const char *path = ctx->files->paths[pos];
	int same = same_ghost(ctx, pos);
	int fd;

	if (fe->type == FILE_TYPE__FILE_DIR && same < 0)
		return create_dir(fe, path); /* an empty directory: position 0 */
	if (fe->type != FILE_TYPE__FILE_REG && fe->type != FILE_TYPE__FILE_DIR) {
		pr_err("file %u: unlinked %s is not a regular file\n", fe->id, path);
		return -EINVAL;
	}
	if (same >= 0)
		fd = rst_reopen_fd(same, fe->reg->flags);
	else if (!strncmp(path, MEMFD_PREFIX, strlen(MEMFD_PREFIX)))
		fd = create_memfd(ctx, fe, path);
	else if ((fe->reg->flags & O_TMPFILE) == O_TMPFILE)
		fd = create_tmpfile(ctx, fe, path);
	else
		fd = create_file(ctx, fe, path);
	if (fd < 0)
		return fd;
	if (!(fe->reg->flags & O_PATH) && lseek(fd, (off_t)fe->reg->pos, SEEK_SET) < 0) {
		int err = neg_errno();

		pr_perror("unlinked %s: cannot seek to %llu", path,
			  (unsigned long long)fe->reg->pos);
		close(fd);
		return err;
	}
	return fd;
}
