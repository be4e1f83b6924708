// SPDX-License-Identifier: GPL-2.0
/*
 * The contents of a tmpfs (criu-like/ns/tmpfs.c): a tmpfs holding every kind
 * of object is dumped, restored into a fresh tmpfs and compared name by
 * name (type, mode, owner, link count and hard link groups, size, data,
 * holes, atime and mtime to the nanosecond, device numbers, symlink targets,
 * xattrs); an overmounted directory is dumped as it is under the mount; a
 * target that is not empty, corrupt or truncated images and hostile paths
 * are refused, naming the image and the offset. Runs in a mount namespace
 * of its own (needs root).
 *
 * `test-tmpfs dump DIR IMGDIR` and `test-tmpfs restore DIR IMGDIR` only call
 * tmpfs_dump()/tmpfs_restore() with id 1 (scripts/bench/tmpfs.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <cmocka.h>

#include "crc32c.h"
#include "image.h"
#include "lib/logcap.h"
#include "log.h"
#include "tmpfs.h"
#include "util.h"

#include "tmpfs.pb-c.h"

#define GIB (1ull << 30)

struct ctx {
	char top[64]; /* a private tmpfs holding the rest */
	char src[96], dst[96], img[96], out[96];
	int imgfd;
	int ghost; /* an unlinked file of src, open during the dump */
};

/* ---- building the source -------------------------------------------------------------------- */

static void mount_tmpfs(const char *dir)
{
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(mount("tmpfs", dir, "tmpfs", 0, "size=2g"), 0);
}

static void at(const char *dir, const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

static void write_at(const char *dir, const char *name, off_t off, const void *data, size_t len)
{
	char p[512];
	int fd;

	at(dir, name, p, sizeof(p));
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, data, len, off), (ssize_t)len);
	close(fd);
}

static void truncate_at(const char *dir, const char *name, off_t size)
{
	char p[512];

	at(dir, name, p, sizeof(p));
	assert_int_equal(truncate(p, size), 0);
}

/* mode, owner, one xattr when @xattr, times with nanoseconds (atime before mtime: relatime) */
static void attrs_at(const char *dir, const char *name, mode_t mode, uid_t uid, gid_t gid,
		     const char *xattr, long t)
{
	struct timespec ts[2] = { { 1000000000 + t, 123456789 }, { 1100000000 + t, 987654321 } };
	char p[512];

	at(dir, name, p, sizeof(p));
	assert_int_equal(lchown(p, uid, gid), 0);
	if (mode != (mode_t)-1)
		assert_int_equal(chmod(p, mode), 0);
	if (xattr)
		assert_int_equal(lsetxattr(p, xattr, "v\0\xff", 3, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW), 0);
}

