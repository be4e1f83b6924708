// SPDX-License-Identifier: GPL-2.0
/*
 * The contents of a tmpfs mounted in the tree's mount namespace (the
 * container's in the ns modes; elsewhere one the test unshares): regular
 * files (one of 3 MiB, an empty one, a sparse one with its holes), nested
 * and empty directories, symbolic links (relative, absolute, dangling),
 * hard links across directories, a FIFO, character and block devices,
 * setuid, setgid and sticky modes, other owners, times to the nanosecond,
 * user and trusted xattrs, and a file deleted while open. After the restore
 * a description of every name (type, mode, owner, size, times, link groups,
 * device numbers, targets, xattrs, the data's checksum and where its holes
 * are) is the same byte for byte, and so is the deleted file's data.
 * What a container of a user namespace of its own cannot make (device
 * nodes, trusted xattrs) is left out there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

#define BIG (3u << 20)
#define SPARSE_AT (8u << 20)
#define DELETED_LEN 70000

struct desc {
	char **line;
	size_t n, cap;
	/* inodes seen, for hard links: the first path of each */
	ino_t ino[64];
	char *first[64];
	int n_ino;
};

static int add(struct desc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add(struct desc *d, const char *fmt, ...)
{
	va_list ap;
	char *l;

	va_start(ap, fmt);
	if (vasprintf(&l, fmt, ap) < 0)
		l = NULL;
	va_end(ap);
	if (!l)
		return neg_errno();
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->line = realloc(d->line, d->cap * sizeof(*d->line));
	}
	d->line[d->n++] = l;
	return 0;
}

/* The xattrs of @path (no following) as "name=hex" pairs, sorted by the list order. */
static void xattrs(const char *path, char *out, size_t size)
{
	char names[4096], val[512];
	ssize_t n = llistxattr(path, names, sizeof(names)), v;
	size_t used = 0;

	out[0] = '\0';
	for (char *p = names; n > 0 && p < names + n; p += strlen(p) + 1) {
		v = lgetxattr(path, p, val, sizeof(val));
		used += (size_t)snprintf(out + used, size - used, " %s=", p);
		for (ssize_t i = 0; i < v && used < size - 3; i++)
			used += (size_t)snprintf(out + used, size - used, "%02x",
						 (unsigned char)val[i]);
	}
}

/* A regular file's data: its checksum, and where its data and holes lie. */
static int data_of(const char *path, char *out, size_t size)
{
	int fd = open(path, O_RDONLY | O_NOATIME);
	static char buf[1 << 16];
	uint64_t csum = 0;
	size_t used = 0;
	off_t pos = 0, end;
	ssize_t n;

	if (fd < 0)
		return neg_errno();
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		csum = csum * 31 + test_csum(buf, (size_t)n);
	end = lseek(fd, 0, SEEK_END);
	used += (size_t)snprintf(out, size, "csum %016llx data", (unsigned long long)csum);
	while (pos < end) {
		off_t d = lseek(fd, pos, SEEK_DATA), h;

		if (d < 0)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		used += (size_t)snprintf(out + used, size - used, " [%lld,%lld)", (long long)d,
					 (long long)h);
		pos = h;
	}
	close(fd);
	return n < 0 ? neg_errno() : 0;
}

static int walk(struct desc *d, const char *dir, const char *rel)
{
	DIR *dp;
	struct dirent *de;
	char path[4096], r[4096], extra[8192], x[4096];

	/* O_NOATIME: reading the directory does not change what is compared */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOATIME);

	dp = dfd < 0 ? NULL : fdopendir(dfd);
	if (!dp)
		return neg_errno();
	while ((de = readdir(dp))) {
		struct stat st;
		int i;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		snprintf(r, sizeof(r), "%s%s", rel, de->d_name);
		if (lstat(path, &st))
			return neg_errno();
		extra[0] = '\0';
		if (S_ISREG(st.st_mode) && data_of(path, extra, sizeof(extra)))
			return neg_errno();
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(path, x, sizeof(x) - 1);

			x[n > 0 ? n : 0] = '\0';
			snprintf(extra, sizeof(extra), "-> %s", x);
		}
		if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
			snprintf(extra, sizeof(extra), "rdev %u:%u", major(st.st_rdev),
				 minor(st.st_rdev));
		/* a hard link: its group, named by its first name in sort order (describe()) */
		for (i = 0; i < d->n_ino && d->ino[i] != st.st_ino; i++)
			;
		if (st.st_nlink > 1 && !S_ISDIR(st.st_mode)) {
			if (i == d->n_ino && d->n_ino < 64) {
				d->ino[d->n_ino] = st.st_ino;
				d->first[d->n_ino++] = strdup(r);
			} else if (i < d->n_ino && strcmp(r, d->first[i]) < 0) {
				free(d->first[i]);
				d->first[i] = strdup(r);
			}
		}
		xattrs(path, x, sizeof(x));
		/* a symlink's atime: readlink() above changed it */
		if (add(d,
			"%s mode %o uid %u gid %u size %lld nlink %lu blocks %lld mtime %lld.%09ld "
			"atime %lld.%09ld %s%s link #%d",
			r, st.st_mode, st.st_uid, st.st_gid, (long long)st.st_size,
			(unsigned long)st.st_nlink, (long long)st.st_blocks,
			(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
			S_ISLNK(st.st_mode) ? 0LL : (long long)st.st_atim.tv_sec,
			S_ISLNK(st.st_mode) ? 0L : st.st_atim.tv_nsec, extra, x,
			st.st_nlink > 1 && !S_ISDIR(st.st_mode) && i < d->n_ino ? i : -1))
			return neg_errno();
		if (S_ISDIR(st.st_mode)) {
			char sub[4096 + 2];

			snprintf(sub, sizeof(sub), "%s/", r);
			if (walk(d, path, sub))
				return neg_errno();
		}
	}
	closedir(dp);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The whole tmpfs, one line per name, sorted; the root's own line first. */
