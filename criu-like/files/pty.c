// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-terminals of the tree (FILE_PTY, images/pty.proto): devpts masters
 * (/dev/ptmx) and slaves (/dev/pts/N), dump and restore. The data in flight
 * both ways is moved by pty-data.c (pty.h).
 *
 * Dump. The master is the only description of its side a pty has, so its
 * entry carries the state of the terminal, read through the master (the
 * kernel answers termios, window size, session and foreground group of the
 * slave there): termios2, winsize, packet mode, lock, the session whose
 * controlling terminal it is and its foreground group. The data in flight is
 * saved in the master's entry: read and put back at once through the
 * master's description and one of the slave's that a task of the tree holds
 * (pidfd_getfd(), the same open file: no open or close the tty would notice).
 * With no slave in the tree, only what the slave wrote before is saved.
 *
 * An fd of /dev/tty whose terminal is a pty slave of the tree is that slave
 * with dev_tty set. A slave whose master is not in the tree (the terminal
 * of a job, found by the tty-index of the masters' fdinfo) is left to
 * chr.c: FILE_TTY with --shell-job, refused without.
 *
 * Restore. A pty gets its dumped index back by opening /dev/ptmx until the
 * kernel gives that index: devpts allocates the lowest free one
 * (ida_alloc_max()), so if the index is free every open below it takes a
 * lower free index and the one wanted comes at the latest after index + 1
 * opens; the extra masters are closed after. An index that is in use
 * (/dev/pts/N exists) is refused.
 *
 * The master's entry holds the terminal's state: termios2 and window size
 * are set through the master (the kernel applies them to the slave), then
 * packet mode. Every slave description is opened while the pty is unlocked,
 * parked at its f->fds slot, then the lock and the slave's exclusive mode are
 * set, and the data in flight goes back in between, while the slave is still
 * open in the controller. The controlling terminal is given back by the
 * session leader itself (pty_set_ctty(), pty_set_fg()) with the slave
 * description it inherited from the controller; it also opens /dev/tty again
 * for the descriptions that were /dev/tty (the controller has no terminal to
 * open it).
 */
#define LOG_PREFIX "files: "

#include <asm/termbits.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "files-int.h"
#include "restore-files-int.h"
#include "log.h"
#include "node-attrs.h"
#include "ns.h"
#include "compat.h"
#include "proc-parse.h"
#include "pty.h"
#include "seize.h"
#include "util.h"

/* The kind, at the end of this file. */
extern const struct file_kind pty_kind;

/* Documentation/admin-guide/devices.txt */
#define TTYAUX_MAJOR 5 /* 5:0 /dev/tty, 5:2 /dev/ptmx (and /dev/pts/ptmx) */
#define TTY_MINOR 0
#define PTMX_MINOR 2
#define UNIX98_PTY_SLAVE_MAJOR 136 /* 136..143: /dev/pts/N, N = (major - 136) * 256 + minor */
#define UNIX98_PTY_MAJOR_COUNT 8

/* ---- dump ---- */

/* One malloc'ed block per description (file_desc.priv). */
struct pty_priv {
	PtyFileEntry e;
	PtyTermios t;
	PtyWinsize w;
	uint8_t cc[NCCS];
	char slave_path[32];
	struct pty_queues q[]; /* a master's only */
};

static bool is_ptmx(dev_t rdev)
{
	return major(rdev) == TTYAUX_MAJOR && minor(rdev) == PTMX_MINOR;
}

static bool is_pts(dev_t rdev)
{
	return major(rdev) >= UNIX98_PTY_SLAVE_MAJOR &&
	       major(rdev) < UNIX98_PTY_SLAVE_MAJOR + UNIX98_PTY_MAJOR_COUNT;
}

static int pts_index(dev_t rdev)
{
	return (int)((major(rdev) - UNIX98_PTY_SLAVE_MAJOR) * 256 + minor(rdev));
}

static bool pid_in_tree(const struct dump_ctx *ctx, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < ctx->tree->nr_tasks; i++)
		if (ctx->tree->tasks[i]->pid == pid)
			return true;
	return false;
}