static void build_source(struct ctx *c)
{
	static char data[3 * 4096 + 17];
	const char *s = c->src;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char p[512], q[512];
	int sk;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 31 + (i >> 7));
	assert_int_equal(mkdir(strcat(strcpy(p, s), "/d"), 0755), 0);
	assert_int_equal(mkdir(strcat(strcpy(p, s), "/d/e"), 0755), 0);
	assert_int_equal(mkdir(strcat(strcpy(p, s), "/d/e/f"), 0755), 0);
	assert_int_equal(mkdir(strcat(strcpy(p, s), "/d/ro"), 0755), 0);
	assert_int_equal(mkdir(strcat(strcpy(p, s), "/empty"), 0755), 0);
	assert_int_equal(mkdir(strcat(strcpy(p, s), "/sticky"), 0755), 0);
	assert_int_equal(mkdir(strcat(strcpy(p, s), "/mnt"), 0755), 0);
	/* regular files: data, a sparse 1 GiB one, empty, all holes, a tail without a full page */
	write_at(s, "plain", 0, data, sizeof(data));
	write_at(s, "sparse", 0, data, 4096);
	write_at(s, "sparse", 512 << 20, data, 8192);
	write_at(s, "sparse", GIB - 100, data, 100);
	write_at(s, "empty-file", 0, "", 0);
	write_at(s, "holes", 0, "", 0);
	truncate_at(s, "holes", 10 << 20);
	write_at(s, "d/ro/inside", 0, "in a read-only directory\n", 25);
	write_at(s, "suid", 0, "#!/bin/sh\n", 10);
	write_at(s, "sgid", 0, "#!/bin/sh\n", 10);
	write_at(s, "we ird\n\xff name", 0, "odd\n", 4);
	write_at(s, "mnt/under", 0, "under the mount\n", 16);
	/* hard links: three names in two directories; a FIFO with two names */
	assert_int_equal(link(strcat(strcpy(p, s), "/plain"), strcat(strcpy(q, s), "/d/hard")), 0);
	assert_int_equal(link(p, strcat(strcpy(q, s), "/d/e/hard2")), 0);
	assert_int_equal(mkfifo(strcat(strcpy(p, s), "/fifo"), 0600), 0);
	assert_int_equal(link(p, strcat(strcpy(q, s), "/d/fifo2")), 0);
	/* device nodes, a socket file left by a closed socket */
	assert_int_equal(mknod(strcat(strcpy(p, s), "/null"), S_IFCHR | 0600, makedev(1, 3)), 0);
	assert_int_equal(mknod(strcat(strcpy(p, s), "/loop"), S_IFBLK | 0600, makedev(7, 200)), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", s);
	sk = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(sk, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(sk);
	/* symbolic links: relative, absolute (never followed), dangling */
	assert_int_equal(symlink("plain", strcat(strcpy(p, s), "/link")), 0);
	assert_int_equal(symlink("/etc/passwd", strcat(strcpy(p, s), "/abs")), 0);
	assert_int_equal(symlink("../nowhere/x", strcat(strcpy(p, s), "/d/dangling")), 0);
	/* an unlinked file still open: not in the walk, not in its way */
	c->ghost = open(strcat(strcpy(p, s), "/ghost"), O_RDWR | O_CREAT, 0600);
	assert_true(c->ghost >= 0);
	assert_int_equal(write(c->ghost, "ghost", 5), 5);
	assert_int_equal(unlink(p), 0);

	/* attributes last, directories after what they hold */
	attrs_at(s, "plain", 0640, 1001, 1002, "user.a", 1);
	attrs_at(s, "sparse", 0600, 0, 0, "trusted.t", 2);
	attrs_at(s, "empty-file", 0, 5, 6, NULL, 3);
	attrs_at(s, "holes", 0666, 0, 0, NULL, 4);
	attrs_at(s, "d/ro/inside", 0444, 0, 0, NULL, 5);
	attrs_at(s, "suid", 04755, 1000, 1000, "security.capability-like.x", 6);
	attrs_at(s, "sgid", 02711, 1000, 1000, NULL, 7);
	attrs_at(s, "we ird\n\xff name", 0644, 0, 0, NULL, 8);
	attrs_at(s, "mnt/under", 0644, 0, 0, NULL, 9);
	attrs_at(s, "fifo", 0620, 33, 33, "trusted.fifo", 10);
	attrs_at(s, "null", 0666, 0, 0, NULL, 11);
	attrs_at(s, "loop", 0660, 0, 6, NULL, 12);
	attrs_at(s, "sock", 0755, 1000, 1000, NULL, 13);
	attrs_at(s, "link", -1, 1000, 1000, "trusted.lnk", 14);
	attrs_at(s, "abs", -1, 0, 0, NULL, 15);
	attrs_at(s, "d/dangling", -1, 7, 7, NULL, 16);
	attrs_at(s, "d/e/f", 0700, 1000, 1000, NULL, 17);
	attrs_at(s, "d/e", 0755, 0, 0, NULL, 18);
	attrs_at(s, "d/ro", 0555, 2, 2, NULL, 19);
	attrs_at(s, "d", 0750, 1000, 100, "user.dir", 20);
	attrs_at(s, "empty", 0500, 0, 0, NULL, 21);
	attrs_at(s, "sticky", 01777, 0, 0, NULL, 22);
	attrs_at(s, "mnt", 0711, 0, 0, NULL, 23);
	attrs_at(s, ".", 01770, 1000, 1000, "user.root", 24);
	/* a tmpfs mounted on mnt: not part of this one, and its directory "under" is */
	assert_int_equal(mount("tmpfs", strcat(strcpy(p, s), "/mnt"), "tmpfs", 0, NULL), 0);
	write_at(s, "mnt/over", 0, "on the mount\n", 13);
}

/* ---- comparing ------------------------------------------------------------------------------ */

struct ino_pair {
	ino_t a, b;
};

struct cmp {
	bool link_atime_read; /* symlinks: the dump's readlink() updated the atime of @a's */
	struct ino_pair pairs[256];
	size_t n;
	char path[1024];
};

/* The same hard link groups: an inode of one tree always goes with the same of the other. */
static void same_group(struct cmp *m, ino_t a, ino_t b)
{
	for (size_t i = 0; i < m->n; i++) {
		if (m->pairs[i].a == a || m->pairs[i].b == b) {
			if (m->pairs[i].a != a || m->pairs[i].b != b)
				fail_msg("%s: not in the same group of hard links", m->path);
			return;
		}
	}
	assert_true(m->n < 256);
	m->pairs[m->n++] = (struct ino_pair){ a, b };
}

static void same_xattrs(struct cmp *m, const char *a, const char *b)
{
	char la[4096], lb[4096], va[256], vb[256];
	ssize_t na = llistxattr(a, la, sizeof(la)), nb = llistxattr(b, lb, sizeof(lb));

	assert_true(na >= 0 && nb >= 0);
	if (na != nb || memcmp(la, lb, na))
		fail_msg("%s: other xattrs (%zd and %zd bytes of names)", m->path, na, nb);
	for (char *n = la; n < la + na; n += strlen(n) + 1) {
		ssize_t x = lgetxattr(a, n, va, sizeof(va)), y = lgetxattr(b, n, vb, sizeof(vb));

		if (x != y || x < 0 || memcmp(va, vb, x))
			fail_msg("%s: xattr %s differs", m->path, n);
	}
}

/* Data and holes: the same runs of data, the same bytes. */
static void same_data(struct cmp *m, const char *a, const char *b, off_t size)
{
	int fa = open(a, O_RDONLY | O_NOATIME), fb = open(b, O_RDONLY | O_NOATIME);
	static char ba[1 << 16], bb[1 << 16];
	off_t off = 0;

	assert_true(fa >= 0 && fb >= 0);
	while (off < size) {
		off_t da = lseek(fa, off, SEEK_DATA), db = lseek(fb, off, SEEK_DATA), ha, hb;

		if (da != db)
			fail_msg("%s: data at %lld here, at %lld there", m->path, (long long)da,
				 (long long)db);
		if (da < 0)
			break;
		ha = lseek(fa, da, SEEK_HOLE);
		hb = lseek(fb, db, SEEK_HOLE);
		if (ha != hb)
			fail_msg("%s: a hole at %lld here, at %lld there", m->path, (long long)ha,
				 (long long)hb);
		for (off = da; off < ha;) {
			ssize_t n = pread(fa, ba, min((off_t)sizeof(ba), ha - off), off);

			assert_true(n > 0);
			assert_int_equal(pread(fb, bb, n, off), n);
			if (memcmp(ba, bb, n))
				fail_msg("%s: other data at %lld", m->path, (long long)off);
			off += n;
		}
	}
	close(fa);
	close(fb);
}

static void same_tree(struct cmp *m, const char *a, const char *b);

static void same_inode(struct cmp *m, const char *a, const char *b, bool root)
{
	struct stat sa, sb;

	assert_int_equal(lstat(a, &sa), 0);
	if (lstat(b, &sb))
		fail_msg("%s: missing from the restored tmpfs", m->path);
	if (sa.st_mode != sb.st_mode || sa.st_uid != sb.st_uid || sa.st_gid != sb.st_gid ||
	    sa.st_nlink != sb.st_nlink || sa.st_size != sb.st_size || sa.st_rdev != sb.st_rdev)
		fail_msg("%s: mode %o/%o, owner %u:%u/%u:%u, links %lu/%lu, size %lld/%lld",
			 m->path, sa.st_mode, sb.st_mode, sa.st_uid, sa.st_gid, sb.st_uid,
			 sb.st_gid, (unsigned long)sa.st_nlink, (unsigned long)sb.st_nlink,
			 (long long)sa.st_size, (long long)sb.st_size);
	if (S_ISLNK(sa.st_mode) && m->link_atime_read)
		sa.st_atim = sb.st_atim;
	if (sa.st_atim.tv_sec != sb.st_atim.tv_sec || sa.st_atim.tv_nsec != sb.st_atim.tv_nsec ||
	    sa.st_mtim.tv_sec != sb.st_mtim.tv_sec || sa.st_mtim.tv_nsec != sb.st_mtim.tv_nsec)
		fail_msg("%s: times %ld.%09ld %ld.%09ld / %ld.%09ld %ld.%09ld", m->path,
			 sa.st_atim.tv_sec, sa.st_atim.tv_nsec, sa.st_mtim.tv_sec,
			 sa.st_mtim.tv_nsec, sb.st_atim.tv_sec, sb.st_atim.tv_nsec,
			 sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
	if (!S_ISDIR(sa.st_mode) && sa.st_blocks != sb.st_blocks)
		fail_msg("%s: %lld blocks here, %lld there", m->path, (long long)sa.st_blocks,
			 (long long)sb.st_blocks);
	if (!S_ISDIR(sa.st_mode))
		same_group(m, sa.st_ino, sb.st_ino);
	same_xattrs(m, a, b);
	if (S_ISREG(sa.st_mode))
		same_data(m, a, b, sa.st_size);
	if (S_ISLNK(sa.st_mode)) {
		char ta[256] = "", tb[256] = "";

		assert_true(readlink(a, ta, sizeof(ta)) > 0);
		assert_true(readlink(b, tb, sizeof(tb)) > 0);
		if (strcmp(ta, tb))
			fail_msg("%s: -> %s / -> %s", m->path, ta, tb);
	}
	(void)root;
}

static int str_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The names of directory @dir, sorted, in @names (freed by the caller). */
static size_t list_dir(const char *dir, char **names, size_t max)
{
	DIR *d = fdopendir(open(dir, O_RDONLY | O_DIRECTORY | O_NOATIME));
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			assert_true(n < max);
			names[n++] = strdup(de->d_name);
		}
	closedir(d);
	qsort(names, n, sizeof(*names), str_cmp);
	return n;
}

static void same_tree(struct cmp *m, const char *a, const char *b)
{
	char *na[64], *nb[64], pa[1024], pb[1024];
	size_t n = list_dir(a, na, 64), k = list_dir(b, nb, 64), plen = strlen(m->path);

	for (size_t i = 0; i < n || i < k; i++)
		if (i >= n || i >= k || strcmp(na[i], nb[i]))
			fail_msg("%s: other names (%s / %s)", m->path, i < n ? na[i] : "-",
				 i < k ? nb[i] : "-");
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		snprintf(pa, sizeof(pa), "%s/%s", a, na[i]);
		snprintf(pb, sizeof(pb), "%s/%s", b, nb[i]);
		snprintf(m->path + plen, sizeof(m->path) - plen, "/%s", na[i]);
		same_inode(m, pa, pb, false);
		assert_int_equal(lstat(pa, &st), 0);
		if (S_ISDIR(st.st_mode))
			same_tree(m, pa, pb);
		m->path[plen] = '\0';
		free(na[i]);
		free(nb[i]);
	}
}

