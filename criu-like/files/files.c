// SPDX-License-Identifier: GPL-2.0
/*
 * Open files of the tree: the fd table of every process (fdinfo-PID.img)
 * and every open file description once (files.img), shared descriptions
 * found with kcmp(KCMP_FILE) among those on the same inode. Each kind of
 * file has its own file behind a struct file_kind (files-int.h). The tasks
 * are only read: their fds are duplicated into the dumper by the parasite.
 */
#define LOG_PREFIX "files: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"
#include "files-int.h"
#include "image.h"
#include "infect.h"
#include "locks.h"
#include "log.h"
#include "par.h"
#include "ns.h"
#include "util.h"

static unsigned int ft_hash(uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino ^ (dev << 32) ^ (dev >> 32)) * 0x9E3779B97F4A7C15ull;

	return (unsigned int)(h >> (64 - FT_HASH_BITS));
}

const struct seized_task *dump_tree_task_of(const struct dump_ctx *ctx, pid_t tid, bool *leader)
{
	unsigned int i, j;

	for (i = 0; i < ctx->nr_tasks; i++) {
		const struct seized_task *t = ctx->tasks[i].t;

		*leader = t->pid == tid;
		if (*leader)
			return t;
		for (j = 0; j < t->nr_threads; j++)
			if (t->threads[j].tid == tid)
				return t;
	}
	return NULL;
}

struct file_table *file_table_get(struct dump_ctx *ctx)
{
	struct file_table *ft;

	if (ctx->files)
		return ctx->files;
	ft = calloc(1, sizeof(*ft));
	if (!ft)
		return NULL;
	ft->tables.type = KCMP_FILES;
	ft->kind_state = calloc(nr_file_kinds, sizeof(*ft->kind_state));
	if (!ft->kind_state) {
		free(ft);
		return NULL;
	}
	ctx->files = ft;
	return ft;
}

void **file_kind_dump_state(struct dump_ctx *ctx, const struct file_kind *k)
{
	struct file_table *ft = file_table_get(ctx);

	return ft ? &ft->kind_state[file_kind_index(k)] : NULL;
}

struct file_desc *file_desc_new(struct file_table *ft, uint64_t dev, uint64_t ino)
{
	struct file_desc *d;
	unsigned int h;

	if (ft->nr == ft->cap) {
		unsigned int cap = ft->cap ? ft->cap * 2 : 64;
		struct file_desc **n = realloc(ft->descs, cap * sizeof(*n));

		if (!n)
			return NULL;
		ft->descs = n;
		ft->cap = cap;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	file_entry__init(&d->fe);
	d->id = ft->nr + 1; /* 0 is never a file id */
	d->fe.id = d->id;
	d->dev = dev;
	d->ino = ino;
	h = ft_hash(dev, ino);
	d->hnext = ft->hash[h];
	ft->hash[h] = d;
	ft->descs[ft->nr++] = d;
	return d;
}

struct file_desc *file_desc_next(struct file_table *ft, uint64_t dev, uint64_t ino,
				 struct file_desc *from)
{
	struct file_desc *d = from ? from->hnext : ft->hash[ft_hash(dev, ino)];

	for (; d; d = d->hnext)
		if (d->dev == dev && d->ino == ino)
			return d;
	return NULL;
}

void file_table_free(struct file_table *ft)
{
	unsigned int i;

	if (!ft)
		return;
	for (i = 0; i < ft->nr; i++) {
		locks_free(ft->descs[i]); /* in the kind's priv block */
		free(ft->descs[i]->priv);
		free(ft->descs[i]);
	}
	for (i = 0; i < ARRAY_SIZE(ft->groups); i++) {
		struct inode_group *g, *next;

		for (g = ft->groups[i]; g; g = next) {
			next = g->hnext;
			free(g->v);
			free(g);
		}
	}
	for (i = 0; i < ft->nr_in_flight; i++)
		close(ft->in_flight[i].dfd);
	free(ft->in_flight);
	free(ft->descs);
	free(ft->tables.pids);
	free(ft->kind_state);
	free(ft);
}

static int write_files_img(struct dump_ctx *ctx, struct file_table *ft)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_FILES, 0, IMG_WRITE);
	unsigned int i;
	int err = 0;

	if (!img)
		return -errno;
	for (i = 0; i < ft->nr && !err; i++)
		err = img_write_record(img, &ft->descs[i]->fe.base);
	return img_close(img) ?: err;
}

