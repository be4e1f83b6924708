// SPDX-License-Identifier: GPL-2.0
/*
 * fanotify groups (FILE_FANOTIFY, images/fanotify.proto), dump and restore.
 *
 * Dump: fanotify_init() flags, the flags of event fds and every mark with its
 * masks and mark flags, all from /proc/PID/fdinfo/N. The object of a mark is
 * kept as a path in the dumper's view: an inode mark's file found from its
 * file handle through a mount of its device (as inotify does), a mount mark's
 * mount point, a filesystem mark's mount point of any mount of that
 * filesystem, a mount namespace mark as the task's own mount namespace (no
 * path). Refused: marks asking for permission events (the frozen listener
 * would never answer them, and the dumper or the restore would hang on the
 * first file they touch under the mark), a mark on another mount namespace
 * than the task's, and marks on objects no path leads to. Events queued and
 * not read are not saved.
 *
 * Restore: fanotify_init() with the saved flags, then each mark added again by
 * path, oldest first so the group lists them in the order it had
 * (Documentation/files.md).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "anon.h"
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

#ifndef FAN_MARK_MNTNS
#define FAN_MARK_MNTNS 0x00000110 /* Linux 6.14 */
#endif
#ifndef FAN_PRE_ACCESS
#define FAN_PRE_ACCESS 0x00100000 /* Linux 6.14, a pre-content permission event */
#endif

/* Every permission event a mark can ask for; the listener must answer each. */
#define FAN_PERM_MASK (FAN_OPEN_PERM | FAN_ACCESS_PERM | FAN_OPEN_EXEC_PERM | FAN_PRE_ACCESS)
/* The mark flags fdinfo shows (fanotify_mark_user_flags()): all saved and restored. */
#define FAN_KNOWN_MFLAGS (FAN_MARK_IGNORED_SURV_MODIFY | FAN_MARK_EVICTABLE | FAN_MARK_IGNORE)

/* ---- dump ---- */

/* The object of one mark, found before the entry block is allocated. */
struct mark_path {
	char *path;
	struct stat st;
};

static int fanotify_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return !strcmp(f->link, "anon_inode:[fanotify]");
}

/* The dumper's path of @fd, if that path still leads to the same inode: 0 or -ENOENT. */
static int path_of_fd(int fd, struct mark_path *ret)
{
	char self[64], path[PATH_MAX];
	struct stat st;
	ssize_t len;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	len = readlink(self, path, sizeof(path) - 1);
	if (len <= 0 || (size_t)len >= sizeof(path) - 1 || path[0] != '/')
		return -ENOENT;
	path[len] = '\0';
	/* A dentry outside the mount's root, or unlinked: its path leads elsewhere. */
	if (fstat(fd, &ret->st) || lstat(path, &st) || st.st_ino != ret->st.st_ino ||
	    st.st_dev != ret->st.st_dev)
		return -ENOENT;
	ret->path = strdup(path);
	return ret->path ? 0 : -ENOMEM;
}

/* Mount point @m of @pid, opened from the dumper (@flags: O_PATH or O_RDONLY). */
static int open_mountpoint(pid_t pid, const struct mount_entry *m, int flags)
{
	char mnt[PATH_MAX];

	if ((size_t)snprintf(mnt, sizeof(mnt), "/proc/%d/root%s", pid, m->mountpoint) >=
	    sizeof(mnt))
		return -ENAMETOOLONG;
	return open(mnt, flags | O_DIRECTORY | O_CLOEXEC);
}

