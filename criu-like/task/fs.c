// SPDX-License-Identifier: GPL-2.0
/*
 * fs-PID.img: the filesystem context of a process: its current directory,
 * its root and its umask. /proc shows all three from outside: the links
 * /proc/PID/cwd and /proc/PID/root, and Umask: in /proc/PID/status (Linux
 * 4.7+). On restore each task enters them itself, after its fd table
 * (restore/restore-fork.c); the image is read with the fd table
 * (files/restore-files.c). A cwd or root removed since (" (deleted)") is
 * made again, entered and removed: the root as the task's last step
 * (rst_fs_chroot(), chroot(".") into the removed directory).
 *
 * A process may share its fs context with its parent (clone(CLONE_FS)
 * without CLONE_THREAD): kcmp(KCMP_FS) says so at dump, and the restore
 * clones it with CLONE_FS again. Any other sharing is refused by name: with
 * a process that is not its parent, with a process outside the tree, a
 * thread with one of its own (unshare(CLONE_FS)), and a shared context whose
 * root is not /, which the first task to chroot would change under the
 * others while they still open files by the dumper's paths.
 */
#define LOG_PREFIX "fs: "

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "dump.h"
#include "image.h"
#include "log.h"
#include "par.h"
#include "ns.h"
#include "restore.h"
#include "restore-files.h"
#include "util.h"

#include "fs.pb-c.h"

/* readlink /proc/PID/NAME into @buf; *@removed when the directory was removed. */
static int read_fs_link(pid_t pid, const char *name, char *buf, size_t size, bool *removed)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	n = readlink(path, buf, size - 1);
	if (n < 0) {
		pr_perror("pid %d: reading %s", pid, path);
		return neg_errno();
	}
	if ((size_t)n == size - 1) {
		pr_err("pid %d: the %s path is longer than %zu bytes\n", pid, name, size - 2);
		return -ENAMETOOLONG;
	}
	buf[n] = '\0';
	*removed = n > 10 && !strcmp(buf + n - 10, " (deleted)");
	if (*removed)
		buf[n - 10] = '\0';
	return 0;
}