/* The tty-index line of /proc/PID/fdinfo/FD (pty masters, 4.x), or -ENOENT, -errno. */
static int fdinfo_tty_index(pid_t pid, const char *fd)
{
	char path[300], line[128];
	int index = -ENOENT;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	fp = fopen(path, "re");
	if (!fp)
		return neg_errno();
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "tty-index: %d", &index) == 1)
			break;
	fclose(fp);
	return index;
}

static bool task_has_master(pid_t pid, int index)
{
	char path[64];
	struct dirent *de;
	bool found = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!found && (de = readdir(dir))) {
		struct stat st;

		if (de->d_name[0] == '.' || fstatat(dirfd(dir), de->d_name, &st, 0) ||
		    !S_ISCHR(st.st_mode) || !is_ptmx(st.st_rdev))
			continue;
		found = fdinfo_tty_index(pid, de->d_name) == index;
	}
	closedir(dir);
	return found;
}

static bool master_in_tree(const struct dump_ctx *ctx, int index)
{
	unsigned int i;

	for (i = 0; i < ctx->tree->nr_tasks; i++)
		if (task_has_master(ctx->tree->tasks[i]->pid, index))
			return true;
	return false;
}

/*
 * An fd of /dev/tty has the inode of /dev/tty; it is the controlling
 * terminal of the task (the one it had when it opened it, the same unless
 * it changed since, which is not told anywhere). Ours when that is a pty
 * slave of a session led in the tree; 0 in @rdev otherwise.
 */
static void dev_tty_slave(const struct dump_ctx *ctx, const struct fd_info *f, dev_t *rdev)
{
	struct proc_stat st;

	*rdev = 0;
	if (proc_parse_stat(f->pid, 0, &st) || !is_pts((dev_t)st.tty_nr) ||
	    !pid_in_tree(ctx, st.sid) || !master_in_tree(ctx, pts_index((dev_t)st.tty_nr)))
		return;
	*rdev = (dev_t)st.tty_nr;
}

static bool is_dev_tty(dev_t rdev)
{
	return major(rdev) == TTYAUX_MAJOR && minor(rdev) == TTY_MINOR;
}

static bool pgrp_in_tree(const struct dump_ctx *ctx, pid_t pgrp)
{
	unsigned int i;

	for (i = 0; i < ctx->tree->nr_tasks; i++)
		if (ctx->tree->tasks[i]->pgid == pgrp)
			return true;
	return false;
}

static int pty_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	dev_t rdev;

	if (!S_ISCHR(f->st.st_mode))
		return 0;
	if (is_ptmx(f->st.st_rdev))
		return 1;
	if (is_dev_tty(f->st.st_rdev)) {
		dev_tty_slave(ctx, f, &rdev);
		return rdev != 0;
	}
	/* a slave whose master is outside: chr.c, FILE_TTY with --shell-job */
	return is_pts(f->st.st_rdev) && master_in_tree(ctx, pts_index(f->st.st_rdev));
}

static struct pty_priv *pty_priv_new(struct file_desc *d, const struct fd_info *f, uint32_t index,
				     bool master)
{
	struct pty_priv *p = calloc(1, sizeof(*p) + (master ? sizeof(p->q[0]) : 0));

	if (!p)
		return NULL;
	free(d->priv);
	d->priv = p;
	pty_file_entry__init(&p->e);
	p->e.index = index;
	p->e.master = master;
	p->e.flags = f->flags;
	snprintf(p->slave_path, sizeof(p->slave_path), "/dev/pts/%u", index);
	p->e.has_slave_path = true;
	p->e.slave_path.data = (uint8_t *)p->slave_path;
	p->e.slave_path.len = strlen(p->slave_path);
	d->fe.type = FILE_TYPE__FILE_PTY;
	d->fe.pty = &p->e;
	return p;
}

/* The int ioctl @req (@name in the error) answers on the description of @f, pty @index. */
static int pty_ioctl_get(const struct fd_info *f, uint32_t index, unsigned long req,
			 const char *name, int *v)
{
	*v = 0;
	if (ioctl(f->dfd, req, v)) {
		pr_perror("pid %d fd %d: %s on pty %u", f->pid, f->fd, name, index);
		return neg_errno();
	}
	return 0;
}