static int resolve_in_flight(struct dump_ctx *ctx, struct file_table *ft);

int dump_files_start(struct dump_ctx *ctx)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < nr_file_kinds; i++)
		if (file_kinds[i]->dump_start)
			err = file_kinds[i]->dump_start(ctx);
	return err;
}

int dump_files_finish(struct dump_ctx *ctx)
{
	struct file_table *ft = file_table_get(ctx);
	size_t i;
	int err;

	if (!ft)
		return -ENOMEM;
	/* Every task is dumped: an fd in flight that none holds is dumped on its own. */
	err = resolve_in_flight(ctx, ft);
	for (i = 0; !err && i < nr_file_kinds; i++)
		if (file_kinds[i]->dump_finish)
			err = file_kinds[i]->dump_finish(ctx);
	if (!err)
		err = write_files_img(ctx, ft);
	if (!err)
		pr_info("%u open files\n", ft->nr);
	return err;
}

void dump_files_fini(struct dump_ctx *ctx, bool resume)
{
	size_t i;

	for (i = 0; i < nr_file_kinds; i++)
		if (file_kinds[i]->dump_fini)
			file_kinds[i]->dump_fini(ctx, resume);
}

static long kcmp(pid_t p1, pid_t p2, int type, unsigned long a, unsigned long b)
{
	return syscall(SYS_kcmp, p1, p2, type, a, b);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The fd numbers of @pid, ascending, in *@ret (malloc'ed). */
static int list_fds(pid_t pid, int **ret, unsigned int *ret_n)
{
	_cleanup_closedir_ DIR *dir = NULL;
	_cleanup_free_ int *fds = NULL;
	unsigned int n = 0, cap = 0;
	struct dirent *de;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	if (!dir) {
		pr_perror("opendir %s", path);
		return neg_errno();
	}
	while ((errno = 0, de = readdir(dir))) {
		long fd;

		if (de->d_name[0] == '.')
			continue;
		if (parse_long(de->d_name, &fd) || fd < 0 || fd > INT_MAX) {
			pr_err("unexpected entry %s in %s\n", de->d_name, path);
			return -EINVAL;
		}
		if (n == cap) {
			int *nf = realloc(fds, (cap = cap ? cap * 2 : 64) * sizeof(*nf));

			if (!nf)
				return -ENOMEM;
			fds = nf;
		}
		fds[n++] = (int)fd;
	}
	if (errno) {
		pr_perror("readdir %s", path);
		return neg_errno();
	}
	if (n)
		qsort(fds, n, sizeof(*fds), cmp_int);
	*ret = TAKE_PTR(fds);
	*ret_n = n;
	return 0;
}

/*
 * readlink, stat and fdinfo of fd @f->fd of @f->pid; with @parent, its link
 * and stat if it has them. -ENOENT, not logged, when the fd is no longer
 * there (fd_gone()).
 */
static int fd_info_read(struct fd_info *f, const struct dump_task *parent)
{
	char path[64], link[PATH_MAX];
	struct fdinfo fi = { 0 };
	ssize_t len;
	int err;

	if (fd_seen_take(parent, f))
		goto fdinfo;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", f->pid, f->fd);
	len = readlink(path, link, sizeof(link) - 1);
	if (len < 0 || stat(path, &f->st)) {
		err = neg_errno();
		if (err != -ENOENT)
			pr_errno(err, "pid %d fd %d: readlink/stat of %s", f->pid, f->fd, path);
		return err;
	}
	if ((size_t)len >= sizeof(link) - 1) {
		pr_err("pid %d fd %d: the path of %s is too long\n", f->pid, f->fd, path);
		return -ENAMETOOLONG;
	}
	link[len] = '\0';
	f->link = strdup(link);
	if (!f->link)
		return -ENOMEM;
fdinfo:
	err = proc_parse_fdinfo(f->pid, f->fd, &fi);
	if (err) {
		if (err != -ENOENT)
			pr_errno(err, "pid %d fd %d: cannot parse its fdinfo", f->pid, f->fd);
		return err;
	}
	f->cloexec = fi.flags & O_CLOEXEC;
	f->flags = fi.flags & ~(unsigned int)O_CLOEXEC;
	f->pos = fi.pos;
	f->mnt_id = fi.mnt_id;
	/* locks.c: refused without --file-locks, else saved with the description */
	f->locks = TAKE_PTR(fi.locks);
	f->n_locks = fi.n_locks;
	fi.n_locks = 0;
	fdinfo_fini(&fi);
	return 0;
}

static const char *anon_kind(const char *link)
{
	static const struct {
		const char *link, *kind;
	} kinds[] = {
		{ "anon_inode:[eventfd]", "eventfd" },
		{ "anon_inode:[eventpoll]", "epoll" },
		{ "anon_inode:[signalfd]", "signalfd" },
		{ "anon_inode:[timerfd]", "timerfd" },
		{ "anon_inode:inotify", "inotify" },
		{ "anon_inode:[fanotify]", "fanotify" },
		{ "anon_inode:[pidfd]", "pidfd" },
		{ "anon_inode:[io_uring]", "io_uring" },
		{ "anon_inode:[userfaultfd]", "userfaultfd" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(link, kinds[i].link))
			return kinds[i].kind;
	return "anonymous inode";
}

static const char *sock_kind(int family)
{
	switch (family) {
	case AF_UNIX:
		return "unix socket";
	case AF_INET:
		return "inet socket";
	case AF_INET6:
		return "inet6 socket";
	case AF_NETLINK:
		return "netlink socket";
	case AF_PACKET:
		return "packet socket";
	case AF_VSOCK:
		return "vsock socket";
	default:
		return "socket";
	}
}

/*
 * Drain the socket @f to learn its family, and whether it is the control
 * socket of our own parasite: connected to a socket of this dumper
 * (SO_PEERCRED), which no task of the tree can be otherwise.
 */
static int sock_probe(struct dump_task *dt, const struct fd_info *f, int *family, bool *parasite)
{
	_cleanup_close_ int dfd = -1;
	struct ucred cred;
	socklen_t len = sizeof(*family), clen = sizeof(cred);
	int type = -1, err;
	socklen_t tlen = sizeof(type);

	err = parasite_drain_fds(dt->ctl, &f->fd, 1, &dfd);
	if (err)
		return err;
	if (getsockopt(dfd, SOL_SOCKET, SO_DOMAIN, family, &len) ||
	    getsockopt(dfd, SOL_SOCKET, SO_TYPE, &type, &tlen)) {
		pr_perror("pid %d fd %d: getsockopt of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	*parasite = *family == AF_UNIX && type == SOCK_SEQPACKET &&
		    !getsockopt(dfd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) && cred.pid == getpid();
	return 0;
}

/* Whether task @pid is in criu-like's mount namespace. */
static bool same_mntns(pid_t pid)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	return !stat(path, &a) && !stat("/proc/self/ns/mnt", &b) && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

bool file_path_leads_to(const struct dump_ctx *ctx, pid_t pid, const char *link, bool nofollow,
			const struct stat *want, bool by_rdev)
{
	pid_t tree = ctx && ctx->opts ? ctx->opts->tree : 0;
	char path[PATH_MAX + 32];
	struct stat cur;

	for (int i = 0; i < 3; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "/proc/%d/root%s", pid, link);
		else if (i == 1 && tree > 0 && tree != pid)
			snprintf(path, sizeof(path), "/proc/%d/root%s", tree, link);
		else if (i == 2 && same_mntns(pid))
			snprintf(path, sizeof(path), "%s", link);
		else
			continue;
		if ((nofollow ? lstat(path, &cur) : stat(path, &cur)))
			continue;
		if (by_rdev ? S_ISCHR(cur.st_mode) && cur.st_rdev == want->st_rdev
			    : cur.st_dev == want->st_dev && cur.st_ino == want->st_ino)
			return true;
	}
	return false;
}

/* Refuse the fd @f no kind matched, naming its kind as well as we can tell. */
static int refuse_fd(const struct fd_info *f, int sock_family)
{
	const char *kind = "file";
	char buf[48];

	if (!strncmp(f->link, "socket:[", 8)) {
		kind = sock_kind(sock_family);
	} else if (!strncmp(f->link, "anon_inode:", 11)) {
		kind = anon_kind(f->link);
	} else if (S_ISFIFO(f->st.st_mode)) {
		kind = "named FIFO";
	} else if (S_ISSOCK(f->st.st_mode)) {
		kind = "socket file";
	} else if (S_ISBLK(f->st.st_mode)) {
		kind = "block device";
	} else if (f->link[0] != '/') {
		kind = "special file"; /* nsfs, pidfs, bpf objects... */
	} else {
		snprintf(buf, sizeof(buf), "file of mode %o", f->st.st_mode);
		kind = buf;
	}
	pr_err("pid %d fd %d: %s (%s) is not supported yet\n", f->pid, f->fd, f->link, kind);
	return -EOPNOTSUPP;
}

/*
 * The first kind that dumps @f, in *@ret (NULL: none); or -errno. @in_flight:
 * only kinds that can dump a description no task holds.
 */
static int match_kind(struct dump_ctx *ctx, const struct fd_info *f, bool in_flight,
		      const struct file_kind **ret)
{
	size_t i;

	*ret = NULL;
	for (i = 0; i < nr_file_kinds; i++) {
		const struct file_kind *k = file_kinds[i];
		int r;

		if (in_flight && !k->in_flight)
			continue;
		r = k->match(ctx, f);
		if (r < 0)
			return r;
		if (r) {
			*ret = k;
			return 0;
		}
	}
	return 0;
}

/* The kind of @f in *@ret; NULL (and 0) for the parasite's own socket, to be left out. */
static int classify_fd(struct dump_ctx *ctx, struct dump_task *dt, struct fd_info *f,
		       const struct file_kind **ret)
{
	bool parasite = false;
	int family = -1;
	int err;

	*ret = NULL;
	/* Only a socket itself: an O_PATH fd of a socket file has a path as its link. */
	if (S_ISSOCK(f->st.st_mode) && !strncmp(f->link, "socket:[", 8)) {
		err = sock_probe(dt, f, &family, &parasite);
		if (err)
			return err;
		if (parasite)
			return 0;
		/* Unix, inet, netlink and packet sockets go on to their kinds; others are refused. */
		if (family != AF_UNIX && family != AF_INET && family != AF_INET6 &&
		    family != AF_NETLINK && family != AF_PACKET)
			return refuse_fd(f, family);
	}
	f->sk_family = family;
	err = match_kind(ctx, f, false, ret);
	if (!err && !*ret)
		err = refuse_fd(f, -1);
	return err;
}

static struct inode_group *inode_group_get(struct file_table *ft, uint64_t dev, uint64_t ino)
{
	unsigned int h = ft_hash(dev, ino);
	struct inode_group *g;

	for (g = ft->groups[h]; g; g = g->hnext)
		if (g->dev == dev && g->ino == ino)
			return g;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->dev = dev;
	g->ino = ino;
	g->hnext = ft->groups[h];
	ft->groups[h] = g;
	return g;
}

static int inode_group_insert(struct inode_group *g, unsigned int pos, struct file_desc *d)
{
	if (g->n == g->cap) {
		unsigned int cap = g->cap ? g->cap * 2 : 4;
		struct file_desc **v = realloc(g->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->v = v;
		g->cap = cap;
	}
	memmove(g->v + pos + 1, g->v + pos, (g->n - pos) * sizeof(*g->v));
	g->v[pos] = d;
	g->n++;
	return 0;
}

/*
 * The description of @f in @g, if there: kcmp(KCMP_FILE) against the fd where
 * each was first seen (every task is frozen, so it is still there) says equal,
 * or orders the two struct file (1: @f's is before, 2: after). Else *@ret is
 * NULL and *@ret_pos is where it goes.
 */
static int find_desc(const struct inode_group *g, const struct fd_info *f, struct file_desc **ret,
		     unsigned int *ret_pos)
{
	unsigned int lo = 0, hi = g->n;

	*ret = NULL;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		const struct file_desc *d = g->v[mid];
		long r = kcmp(f->pid, d->pid, KCMP_FILE, (unsigned long)f->fd,
			      (unsigned long)d->fd);

		if (r < 0) {
			pr_perror("kcmp(KCMP_FILE) of %d/%d and %d/%d", f->pid, f->fd, d->pid,
				  d->fd);
			return neg_errno();
		}
		if (r == 0) {
			*ret = g->v[mid];
			return 0;
		}
		if (r == 1)
			hi = mid;
		else if (r == 2)
			lo = mid + 1;
		else {
			pr_err("kcmp(KCMP_FILE) of %d/%d and %d/%d gave no order (%ld)\n", f->pid,
			       f->fd, d->pid, d->fd, r);
			return -EINVAL;
		}
	}
	*ret_pos = lo;
	return 0;
}

/* Per fd of the task: what it is, its description, and whether this fd dumps it. */
struct task_fd {
	struct fd_info f;
	const struct file_kind *ops;
	struct file_desc *d;
	bool first; /* the description is new: dump it through this fd */
};

static void task_fds_free(struct task_fd *tf, unsigned int n)
{
	unsigned int i;

	for (i = 0; tf && i < n; i++) {
		free(tf[i].f.link);
		free(tf[i].f.locks);
	}
	free(tf);
}

/* The new descriptions of a kind that SCM_RIGHTS cannot carry, taken with pidfd_getfd(). */
static int dump_new_descs_getfd(struct dump_ctx *ctx, pid_t pid, struct task_fd *tf, unsigned int n)
{
	_cleanup_close_ int pidfd = -1;
	int err = 0;

	for (unsigned int i = 0; i < n && !err; i++) {
		struct task_fd *t = &tf[i];

		if (!t->first || !t->ops->no_scm)
			continue;
		if (pidfd < 0)
			pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		t->f.dfd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, t->f.fd, 0);
		if (t->f.dfd < 0) {
			pr_perror("pid %d fd %d: pidfd_getfd", pid, t->f.fd);
			return neg_errno();
		}
		err = t->ops->dump(ctx, &t->f, t->d);
		if (!err)
			err = fown_dump(ctx, &t->f, t->d);
		close(t->f.dfd);
		t->f.dfd = -1;
	}
	return err;
}

/* Drain the new descriptions in batches and dump each. */
static int dump_new_descs(struct dump_ctx *ctx, struct dump_task *dt, struct task_fd *tf,
			  unsigned int n)
{
	unsigned int idx[PARASITE_MAX_FDS], i = 0, k, nb;
	int fds[PARASITE_MAX_FDS], dfds[PARASITE_MAX_FDS];
	int err = dump_new_descs_getfd(ctx, dt->t->pid, tf, n);

	while (i < n && !err) {
		for (nb = 0; i < n && nb < PARASITE_MAX_FDS; i++) {
			if (!tf[i].first || tf[i].ops->no_scm)
				continue;
			idx[nb] = i;
			fds[nb++] = tf[i].f.fd;
		}
		if (!nb)
			break;
		err = parasite_drain_fds(dt->ctl, fds, nb, dfds);
		if (err)
			return err;
		for (k = 0; k < nb; k++) {
			struct task_fd *t = &tf[idx[k]];

			t->f.dfd = dfds[k];
			if (!err)
				err = t->ops->dump(ctx, &t->f, t->d);
			if (!err)
				err = fown_dump(ctx, &t->f, t->d);
			close(dfds[k]);
			t->f.dfd = -1;
		}
	}
	return err;
}

static int write_fdinfo_img(struct dump_ctx *ctx, pid_t pid, const struct task_fd *tf,
			    unsigned int n)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_FDINFO, (uint32_t)pidns_vpid(pid),
				      IMG_WRITE);
	unsigned int i;
	int err = 0;

	if (!img)
		return -errno;
	for (i = 0; i < n && !err; i++) {
		FdEntry e = FD_ENTRY__INIT;

		if (!tf[i].d)
			continue;
		e.fd = (uint32_t)tf[i].f.fd;
		e.id = tf[i].d->id;
		e.cloexec = tf[i].f.cloexec;
		err = img_write_record(img, &e.base);
	}
	/* img_*() logged any failure, naming the file */
	return img_close(img) ?: err;
}

/*
 * Whether fd @fd of task @pid, listed and then not found, is gone: the task
 * is there and its fd is not. In a frozen tree only criu-like's own code
 * opens and closes fds: the parasite of another task that shares this
 * one's table (CLONE_FILES) opened it for a moment (ci17b: clone_files,
 * after a restore, a dump failed on "readlink/stat of /proc/PID/fd/11: No
 * such file or directory"). The table's state is without it.
 */
static bool fd_gone(pid_t pid, int fd)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	if (stat(path, &st))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	return lstat(path, &st) && errno == ENOENT;
}