/* Whom @dt shares its fs context with; *@with_parent when with its parent in the tree. */
static int check_fs_sharing(struct dump_ctx *ctx, const struct dump_task *dt, bool *with_parent)
{
	const struct seized_task *t = dt->t;
	pid_t other = 0, apart;
	int r;

	*with_parent = false;
	ctx->fs_owners.type = KCMP_FS;
	apart = thread_apart(dump_threads_of(ctx, dt), t, THR_FS, KCMP_FS);
	if (apart) {
		pr_err("pid %d: thread %d has an fs context (cwd, root, umask) of its own "
		       "(unshare(CLONE_FS)): not supported\n",
		       t->pid, apart);
		return -EOPNOTSUPP;
	}
	if (t->parent) {
		r = kcmp_pids(t->pid, t->parent->pid, KCMP_FS);
		if (r < 0) {
			pr_errno(r, "pid %d: kcmp(KCMP_FS) with its parent %d", t->pid,
				 t->parent->pid);
			return r;
		}
		*with_parent = r == 0;
		if (*with_parent)
			return 0;
	} else if (t->ppid > 0 && kcmp_pids(t->pid, t->ppid, KCMP_FS) == 0) {
		pr_err("pid %d shares its fs context (cwd, root, umask) with its parent %d, "
		       "outside the tree (clone(CLONE_FS)): it cannot be restored shared\n",
		       t->pid, t->ppid);
		return -EOPNOTSUPP;
	}
	r = kcmp_set_add(&ctx->fs_owners, t->pid, &other);
	if (r) {
		pr_errno(r, "pid %d: kcmp(KCMP_FS)", t->pid);
		return r;
	}
	if (other) {
		pr_err("pid %d shares its fs context (cwd, root, umask) with pid %d, which is not "
		       "its parent (clone(CLONE_FS)): not supported\n",
		       t->pid, other);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * A removed root (chroot into a directory removed since): its mode and
 * owner, and whether the cwd, removed too, is that very directory (@cwd_st,
 * NULL when the cwd was not removed).
 */
static int dump_root_removed(pid_t pid, const char *root, const struct stat *cwd_st, FsEntry *fe)
{
	struct stat st;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	if (stat(path, &st)) {
		pr_perror("pid %d: stat of its removed root %s", pid, root);
		return neg_errno();
	}
	if (!S_ISDIR(st.st_mode)) {
		pr_err("pid %d: its removed root %s is not a directory\n", pid, root);
		return -EOPNOTSUPP;
	}
	fe->has_root_removed = fe->has_root_mode = fe->has_root_uid = fe->has_root_gid = true;
	fe->root_removed = true;
	fe->root_mode = st.st_mode & 07777;
	fe->root_uid = st.st_uid;
	fe->root_gid = st.st_gid;
	fe->has_root_is_cwd = true;
	fe->root_is_cwd = cwd_st && cwd_st->st_dev == st.st_dev && cwd_st->st_ino == st.st_ino;
	return 0;
}

/* fs-PID.img, once the sharing is known: what the task's own links and status say. */
static int dump_fs_own(struct dump_ctx *ctx, const struct dump_task *dt, bool shared)
{
	pid_t pid = dt->t->pid;
	char cwd[PATH_MAX + 1], root[PATH_MAX + 1];
	FsEntry fe = FS_ENTRY__INIT;
	bool cwd_gone = false, root_gone = false;
	struct stat st;
	char path[64];
	int err;

	if (dt->status.umask < 0) {
		pr_err("pid %d: /proc/PID/status has no Umask: (Linux 4.7+ needed)\n", pid);
		return -EOPNOTSUPP;
	}
	err = read_fs_link(pid, "cwd", cwd, sizeof(cwd), &cwd_gone);
	if (!err)
		err = read_fs_link(pid, "root", root, sizeof(root), &root_gone);
	if (err)
		return err;
	/* a removed cwd or root is made again at restore, empty as rmdir left it */
	snprintf(path, sizeof(path), "/proc/%d/cwd", pid);
	if (cwd_gone) {
		if (stat(path, &st)) {
			pr_perror("pid %d: stat of its removed cwd %s", pid, cwd);
			return neg_errno();
		}
		fe.has_cwd_removed = fe.has_cwd_mode = fe.has_cwd_uid = fe.has_cwd_gid = true;
		fe.cwd_removed = true;
		fe.cwd_mode = st.st_mode & 07777;
		fe.cwd_uid = st.st_uid;
		fe.cwd_gid = st.st_gid;
	}
	if (root_gone) {
		err = dump_root_removed(pid, root, cwd_gone ? &st : NULL, &fe);
		if (err)
			return err;
	}
	if (shared && strcmp(root, "/")) {
		pr_err("pid %d shares its fs context with its parent %d and its root is %s: a "
		       "shared context is restored with the root / only\n",
		       pid, dt->t->parent->pid, root);
		return -EOPNOTSUPP;
	}
	fe.has_shared_with_parent = fe.shared_with_parent = shared;
	/* read with the fd table at restore: whether the process is cloned with CLONE_FILES */
	fe.has_files_shared_with_parent = fe.files_shared_with_parent =
		dt->files_shared_with_parent;
	fe.cwd.data = (uint8_t *)cwd;
	fe.cwd.len = strlen(cwd);
	fe.root.data = (uint8_t *)root;
	fe.root.len = strlen(root);
	fe.umask = (uint32_t)dt->status.umask;
	return img_write_one(ctx->dirfd, CR_IMG_FS, (uint32_t)pidns_vpid(pid), &fe.base);
}

int dump_task_fs(struct dump_ctx *ctx, struct dump_task *dt)
{
	bool shared, dropped;
	int err;

	err = check_fs_sharing(ctx, dt, &shared);
	if (err)
		return err;
	/* what follows is the task's own: other workers of a parallel dump may go on (par.h) */
	dropped = par_drop();
	err = dump_fs_own(ctx, dt, shared);
	par_take(dropped);
	return err;
}

/* ---- restore ------------------------------------------------------------------------------ */

/* A path of the image as a string; NULL (errno EINVAL) when it holds a NUL. */
static char *fs_bytes(const ProtobufCBinaryData *b)
{
	if (memchr(b->data, 0, b->len)) {
		errno = EINVAL;
		return NULL;
	}
	return strndup((const char *)b->data, b->len);
}

/*
 * In a tree's user namespace: mkdir(@name, 0700) owned by @uid:@gid (its ids
 * there), by a child that takes them as its fs ids. The task, criu-like's uid
 * 0 still, unmapped there, could make the directory but not give it away:
 * chown asks for CAP_CHOWN over an owner that is mapped. 0 or -errno.
 */
static int mkdir_owned(const char *name, uint32_t uid, uint32_t gid)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		setfsgid(gid);
		setfsuid(uid);
		if ((uint32_t)setfsuid(-1) != uid || (uint32_t)setfsgid(-1) != gid)
			_exit(EPERM);
		_exit(mkdir(name, 0700) ? errno : 0);
	}
	if (pid < 0)
		return neg_errno();
	if (waitpid(pid, &status, 0) != pid)
		return neg_errno();
	if (!WIFEXITED(status))
		return -ECHILD;
	return -WEXITSTATUS(status);
}

/*
 * A removed directory, @what of the task (its cwd or root): made again at
 * @path (next to it when the path is taken; its removed parents made for it
 * and removed after), entered, given its mode and owner, and removed: the
 * task's cwd is then that removed directory. Tasks that shared one removed
 * directory get one each.
 */
