// SPDX-License-Identifier: GPL-2.0
/*
 * inotify: every watch with its descriptor and masks. fdinfo gives each
 * watched inode as a file handle and a device, not a path: the handle is
 * opened (open_by_handle_at(), CAP_DAC_READ_SEARCH) through a mount of that
 * device in the task's mount table, and the path of what it opened is kept
 * if it still leads to the same inode. A watched file with no path left
 * (unlinked), or on no mount the dumper can reach, is refused. Events queued
 * and not yet read are not saved. Restore creates it anew in the controller
 * and watches each path again, at the same watch descriptor.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "anon.h"
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

/* One watch's path, found before the entry block is allocated. */
struct wd_path {
	char *path;
	struct stat st;
};

static int inotify_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return !strcmp(f->link, "anon_inode:inotify");
}

/* The path of the inode @w in the dumper's view, through mount @m of @pid; -ENOENT if none. */
static int path_via_mount(pid_t pid, const struct mount_entry *m, const struct fdinfo_inotify_wd *w,
			  struct wd_path *ret)
{
	union {
		struct file_handle h;
		char buf[sizeof(struct file_handle) + FDINFO_MAX_HANDLE_SZ];
	} u;
	char mnt[PATH_MAX], self[64], path[PATH_MAX];
	_cleanup_close_ int mfd = -1, fd = -1;
	struct stat st;
	ssize_t len;