/* Compare @a and @b, the roots included (reading nothing: O_NOATIME). */
static void compare_trees(const char *a, const char *b, bool link_atime_read)
{
	struct cmp *m = calloc(1, sizeof(*m));

	m->link_atime_read = link_atime_read;
	strcpy(m->path, ".");
	same_inode(m, a, b, true);
	same_tree(m, a, b);
	free(m);
}

/* ---- fixtures ------------------------------------------------------------------------------- */

static int in_private_ns(void)
{
	static int done;

	if (!done) {
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			return -errno;
		done = 1;
	}
	return 0;
}

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	int err = getuid() != 0 ? -EPERM : in_private_ns();

	if (err) {
		free(c);
		return err;
	}
	strcpy(c->top, "/tmp/test-tmpfs.XXXXXX");
	if (!mkdtemp(c->top) || mount("tmpfs", c->top, "tmpfs", 0, "size=3g"))
		return -errno;
	snprintf(c->src, sizeof(c->src), "%s/src", c->top);
	snprintf(c->dst, sizeof(c->dst), "%s/dst", c->top);
	snprintf(c->img, sizeof(c->img), "%s/img", c->top);
	snprintf(c->out, sizeof(c->out), "%s/outside", c->top);
	mkdir(c->img, 0700);
	mkdir(c->out, 0700);
	c->imgfd = img_dir_open(c->img, false);
	c->ghost = -1;
	*state = c;
	return c->imgfd < 0 ? c->imgfd : 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	logcap_stop();
	if (c->ghost >= 0)
		close(c->ghost);
	close(c->imgfd);
	umount2(c->top, MNT_DETACH);
	rmdir(c->top);
	free(c);
	return 0;
}