/* The inode of mark @k, opened by its handle through mount @m of @pid. */
static int inode_via_mount(pid_t pid, const struct mount_entry *m,
			   const struct fdinfo_fanotify_mark *k, struct mark_path *ret)
{
	union {
		struct file_handle h;
		char buf[sizeof(struct file_handle) + FDINFO_MAX_HANDLE_SZ];
	} u;
	_cleanup_close_ int mfd = -1, fd = -1;

	/* Not O_PATH: open_by_handle_at() refuses an O_PATH mount fd (EBADF, seen on 6.18). */
	mfd = open_mountpoint(pid, m, O_RDONLY);
	if (mfd < 0)
		return -ENOENT;
	u.h.handle_bytes = k->fhandle_bytes;
	u.h.handle_type = k->fhandle_type;
	memcpy(u.h.f_handle, k->fhandle, k->fhandle_bytes);
	fd = open_by_handle_at(mfd, &u.h, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == EPERM ? -EPERM : -ENOENT;
	return path_of_fd(fd, ret);
}

static int inode_mark_path(const struct fd_info *f, const struct mount_list *ml,
			   const struct fdinfo_fanotify_mark *k, struct mark_path *ret)
{
	unsigned int major = k->sdev >> 20, minor = k->sdev & 0xfffff, i;
	int err = -ENOENT;

	for (i = 0; k->fhandle_bytes && i < ml->nr && err; i++) {
		if (ml->mnts[i].major != major || ml->mnts[i].minor != minor)
			continue;
		err = inode_via_mount(f->pid, &ml->mnts[i], k, ret);
		if (!err && ret->st.st_ino != k->ino) {
			free(ret->path);
			ret->path = NULL;
			err = -ENOENT;
		}
		if (err == -ENOMEM)
			return err;
	}
	if (!err)
		return 0;
	if (!k->fhandle_bytes)
		pr_err("pid %d fd %d: fanotify inode mark (inode %llu on %u:%u): the kernel gave "
		       "no file handle for it, so its path cannot be found\n",
		       f->pid, f->fd, (unsigned long long)k->ino, major, minor);
	else
		pr_err("pid %d fd %d: fanotify inode mark (inode %llu on %u:%u): no path leads to "
		       "the marked file (unlinked, or on no mount the dumper can reach%s)\n",
		       f->pid, f->fd, (unsigned long long)k->ino, major, minor,
		       err == -EPERM ? "; open_by_handle_at needs CAP_DAC_READ_SEARCH" : "");
	return -EOPNOTSUPP;
}

/* The mount id of @fd, from its fdinfo; -errno. */
static int fd_mnt_id(int fd)
{
	struct fdinfo fi;
	int err = proc_parse_fdinfo(getpid(), fd, &fi);

	if (err)
		return err;
	fdinfo_fini(&fi);
	return fi.mnt_id;
}

static int path_mnt_id(const char *path)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);

	return fd < 0 ? neg_errno() : fd_mnt_id(fd);
}

/* The mount id of @path as task @pid sees it (through /proc/PID/root); -errno. */
static int task_path_mnt_id(pid_t pid, const char *path)
{
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "/proc/%d/root%s", pid, path);
	return path_mnt_id(p);
}

/*
 * A mount mark: the mount point of mount @k->mnt_id in @pid's table, if the
 * dumper reaches that very mount there (not one mounted over it).
 */
static int mount_mark_path(const struct fd_info *f, const struct mount_list *ml,
			   const struct fdinfo_fanotify_mark *k, struct mark_path *ret)
{
	_cleanup_close_ int fd = -1;
	const char *why = "it is not in the task's mount table";
	unsigned int i;
	int err;

	for (i = 0; i < ml->nr && ml->mnts[i].mnt_id != k->mnt_id; i++)
		;
	if (i < ml->nr) {
		why = "another mount hides it";
		fd = open_mountpoint(f->pid, &ml->mnts[i], O_PATH);
		if (fd >= 0 && fd_mnt_id(fd) == k->mnt_id) {
			err = path_of_fd(fd, ret);
			if (err == -ENOMEM)
				return err;
			/*
			 * The same inode may be another mount (a bind mount) by its path:
			 * looked up as the task does, from its root in its mount namespace
			 * (a container's), where the restore marks it again.
			 */
			if (!err && task_path_mnt_id(f->pid, ret->path) == k->mnt_id)
				return 0;
			free(ret->path);
			ret->path = NULL;
			why = "its mount point is out of the dumper's reach";
		}
	}
	pr_err("pid %d fd %d: fanotify mount mark on mount %d: %s\n", f->pid, f->fd, k->mnt_id,
	       why);
	return -EOPNOTSUPP;
}

