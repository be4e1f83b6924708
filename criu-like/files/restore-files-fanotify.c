// SPDX-License-Identifier: GPL-2.0
/*
 * Restore of fanotify groups (FILE_FANOTIFY): fanotify_init() with the saved
 * flags, then each mark added again by path, oldest first so the group lists
 * them in the order it had (Documentation/files.md). Events queued at the dump
 * are not in the images.
 */
#define LOG_PREFIX "restore-files: "

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>

#include "log.h"
#include "restore-files-int.h"
#include "util.h"

#ifndef FAN_MARK_MNTNS
#define FAN_MARK_MNTNS 0x00000110 /* Linux 6.14 */
#endif

/* The mark flags the dump saves (fdinfo mflags). */
#define FAN_SAVED_MFLAGS (FAN_MARK_IGNORED_SURV_MODIFY | FAN_MARK_EVICTABLE | FAN_MARK_IGNORE)

/*
 * A mount namespace mark is on the tree's own mount namespace, which is the
 * controller's: the tree is restored in it.
 */
static const char mntns_self[] = "/proc/self/ns/mnt";

/* The path of mark @i in *@ret (malloc'ed), and its lstat in *@st (zeroed for a namespace). */
static int mark_path(const FileEntry *fe, size_t i, const FanotifyMarkEntry *m, char **ret,
		     struct stat *st)
{
	memset(st, 0, sizeof(*st));

	if (m->type == FAN_MARK_MNTNS) {
		if (m->path.len) {
			pr_err("file %u: fanotify mark %zu: a mount namespace mark has a path\n",
			       fe->id, i);
			return -EINVAL;
		}
		*ret = strdup(mntns_self);
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
static int mark_add(const FileEntry *fe, int fd, size_t i, const FanotifyMarkEntry *m)
{
	unsigned int nofollow = m->type == FAN_MARK_MNTNS ? 0 : FAN_MARK_DONT_FOLLOW;
	unsigned int base = FAN_MARK_ADD | nofollow | m->type | (m->mflags & FAN_MARK_EVICTABLE);
	unsigned int ign = (m->mflags & FAN_MARK_IGNORE) ? FAN_MARK_IGNORE : FAN_MARK_IGNORED_MASK;
	_cleanup_free_ char *path = NULL;
	uint32_t mask = m->mask;
	struct stat st;
	int err = mark_path(fe, i, m, &path, &st);

	if (err)
		return err;
	/*
	 * On a non-directory the kernel keeps FAN_EVENT_ON_CHILD only when it adds
	 * it itself (groups reporting the parent's fid), and refuses it from the
	 * caller with ENOTDIR under the 5.17+ rules (FAN_REPORT_TARGET_FID).
	 */
	if (m->type == FAN_MARK_INODE && !S_ISDIR(st.st_mode))
		mask &= ~(uint32_t)FAN_EVENT_ON_CHILD;
	if (mask && fanotify_mark(fd, base, mask, AT_FDCWD, path)) {
		pr_perror("file %u: fanotify_mark(%#x, mask %#x) on %s", fe->id, base, mask, path);
		return neg_errno();
	}
	base |= ign | (m->mflags & FAN_MARK_IGNORED_SURV_MODIFY);
	if (m->ignored_mask && fanotify_mark(fd, base, m->ignored_mask, AT_FDCWD, path)) {
		pr_perror("file %u: fanotify_mark(%#x, ignored mask %#x) on %s", fe->id, base,
			  m->ignored_mask, path);
		return neg_errno();
	}
	/* Both masks empty: a mark that reports nothing; the kernel cannot add one. */
	if (!m->mask && !m->ignored_mask)
		pr_debug("file %u: fanotify mark %zu on %s has empty masks: not added\n", fe->id, i,
			 path);
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
		    (m->mflags & ~FAN_SAVED_MFLAGS)) {
			pr_err("files.img: file %u: fanotify mark %zu has type %#x, flags %#x\n",
			       fe->id, i, m->type, m->mflags);
			return -EINVAL;
		}
	}
	return 0;
}

int rst_fanotify_open(struct restore_ctx *ctx, size_t pos)
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
		err = mark_add(fe, fd, i, e->marks[i]);
		if (err)
			return err;
	}
	pr_debug("file %u: fanotify group with %zu marks\n", fe->id, e->n_marks);
	return TAKE_FD(fd);
}