/*
 * Read every fd @fds[0..*@n) of the task into @tf (its own: the other workers
 * of a parallel dump go on meanwhile, par.h); *@n less those gone meanwhile
 * (fd_gone()).
 */
static int read_fds(const struct dump_ctx *ctx, struct dump_task *dt, struct task_fd *tf,
		    const int *fds, unsigned int *n)
{
	/* what its parent's fds showed, for those it inherited (fd-seen.c) */
	const struct dump_task *parent = fd_seen_parent(ctx, dt);
	_cleanup_free_ const struct fd_info **kept = calloc(*n ? *n : 1, sizeof(*kept));
	bool dropped = par_drop();
	int err = kept ? 0 : -ENOMEM;
	unsigned int i, j = 0;

	for (i = 0; i < *n && !err; i++) {
		struct fd_info *f = &tf[j].f;

		f->pid = dt->t->pid;
		f->fd = fds[i];
		f->dfd = -1;
		err = fd_info_read(f, parent);
		if (err == -ENOENT && fd_gone(f->pid, f->fd)) {
			pr_info("pid %d fd %d: gone since its table was listed: an fd "
				"of criu-like's own (a parasite's, in a table shared with "
				"another task), left out\n",
				f->pid, f->fd);
			free(f->link); /* from the parent's listing: its fdinfo was gone */
			memset(&tf[j], 0, sizeof(tf[j]));
			err = 0;
			continue;
		}
		if (err == -ENOENT)
			pr_errno(err, "pid %d fd %d: cannot read it", f->pid, f->fd);
		kept[j] = f;
		j++;
	}
	if (!err)
		err = fd_seen_keep(dt, kept, j);
	par_take(dropped);
	*n = j; /* the entries past j are zeroed; the one that failed is counted */
	return err;
}