static char *describe(const char *root)
{
	struct desc d = { 0 };
	struct stat st;
	size_t len = 0, i;
	char x[4096], *out;

	if (lstat(root, &st))
		return NULL;
	xattrs(root, x, sizeof(x));
	if (walk(&d, root, ""))
		return NULL;
	/* sorted by name, then the link column made stable: the first name in sort order */
	qsort(d.line, d.n, sizeof(*d.line), cmp);
	for (i = 0; i < d.n; i++)
		len += strlen(d.line[i]) + 1;
	out = malloc(2 * len + 256 + sizeof(x));
	if (!out)
		return NULL;
	len = (size_t)sprintf(out, "/ mode %o uid %u gid %u mtime %lld.%09ld%s\n", st.st_mode,
			      st.st_uid, st.st_gid, (long long)st.st_mtim.tv_sec,
			      st.st_mtim.tv_nsec, x);
	for (i = 0; i < d.n; i++) {
		char *l = strrchr(d.line[i], '#');
		int k = l ? atoi(l + 1) : -1;

		/* the link group's number (walk order) replaced by its first name */
		len += (size_t)sprintf(out + len, "%.*s%s\n", (int)(l ? l - d.line[i] : 0),
				       d.line[i], k >= 0 && k < d.n_ino ? d.first[k] : "-");
		free(d.line[i]);
	}
	free(d.line);
	for (int k = 0; k < d.n_ino; k++)
		free(d.first[k]);
	return out;
}

static int put(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	ssize_t n = fd < 0 ? -1 : write(fd, data, len);

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)len ? 0 : neg_errno();
}

static int stamp(const char *path, long sec, long nsec)
{
	struct timespec ts[2] = { { sec - 1000, nsec / 2 }, { sec, nsec } };

	return utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
}

/* What a user namespace may not make is left out: 0, 1 when refused for that, -1 on error. */
static int maybe(int ret)
{
	return ret && (errno == EPERM || errno == EACCES) ? 1 : ret;
}