void pty_termios_fill(PtyTermios *t, uint8_t *cc, const struct termios2 *k)
{
	pty_termios__init(t);
	t->iflag = k->c_iflag;
	t->oflag = k->c_oflag;
	t->cflag = k->c_cflag;
	t->lflag = k->c_lflag;
	t->line = k->c_line;
	memcpy(cc, k->c_cc, NCCS);
	t->cc.data = cc;
	t->cc.len = NCCS;
	t->ispeed = k->c_ispeed;
	t->ospeed = k->c_ospeed;
}

static void fill_termios(struct pty_priv *p, const struct termios2 *k)
{
	pty_termios_fill(&p->t, p->cc, k);
	p->e.termios = &p->t;
}

/* The session and foreground group of the slave, asked through the master. */
static int dump_session(const struct dump_ctx *ctx, const struct fd_info *f, struct pty_priv *p)
{
	pid_t sid = 0, pgrp = 0;

	if (ioctl(f->dfd, TIOCGSID, &sid)) {
		if (errno != ENOTTY) {
			pr_perror("pid %d fd %d: TIOCGSID on pty %u", f->pid, f->fd, p->e.index);
			return neg_errno();
		}
		sid = 0; /* no session has it as its controlling terminal */
	}
	if (ioctl(f->dfd, TIOCGPGRP, &pgrp))
		pgrp = 0;
	if (sid && !pid_in_tree(ctx, sid)) {
		pr_err("pid %d fd %d: pty %u is the controlling terminal of session %d, whose "
		       "leader is not in the tree: not supported\n",
		       f->pid, f->fd, p->e.index, sid);
		return -EOPNOTSUPP;
	}
	if (sid && pgrp && !pgrp_in_tree(ctx, pgrp)) {
		pr_err("pid %d fd %d: the foreground process group %d of pty %u has no process "
		       "in the tree: not supported\n",
		       f->pid, f->fd, pgrp, p->e.index);
		return -EOPNOTSUPP;
	}
	p->e.has_sid = p->e.has_fg_pgrp = true;
	/* read by the dumper: host pids; the images have the tree's (ns/pid.c) */
	p->e.sid = (uint32_t)pidns_vpid(sid);
	p->e.fg_pgrp = (uint32_t)(sid ? pidns_vpid(pgrp) : 0);
	return 0;
}