/* Refuse unsupported kinds, find or add each description of the fds read_fds() read. */
static int collect_fds(struct dump_ctx *ctx, struct dump_task *dt, struct file_table *ft,
		       struct task_fd *tf, unsigned int n)
{
	struct inode_group *g;
	unsigned int i, pos = 0;
	int err;

	/* Every fd is checked before anything is added: an unsupported one fails early. */
	for (i = 0; i < n; i++) {
		err = classify_fd(ctx, dt, &tf[i].f, &tf[i].ops);
		if (!err)
			err = locks_check(ctx, &tf[i].f);
		if (err)
			return err;
	}
	for (i = 0; i < n; i++) {
		struct fd_info *f = &tf[i].f;

		if (!tf[i].ops)
			continue; /* the parasite's control socket */
		g = inode_group_get(ft, f->st.st_dev, f->st.st_ino);
		if (!g)
			return -ENOMEM;
		err = find_desc(g, f, &tf[i].d, &pos);
		if (err)
			return err;
		if (tf[i].d)
			continue;
		tf[i].d = file_desc_new(ft, f->st.st_dev, f->st.st_ino);
		if (!tf[i].d)
			return -ENOMEM;
		tf[i].d->pid = f->pid;
		tf[i].d->fd = f->fd;
		tf[i].first = true;
		err = inode_group_insert(g, pos, tf[i].d);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The parasite's control socket out of @fds[0..*@n): not the task's, and
 * known by its number (else sock_probe() tells it by its peer, after a
 * round trip to the parasite).
 */
static void drop_control_fd(struct dump_task *dt, int *fds, unsigned int *n)
{
	int cfd = parasite_control_fd(dt->ctl);

	for (unsigned int i = 0; cfd >= 0 && i < *n; i++)
		if (fds[i] == cfd) {
			memmove(fds + i, fds + i + 1, (*n - i - 1) * sizeof(*fds));
			(*n)--;
			return;
		}
}

int dump_task_files(struct dump_ctx *ctx, struct dump_task *dt)
{
	struct file_table *ft = file_table_get(ctx);
	pid_t pid = dt->t->pid;
	_cleanup_free_ int *fds = NULL;
	struct task_fd *tf = NULL;
	unsigned int n = 0, i;
	int err;

	if (!ft)
		return -ENOMEM;
	if (!dt->ctl) {
		pr_debug("%d is a zombie: no fd table\n", pid);
		return 0;
	}
	/* a table shared with the parent is dumped again: the same descriptions (fdtable.c) */
	err = fdt_check_shared(&ft->tables, dt->t, dump_threads_of(ctx, dt),
			       &dt->files_shared_with_parent);
	if (!err) {
		bool dropped = par_drop(); /* its own fds: other workers may go on */

		err = list_fds(pid, &fds, &n);
		par_take(dropped);
	}
	if (err)
		return err;
	drop_control_fd(dt, fds, &n);
	if (dt->files_shared_with_parent)
		fd_seen_filter(fd_seen_parent(ctx, dt), pid, fds, &n);
	tf = calloc(n ? n : 1, sizeof(*tf));
	if (!tf)
		return -ENOMEM;
	err = read_fds(ctx, dt, tf, fds, &n);
	/*
	 * From the first description added to the last dumped, the table must
	 * look to the other workers of a parallel dump as if this ran at once:
	 * a description another task shares is complete when it sees it.
	 */
	par_pin();
	if (!err)
		err = collect_fds(ctx, dt, ft, tf, n);
	if (!err)
		err = dump_new_descs(ctx, dt, tf, n);
	/* --file-locks: after the descriptions, whose kind says whether they can hold locks */
	for (i = 0; !err && i < n; i++)
		if (tf[i].d && tf[i].f.n_locks)
			err = locks_add(ctx, &tf[i].f, tf[i].d);
	par_unpin();
	if (!err) {
		bool dropped = par_drop(); /* ids do not change once given */

		err = write_fdinfo_img(ctx, pid, tf, n);
		par_take(dropped);
	}
	if (!err)
		pr_debug("pid %d: fdinfo-%d.img written\n", pid, pid);
	task_fds_free(tf, n);
	return err;
}

/* ---- fds in flight in unix sockets' queues ------------------------------------------------ */

int file_table_grow(void **v, unsigned int *cap, unsigned int n, size_t size)
{
	unsigned int c;
	void *nv;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	nv = realloc(*v, c * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = c;
	return 0;
}

int file_in_flight_add(struct file_table *ft, int dfd, uint32_t *slot, const struct fd_info *rcv)
{
	struct in_flight *fl;

	if (file_table_grow((void **)&ft->in_flight, &ft->cap_in_flight, ft->nr_in_flight,
			    sizeof(*fl)))
		return -ENOMEM;
	fl = &ft->in_flight[ft->nr_in_flight++];
	fl->dfd = dfd;
	fl->slot = slot;
	fl->pid = rcv->pid;
	fl->fd = rcv->fd;
	return 0;
}

static int refuse_in_flight(const struct in_flight *fl, const struct fd_info *f)
{
	pr_err("pid %d fd %d: %s in flight in its queue is held by no task and is a kind that "
	       "cannot be dumped on its own: not supported\n",
	       fl->pid, fl->fd, f->link);
	return -EOPNOTSUPP;
}

/* The fd in flight @fl, held by no task: a description of its own, dumped from the dumper's fd. */
static int dump_file_in_flight(struct dump_ctx *ctx, struct file_table *ft,
			       const struct in_flight *fl, struct inode_group *g, unsigned int pos,
			       struct file_desc **ret)
{
	struct fd_info f = { .pid = getpid(), .fd = fl->dfd, .dfd = fl->dfd, .sk_family = -1 };
	const struct file_kind *ops = NULL;
	struct file_desc *d;
	socklen_t len = sizeof(f.sk_family);
	int err;

	err = fd_info_read(&f, NULL);
	if (!err && S_ISSOCK(f.st.st_mode) &&
	    getsockopt(f.dfd, SOL_SOCKET, SO_DOMAIN, &f.sk_family, &len))
		err = neg_errno();
	if (!err)
		err = match_kind(ctx, &f, true, &ops);
	if (!err && !ops)
		err = refuse_in_flight(fl, &f);
	if (!err)
		err = locks_check(ctx, &f);
	d = err ? NULL : file_desc_new(ft, f.st.st_dev, f.st.st_ino);
	if (!err && !d)
		err = -ENOMEM;
	if (!err) {
		d->pid = f.pid;
		d->fd = f.fd;
		err = inode_group_insert(g, pos, d);
	}
	if (!err)
		err = ops->dump(ctx, &f, d);
	if (!err)
		err = fown_dump(ctx, &f, d);
	if (!err && f.n_locks)
		err = locks_add(ctx, &f, d);
	if (!err) {
		pr_info("pid %d fd %d: %s in flight in its queue, held by no task: file %u\n",
			fl->pid, fl->fd, f.link, d->id);
		*ret = d;
	}
	free(f.link);
	free(f.locks);
	return err;
}

/*
 * Each fd in flight as the id of its description: one of the tree (kcmp
 * against the fd where it was first seen, the tree still frozen) or one
 * held by no task, dumped now. Dumping a socket in flight may queue more:
 * the list grows while it is walked.
 */
static int resolve_in_flight(struct dump_ctx *ctx, struct file_table *ft)
{
	unsigned int i, pos = 0;
	int err = 0;

	for (i = 0; i < ft->nr_in_flight && !err; i++) {
		struct in_flight fl = ft->in_flight[i];
		struct fd_info f = { .pid = getpid(), .fd = fl.dfd };
		struct inode_group *g;
		struct file_desc *d;

		if (fstat(fl.dfd, &f.st)) {
			pr_perror("pid %d fd %d: fstat of an fd in flight in its queue", fl.pid,
				  fl.fd);
			return neg_errno();
		}
		g = inode_group_get(ft, f.st.st_dev, f.st.st_ino);
		if (!g)
			return -ENOMEM;
		err = find_desc(g, &f, &d, &pos);
		if (!err && !d)
			err = dump_file_in_flight(ctx, ft, &fl, g, pos, &d);
		if (!err)
			*fl.slot = d->id;
	}
	if (!err && ft->nr_in_flight)
		pr_info("%u fds in flight in unix sockets' queues\n", ft->nr_in_flight);
	return err;
}