static int fill(const char *t, void *big)
{
	char p[4096 + 64], q[4096 + 64];
	int fd;

	/* P(): a path of the tmpfs; Q(): a second one in the same call */
#define P(name) (snprintf(p, sizeof(p), "%.4000s/%s", t, name), p)
#define Q(name) (snprintf(q, sizeof(q), "%.4000s/%s", t, name), q)
	if (mkdir(P("dir"), 0755) || mkdir(P("dir/sub"), 0700) ||
	    mkdir(P("dir/sub/deeper"), 0750) || mkdir(P("empty"), 0555) ||
	    mkdir(P("sticky"), 01777))
		return neg_errno();
	datagen(big, BIG, 7);
	if (put(P("big"), big, BIG, 0644) || put(P("empty-file"), "", 0, 0600) ||
	    put(P("dir/sub/deeper/leaf"), "leaf\n", 5, 0640) ||
	    put(P("setuid"), "#!/bin/sh\n", 10, 0755) ||
	    put(P("dir/shared"), "two names\n", 10, 0644))
		return neg_errno();
	fd = open(P("sparse"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || pwrite(fd, "head", 4, 0) != 4 ||
	    pwrite(fd, "tail", 4, SPARSE_AT + 123) != 4 || ftruncate(fd, SPARSE_AT * 2) ||
	    close(fd))
		return neg_errno();
	if (link(P("dir/shared"), Q("dir/sub/shared-too")) ||
	    link(P("dir/shared"), Q("shared-3")) || symlink("dir/sub/deeper/leaf", P("rel-link")) ||
	    symlink("/etc/passwd", P("abs-link")) || symlink("nowhere/at/all", P("dangling")) ||
	    mkfifo(P("fifo"), 0620) || link(P("fifo"), Q("dir/fifo-too")))
		return neg_errno();
	if (chmod(P("setuid"), 04755) || chown(P("dir/sub"), 1000, 1000) ||
	    lchown(P("rel-link"), 1001, 1002) || chown(P("fifo"), 0, 5) ||
	    chown(P("empty-file"), 4242, 4343))
		return neg_errno();
	if (chown(P("dir/sub/deeper"), 0, 1000) || chmod(P("dir/sub/deeper"), 02750))
		return neg_errno();
	if (maybe(mknod(P("null"), S_IFCHR | 0666, makedev(1, 3))) < 0 ||
	    maybe(mknod(P("dir/loop"), S_IFBLK | 0660, makedev(7, 200))) < 0)
		return neg_errno();
	if (lsetxattr(P("big"), "user.origin", "zdtm", 4, 0) ||
	    lsetxattr(P("dir"), "user.empty", "", 0, 0) ||
	    lsetxattr(P("dir/sub/deeper/leaf"), "user.bin", "\0\1\2\377", 4, 0) ||
	    maybe(lsetxattr(P("dir/shared"), "trusted.t", "t", 1, 0)) < 0 ||
	    lsetxattr(t, "user.root", "r", 1, 0))
		return neg_errno();
	/* times last, directories after what is in them */
	if (stamp(P("big"), 1600000000, 123456789) || stamp(P("rel-link"), 1500000000, 1) ||
	    stamp(P("fifo"), 1400000000, 999999999) ||
	    stamp(P("dir/sub/deeper/leaf"), 1300000000, 5) ||
	    stamp(P("dir/sub/deeper"), 1200000000, 42) || stamp(P("dir/sub"), 1100000000, 7) ||
	    stamp(P("dir"), 1000000000, 3) || stamp(P("empty"), 900000000, 1) ||
	    stamp(t, 800000000, 2))
		return neg_errno();
#undef P
#undef Q
	return 0;
}

int main(int argc, char **argv)
{
	static char t[4096], gone[4096];
	char *before, *after, *big = malloc(BIG), *buf = malloc(DELETED_LEN), *back;
	struct stat st, tst;
	int fd;

	test_init(argc, argv);
	if (!big || !buf)
		return 1;
	if (!getcwd(t, sizeof(t) - 16))
		return 1;
	/*
	 * the tree's mount namespace: the container's, else one of its own whose
	 * root is a bind mount of "/" alone with its /dev and a proc (as mnt_ns:
	 * not the host's other mounts)
	 */
	if (!test_in_container() &&
	    (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	     (mkdir("newroot", 0755) && errno != EEXIST) ||
	     mount("/", "newroot", NULL, MS_BIND, NULL) ||
	     mount("/dev", "newroot/dev", NULL, MS_BIND, NULL) || chdir("newroot") ||
	     syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) || chdir(t) ||
	     mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))) {
		fail("a mount namespace of its own: %m");
		return 1;
	}
	strcat(t, "/tmpfs");
	mkdir(t, 0755);
	if (mount("zdtm-tmpfs", t, "tmpfs", MS_NOSUID, "size=64m,mode=0751,uid=7,gid=8")) {
		fail("mount tmpfs: %m");
		return 1;
	}
	if (fill(t, big)) {
		fail("filling the tmpfs: %m");
		return 1;
	}
	/* a file deleted while open */
	snprintf(gone, sizeof(gone), "%s/dir/deleted", t);
	datagen(buf, DELETED_LEN, 11);
	fd = open(gone, O_RDWR | O_CREAT | O_EXCL, 0640);
	if (fd < 0 || write(fd, buf, DELETED_LEN) != DELETED_LEN || unlink(gone) ||
	    lseek(fd, 1234, SEEK_SET) != 1234) {
		fail("the deleted file: %m");
		return 1;
	}
	before = describe(t);
	if (!before) {
		fail("describing the tmpfs: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	after = describe(t);
	if (!after) {
		fail("describing the tmpfs after the restore: %m");
		return 1;
	}
	if (strcmp(before, after)) {
		test_write_file("tmpfs.before", before);
		test_write_file("tmpfs.after", after);
		fail("the tmpfs differs after the restore: diff tmpfs.before tmpfs.after in the "
		     "test's directory");
		return 1;
	}
	back = malloc(DELETED_LEN);
	if (!back || fstat(fd, &st) || stat(t, &tst) || st.st_nlink != 0 ||
	    st.st_dev != tst.st_dev || st.st_size != DELETED_LEN ||
	    lseek(fd, 0, SEEK_CUR) != 1234 || pread(fd, back, DELETED_LEN, 0) != DELETED_LEN ||
	    memcmp(back, buf, DELETED_LEN)) {
		fail("the deleted file: nlink %lu size %lld on the tmpfs %d, or its data differs",
		     (unsigned long)st.st_nlink, (long long)st.st_size, st.st_dev == tst.st_dev);
		return 1;
	}
	pass();
	return 0;
}