static int open_dir(const char *p)
{
	int fd = open(p, O_RDONLY | O_DIRECTORY);

	assert_true(fd >= 0);
	return fd;
}

static int dump_dir(const char *dir, int imgfd)
{
	int fd = open_dir(dir), r = tmpfs_dump(fd, imgfd, 1);

	close(fd);
	return r;
}

static int restore_dir(const char *dir, int imgfd)
{
	int fd = open_dir(dir), r = tmpfs_restore(fd, imgfd, 1);

	close(fd);
	return r;
}

/* ---- the tests ------------------------------------------------------------------------------ */

static void test_roundtrip(void **state)
{
	struct ctx *c = *state;
	struct stat st;
	char p[256];

	mount_tmpfs(c->src);
	build_source(c);
	assert_int_equal(dump_dir(c->src, c->imgfd), 0);
	mount_tmpfs(c->dst);
	assert_int_equal(restore_dir(c->dst, c->imgfd), 0);

	/* what the dump must have seen: under the mount, not the mount */
	assert_int_equal(umount(strcat(strcpy(p, c->src), "/mnt")), 0);
	compare_trees(c->src, c->dst, false);

	/* the 1 GiB sparse file was not written densely: 16 KiB of data in the image */
	at(c->img, "tmpfs-data-1.img", p, sizeof(p));
	assert_int_equal(stat(p, &st), 0);
	assert_true(st.st_size < (1 << 20));
	at(c->dst, "sparse", p, sizeof(p));
	assert_int_equal(stat(p, &st), 0);
	assert_true(st.st_blocks * 512 < (1 << 20));
	/* the unlinked file is not there, and nothing else is */
	at(c->dst, "ghost", p, sizeof(p));
	assert_int_not_equal(lstat(p, &st), 0);
}

