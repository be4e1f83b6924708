// SPDX-License-Identifier: GPL-2.0
/*
 * Files of a restore. The controller opens every open file description of
 * files.img once, at fds >= ctx->service_fd_base; each task inherits all of
 * them through fork, so a description shared by several fds or processes is
 * one description again. A task then dup3()s the ones its fd table names to
 * their numbers and closes every other fd below the base.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_PREFIX "restore-files: "
#include "image.h"
#include "log.h"
#include "fault.h"
#include "locks.h"
#include "restore-files-int.h"
#include "util.h"

/*
 * Flags a description is reopened with: nothing that creates or truncates,
 * never inherited by exec.
 */
int rst_open_flags(uint32_t flags)
{
	return (int)(flags & ~(uint32_t)(O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC | O_NOCTTY)) |
	       O_CLOEXEC | O_NOCTTY;
}

/*
 * open() that cannot block: a FIFO or a device put at the path since the dump
 * would wait for a peer. The type is checked after, O_NONBLOCK then dropped
 * unless the description had it.
 */
int rst_open_nonblock(const char *path, uint32_t flags)
{
	return open(path, rst_open_flags(flags) | O_NONBLOCK);
}

int rst_drop_nonblock(int fd, uint32_t flags)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)))
		return neg_errno();
	return 0;
}

/* Move @fd (consumed) to the first free number >= the service fd base. */
static int to_service_fd(const struct restore_ctx *ctx, int fd)
{
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, ctx->service_fd_base);
	int err = nfd < 0 ? neg_errno() : 0;

	close(fd);
	return err ? err : nfd;
}

/*
 * criu-like's own /proc (restore_ctx.proc_fd) for a tree with a pid namespace
 * of its own: the files are opened inside its mount namespace, whose /proc
 * its root mounts later; -1: "/proc".
 */
static int reopen_proc_fd = -1;