	if ((size_t)snprintf(mnt, sizeof(mnt), "/proc/%d/root%s", pid, m->mountpoint) >=
	    sizeof(mnt))
		return -ENOENT;
	/* Not O_PATH: open_by_handle_at() refuses an O_PATH mount fd (EBADF, seen on 6.18). */
	mfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return -ENOENT;
	u.h.handle_bytes = w->fhandle_bytes;
	u.h.handle_type = w->fhandle_type;
	memcpy(u.h.f_handle, w->fhandle, w->fhandle_bytes);
	fd = open_by_handle_at(mfd, &u.h, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == EPERM ? -EPERM : -ENOENT;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	len = readlink(self, path, sizeof(path) - 1);
	if (len <= 0 || (size_t)len >= sizeof(path) - 1 || path[0] != '/')
		return -ENOENT;
	path[len] = '\0';
	/* A dentry outside this mount's root, or unlinked: its path leads elsewhere. */
	if (stat(path, &st) || st.st_ino != w->ino || fstat(fd, &ret->st) ||
	    st.st_dev != ret->st.st_dev)
		return -ENOENT;
	ret->path = strdup(path);
	return ret->path ? 0 : -ENOMEM;
}

static int wd_find_path(const struct fd_info *f, const struct mount_list *ml,
			const struct fdinfo_inotify_wd *w, struct wd_path *ret)
{
	unsigned int major = w->sdev >> 20, minor = w->sdev & 0xfffff, i;
	int err = -ENOENT;

	for (i = 0; w->fhandle_bytes && i < ml->nr && err; i++) {
		if (ml->mnts[i].major != major || ml->mnts[i].minor != minor)
			continue;
		err = path_via_mount(f->pid, &ml->mnts[i], w, ret);
		if (err == -ENOMEM)
			return err;
	}
	if (!err)
		return 0;
	if (!w->fhandle_bytes)
		pr_err("pid %d fd %d: inotify watch %d (inode %llu on %u:%u): the kernel gave no "
		       "file handle for it, so its path cannot be found\n",
		       f->pid, f->fd, w->wd, (unsigned long long)w->ino, major, minor);
	else
		pr_err("pid %d fd %d: inotify watch %d (inode %llu on %u:%u): no path leads to the "
		       "watched file (unlinked, or on no mount the dumper can reach%s)\n",
		       f->pid, f->fd, w->wd, (unsigned long long)w->ino, major, minor,
		       err == -EPERM ? "; open_by_handle_at needs CAP_DAC_READ_SEARCH" : "");
	return -EOPNOTSUPP;
}

/* The entry, its watches and their paths in one block owned by @d. */
static InotifyFileEntry *inotify_entry_alloc(struct file_desc *d, const struct fdinfo *fi,
					     const struct wd_path *wp)
{
	size_t size, n = fi->n_wd, i;
	InotifyWatchEntry *we;
	InotifyFileEntry *e;
	char *p;

	size = sizeof(*e) + n * (sizeof(*e->watches) + sizeof(*we));
	for (i = 0; i < n; i++)
		size += strlen(wp[i].path) + 1;
	e = anon_priv_alloc(d, size);
	if (!e)
		return NULL;
	inotify_file_entry__init(e);
	e->n_watches = n;
	e->watches = (InotifyWatchEntry **)(e + 1);
	we = (InotifyWatchEntry *)(e->watches + n);
	p = (char *)(we + n);
	for (i = 0; i < n; i++) {
		const struct fdinfo_inotify_wd *w = &fi->wd[i];
		size_t len = strlen(wp[i].path);

		inotify_watch_entry__init(&we[i]);
		e->watches[i] = &we[i];
		we[i].wd = (uint32_t)w->wd;
		we[i].mask = w->mask;
		we[i].ignored_mask = w->ignored_mask;
		memcpy(p, wp[i].path, len + 1);
		we[i].path.data = (uint8_t *)p;
		we[i].path.len = len;
		p += len + 1;
		we[i].has_dev = we[i].has_ino = true;
		we[i].dev = wp[i].st.st_dev;
		we[i].ino = wp[i].st.st_ino;
	}
	return e;
}

static int cmp_wd(const void *a, const void *b)
{
	int x = ((const struct fdinfo_inotify_wd *)a)->wd;
	int y = ((const struct fdinfo_inotify_wd *)b)->wd;

	return (x > y) - (x < y);
}

static int inotify_paths(const struct fd_info *f, struct fdinfo *fi, struct wd_path *wp)
{
	struct mount_list ml = { 0 };
	unsigned int i;
	int err = 0;

	if (!fi->n_wd)
		return 0;
	err = proc_parse_mountinfo(f->pid, &ml);
	if (err) {
		pr_errno(err, "pid %d fd %d: cannot read the mounts of pid %d", f->pid, f->fd,
			 f->pid);
		return err;
	}
	/* Restore gives descriptors in increasing order. */
	qsort(fi->wd, fi->n_wd, sizeof(*fi->wd), cmp_wd);
	for (i = 0; i < fi->n_wd && !err; i++)
		err = wd_find_path(f, &ml, &fi->wd[i], &wp[i]);
	mount_list_fini(&ml);
	return err;
}

static int inotify_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct fdinfo fi = { 0 };
	InotifyFileEntry *e = NULL;
	struct wd_path *wp;
	unsigned int i;
	int err;

	(void)ctx;
	err = anon_fdinfo_read(f, FDINFO_INOTIFY, true, &fi);
	if (err)
		return err;
	wp = calloc(fi.n_wd ? fi.n_wd : 1, sizeof(*wp));
	err = wp ? inotify_paths(f, &fi, wp) : -ENOMEM;
	if (!err) {
		e = inotify_entry_alloc(d, &fi, wp);
		if (!e)
			err = -ENOMEM;
	}
	if (!err) {
		e->flags = f->flags;
		d->fe.type = FILE_TYPE__FILE_INOTIFY;
		d->fe.inotify = e;
		for (i = 0; i < fi.n_wd; i++)
			pr_debug("pid %d fd %d: inotify watch %d on %s, mask %x\n", f->pid, f->fd,
				 fi.wd[i].wd, wp[i].path, fi.wd[i].mask);
	}
	for (i = 0; wp && i < fi.n_wd; i++)
		free(wp[i].path);
	free(wp);
	fdinfo_fini(&fi);
	return err;
}

/* ---- restore ---- */
/* Past this many watch descriptors to skip, an inotify is refused (each skip is two syscalls). */
#define INOTIFY_MAX_WD_SKIP (1 << 20)