/* The same dump twice gives the same images (sorted names); atimes untouched by the dump. */
static void test_dump_changes_nothing(void **state)
{
	struct ctx *c = *state;
	struct stat a, b;
	char p[256];

	mount_tmpfs(c->src);
	build_source(c);
	at(c->src, "plain", p, sizeof(p));
	assert_int_equal(lstat(p, &a), 0);
	assert_int_equal(dump_dir(c->src, c->imgfd), 0);
	assert_int_equal(lstat(p, &b), 0);
	assert_int_equal(a.st_atim.tv_sec, b.st_atim.tv_sec);
	assert_int_equal(a.st_atim.tv_nsec, b.st_atim.tv_nsec);
}

/*
 * Without a private copy of the mount (an unbindable mount cannot be
 * cloned), the walk goes through the mount itself: a mount point under it is
 * refused, and without one the tmpfs comes back the same.
 */
static void test_no_private_copy(void **state)
{
	struct ctx *c = *state;
	const char *log;
	char p[256];

	mount_tmpfs(c->src);
	build_source(c);
	assert_int_equal(mount(NULL, c->src, NULL, MS_UNBINDABLE, NULL), 0);
	logcap_start(LOG_INFO);
	assert_int_equal(dump_dir(c->src, c->imgfd), -EBUSY);
	log = logcap_stop();
	assert_in_log(log, "no private copy of the mount");
	assert_in_log(log, "tmpfs 1: mnt is a mount point");
	assert_int_equal(umount(strcat(strcpy(p, c->src), "/mnt")), 0);
	assert_int_equal(dump_dir(c->src, c->imgfd), 0);
	mount_tmpfs(c->dst);
	assert_int_equal(restore_dir(c->dst, c->imgfd), 0);
	/* no noatime mount: readlink() touched the atimes of the source's symlinks */
	compare_trees(c->src, c->dst, true);
}

static void test_not_empty(void **state)
{
	struct ctx *c = *state;
	const char *log;

	mount_tmpfs(c->src);
	write_at(c->src, "x", 0, "x", 1);
	assert_int_equal(dump_dir(c->src, c->imgfd), 0);
	logcap_start(-1);
	assert_int_equal(restore_dir(c->src, c->imgfd), -ENOTEMPTY);
	log = logcap_stop();
	assert_in_log(log, "tmpfs 1: the directory to restore into is not empty (x)");
}