/* The slave of pty @index in task @pid, as a dumper fd (the same open file); -ENOENT: none. */
static int task_slave(pid_t pid, uint32_t index)
{
	_cleanup_closedir_ DIR *dir = NULL;
	_cleanup_close_ int pidfd = -1;
	char path[64];
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	while (dir && (de = readdir(dir))) {
		struct stat st;
		int fd;

		if (de->d_name[0] == '.' || fstatat(dirfd(dir), de->d_name, &st, 0) ||
		    !S_ISCHR(st.st_mode) || !is_pts(st.st_rdev) ||
		    (uint32_t)pts_index(st.st_rdev) != index)
			continue;
		if (pidfd < 0)
			pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
		fd = pidfd < 0 ? -1 : (int)syscall(__NR_pidfd_getfd, pidfd, atoi(de->d_name), 0);
		if (fd < 0) {
			pr_warn("pid %d fd %s: cannot take pty %u's slave: %m\n", pid, de->d_name,
				index);
			continue;
		}
		/* the input is read through it */
		if ((fcntl(fd, F_GETFL) & O_ACCMODE) != O_WRONLY)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

static int tree_slave(const struct dump_ctx *ctx, uint32_t index)
{
	unsigned int i;
	int fd = -ENOENT;

	for (i = 0; fd < 0 && i < ctx->tree->nr_tasks; i++)
		fd = task_slave(ctx->tree->tasks[i]->pid, index);
	return fd;
}

/* The data in flight both ways, read and put back at once (pty-data.c). */
static int dump_data(const struct dump_ctx *ctx, const struct fd_info *f, struct pty_priv *p,
		     const struct termios2 *k)
{
	struct pty_where w = { .pid = f->pid, .fd = f->fd, .index = p->e.index };
	_cleanup_close_ int slave = tree_slave(ctx, p->e.index);
	struct pty_queues *q = p->q;
	int err;

	err = pty_data_save(f->dfd, slave, k, p->e.packet, &w, q);
	if (err)
		return err;
	p->e.has_output = q->out_len != 0;
	p->e.output.data = q->out;
	p->e.output.len = q->out_len;
	p->e.has_input = q->in_len != 0;
	p->e.input.data = q->in;
	p->e.input.len = q->in_len;
	p->e.n_input_lines = q->nr_lines;
	p->e.input_lines = q->lines;
	return 0;
}

/*
 * The owner and mode of the slave's inode: TIOCGPTPEER (4.13) with O_PATH
 * gives a path fd of the slave without opening the terminal.
 */
static int dump_slave_inode(const struct fd_info *f, struct pty_priv *p)
{
	_cleanup_close_ int fd = ioctl(f->dfd, TIOCGPTPEER, O_PATH | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st)) {
		pr_perror("pid %d fd %d: cannot look at the slave of pty %u", f->pid, f->fd,
			  p->e.index);
		return neg_errno();
	}
	p->e.has_slave_uid = p->e.has_slave_gid = p->e.has_slave_mode = true;
	p->e.slave_uid = st.st_uid;
	p->e.slave_gid = st.st_gid;
	p->e.slave_mode = st.st_mode & 07777;
	p->e.has_slave_atime_ns = p->e.has_slave_mtime_ns = true;
	p->e.slave_atime_ns = node_ns(&st.st_atim);
	p->e.slave_mtime_ns = node_ns(&st.st_mtim);
	return 0;
}

static int dump_master(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct termios2 k;
	struct winsize ws;
	struct pty_priv *p;
	int index, pkt, lck, err;

	err = pty_ioctl_get(f, 0, TIOCGPTN, "TIOCGPTN", &index);
	if (err)
		return err;
	p = pty_priv_new(d, f, (uint32_t)index, true);
	if (!p)
		return -ENOMEM;
	err = pty_ioctl_get(f, p->e.index, TIOCGPKT, "TIOCGPKT", &pkt);
	if (!err)
		err = pty_ioctl_get(f, p->e.index, TIOCGPTLCK, "TIOCGPTLCK", &lck);
	if (err)
		return err;
	if (ioctl(f->dfd, TCGETS2, &k) || ioctl(f->dfd, TIOCGWINSZ, &ws)) {
		pr_perror("pid %d fd %d: cannot read the termios of pty %u", f->pid, f->fd, index);
		return neg_errno();
	}
	fill_termios(p, &k);
	pty_winsize__init(&p->w);
	p->w.row = ws.ws_row;
	p->w.col = ws.ws_col;
	p->w.xpixel = ws.ws_xpixel;
	p->w.ypixel = ws.ws_ypixel;
	p->e.winsize = &p->w;
	p->e.has_packet = p->e.has_locked = true;
	p->e.packet = pkt != 0;
	p->e.locked = lck != 0;
	err = dump_slave_inode(f, p);
	if (err)
		return err;
	pr_debug("pid %d fd %d: pty %u master%s%s, %ux%u\n", f->pid, f->fd, p->e.index,
		 p->e.packet ? ", packet mode" : "", p->e.locked ? ", locked" : "", ws.ws_col,
		 ws.ws_row);
	err = dump_session(ctx, f, p);
	return err ? err : dump_data(ctx, f, p, &k);
}

static int dump_slave(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	bool dev_tty = is_dev_tty(f->st.st_rdev);
	dev_t rdev = f->st.st_rdev;
	unsigned int index;
	struct pty_priv *p;
	int excl, err;

	if (dev_tty)
		dev_tty_slave(ctx, f, &rdev);
	if (!rdev)
		return -EINVAL; /* the controlling terminal changed since match() */
	index = (unsigned int)pts_index(rdev);

	p = pty_priv_new(d, f, index, false);
	if (!p)
		return -ENOMEM;
	p->e.has_dev_tty = dev_tty;
	p->e.dev_tty = dev_tty;
	if (!dev_tty && f->link[0] == '/' && strlen(f->link) < sizeof(p->slave_path)) {
		strcpy(p->slave_path, f->link);
		p->e.slave_path.len = strlen(p->slave_path);
	}
	err = pty_ioctl_get(f, index, TIOCGEXCL, "TIOCGEXCL", &excl);
	if (err)
		return err;
	p->e.has_exclusive = true;
	p->e.exclusive = excl != 0;
	pr_debug("pid %d fd %d: pty %u slave %s%s\n", f->pid, f->fd, index, p->slave_path,
		 dev_tty ? " opened as /dev/tty" : "");
	return 0;
}

static int pty_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	return is_ptmx(f->st.st_rdev) ? dump_master(ctx, f, d) : dump_slave(ctx, f, d);
}