int inherit_fd_parse(const char *arg, int *fd, const char **key)
{
	char *end;
	long n;

	if (strncmp(arg, "fd[", 3) || arg[3] < '0' || arg[3] > '9')
		return -EINVAL;
	errno = 0;
	n = strtol(arg + 3, &end, 10);
	if (errno || n > 0x7fffffff || strncmp(end, "]:", 2) || !end[2])
		return -EINVAL;
	/*
	 * pipes (pipe:[INO]) and the names of external namespaces (runc's
	 * extRootNetNS: ns.c checks them against the images); not files by path
	 */
	if (strncmp(end + 2, "pipe:[", 6) &&
	    strspn(end + 2, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
		    strlen(end + 2))
		return -EOPNOTSUPP;
	if (fd)
		*fd = (int)n;
	if (key)
		*key = end + 2;
	return 0;
}

int rst_inherited_fd(const struct cr_options *o, const char *key)
{
	const char *k;
	int i, fd;

	for (i = 0; o && i < o->n_inherit_fd; i++)
		if (!inherit_fd_parse(o->inherit_fd[i], &fd, &k) && !strcmp(k, key))
			return fd;
	return -ENOENT;
}

FILE *rst_proc_fopen(const char *path)
{
	char p[256];
	int fd;
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", reopen_proc_fd >= 0 ? "" : "/proc/", path);
	fd = openat(reopen_proc_fd >= 0 ? reopen_proc_fd : AT_FDCWD, p, O_RDONLY | O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f && fd >= 0)
		close(fd);
	return f;
}

int rst_reopen_fd(int fd, uint32_t flags)
{
	char self[64];
	int nfd;

	snprintf(self, sizeof(self), "%sself/fd/%d", reopen_proc_fd >= 0 ? "" : "/proc/", fd);
	nfd = openat(reopen_proc_fd >= 0 ? reopen_proc_fd : AT_FDCWD, self, rst_open_flags(flags));
	return nfd < 0 ? neg_errno() : nfd;
}

/* ---- the plan: read every image ----------------------------------------------------------- */

static int read_all_of(int dirfd, enum cr_img_kind kind, uint32_t id, bool optional,
		       ProtobufCMessage ***recs, size_t *n)
{
	struct cr_img *img = img_open(dirfd, kind, id, IMG_READ | (optional ? IMG_OPTIONAL : 0));
	int err, cerr;

	*recs = NULL;
	*n = 0;
	if (!img)
		return optional && errno == ENOENT ? 0 : neg_errno();
	err = img_read_all(img, recs, n);
	cerr = img_close(img);
	return err ? err : cerr;
}

static char *bytes_dup(const ProtobufCBinaryData *b)
{
	if (memchr(b->data, 0, b->len)) {
		errno = EINVAL;
		return NULL;
	}
	return strndup((const char *)b->data, b->len);
}

/* Per kind, the positions of its descriptions in id order. */
static int index_kinds(struct rst_files *f)
{
	size_t i;

	f->kinds = calloc(nr_file_kinds, sizeof(*f->kinds));
	f->kind_at = calloc(f->idx.n + 1, sizeof(*f->kind_at));
	if (!f->kinds || !f->kind_at)
		return -ENOMEM;
	for (i = 0; i < f->idx.n; i++) {
		f->kind_at[i] = file_kind_of_type(f->idx.by_id[i]->type);
		f->kinds[file_kind_index(f->kind_at[i])].n++;
	}
	for (i = 0; i < nr_file_kinds; i++) {
		f->kinds[i].pos = malloc((f->kinds[i].n + 1) * sizeof(*f->kinds[i].pos));
		if (!f->kinds[i].pos)
			return -ENOMEM;
		f->kinds[i].n = 0;
	}
	for (i = 0; i < f->idx.n; i++) {
		struct rst_kind *k = &f->kinds[file_kind_index(f->kind_at[i])];

		k->pos[k->n++] = i;
	}
	return 0;
}

static int index_files(struct rst_files *f)
{
	size_t i;
	int err;

	err = rst_file_index_build(&f->idx, (FileEntry **)f->file_recs, f->nr_file_recs);
	if (!err)
		err = index_kinds(f);
	if (err)
		return err;
	f->paths = calloc(f->idx.n + 1, sizeof(*f->paths));
	f->fds = malloc((f->idx.n + 1) * sizeof(*f->fds));
	if (!f->paths || !f->fds)
		return -ENOMEM;
	for (i = 0; i < f->idx.n; i++) {
		const FileEntry *fe = f->idx.by_id[i];
		const ProtobufCBinaryData *p = NULL;

		f->fds[i] = -1;
		if (f->kind_at[i]->path)
			p = f->kind_at[i]->path(fe);
		if (!p)
			continue;
		f->paths[i] = bytes_dup(p);
		if (!f->paths[i]) {
			pr_err("files.img: file %u: bad path\n", fe->id);
			return -EINVAL;
		}
	}
	return 0;
}

struct rst_kind *rst_kind_get(const struct restore_ctx *ctx, const struct file_kind *k)
{
	return &ctx->files->kinds[file_kind_index(k)];
}

static int read_task_files(struct restore_ctx *ctx, struct rst_task *t)
{
	pid_t pid = (pid_t)t->pe->pid;
	struct rst_task_files *tf;
	int err;

	tf = calloc(1, sizeof(*tf));
	if (!tf)
		return -ENOMEM;
	t->files = tf;
	tf->fdt_prev = tf->fdt_next = -1;
	if (rst_task_zombie(t))
		return 0;
	err = read_all_of(ctx->dirfd, CR_IMG_FDINFO, (uint32_t)pid, false, &tf->recs, &tf->nr_recs);
	if (err)
		return err;
	tf->fds = (FdEntry **)tf->recs;
	tf->nr_fds = tf->nr_recs;
	err = rst_fd_plan_check(tf, &ctx->files->idx, pid);
	if (err)
		return err;
	return img_read_one(ctx->dirfd, CR_IMG_FS, (uint32_t)pid, (ProtobufCMessage **)&tf->fs);
}

static bool dumped_files(const InventoryEntry *inv)
{
	size_t i;

	for (i = 0; i < inv->n_dumped; i++)
		if (inv->dumped[i] == DUMPED_PART__PART_FILES)
			return true;
	return false;
}

int rst_files_read(struct restore_ctx *ctx)
{
	struct rst_files *f;
	unsigned int i;
	int err;

	if (!dumped_files(ctx->inv)) {
		pr_err("the images hold no files (inventory.img lacks PART_FILES): "
		       "nothing to give the tasks their fds\n");
		return -EINVAL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	ctx->files = f;
	err = read_all_of(ctx->dirfd, CR_IMG_FILES, 0, false, &f->file_recs, &f->nr_file_recs);
	if (!err)
		err = index_files(f);
	for (i = 0; !err && i < ctx->nr_tasks; i++)
		err = read_task_files(ctx, &ctx->tasks[i]);
	/* fd tables shared between processes: who installs each, in which order (fdtable.c) */
	return err ? err : rst_fdt_plan(ctx);
}

size_t rst_files_count(const struct restore_ctx *ctx)
{
	return ctx->files ? ctx->files->idx.n : 0;
}

/* ---- the controller: open every description once ---------------------------------------- */

/* Each kind's hook @hook (an int (*)(struct restore_ctx *) member), in table order. */
#define for_each_kind_hook(ctx, hook)                               \
	({                                                          \
		int __err = 0;                                      \
		size_t __i;                                         \
		for (__i = 0; !__err && __i < nr_file_kinds; __i++) \
			if (file_kinds[__i]->hook)                  \
				__err = file_kinds[__i]->hook(ctx); \
		__err;                                              \
	})

int rst_files_open(struct restore_ctx *ctx)
{
	struct rst_files *f = ctx->files;
	size_t i;
	int fd, err = 0;

	reopen_proc_fd = ctx->proc_fd;
	err = for_each_kind_hook(ctx, prepare);
	for (i = 0; !err && i < f->idx.n; i++) {
		fd = fault_err(-ENOMEM, "open of file %u", f->idx.by_id[i]->id);
		fd = fd ? fd : f->kind_at[i]->open(ctx, i);
		if (fd >= 0)
			fd = to_service_fd(ctx, fd);
		if (fd < 0) {
			err = fd;
			pr_errno(err, "file %u (%s) cannot be restored", f->idx.by_id[i]->id,
				 f->paths[i] ? f->paths[i] : "no path");
			break;
		}
		f->fds[i] = fd;
		/* flock and OFD locks belong to the description: taken once, here */
		err = rst_locks_desc(ctx, i);
		if (err)
			break;
	}
	/* Every description is open: fds in flight can be sent, unused pipe ends closed. */
	if (!err)
		err = for_each_kind_hook(ctx, opened);
	return err;
}

/* ---- the task: install its fd table ------------------------------------------------------- */

static long file_pos(const struct rst_files *f, uint32_t id)
{
	return rst_file_index_pos(&f->idx, id);
}

static int close_below(int from, int to)
{
	if (from < to && close_range((unsigned int)from, (unsigned int)to - 1, 0))
		return neg_errno();
	return 0;
}

int rst_files_install(struct restore_ctx *ctx, struct rst_task *t)
{
	const struct rst_task_files *tf = t->files;
	const struct rst_files *f = ctx->files;
	int next = 0, err = 0;
	size_t i;

	/* its parent's table, installed by the first process of it (fdtable.c) */
	if (rst_fdt_shared_with_parent(t))
		return 0;
	for (i = 0; i < tf->nr_fds; i++) {
		const FdEntry *fd = tf->fds[i];
		long pos = file_pos(f, fd->id);
		int src = pos >= 0 ? f->fds[pos] : -1;

		/* dup3() onto a number that is open closes it: the controller's stdio, here */
		if (src < 0 || fault_err(-EMFILE, "pid %u: dup3 to fd %u", t->pe->pid, fd->fd) ||
		    dup3(src, (int)fd->fd, fd->cloexec ? O_CLOEXEC : 0) < 0) {
			err = src < 0 ? -EBADF : neg_errno();
			pr_errno(err, "pid %u: cannot install fd %u (file %u)", t->pe->pid, fd->fd,
				 fd->id);
			return err;
		}
		err = close_below(next, (int)fd->fd);
		if (err)
			return err;
		next = (int)fd->fd + 1;
	}
	err = close_below(next, ctx->service_fd_base);
	if (err) {
		pr_errno(err, "pid %u: cannot close the fds it did not have", t->pe->pid);
		return err;
	}
	/*
	 * epoll keys its targets by the task's own fd numbers, only right now;
	 * timerfds start counting when the first task holding them is this far
	 */
	for (i = 0; !err && i < nr_file_kinds; i++)
		if (file_kinds[i]->installed)
			err = file_kinds[i]->installed(ctx, t);
	/* leases record the fd number they are taken through, and make the caller owner */
	if (!err)
		err = rst_leases_installed(ctx, t);
	/* signal-driven I/O: O_ASYNC records the fd number it is set through */
	if (!err)
		err = rst_fown_installed(ctx, t);
	/* POSIX locks belong to the process: taken by it, through its own fds */
	return err ? err : rst_locks_post_install(ctx, t);
}

/* ---- descriptions opened late, in each task ------------------------------------------------- */

int rst_late_placeholder(const struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	int fd = eventfd(0, EFD_CLOEXEC);

	if (fd < 0) {
		pr_perror("file %u: the %s's placeholder", fe->id, ctx->files->kind_at[pos]->name);
		return neg_errno();
	}
	return fd;
}

int rst_late_install(struct restore_ctx *ctx, struct rst_task *t, const struct file_kind *k,
		     bool (*late)(const struct restore_ctx *ctx, size_t pos),
		     rst_late_open_fn reopen)
{
	const struct rst_task_files *tf = t->files;
	const struct rst_files *f = ctx->files;
	size_t i, j;
	int nfd, err = 0;

	if (!rst_kind_get(ctx, k)->n)
		return 0;
	for (i = 0; i < tf->nr_fds && !err; i++) {
		const FdEntry *fd = tf->fds[i];
		long pos = file_pos(f, fd->id);
		int cloexec = fd->cloexec ? O_CLOEXEC : 0;

		if (pos < 0 || f->kind_at[pos] != k || (late && !late(ctx, (size_t)pos)))
			continue;
		for (j = 0; j < i && tf->fds[j]->id != fd->id; j++)
			;
		if (j < i) {
			/* already reopened at tf->fds[j]: the same description again */
			if (dup3((int)tf->fds[j]->fd, (int)fd->fd, cloexec) < 0) {
				err = neg_errno();
				pr_errno(err, "pid %u fd %u: cannot dup its %s from fd %u",
					 t->pe->pid, fd->fd, k->name, tf->fds[j]->fd);
			}
			continue;
		}
		nfd = reopen(ctx, t, fd, (size_t)pos);
		if (nfd < 0)
			return nfd;
		if (dup3(nfd, (int)fd->fd, cloexec) < 0) {
			err = neg_errno();
			pr_errno(err, "pid %u fd %u: cannot put its %s at its number", t->pe->pid,
				 fd->fd, k->name);
		}
		close(nfd);
	}
	return err;
}

int rst_files_after_setsid(struct restore_ctx *ctx, const struct rst_task *t)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < nr_file_kinds; i++)
		if (file_kinds[i]->after_setsid)
			err = file_kinds[i]->after_setsid(ctx, t);
	return err;
}