static void flip_byte(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	unsigned char b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

/* Read the last byte of @path (@size bytes), or put back @b there. */
static int last_byte(const char *path, off_t size, int b)
{
	int fd = open(path, O_RDWR);
	unsigned char c = (unsigned char)b;

	assert_true(fd >= 0);
	if (b < 0)
		assert_int_equal(pread(fd, &c, 1, size - 1), 1);
	else
		assert_int_equal(pwrite(fd, &c, 1, size - 1), 1);
	close(fd);
	return c;
}

/* A changed byte anywhere, a truncated file: refused with the name of the image and the offset. */
static void test_corrupt(void **state)
{
	struct ctx *c = *state;
	char p[256], dst[128];
	const char *log;
	struct stat st;
	int last;

	mount_tmpfs(c->src);
	build_source(c);
	assert_int_equal(dump_dir(c->src, c->imgfd), 0);

	/* the data: the first extent's byte 5 */
	at(c->img, "tmpfs-data-1.img", p, sizeof(p));
	flip_byte(p, IMG_RAW_DATA_OFF + 5);
	snprintf(dst, sizeof(dst), "%s.1", c->dst);
	mount_tmpfs(dst);
	logcap_start(-1);
	assert_int_equal(restore_dir(dst, c->imgfd), -EBADMSG);
	log = logcap_stop();
	assert_in_log(log, "tmpfs-data-1.img: offset 4096: the data of /");
	assert_in_log(log, "does not match its crc32c");
	flip_byte(p, IMG_RAW_DATA_OFF + 5);

	/* the data image cut short (its last byte kept, to be put back) */
	assert_int_equal(stat(p, &st), 0);
	last = last_byte(p, st.st_size, -1);
	assert_int_equal(truncate(p, st.st_size - 1), 0);
	snprintf(dst, sizeof(dst), "%s.2", c->dst);
	mount_tmpfs(dst);
	logcap_start(-1);
	assert_int_equal(restore_dir(dst, c->imgfd), -EBADMSG);
	log = logcap_stop();
	assert_in_log(log, "tmpfs-data-1.img: offset ");
	assert_in_log(log, "(truncated)");
	last_byte(p, st.st_size, last);

	/* the records: a byte of the third one's payload */
	at(c->img, "tmpfs-1.img", p, sizeof(p));
	flip_byte(p, 100);
	snprintf(dst, sizeof(dst), "%s.3", c->dst);
	mount_tmpfs(dst);
	logcap_start(-1);
	assert_int_equal(restore_dir(dst, c->imgfd), -EBADMSG);
	log = logcap_stop();
	assert_in_log(log, "tmpfs-1.img: offset ");
	flip_byte(p, 100);

	/* the records cut short */
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(truncate(p, st.st_size - 20), 0);
	snprintf(dst, sizeof(dst), "%s.4", c->dst);
	mount_tmpfs(dst);
	logcap_start(-1);
	assert_int_not_equal(restore_dir(dst, c->imgfd), 0);
	log = logcap_stop();
	assert_in_log(log, "tmpfs-1.img: offset ");
}

/* ---- hostile images --------------------------------------------------------------------------- */

static void entry_init(TmpfsEntry *e, const char *path, mode_t mode)
{
	tmpfs_entry__init(e);
	e->path.data = (uint8_t *)path;
	e->path.len = strlen(path);
	e->has_mode = e->has_uid = e->has_gid = true;
	e->has_atime_sec = e->has_atime_nsec = e->has_mtime_sec = e->has_mtime_nsec = true;
	e->mode = mode;
	if (S_ISREG(mode)) {
		e->has_size = true;
		e->size = 0;
	}
}

/* An image of the root and @n more records, with @data as the data image's contents. */
static void write_image(struct ctx *c, TmpfsEntry *recs, size_t n, const void *data, size_t len)
{
	struct cr_img *img = img_open(c->imgfd, CR_IMG_TMPFS, 1, IMG_WRITE);
	struct cr_img *d = img_open(c->imgfd, CR_IMG_TMPFS_DATA, 1, IMG_WRITE);
	TmpfsEntry root;

	assert_non_null(img);
	assert_non_null(d);
	entry_init(&root, "", S_IFDIR | 0755);
	assert_int_equal(img_write_record(img, &root.base), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(img_write_record(img, &recs[i].base), 0);
	if (len)
		assert_int_equal(img_write_raw(d, data, len), 0);
	assert_int_equal(img_close(d), 0);
	assert_int_equal(img_close(img), 0);
}

/* Restore the image into a fresh tmpfs: refused with @expect in the log, nothing outside. */
static void refused(struct ctx *c, int n, const char *expect)
{
	char dst[128], p[256];
	const char *log;
	int r;

	snprintf(dst, sizeof(dst), "%s.%d", c->dst, n);
	mount_tmpfs(dst);
	logcap_start(-1);
	r = restore_dir(dst, c->imgfd);
	log = logcap_stop();
	if (r == 0)
		fail_msg("case %d restored; expected: %s", n, expect);
	assert_in_log(log, expect);
	at(c->out, "x", p, sizeof(p));
	assert_int_not_equal(access(p, F_OK), 0);
}

static void test_hostile_paths(void **state)
{
	static const char *const paths[] = { "../outside/x", "/x",    "a//b", "a/", ".",
					     "a/../b",	     "a/./b", "..",   "" };
	struct ctx *c = *state;
	TmpfsEntry e[3];
	char nul[] = "a\0b";
	int n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		entry_init(&e[0], paths[i], S_IFREG | 0644);
		write_image(c, e, 1, NULL, 0);
		refused(c, n++, "tmpfs-1.img: offset ");
		refused(c, n++, "record 1: path \"");
	}
	entry_init(&e[0], "x", S_IFREG | 0644);
	e[0].path.data = (uint8_t *)nul;
	e[0].path.len = 3;
	write_image(c, e, 1, NULL, 0);
	refused(c, n++, "a NUL byte in the path");

	/* a symbolic link to a directory outside, then a name under it: never followed */
	char out[128];

	snprintf(out, sizeof(out), "%s", c->out);
	entry_init(&e[0], "a", S_IFLNK | 0777);
	e[0].has_target = true;
	e[0].target.data = (uint8_t *)out;
	e[0].target.len = strlen(out);
	entry_init(&e[1], "a/x", S_IFREG | 0644);
	write_image(c, e, 2, NULL, 0);
	refused(c, n++, "cannot open the directory /a");

	/* a link to a record that comes later, or to itself */
	entry_init(&e[0], "x", S_IFREG | 0644);
	e[0].has_link = true;
	e[0].link = 1;
	write_image(c, e, 1, NULL, 0);
	refused(c, n++, "a link to record 1, not an earlier one with links");

	/* an extent past the file's size, and past the data */
	TmpfsExtent x = TMPFS_EXTENT__INIT, *xp = &x;

	entry_init(&e[0], "x", S_IFREG | 0644);
	e[0].size = 4;
	e[0].n_extents = 1;
	e[0].extents = &xp;
	x.off = 2;
	x.len = 4;
	write_image(c, e, 1, "abcd", 4);
	refused(c, n++, "extent 0 [2, +4) out of order or past the file's size 4");
	x.off = 0;
	x.len = 4;
	x.crc32c = crc32c(0, "abcd", 4);
	write_image(c, e, 1, "ab", 2);
	refused(c, n++, "extent 0 of 4 bytes past the end of tmpfs-data-1.img");
	/* data that no record has */
	write_image(c, e, 1, "abcdef", 6);
	refused(c, n++, "2 bytes of data that no file has");

	/* a mode with bits that are no mode's, a directory as a root's child without times */
	entry_init(&e[0], "x", S_IFREG | 0644 | 0x10000000);
	write_image(c, e, 1, NULL, 0);
	refused(c, n++, "/x: no mode, owner or times, or bad ones");
}

static int run_cli(int argc, char **argv)
{
	int dirfd, fd, r;

	if (argc != 4 || (strcmp(argv[1], "dump") && strcmp(argv[1], "restore"))) {
		fprintf(stderr, "usage: %s dump|restore DIR IMGDIR\n", argv[0]);
		return 2;
	}
	dirfd = img_dir_open(argv[3], !strcmp(argv[1], "dump"));
	fd = open(argv[2], O_RDONLY | O_DIRECTORY);
	if (dirfd < 0 || fd < 0) {
		fprintf(stderr, "cannot open %s or %s\n", argv[2], argv[3]);
		return 1;
	}
	r = !strcmp(argv[1], "dump") ? tmpfs_dump(fd, dirfd, 1) : tmpfs_restore(fd, dirfd, 1);
	return r ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dump_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_private_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_paths, setup, teardown),
	};

	if (argc > 1)
		return run_cli(argc, argv);
	if (getuid() != 0) {
		printf("test-tmpfs: needs root (mounts tmpfs in a mount namespace of its own)\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