/* A filesystem mark: the mount point of any mount of that filesystem in @pid's table. */
static int sb_mark_path(const struct fd_info *f, const struct mount_list *ml,
			const struct fdinfo_fanotify_mark *k, struct mark_path *ret)
{
	unsigned int major = k->sdev >> 20, minor = k->sdev & 0xfffff, i;
	int err;

	for (i = 0; i < ml->nr; i++) {
		_cleanup_close_ int fd = -1;

		if (ml->mnts[i].major != major || ml->mnts[i].minor != minor)
			continue;
		fd = open_mountpoint(f->pid, &ml->mnts[i], O_PATH);
		if (fd < 0)
			continue;
		err = path_of_fd(fd, ret);
		if (!err && ret->st.st_dev != makedev(major, minor)) {
			free(ret->path);
			ret->path = NULL;
			continue;
		}
		if (err != -ENOENT)
			return err;
	}
	pr_err("pid %d fd %d: fanotify filesystem mark on device %u:%u: no mount of it the "
	       "dumper can reach\n",
	       f->pid, f->fd, major, minor);
	return -EOPNOTSUPP;
}

/* What can never be restored, refused before any path is looked for. */
static int mark_check(const struct fd_info *f, const struct fdinfo_fanotify_mark *k)
{
	if (k->mask & FAN_PERM_MASK) {
		pr_err("pid %d fd %d: fanotify mark asks for permission events (mask %#x): "
		       "refused, its listener is frozen during the dump and any access under the "
		       "mark (the dumper's, the restore's) would wait for its answer forever\n",
		       f->pid, f->fd, k->mask);
		return -EOPNOTSUPP;
	}
	if (k->mflags & ~FAN_KNOWN_MFLAGS) {
		pr_err("pid %d fd %d: fanotify mark has mark flags %#x this tool does not know\n",
		       f->pid, f->fd, k->mflags);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * A mount namespace mark (6.14): only on the task's own mount namespace, which
 * the restored tree lives in too; it has no path (an empty one).
 */
static int mntns_mark_path(const struct fd_info *f, const struct fdinfo_fanotify_mark *k,
			   struct mark_path *ret)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", f->pid);
	if (stat(path, &ret->st)) {
		pr_perror("pid %d fd %d: cannot stat %s", f->pid, f->fd, path);
		return neg_errno();
	}
	if (ret->st.st_ino != k->mnt_ns) {
		pr_err("pid %d fd %d: fanotify mark on mount namespace %u, not the task's own "
		       "(%llu): not supported\n",
		       f->pid, f->fd, k->mnt_ns, (unsigned long long)ret->st.st_ino);
		return -EOPNOTSUPP;
	}
	ret->path = strdup("");
	return ret->path ? 0 : -ENOMEM;
}

static int mark_path(const struct fd_info *f, const struct mount_list *ml,
		     const struct fdinfo_fanotify_mark *k, struct mark_path *ret)
{
	switch (k->kind) {
	case FANOTIFY_MARK_INODE:
		return inode_mark_path(f, ml, k, ret);
	case FANOTIFY_MARK_MOUNT:
		return mount_mark_path(f, ml, k, ret);
	case FANOTIFY_MARK_SB:
		return sb_mark_path(f, ml, k, ret);
	case FANOTIFY_MARK_MNTNS:
		return mntns_mark_path(f, k, ret);
	default:
		return -EOPNOTSUPP;
	}
}

static int fanotify_paths(const struct fd_info *f, const struct fdinfo *fi, struct mark_path *mp)
{
	struct mount_list ml = { 0 };
	unsigned int i;
	int err = 0;

	for (i = 0; i < fi->n_fmarks && !err; i++)
		err = mark_check(f, &fi->fmarks[i]);
	if (err || !fi->n_fmarks)
		return err;
	err = proc_parse_mountinfo(f->pid, &ml);
	if (err) {
		pr_errno(err, "pid %d fd %d: cannot read the mounts of pid %d", f->pid, f->fd,
			 f->pid);
		return err;
	}
	for (i = 0; i < fi->n_fmarks && !err; i++)
		err = mark_path(f, &ml, &fi->fmarks[i], &mp[i]);
	mount_list_fini(&ml);
	return err;
}

static uint32_t mark_type(enum fanotify_mark_kind kind)
{
	if (kind == FANOTIFY_MARK_MOUNT)
		return FAN_MARK_MOUNT;
	if (kind == FANOTIFY_MARK_SB)
		return FAN_MARK_FILESYSTEM;
	if (kind == FANOTIFY_MARK_MNTNS)
		return FAN_MARK_MNTNS;
	return FAN_MARK_INODE;
}

static void mark_fill(FanotifyMarkEntry *me, const struct fdinfo_fanotify_mark *k,
		      const struct mark_path *mp, char *p)
{
	size_t len = strlen(mp->path);

	fanotify_mark_entry__init(me);
	me->type = mark_type(k->kind);
	me->mflags = k->mflags;
	me->mask = k->mask;
	me->ignored_mask = k->ignored_mask;
	memcpy(p, mp->path, len + 1);
	me->path.data = (uint8_t *)p;
	me->path.len = len;
	me->has_dev = k->kind != FANOTIFY_MARK_MNTNS;
	me->dev = mp->st.st_dev;
	me->has_ino = k->kind == FANOTIFY_MARK_INODE;
	me->ino = mp->st.st_ino;
}

/*
 * The entry, its marks and their paths in one block owned by @d. fdinfo shows
 * the newest mark first (the kernel adds each at the head of the group's
 * list): the entry holds them oldest first, the order to add them again.
 */
static FanotifyFileEntry *fanotify_entry_alloc(struct file_desc *d, const struct fdinfo *fi,
					       const struct mark_path *mp)
{
	size_t size, n = fi->n_fmarks, i;
	FanotifyMarkEntry *me;
	FanotifyFileEntry *e;
	char *p;

	size = sizeof(*e) + n * (sizeof(*e->marks) + sizeof(*me));
	for (i = 0; i < n; i++)
		size += strlen(mp[i].path) + 1;
	e = anon_priv_alloc(d, size);
	if (!e)
		return NULL;
	fanotify_file_entry__init(e);
	e->n_marks = n;
	e->marks = (FanotifyMarkEntry **)(e + 1);
	me = (FanotifyMarkEntry *)(e->marks + n);
	p = (char *)(me + n);
	for (i = 0; i < n; i++) {
		size_t k = n - 1 - i;

		mark_fill(&me[i], &fi->fmarks[k], &mp[k], p);
		e->marks[i] = &me[i];
		p += me[i].path.len + 1;
	}
	e->init_flags = fi->fanotify.flags;
	e->event_flags = fi->fanotify.event_flags;
	return e;
}

static int fanotify_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct fdinfo fi = { 0 };
	FanotifyFileEntry *e = NULL;
	struct mark_path *mp;
	unsigned int i;
	int err;

	(void)ctx;
	err = anon_fdinfo_read(f, FDINFO_FANOTIFY, false, &fi);
	if (err)
		return err;
	mp = calloc(fi.n_fmarks ? fi.n_fmarks : 1, sizeof(*mp));
	err = mp ? fanotify_paths(f, &fi, mp) : -ENOMEM;
	if (!err) {
		e = fanotify_entry_alloc(d, &fi, mp);
		if (!e)
			err = -ENOMEM;
	}
	if (!err) {
		e->flags = f->flags;
		d->fe.type = FILE_TYPE__FILE_FANOTIFY;
		d->fe.fanotify = e;
		pr_debug("pid %d fd %d: fanotify init flags %x event flags %x, %u marks\n", f->pid,
			 f->fd, e->init_flags, e->event_flags, fi.n_fmarks);
		for (i = 0; i < e->n_marks; i++)
			pr_debug("pid %d fd %d: fanotify mark type %x on %s, mask %x ignored %x "
				 "mflags %x\n",
				 f->pid, f->fd, e->marks[i]->type, (char *)e->marks[i]->path.data,
				 e->marks[i]->mask, e->marks[i]->ignored_mask, e->marks[i]->mflags);
	}
	for (i = 0; mp && i < fi.n_fmarks; i++)
		free(mp[i].path);
	free(mp);
	fdinfo_fini(&fi);
	return err;
}