/* ---- restore ---- */

#define PTMX_PATH "/dev/ptmx"

/* Every description in the list of the pty kind is a FILE_PTY with its part (pty_check()). */
static const PtyFileEntry *pty_at(const struct rst_files *f, size_t pos)
{
	return f->idx.by_id[pos]->pty;
}

/* The position of the master of pty @index in the index, or -ENOENT. */
static long master_pos(const struct restore_ctx *ctx, uint32_t index)
{
	const struct rst_kind *k = rst_kind_get(ctx, &pty_kind);
	size_t i;

	for (i = 0; i < k->n; i++) {
		const PtyFileEntry *p = pty_at(ctx->files, k->pos[i]);

		if (p->master && p->index == index)
			return (long)k->pos[i];
	}
	return -ENOENT;
}

/* A new master at @index, or -errno (logged). */
static int open_ptmx_at(uint32_t index, uint32_t flags)
{
	_cleanup_free_ int *extra = NULL;
	unsigned int nr = 0, i;
	char path[32];
	int fd = -1, n, err = 0;

	snprintf(path, sizeof(path), "/dev/pts/%u", index);
	if (!access(path, F_OK)) {
		pr_err("pty %u: %s is in use: the index cannot be given back\n", index, path);
		return -EBUSY;
	}
	extra = calloc((size_t)index + 1, sizeof(*extra));
	if (!extra)
		return -ENOMEM;
	for (;;) {
		fd = open(PTMX_PATH, rst_open_flags(flags));
		if (fd < 0 || ioctl(fd, TIOCGPTN, &n)) {
			err = neg_errno();
			pr_perror("pty %u: cannot open a master on %s", index, PTMX_PATH);
			break;
		}
		if ((uint32_t)n == index)
			break;
		if ((uint32_t)n > index || nr > index) {
			/* someone else took it since the check */
			pr_err("pty %u: %s gave index %d: the index is taken\n", index, PTMX_PATH,
			       n);
			err = -EBUSY;
			break;
		}
		extra[nr++] = fd;
		fd = -1;
	}
	for (i = 0; i < nr; i++)
		close(extra[i]);
	if (err && fd >= 0)
		close(fd);
	return err ? err : fd;
}

static int termios_from(const PtyTermios *t, uint32_t index, struct termios2 *k)
{
	if (t->cc.len != NCCS) {
		pr_err("pty %u: termios with %zu control characters, expected %d\n", index,
		       t->cc.len, NCCS);
		return -EINVAL;
	}
	memset(k, 0, sizeof(*k));
	k->c_iflag = t->iflag;
	k->c_oflag = t->oflag;
	k->c_cflag = t->cflag;
	k->c_lflag = t->lflag;
	k->c_line = (cc_t)t->line;
	memcpy(k->c_cc, t->cc.data, NCCS);
	k->c_ispeed = t->ispeed;
	k->c_ospeed = t->ospeed;
	return 0;
}

static int termios_of(const PtyFileEntry *p, struct termios2 *k)
{
	return termios_from(p->termios, p->index, k);
}

static int set_termios(int fd, const PtyFileEntry *p)
{
	return pty_termios_apply(fd, p->termios, p->winsize, p->index);
}

int pty_termios_apply(int fd, const PtyTermios *t, const PtyWinsize *w, uint32_t index)
{
	struct termios2 k;
	struct winsize ws;

	if (t) {
		int err = termios_from(t, index, &k);

		if (err)
			return err;
		if (ioctl(fd, TCSETS2, &k)) {
			pr_perror("pty %u: cannot set its termios", index);
			return neg_errno();
		}
	}
	if (w) {
		ws.ws_row = (unsigned short)w->row;
		ws.ws_col = (unsigned short)w->col;
		ws.ws_xpixel = (unsigned short)w->xpixel;
		ws.ws_ypixel = (unsigned short)w->ypixel;
		if (ioctl(fd, TIOCSWINSZ, &ws)) {
			pr_perror("pty %u: cannot set its window size", index);
			return neg_errno();
		}
	}
	return 0;
}

