// SPDX-License-Identifier: GPL-2.0
/*
 * Namespace files held open (/proc/PID/ns/KIND, or a bind mount of one):
 * the link reads "net:[INODE]". Only a namespace some task of the dumped
 * tree is in can come back: the dump names that task and which of its
 * namespaces it is; the restore reopens it once the whole tree exists,
 * in each task holding the file, through a pidfd of that task
 * (PIDFD_GET_*_NAMESPACE, 6.11): no /proc needed, and the namespace is the
 * restored tree's own (a container's new one, or the host's for a tree in
 * the host's namespaces, as at the dump). A namespace no task of the tree
 * is in (one kept alive only by this fd) is refused.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "anon.h"
#include "compat.h"
#include "files-int.h"
#include "log.h"
#include "ns.h"
#include "restore-files-int.h"
#include "seize.h"
#include "util.h"

extern const struct file_kind nsfs_kind;

/* The nsfs type name each kind's file shows, and the pidfd ioctl that gives it back. */
static const struct {
	const char *type;
	unsigned long ioctl;
} nsfs_of[NS_NR] = {
	[NS_PID] = { "pid", PIDFD_GET_PID_NAMESPACE },
	[NS_PID_FOR_CHILDREN] = { "pid", PIDFD_GET_PID_FOR_CHILDREN_NAMESPACE },
	[NS_MNT] = { "mnt", PIDFD_GET_MNT_NAMESPACE },
	[NS_NET] = { "net", PIDFD_GET_NET_NAMESPACE },
	[NS_UTS] = { "uts", PIDFD_GET_UTS_NAMESPACE },
	[NS_IPC] = { "ipc", PIDFD_GET_IPC_NAMESPACE },
	[NS_USER] = { "user", PIDFD_GET_USER_NAMESPACE },
	[NS_CGROUP] = { "cgroup", PIDFD_GET_CGROUP_NAMESPACE },
	[NS_TIME] = { "time", PIDFD_GET_TIME_NAMESPACE },
	[NS_TIME_FOR_CHILDREN] = { "time", PIDFD_GET_TIME_FOR_CHILDREN_NAMESPACE },
};

/* "net:[4026531840]": the type (in @type, @size bytes) and the inode; 0, or -EINVAL. */
static int nsfs_parse(const char *link, char *type, size_t size, unsigned long long *ino)
{
	const char *colon = strchr(link, ':');
	char end = 0;

	if (!colon || (size_t)(colon - link) >= size || sscanf(colon, ":[%llu]%c", ino, &end) != 1)
		return -EINVAL;
	memcpy(type, link, (size_t)(colon - link));
	type[colon - link] = '\0';
	for (int k = 0; k < NS_NR; k++)
		if (!strcmp(type, nsfs_of[k].type))
			return 0;
	return -EINVAL;
}

static int nsfs_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	unsigned long long ino;
	char type[16];

	(void)ctx;
	return f->link[0] != '/' && !nsfs_parse(f->link, type, sizeof(type), &ino);
}

/* Whether host pid @pid is in namespace @type:[@ino]: 1 (its kind in @ret), or 0. */
static int nsfs_in(pid_t pid, const char *type, uint64_t ino, enum ns_kind *ret)
{
	struct ns_ids ids;

	if (ns_ids_read(pid, pid, &ids))
		return 0;
	/* a process's own namespace before the one its children would get */
	for (int k = 0; k < NS_NR; k++)
		if (ids.ino[k] == ino && !strcmp(nsfs_of[k].type, type)) {
			*ret = (enum ns_kind)k;
			return 1;
		}
	return 0;
}

/*
 * A task of the tree in namespace @type:[@ino]: its host pid and the kind, or
 * 0. The task @self holding the file first, when it is in that namespace:
 * at restore it reopens it through a pidfd of itself, which needs no ptrace
 * access to another task (in a user namespace of the tree's own, another
 * task may be at its creds already, no longer dumpable for a while).
 */