/* ---- restore ---- */

/*
 * A mount namespace mark is on the tree's own mount namespace, which is the
 * controller's: the tree is restored in it.
 */
static const char mntns_self[] = "/proc/self/ns/mnt";

/* The path of mark @i in *@ret (malloc'ed), and its lstat in *@st (zeroed for a namespace). */
static int saved_mark_path(const FileEntry *fe, size_t i, const FanotifyMarkEntry *m, char **ret,
			   struct stat *st)
{
	memset(st, 0, sizeof(*st));

	if (m->type == FAN_MARK_MNTNS) {
		if (m->path.len) {
			pr_err("file %u: fanotify mark %zu: a mount namespace mark has a path\n",
			       fe->id, i);
			return -EINVAL;
		}
		*ret = strdup(mntns_self + strlen("/proc/"));
		return *ret ? 0 : -ENOMEM;
	}

	if (!m->path.len || m->path.data[0] != '/' || memchr(m->path.data, 0, m->path.len) ||
	    !(*ret = strndup((char *)m->path.data, m->path.len))) {
		pr_err("file %u: fanotify mark %zu: bad path\n", fe->id, i);
		return -EINVAL;
	}
	if (lstat(*ret, st)) {
		pr_perror("file %u: fanotify mark %zu: %s", fe->id, i, *ret);
		return neg_errno();
	}
	/* Inode and device numbers change with a copy or a restore on another machine. */
	if ((m->has_ino && (uint64_t)st->st_ino != m->ino) ||
	    (m->has_dev && (uint64_t)st->st_dev != m->dev))
		pr_warn("file %u: fanotify mark %zu: %s is inode %llu on %llx, it was %llu on "
			"%llx at the dump\n",
			fe->id, i, *ret, (unsigned long long)st->st_ino,
			(unsigned long long)st->st_dev, (unsigned long long)m->ino,
			(unsigned long long)m->dev);
	return 0;
}