/* ioctl @req with the int @v on @fd of pty @index; @what names it in the error. */
static int pty_ioctl_set(int fd, unsigned long req, int v, const char *what, uint32_t index)
{
	if (ioctl(fd, req, &v)) {
		pr_perror("pty %u: %s", index, what);
		return neg_errno();
	}
	return 0;
}

/* Every slave description of pty @index, opened and parked at its slot; the pty is unlocked. */
static int open_slaves(const struct restore_ctx *ctx, uint32_t index)
{
	const struct rst_kind *k = rst_kind_get(ctx, &pty_kind);
	struct rst_files *f = ctx->files;
	bool excl = false;
	int last = -1;
	size_t i;

	for (i = 0; i < k->n; i++) {
		const PtyFileEntry *p = pty_at(f, k->pos[i]);
		char path[32];
		int fd;

		if (p->master || p->index != index)
			continue;
		/* the path the tree saw, /dev/pts/N of the devpts restore runs in */
		snprintf(path, sizeof(path), "/dev/pts/%u", index);
		fd = open(path, rst_open_flags(p->flags));
		if (fd < 0) {
			pr_perror("pty %u: cannot open its slave %s", index, path);
			return neg_errno();
		}
		f->fds[k->pos[i]] = fd;
		last = fd;
		excl |= p->has_exclusive && p->exclusive;
	}
	/* TIOCEXCL is the slave's: later opens but root's fail with EBUSY */
	return excl ? pty_ioctl_set(last, TIOCEXCL, 0, "TIOCEXCL", index) : 0;
}

/* The position of the first slave description of pty @index that is open (@f->fds), or -ENOENT. */
static long opened_slave(const struct restore_ctx *ctx, uint32_t index)
{
	const struct rst_kind *k = rst_kind_get(ctx, &pty_kind);
	const struct rst_files *f = ctx->files;
	size_t i;

	for (i = 0; i < k->n; i++) {
		const PtyFileEntry *p = pty_at(f, k->pos[i]);

		if (!p->master && p->index == index && f->fds[k->pos[i]] >= 0)
			return (long)k->pos[i];
	}
	return -ENOENT;
}

/* The data in flight, with the slave's termios already set (the one it is read under). */
static int put_data(const struct restore_ctx *ctx, int fd, const PtyFileEntry *p)
{
	struct pty_where w = { .index = p->index };
	struct pty_data d = {
		.out = p->output.data,
		.out_len = p->has_output ? p->output.len : 0,
		.in = p->input.data,
		.in_len = p->has_input ? p->input.len : 0,
		.lines = p->input_lines,
		.nr_lines = p->n_input_lines,
	};
	struct termios2 k;
	long s;
	int err;

	if (!d.out_len && !d.in_len && !d.nr_lines)
		return 0;
	if (!p->termios) {
		pr_err("pty %u: data in flight but no termios in the image\n", p->index);
		return -EINVAL;
	}
	err = termios_of(p, &k);
	if (err)
		return err;
	/* the dump saves input only with a slave in the tree: -1 is enough otherwise */
	s = opened_slave(ctx, p->index);
	return pty_data_put(fd, s < 0 ? -1 : ctx->files->fds[s], &k, &d, &w);
}

/* The slave's inode gets its owner and mode (a new one has the restorer's ids). */
static int set_slave_inode(const struct restore_ctx *ctx, int master, const PtyFileEntry *p)
{
	_cleanup_close_ int fd = -1;
	char path[64];

	if (!p->has_slave_uid || !p->has_slave_gid || !p->has_slave_mode)
		return 0;
	fd = ioctl(master, TIOCGPTPEER, O_PATH | O_NOCTTY | O_CLOEXEC);
	/* an O_PATH fd takes no fchmod(): its /proc link does (criu-like's /proc) */
	snprintf(path, sizeof(path), "%sself/fd/%d", ctx->proc_fd >= 0 ? "" : "/proc/", fd);
	if (fd < 0 || fchownat(fd, "", p->slave_uid, p->slave_gid, AT_EMPTY_PATH) ||
	    fchmodat(ctx->proc_fd >= 0 ? ctx->proc_fd : AT_FDCWD, path, p->slave_mode & 07777, 0)) {
		pr_perror("pty %u: cannot give its slave the owner %u:%u and mode %o", p->index,
			  p->slave_uid, p->slave_gid, p->slave_mode);
		return neg_errno();
	}
	return 0;
}