static pid_t nsfs_holder(const struct dump_ctx *ctx, pid_t self, const char *type, uint64_t ino,
			 enum ns_kind *ret)
{
	if (nsfs_in(self, type, ino, ret))
		return self;
	for (unsigned int i = 0; i < ctx->nr_tasks; i++) {
		const struct seized_task *t = ctx->tasks[i].t;

		if (t->state == TASK_DEAD || t->state == TASK_ZOMBIE)
			continue;
		if (nsfs_in(t->pid, type, ino, ret))
			return t->pid;
	}
	return 0;
}

static int nsfs_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	unsigned long long ino = 0;
	enum ns_kind kind = NS_NR;
	NsfsEntry *e;
	char type[16];
	pid_t holder;

	if (nsfs_parse(f->link, type, sizeof(type), &ino))
		return -EINVAL;
	holder = nsfs_holder(ctx, f->pid, type, ino, &kind);
	if (!holder) {
		pr_err("pid %d fd %d: %s is a namespace no task of the dumped tree is in (kept "
		       "alive by this fd): not supported\n",
		       f->pid, f->fd, f->link);
		return -EOPNOTSUPP;
	}
	if (pidns_depth(holder) || pidns_depth(f->pid)) {
		pr_err("pid %d fd %d: %s, held or entered in a pid namespace nested in the tree's: "
		       "not supported yet\n",
		       f->pid, f->fd, f->link);
		return -EOPNOTSUPP;
	}
	e = anon_priv_alloc(d, sizeof(*e));
	if (!e)
		return -ENOMEM;
	nsfs_entry__init(e);
	e->flags = f->flags;
	e->kind = (uint32_t)kind;
	e->pid = pidns_vpid(holder);
	d->fe.type = FILE_TYPE__FILE_NSFS;
	d->fe.nsfs = e;
	pr_debug("pid %d fd %d: %s, the %s namespace of pid %d\n", f->pid, f->fd, f->link,
		 ns_kind_name(kind), e->pid);
	return 0;
}

/* ---- restore ---- */
static int nsfs_check(const FileEntry *fe)
{
	return anon_check(fe, fe->nsfs && fe->nsfs->kind < NS_NR && fe->nsfs->pid > 0);
}

/* The holder exists only once the tree is forked: a placeholder until then. */
static int nsfs_open_placeholder(struct restore_ctx *ctx, size_t pos)
{
	return rst_late_placeholder(ctx, pos);
}

/* The namespace of description @pos, through a pidfd of its holder, in task @t. */
static int nsfs_reopen(struct restore_ctx *ctx, const struct rst_task *t, const FdEntry *fd,
		       size_t pos)
{
	const NsfsEntry *e = ctx->files->idx.by_id[pos]->nsfs;
	int pfd = (int)syscall(__NR_pidfd_open, (pid_t)e->pid, 0);
	int nsfd;

	if (pfd < 0) {
		pr_perror("pid %u fd %u: cannot open a pidfd of pid %d for its %s namespace",
			  t->pe->pid, fd->fd, e->pid, ns_kind_name((enum ns_kind)e->kind));
		return neg_errno();
	}
	nsfd = ioctl(pfd, nsfs_of[e->kind].ioctl, 0);
	if (nsfd < 0) {
		nsfd = neg_errno();
		pr_errno(nsfd, "pid %u fd %u: cannot get the %s namespace of pid %d", t->pe->pid,
			 fd->fd, ns_kind_name((enum ns_kind)e->kind), e->pid);
	}
	close(pfd);
	return nsfd;
}

static int nsfs_installed(struct restore_ctx *ctx, struct rst_task *t)
{
	return rst_late_install(ctx, t, &nsfs_kind, NULL, nsfs_reopen);
}

const struct file_kind nsfs_kind = {
	.name = "namespace file",
	.match = nsfs_match,
	.dump = nsfs_dump,
	.types = { FILE_TYPE__FILE_NSFS },
	.check = nsfs_check,
	.open = nsfs_open_placeholder,
	.installed = nsfs_installed,
};