static int enter_removed_dir(struct rst_task *t, const char *what, const char *path, bool has_owner,
			     uint32_t host_uid, uint32_t host_gid, bool has_mode, uint32_t mode)
{
	char name[PATH_MAX];
	unsigned int made = 0;
	uint32_t uid = host_uid, gid = host_gid;
	bool owned = ns_user_own() && has_owner;
	int err;

	/* the task is in the tree's user namespace already: its host owner as seen there */
	if (has_owner &&
	    (ns_user_id_inside(false, host_uid, &uid) || ns_user_id_inside(true, host_gid, &gid))) {
		pr_err("pid %u: the owner %u:%u of its removed %s %s is not mapped in its user "
		       "namespace\n",
		       t->pe->pid, host_uid, host_gid, what, path);
		return -ERANGE;
	}

	if (access(path, F_OK))
		snprintf(name, sizeof(name), "%s", path);
	else
		snprintf(name, sizeof(name), "%s.criu-like-%s.%u", path, what, t->pe->pid);
	err = mkdir_missing_parents(name, &made);
	if (!err && owned)
		err = mkdir_owned(name, uid, gid);
	else if (!err && mkdir(name, 0700))
		err = neg_errno();
	if (!err && chdir(name))
		err = neg_errno();
	if (!err && ((!owned && has_owner && chown(".", uid, gid)) ||
		     (has_mode && chmod(".", mode & 07777))))
		err = neg_errno();
	if (rmdir(name) && !err)
		err = neg_errno();
	if (rmdir_made_parents(name, made) && !err)
		err = neg_errno();
	if (err)
		pr_errno(err, "pid %u: cannot make its removed %s %s again", t->pe->pid, what,
			 path);
	return err;
}

static int rst_cwd_removed(struct rst_task *t, const FsEntry *fs, const char *cwd)
{
	int err = enter_removed_dir(t, "cwd", cwd, fs->has_cwd_uid && fs->has_cwd_gid, fs->cwd_uid,
				    fs->cwd_gid, fs->has_cwd_mode, fs->cwd_mode);

	if (!err)
		umask((mode_t)fs->umask);
	return err;
}

int rst_fs_restore(struct restore_ctx *ctx __unused, struct rst_task *t)
{
	const FsEntry *fs = ((struct rst_task_files *)t->files)->fs;
	_cleanup_free_ char *cwd = fs_bytes(&fs->cwd);
	_cleanup_free_ char *root = fs_bytes(&fs->root);
	int err = 0;

	if (!cwd || !root) {
		pr_err("fs-%u.img: bad cwd or root\n", t->pe->pid);
		return -EINVAL;
	}
	/*
	 * Processes sharing the context (CLONE_FS) each set it, all to the same;
	 * one at a time, so none changes the cwd under another's feet.
	 */
	rst_fs_lock();
	if (fs->cwd_removed) {
		err = rst_cwd_removed(t, fs, cwd);
	} else if (chdir(cwd)) {
		/* /proc shows the cwd from the dumper's root: enter it before changing root */
		err = neg_errno();
		pr_perror("pid %u: cannot enter its working directory %s", t->pe->pid, cwd);
	} else {
		umask((mode_t)fs->umask);
	}
	rst_fs_unlock();
	return err;
}

bool rst_fs_shared_with_parent(const struct rst_task *t)
{
	const struct rst_task_files *tf = t->files;

	return t->parent && tf && tf->fs && tf->fs->shared_with_parent;
}

/*
 * Only then do two tasks' chdir() meet, and the cwd lock (rst_fs_lock()) have
 * work: without it, 100 single tasks took it in turn, every unlock waking all
 * the waiting ones (the 100-process restore's tasks in a row, ~0.4 ms each).
 */
bool rst_fs_any_shared(const struct restore_ctx *ctx)
{
	for (unsigned int i = 0; i < ctx->nr_tasks; i++)
		if (rst_fs_shared_with_parent(&ctx->tasks[i]))
			return true;
	return false;
}

/*
 * The root, last thing before the restorer runs (rst_task_finish()): the
 * restore still opens the files of the task's mappings and reads its /proc
 * by the paths /proc showed from the dumper's root, which a chroot would hide.
 */
int rst_fs_chroot(struct rst_task *t)
{
	const FsEntry *fs = ((struct rst_task_files *)t->files)->fs;
	_cleanup_free_ char *root = fs_bytes(&fs->root);
	_cleanup_close_ int cwd = -1;
	int err;

	if (!root)
		return -ENOMEM;
	if (fs->root_removed) {
		/*
		 * Made again and removed, entered as the cwd: chroot(".") makes it
		 * the root (no path leads to it any more); then back to the cwd
		 * unless that was the same directory.
		 */
		cwd = fs->root_is_cwd ? -1 : open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (!fs->root_is_cwd && cwd < 0) {
			pr_perror("pid %u: cannot open its working directory", t->pe->pid);
			return neg_errno();
		}
		err = enter_removed_dir(t, "root", root, fs->has_root_uid && fs->has_root_gid,
					fs->root_uid, fs->root_gid, fs->has_root_mode,
					fs->root_mode);
		if (!err && chroot("."))
			err = neg_errno();
		if (!err && cwd >= 0 && fchdir(cwd))
			err = neg_errno();
		if (err)
			pr_errno(err, "pid %u: cannot change its root to the removed %s",
				 t->pe->pid, root);
		return err;
	}
	if (strcmp(root, "/") && chroot(root)) {
		pr_perror("pid %u: cannot change its root to %s", t->pe->pid, root);
		return neg_errno();
	}
	return 0;
}