/*
 * The mask, then the ignored mask with its own flags: the ignored mask keeps
 * its event flags only when the mark was made with FAN_MARK_IGNORE (6.0);
 * otherwise it is the old FAN_MARK_IGNORED_MASK kind. DONT_FOLLOW (not for a
 * mount namespace): the saved path is already resolved, and names the symlink
 * itself when one was marked.
 */
static int mark_add(const struct restore_ctx *ctx, const FileEntry *fe, int fd, size_t i,
		    const FanotifyMarkEntry *m)
{
	unsigned int nofollow = m->type == FAN_MARK_MNTNS ? 0 : FAN_MARK_DONT_FOLLOW;
	unsigned int base = FAN_MARK_ADD | nofollow | m->type | (m->mflags & FAN_MARK_EVICTABLE);
	unsigned int ign = (m->mflags & FAN_MARK_IGNORE) ? FAN_MARK_IGNORE : FAN_MARK_IGNORED_MASK;
	_cleanup_free_ char *path = NULL;
	uint32_t mask = m->mask;
	struct stat st;
	_cleanup_close_ int nsfd = -1;
	int dirfd = AT_FDCWD, err = saved_mark_path(fe, i, m, &path, &st);

	if (err)
		return err;
	/*
	 * The mount namespace the controller is in now, the tree's, through
	 * criu-like's /proc: a container's own /proc is mounted by its root only
	 * after the files are open. Marked through the fd, with no path.
	 */
	if (m->type == FAN_MARK_MNTNS) {
		nsfd = openat(ctx->proc_fd >= 0 ? ctx->proc_fd : AT_FDCWD,
			      ctx->proc_fd >= 0 ? path : mntns_self, O_RDONLY | O_CLOEXEC);
		if (nsfd < 0) {
			pr_perror("file %u: fanotify mark %zu: cannot open %s", fe->id, i, path);
			return neg_errno();
		}
		dirfd = nsfd;
		free(path);
		path = NULL;
	}
	/*
	 * On a non-directory the kernel keeps FAN_EVENT_ON_CHILD only when it adds
	 * it itself (groups reporting the parent's fid), and refuses it from the
	 * caller with ENOTDIR under the 5.17+ rules (FAN_REPORT_TARGET_FID).
	 */
	if (m->type == FAN_MARK_INODE && !S_ISDIR(st.st_mode))
		mask &= ~(uint32_t)FAN_EVENT_ON_CHILD;
	if (mask && fanotify_mark(fd, base, mask, dirfd, path)) {
		pr_perror("file %u: fanotify_mark(%#x, mask %#x) on %s", fe->id, base, mask,
			  path ?: mntns_self);
		return neg_errno();
	}
	base |= ign | (m->mflags & FAN_MARK_IGNORED_SURV_MODIFY);
	if (m->ignored_mask && fanotify_mark(fd, base, m->ignored_mask, dirfd, path)) {
		pr_perror("file %u: fanotify_mark(%#x, ignored mask %#x) on %s", fe->id, base,
			  m->ignored_mask, path ?: mntns_self);
		return neg_errno();
	}
	/* Both masks empty: a mark that reports nothing; the kernel cannot add one. */
	if (!m->mask && !m->ignored_mask)
		pr_debug("file %u: fanotify mark %zu on %s has empty masks: not added\n", fe->id, i,
			 path ?: mntns_self);
	return 0;
}

