// SPDX-License-Identifier: GPL-2.0
/*
 * inotify: every watch with its descriptor and masks. fdinfo gives each
 * watched inode as a file handle and a device, not a path: the handle is
 * opened (open_by_handle_at(), CAP_DAC_READ_SEARCH) through a mount of that
 * device in the task's mount table, and the path of what it opened is kept
 * if it still leads to the same inode. A watched file with no path left
 * (unlinked), or on no mount the dumper can reach, is refused. Events queued
 * and not yet read are not saved.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "files-anon.h"
#include "log.h"
#include "restore-files-anon.h"
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

const struct file_kind inotify_kind = {
	.name = "inotify",
	.match = inotify_match,
	.dump = inotify_dump,
	.types = { FILE_TYPE__FILE_INOTIFY },
	.check = rst_anonfd_check,
	.open = rst_anonfd_open,
};