/*
 * The slave's times, after the data in flight went back through it: a
 * read or write of a terminal moves them (by steps of 8 s, tty_update_time()).
 */
static int set_slave_times(const struct restore_ctx *ctx, int master, const PtyFileEntry *p)
{
	_cleanup_close_ int fd = -1;
	struct timespec ts[2];
	char path[64];

	if (!p->has_slave_atime_ns || !p->has_slave_mtime_ns)
		return 0;
	ts[0].tv_sec = (time_t)(p->slave_atime_ns / 1000000000ULL);
	ts[0].tv_nsec = (long)(p->slave_atime_ns % 1000000000ULL);
	ts[1].tv_sec = (time_t)(p->slave_mtime_ns / 1000000000ULL);
	ts[1].tv_nsec = (long)(p->slave_mtime_ns % 1000000000ULL);
	fd = ioctl(master, TIOCGPTPEER, O_PATH | O_NOCTTY | O_CLOEXEC);
	/* an O_PATH fd takes no futimens(): its /proc link does (criu-like's /proc) */
	snprintf(path, sizeof(path), "%sself/fd/%d", ctx->proc_fd >= 0 ? "" : "/proc/", fd);
	if (fd < 0 || utimensat(ctx->proc_fd >= 0 ? ctx->proc_fd : AT_FDCWD, path, ts, 0)) {
		pr_perror("pty %u: cannot set the times of its slave", p->index);
		return neg_errno();
	}
	return 0;
}

static int open_master(const struct restore_ctx *ctx, size_t pos)
{
	const PtyFileEntry *p = pty_at(ctx->files, pos);
	int fd, err;

	fd = open_ptmx_at(p->index, p->flags);
	if (fd < 0)
		return fd;
	err = pty_ioctl_set(fd, TIOCSPTLCK, 0, "cannot unlock it", p->index);
	if (!err)
		err = set_slave_inode(ctx, fd, p);
	if (!err)
		err = set_termios(fd, p);
	if (!err && p->has_packet && p->packet)
		err = pty_ioctl_set(fd, TIOCPKT, 1, "cannot set packet mode", p->index);
	if (!err)
		err = open_slaves(ctx, p->index);
	if (!err)
		err = put_data(ctx, fd, p);
	if (!err)
		err = set_slave_times(ctx, fd, p);
	if (!err && p->has_locked && p->locked)
		err = pty_ioctl_set(fd, TIOCSPTLCK, 1, "cannot lock it", p->index);
	if (err) {
		close(fd);
		return err;
	}
	pr_debug("pty %u: master opened\n", p->index);
	return fd;
}

/*
 * In the controller: the description of pty file idx.by_id[@pos], or -errno
 * (logged). Opening a master opens the pty at its dumped index and every
 * slave description of it, parked at their f->fds slot until their turn.
 */
static int pty_open(struct restore_ctx *ctx, size_t pos)
{
	struct rst_files *f = ctx->files;
	const PtyFileEntry *p = pty_at(f, pos);
	long mpos;
	int fd;

	/* a slave opened with its master, or a master opened for a slave before it */
	if (f->fds[pos] >= 0) {
		fd = f->fds[pos];
		f->fds[pos] = -1;
		return fd;
	}
	if (p->master)
		return open_master(ctx, pos);
	mpos = master_pos(ctx, p->index);
	if (mpos < 0) {
		pr_err("file %u: pty slave %u without its master in files.img\n",
		       f->idx.by_id[pos]->id, p->index);
		return -EINVAL;
	}
	fd = open_master(ctx, (size_t)mpos);
	if (fd < 0)
		return fd;
	f->fds[mpos] = fd;
	fd = f->fds[pos];
	f->fds[pos] = -1;
	return fd;
}

/*
 * The master entry of the pty whose controlling terminal session @sid had, or
 * NULL; in *@slave the position of an open slave description of it, or -1.
 */
static const PtyFileEntry *ctty_of(const struct restore_ctx *ctx, uint32_t sid, long *slave)
{
	const struct rst_kind *k = rst_kind_get(ctx, &pty_kind);
	const PtyFileEntry *m = NULL;
	size_t i;

	*slave = -1;
	for (i = 0; !m && i < k->n; i++) {
		const PtyFileEntry *p = pty_at(ctx->files, k->pos[i]);

		if (p->master && p->has_sid && p->sid == sid)
			m = p;
	}
	if (m)
		*slave = opened_slave(ctx, m->index);
	return m;
}