int rst_files_after_groups(struct restore_ctx *ctx, const struct rst_task *t)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < nr_file_kinds; i++)
		if (file_kinds[i]->after_groups)
			err = file_kinds[i]->after_groups(ctx, t);
	return err;
}

int rst_files_resume(struct restore_ctx *ctx)
{
	return for_each_kind_hook(ctx, resume);
}

/* ---- for the restorer: file mappings and the exe link ------------------------------------- */

bool rst_file_map_unfixed(const struct restore_ctx *ctx, uint32_t id)
{
	long pos = ctx->files ? file_pos(ctx->files, id) : -1;

	return pos >= 0 && ctx->files->kind_at[pos]->map_unfixed;
}

const char *rst_file_path(const struct restore_ctx *ctx, uint32_t id)
{
	long pos = ctx->files ? file_pos(ctx->files, id) : -1;

	return pos >= 0 ? ctx->files->paths[pos] : NULL;
}

int rst_file_open(struct restore_ctx *ctx, uint32_t id, int flags)
{
	const struct rst_files *f = ctx->files;
	long pos = f ? file_pos(f, id) : -1;
	int fd;

	if (pos < 0) {
		pr_err("file %u is not in files.img\n", id);
		return -ENOENT;
	}
	if (!f->kind_at[pos]->open_mapped) {
		pr_err("file %u is a %s: it cannot back a mapping\n", id, f->kind_at[pos]->name);
		return -EINVAL;
	}
	/* The description opened (and checked, or rebuilt from its ghost) by rst_files_open(). */
	if (f->fds[pos] >= 0) {
		fd = rst_reopen_fd(f->fds[pos], (uint32_t)flags);
		if (fd >= 0)
			return fd;
	}
	return f->kind_at[pos]->open_mapped(ctx, (size_t)pos, flags);
}