/* FD_CLOEXEC (the controller's own fd), and O_NONBLOCK set as @nonblock says. */
static int set_fd_flags(int fd, unsigned int nonblock)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC))
		return neg_errno();
	if ((unsigned int)(fl & O_NONBLOCK) != nonblock &&
	    fcntl(fd, F_SETFL, (fl & ~O_NONBLOCK) | (int)nonblock))
		return neg_errno();
	return 0;
}

static int check_entry(const FileEntry *fe)
{
	const FanotifyFileEntry *e = fe->fanotify;
	size_t i;

	if (!e) {
		pr_err("files.img: file %u lacks its fanotify description\n", fe->id);
		return -EINVAL;
	}
	for (i = 0; i < e->n_marks; i++) {
		const FanotifyMarkEntry *m = e->marks[i];

		if ((m->type != FAN_MARK_INODE && m->type != FAN_MARK_MOUNT &&
		     m->type != FAN_MARK_FILESYSTEM && m->type != FAN_MARK_MNTNS) ||
		    (m->mflags & ~FAN_KNOWN_MFLAGS)) {
			pr_err("files.img: file %u: fanotify mark %zu has type %#x, flags %#x\n",
			       fe->id, i, m->type, m->mflags);
			return -EINVAL;
		}
	}
	return 0;
}

static int fanotify_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const FanotifyFileEntry *e = fe->fanotify;
	_cleanup_close_ int fd = -1;
	unsigned int flags;
	size_t i;
	int err = check_entry(fe);

	if (err)
		return err;
	/*
	 * The saved flags as they were given (fdinfo shows FAN_CLOEXEC and
	 * FAN_NONBLOCK as given to fanotify_init()); the description's O_NONBLOCK,
	 * which F_SETFL may have changed since, and close-on-exec are set after.
	 */
	flags = e->init_flags;
	fd = fanotify_init(flags, e->event_flags);
	if (fd < 0) {
		pr_perror("file %u: fanotify_init(%#x, %#x)", fe->id, flags, e->event_flags);
		return neg_errno();
	}
	err = set_fd_flags(fd, e->flags & O_NONBLOCK);
	if (err) {
		pr_errno(err, "file %u: cannot set the flags of the fanotify group", fe->id);
		return err;
	}
	for (i = 0; i < e->n_marks; i++) {
		err = mark_add(ctx, fe, fd, i, e->marks[i]);
		if (err)
			return err;
	}
	pr_debug("file %u: fanotify group with %zu marks\n", fe->id, e->n_marks);
	return TAKE_FD(fd);
}

static int fanotify_check(const FileEntry *fe)
{
	return fe->fanotify ? 0 : rst_file_part_missing(fe);
}

const struct file_kind fanotify_kind = {
	.name = "fanotify",
	.match = fanotify_match,
	.dump = fanotify_dump,
	.types = { FILE_TYPE__FILE_FANOTIFY },
	.check = fanotify_check,
	.open = fanotify_open,
};