/*
 * The slave descriptions that were opened as /dev/tty, opened by the
 * controller as /dev/pts/N: now that the session has its terminal, /dev/tty
 * again, at the same service fd, for this leader and every task it forks.
 */
static int reopen_dev_tty(const struct restore_ctx *ctx, uint32_t index, uint32_t pid)
{
	const struct rst_kind *k = rst_kind_get(ctx, &pty_kind);
	const struct rst_files *f = ctx->files;
	size_t i;

	for (i = 0; i < k->n; i++) {
		const PtyFileEntry *p = pty_at(f, k->pos[i]);
		int fd;

		if (p->master || p->index != index || !p->has_dev_tty || !p->dev_tty)
			continue;
		fd = open("/dev/tty", rst_open_flags(p->flags));
		if (fd < 0 || dup3(fd, f->fds[k->pos[i]], O_CLOEXEC) < 0) {
			int err = neg_errno();

			pr_perror("task %u: cannot open /dev/tty (pty %u) again", pid, index);
			if (fd >= 0)
				close(fd);
			return err;
		}
		close(fd);
	}
	return 0;
}

/*
 * In task @t right after setsid(), before it forks the rest of its session:
 * make the pty whose controlling terminal the session had its controlling
 * terminal again (TIOCSCTTY on the slave description inherited from the
 * controller). 0 when @t leads no session or its session had no pty of the
 * tree.
 */
static int pty_set_ctty(struct restore_ctx *ctx, const struct rst_task *t)
{
	const struct rst_files *f = ctx->files;
	const PtyFileEntry *m;
	long s;

	if (!f || t->pe->sid != t->pe->pid)
		return 0;
	m = ctty_of(ctx, t->pe->sid, &s);
	if (!m)
		return 0;
	if (s < 0) {
		/*
		 * No task holds the slave any more: opened through the master for
		 * the TIOCSCTTY alone, the session keeps its terminal once it is closed
		 */
		long mp = master_pos(ctx, m->index);
		int sfd = mp < 0 ? -1
				 : ioctl(f->fds[mp], TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
		int err = 0;

		if (sfd < 0 || ioctl(sfd, TIOCSCTTY, 0))
			err = neg_errno();
		if (sfd >= 0)
			close(sfd);
		if (err)
			pr_errno(err,
				 "task %u: cannot make pty %u, whose slave no task holds, its "
				 "controlling terminal",
				 t->pe->pid, m->index);
		return err;
	}
	if (ioctl(f->fds[s], TIOCSCTTY, 0)) {
		pr_perror("task %u: cannot make pty %u its controlling terminal", t->pe->pid,
			  m->index);
		return neg_errno();
	}
	return reopen_dev_tty(ctx, m->index, t->pe->pid);
}

/*
 * In session leader @t once every task exists and @t is in its group: the
 * foreground process group of its controlling terminal (tcsetpgrp).
 */
static int pty_set_fg(struct restore_ctx *ctx, const struct rst_task *t)
{
	const struct rst_files *f = ctx->files;
	const PtyFileEntry *m;
	pid_t pgrp;
	long s;

	if (!f || t->pe->sid != t->pe->pid)
		return 0;
	m = ctty_of(ctx, t->pe->sid, &s);
	if (!m || s < 0 || !m->has_fg_pgrp || !m->fg_pgrp)
		return 0;
	/* every signal is blocked here: no SIGTTOU even from a background group */
	pgrp = (pid_t)m->fg_pgrp;
	if (ioctl(f->fds[s], TIOCSPGRP, &pgrp)) {
		pr_perror("task %u: cannot make group %d the foreground of pty %u", t->pe->pid,
			  pgrp, m->index);
		return neg_errno();
	}
	return 0;
}

static int pty_check(const FileEntry *fe)
{
	return fe->pty ? 0 : rst_file_part_missing(fe);
}

const struct file_kind pty_kind = {
	.name = "pseudo-terminal",
	.types = { FILE_TYPE__FILE_PTY },
	.match = pty_match,
	.dump = pty_dump,
	.check = pty_check,
	.open = pty_open,
	.after_setsid = pty_set_ctty,
	.after_groups = pty_set_fg,
};