/* ---- cleanup --------------------------------------------------------------------------------- */

static void free_task_files(struct rst_task *t)
{
	struct rst_task_files *tf = t->files;

	if (!tf)
		return;
	img_free_records(tf->recs, tf->nr_recs);
	if (tf->fs)
		protobuf_c_message_free_unpacked(&tf->fs->base, NULL);
	free(tf);
	t->files = NULL;
}

void rst_files_fini(struct restore_ctx *ctx)
{
	struct rst_files *f = ctx->files;
	unsigned int i;
	size_t j;

	for (i = 0; i < ctx->nr_tasks; i++)
		free_task_files(&ctx->tasks[i]);
	if (!f)
		return;
	for (j = 0; f->kinds && j < nr_file_kinds; j++) {
		if (file_kinds[j]->fini)
			file_kinds[j]->fini(ctx);
		free(f->kinds[j].pos);
	}
	free(f->kinds);
	free(f->kind_at);
	for (j = 0; j < f->idx.n; j++) {
		if (f->fds && f->fds[j] >= 0)
			close(f->fds[j]);
		if (f->paths)
			free(f->paths[j]);
	}
	free(f->fds);
	free(f->paths);
	rst_file_index_free(&f->idx);
	img_free_records(f->file_recs, f->nr_file_recs);
	free(f);
	ctx->files = NULL;
}