static int inotify_check(const FileEntry *fe)
{
	return anon_check(fe, fe->inotify != NULL);
}

/*
 * Watch @w->path with watch descriptor @w->wd. inotify gives the next number
 * after the last one it gave (idr_alloc_cyclic), so a wd is reached by adding
 * and removing the watch until it comes out right; each removal queues an
 * IN_IGNORED event, which *@ret_skipped tells the caller to drain.
 */
static int inotify_add_one(const FileEntry *fe, int fd, const InotifyWatchEntry *w,
			   const char *path, bool *ret_skipped)
{
	uint32_t mask = w->mask & ~(uint32_t)IN_MASK_ADD;
	unsigned int tries = 0;
	int wd;

	for (;;) {
		wd = inotify_add_watch(fd, path, mask);
		if (wd < 0) {
			pr_perror("file %u: cannot watch %s (mask %x)", fe->id, path, mask);
			return neg_errno();
		}
		if ((uint32_t)wd >= w->wd || ++tries > INOTIFY_MAX_WD_SKIP)
			break;
		if (inotify_rm_watch(fd, wd))
			return neg_errno();
		*ret_skipped = true;
	}
	if ((uint32_t)wd != w->wd) {
		pr_err("file %u: the watch of %s got descriptor %d, it was %u at the dump\n",
		       fe->id, path, wd, w->wd);
		return -EBUSY;
	}
	return 0;
}

/* Read away the IN_IGNORED events of the watches removed to skip descriptors. */
static int inotify_drain(int fd)
{
	char buf[4096];
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		return neg_errno();
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	if (errno != EAGAIN || fcntl(fd, F_SETFL, fl))
		return neg_errno();
	return 0;
}

static int inotify_watch_path(const FileEntry *fe, const InotifyWatchEntry *w, char **ret)
{
	struct stat st;

	if (memchr(w->path.data, 0, w->path.len) ||
	    !(*ret = strndup((char *)w->path.data, w->path.len))) {
		pr_err("file %u: watch %u: bad path\n", fe->id, w->wd);
		return -EINVAL;
	}
	if (stat(*ret, &st)) {
		pr_perror("file %u: watch %u: %s", fe->id, w->wd, *ret);
		return neg_errno();
	}
	/* Inode numbers change with a copy or a restore on another machine. */
	if (w->has_ino && (uint64_t)st.st_ino != w->ino)
		pr_warn("file %u: watched %s is inode %llu, it was %llu at the dump\n", fe->id,
			*ret, (unsigned long long)st.st_ino, (unsigned long long)w->ino);
	return 0;
}

static int inotify_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const InotifyFileEntry *e = fe->inotify;
	_cleanup_close_ int fd = -1;
	bool skipped = false;
	size_t i;
	int err;

	fd = inotify_init1(IN_CLOEXEC | (int)(e->flags & O_NONBLOCK));
	if (fd < 0) {
		pr_perror("file %u: inotify_init1", fe->id);
		return neg_errno();
	}
	for (i = 0; i < e->n_watches; i++) {
		const InotifyWatchEntry *w = e->watches[i];
		_cleanup_free_ char *path = NULL;

		if (i && w->wd <= e->watches[i - 1]->wd) {
			pr_err("file %u: watch descriptors not ascending (%u after %u)\n", fe->id,
			       w->wd, e->watches[i - 1]->wd);
			return -EINVAL;
		}
		err = inotify_watch_path(fe, w, &path);
		if (!err)
			err = inotify_add_one(fe, fd, w, path, &skipped);
		if (err)
			return err;
	}
	if (skipped) {
		err = inotify_drain(fd);
		if (err) {
			pr_errno(err, "file %u: cannot drain the inotify", fe->id);
			return err;
		}
	}
	return TAKE_FD(fd);
}

const struct file_kind inotify_kind = {
	.name = "inotify",
	.match = inotify_match,
	.dump = inotify_dump,
	.types = { FILE_TYPE__FILE_INOTIFY },
	.check = inotify_check,
	.open = inotify_open,
};
