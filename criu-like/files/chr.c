// SPDX-License-Identifier: GPL-2.0
/*
 * Character devices that restore can simply reopen: the memory devices
 * (/dev/null, zero, full, random, urandom) as FILE_CHR, and with
 * --shell-job the terminal the tree inherited as FILE_TTY (restore gives
 * it the terminal it runs on). Any other device is refused.
 *
 * A pty slave whose master is outside the tree (a container runtime's
 * terminal, its master held by the runtime's console socket) is dumped as
 * FILE_TTY with the RPC's orphan_pts_master too (runc sends it with
 * shell_job), with the session whose controlling terminal it is and its
 * foreground group. At restore with orphan_pts_master, as CRIU: a new pty
 * pair for each such terminal, its master sent to the RPC client in the
 * orphan-pts-master notification (runc hands it to the console socket), its
 * slave in place of every description of the old one and of /dev/tty, the
 * controlling terminal of that session again (chr_set_ctty()).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "files-int.h"
#include "notify.h"
#include "restore-files-int.h"
#include "log.h"
#include "node-attrs.h"
#include "ns.h"
#include "proc-parse.h"
#include "pty.h"
#include "util.h"

/* Documentation/admin-guide/devices.txt */
#define MEM_MAJOR 1
#define TTY_MAJOR 4 /* virtual consoles, serial ports */
#define TTYAUX_MAJOR 5 /* 5:0 /dev/tty, 5:1 /dev/console, 5:2 /dev/ptmx */
#define UNIX98_PTY_SLAVE_MAJOR 136 /* 136..143: /dev/pts/N */

extern const struct file_kind chr_kind;

/* The entry, a terminal's settings and its path, one block (file_desc.priv). */
struct chr_priv {
	ChrFileEntry e;
	PtyTermios t;
	PtyWinsize w;
	uint8_t cc[NCCS];
	char path[];
};

enum chr_class {
	CHR_OTHER,
	CHR_MEM,
	CHR_TTY,
	CHR_PTMX,
	CHR_CONSOLE, /* /dev/console, /dev/ttyN (virtual consoles): the device keeps its state */
};

static enum chr_class chr_classify(dev_t rdev)
{
	unsigned int ma = major(rdev), mi = minor(rdev);

	if (ma == MEM_MAJOR)
		/* null, zero, full, random, urandom: no state but the position */
		return mi == 3 || mi == 5 || mi == 7 || mi == 8 || mi == 9 ? CHR_MEM : CHR_OTHER;
	if ((ma == TTYAUX_MAJOR && mi == 1) || (ma == TTY_MAJOR && mi < 64))
		return CHR_CONSOLE;
	if (ma == TTY_MAJOR || (ma == TTYAUX_MAJOR && mi == 0))
		return CHR_TTY;
	if (ma == TTYAUX_MAJOR && mi == 2)
		return CHR_PTMX;
	if (ma >= UNIX98_PTY_SLAVE_MAJOR && ma < UNIX98_PTY_SLAVE_MAJOR + 8)
		return CHR_TTY;
	return CHR_OTHER;
}

/* Whether the device of @f is the controlling terminal of its task (stat's tty_nr). */
static bool chr_is_ctty(const struct fd_info *f)
{
	struct proc_stat st;

	/* unknown: as if it were, which only asks for --shell-job */
	if (proc_parse_stat(f->pid, 0, &st))
		return true;
	/* tty_nr is the kernel's encoding: minor's low byte, major, then the rest of the minor */
	return ((unsigned int)st.tty_nr >> 8 & 0xfff) == major(f->st.st_rdev) &&
	       (((unsigned int)st.tty_nr & 0xff) | ((unsigned int)st.tty_nr >> 12 & 0xfff00)) ==
		       minor(f->st.st_rdev);
}

static int chr_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	unsigned int ma = major(f->st.st_rdev), mi = minor(f->st.st_rdev);

	if (!S_ISCHR(f->st.st_mode))
		return 0;
	switch (chr_classify(f->st.st_rdev)) {
	case CHR_MEM:
		return 1;
	case CHR_CONSOLE:
		/* opened again by its path, as CRIU does, unless it is the task's terminal */
		if (!chr_is_ctty(f))
			return 1;
		if (ctx->opts->shell_job)
			return 1;
		pr_err("pid %d fd %d: %s (console %u:%u) is the controlling terminal of its "
		       "session: dumped only with --shell-job\n",
		       f->pid, f->fd, f->link, ma, mi);
		return -EOPNOTSUPP;
	case CHR_TTY:
		if (ctx->opts->shell_job || ctx->opts->orphan_pts_master)
			return 1;
		pr_err("pid %d fd %d: %s (terminal %u:%u) is dumped only with --shell-job\n",
		       f->pid, f->fd, f->link, ma, mi);
		return -EOPNOTSUPP;
	case CHR_PTMX:
		pr_err("pid %d fd %d: %s (pseudo-terminal master) is not supported yet\n", f->pid,
		       f->fd, f->link);
		return -EOPNOTSUPP;
	case CHR_OTHER:
		break;
	}
	pr_err("pid %d fd %d: %s (character device %u:%u) is not supported yet\n", f->pid, f->fd,
	       f->link, ma, mi);
	return -EOPNOTSUPP;
}

/* The entry and its path, one block (file_desc.priv); @path may be NULL. */
static ChrFileEntry *chr_entry_new(struct file_desc *d, const char *path,
				   const ProtobufCBinaryData *xattrs)
{
	size_t len = path ? strlen(path) : 0;
	struct chr_priv *p = calloc(1, sizeof(*p) + len + 1 + xattrs->len);

	if (!p)
		return NULL;
	d->priv = p;
	chr_file_entry__init(&p->e);
	if (path) {
		memcpy(p->path, path, len + 1);
		p->e.has_path = true;
		p->e.path.data = (uint8_t *)p->path;
		p->e.path.len = len;
	}
	if (xattrs->len) {
		p->e.has_xattrs = true;
		p->e.xattrs.data = (uint8_t *)p->path + len + 1;
		p->e.xattrs.len = xattrs->len;
		memcpy(p->e.xattrs.data, xattrs->data, xattrs->len);
	}
	d->fe.chr = &p->e;
	return &p->e;
}

/*
 * The path is opened again at restore from the task's root (inside its mount
 * namespace): it must lead to the same device there. A device opened before a
 * pivot_root into a tree without it is refused.
 */
static int chr_reachable(const struct dump_ctx *ctx, const struct fd_info *f)
{
	/* a terminal of --shell-job is inherited at restore, never opened by its path */
	if (f->link[0] != '/' || chr_classify(f->st.st_rdev) == CHR_TTY)
		return 0;
	/* a removed node: made again (mknod) at restore */
	if (f->st.st_nlink == 0)
		return 0;
	if (file_path_leads_to(ctx, f->pid, f->link, false, &f->st, true))
		return 0;
	pr_err("pid %d fd %d: %s (character device %u:%u) is not that device under the task's "
	       "root (opened before a chroot or pivot_root?): it could not be opened again\n",
	       f->pid, f->fd, f->link, major(f->st.st_rdev), minor(f->st.st_rdev));
	return -EOPNOTSUPP;
}

static bool is_pts_slave(uint64_t rdev)
{
	return major(rdev) >= UNIX98_PTY_SLAVE_MAJOR && major(rdev) < UNIX98_PTY_SLAVE_MAJOR + 8;
}

static bool task_in_tree(const struct dump_ctx *ctx, pid_t pid, bool pgrp)
{
	unsigned int i;

	for (i = 0; i < ctx->tree->nr_tasks; i++)
		if ((pgrp ? ctx->tree->tasks[i]->pgid : ctx->tree->tasks[i]->pid) == pid)
			return true;
	return false;
}

/* Field 8 of /proc/PID/stat: the foreground group of its controlling terminal, or 0. */
static pid_t stat_tpgid(pid_t pid)
{
	char path[64], buf[1024], *p;
	int pgrp = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fp = fopen(path, "re");
	if (!fp)
		return 0;
	p = fgets(buf, sizeof(buf), fp) ? strrchr(buf, ')') : NULL;
	fclose(fp);
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %d", &pgrp) != 1 || pgrp < 0)
		return 0;
	return pgrp;
}

/* The termios and window size of the terminal (read through the slave), for a new pair. */
static void chr_dump_settings(const struct fd_info *f, ChrFileEntry *e)
{
	struct chr_priv *p = (struct chr_priv *)e;
	struct termios2 k;
	struct winsize ws;

	if (ioctl(f->dfd, TCGETS2, &k) || ioctl(f->dfd, TIOCGWINSZ, &ws)) {
		pr_warn("pid %d fd %d: %s: cannot read its settings (%m): a new one gets the "
			"kernel's\n",
			f->pid, f->fd, f->link);
		return;
	}
	pty_termios_fill(&p->t, p->cc, &k);
	e->termios = &p->t;
	pty_winsize__init(&p->w);
	p->w.row = ws.ws_row;
	p->w.col = ws.ws_col;
	p->w.xpixel = ws.ws_xpixel;
	p->w.ypixel = ws.ws_ypixel;
	e->winsize = &p->w;
}

/*
 * A pty slave (master outside) that is the controlling terminal of @f's
 * task, a session of the tree: that session and its foreground group.
 */
static void chr_dump_ctty(const struct dump_ctx *ctx, const struct fd_info *f, ChrFileEntry *e)
{
	struct proc_stat st;
	pid_t fg;

	if (!is_pts_slave(f->st.st_rdev) || !chr_is_ctty(f) || proc_parse_stat(f->pid, 0, &st) ||
	    !task_in_tree(ctx, st.sid, false))
		return;
	e->has_ctty_sid = true;
	e->ctty_sid = (uint32_t)pidns_vpid(st.sid);
	chr_dump_settings(f, e);
	fg = stat_tpgid(f->pid);
	if (fg > 0 && task_in_tree(ctx, fg, true)) {
		e->has_fg_pgrp = true;
		e->fg_pgrp = (uint32_t)pidns_vpid(fg);
	}
	pr_debug("pid %d fd %d: %s is the controlling terminal of session %u (foreground %u)\n",
		 f->pid, f->fd, f->link, e->ctty_sid, e->fg_pgrp);
}

static int chr_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	ProtobufCBinaryData xattrs = { 0, NULL };
	ChrFileEntry *e;
	char path[PATH_MAX], self[64];
	size_t n = strlen(f->link);
	int err = chr_reachable(ctx, f);

	if (err)
		return err;
	/* a removed node: without the kernel's " (deleted)", the name to make it again under */
	snprintf(path, sizeof(path), "%s", f->link);
	if (f->st.st_nlink == 0 && n > 10 && n < sizeof(path) &&
	    !strcmp(f->link + n - 10, " (deleted)"))
		path[n - 10] = '\0';
	snprintf(self, sizeof(self), "/proc/self/fd/%d", f->dfd);
	if (f->st.st_nlink == 0 && f->link[0] == '/') {
		err = node_xattrs_dump(self, true, &xattrs);
		if (err) {
			pr_errno(err, "pid %d fd %d: cannot read the extended attributes of %s",
				 f->pid, f->fd, f->link);
			return err;
		}
	}
	e = chr_entry_new(d, f->link[0] == '/' ? path : NULL, &xattrs);
	free(xattrs.data);
	if (!e)
		return -ENOMEM;
	if (f->st.st_nlink == 0 && e->has_path) {
		e->has_removed = e->has_mode = e->has_uid = e->has_gid = true;
		e->removed = true;
		e->mode = f->st.st_mode & 07777;
		e->uid = f->st.st_uid;
		e->gid = f->st.st_gid;
		e->has_atime_ns = e->has_mtime_ns = true;
		e->atime_ns = node_ns(&f->st.st_atim);
		e->mtime_ns = node_ns(&f->st.st_mtim);
	}
	d->fe.type = chr_classify(f->st.st_rdev) == CHR_TTY ||
				     (chr_classify(f->st.st_rdev) == CHR_CONSOLE && chr_is_ctty(f))
			     ? FILE_TYPE__FILE_TTY
			     : FILE_TYPE__FILE_CHR;
	e->rdev = f->st.st_rdev;
	e->flags = f->flags;
	e->has_pos = true;
	e->pos = f->pos;
	if (d->fe.type == FILE_TYPE__FILE_TTY)
		chr_dump_ctty(ctx, f, e);
	return 0;
}

int chr_check_mapped(pid_t pid, const char *path, const struct stat *st)
{
	if (chr_classify(st->st_rdev) == CHR_MEM)
		return 0;
	pr_err("pid %d: mapping of %s (character device %u:%u) is not supported yet\n", pid, path,
	       major(st->st_rdev), minor(st->st_rdev));
	return -EOPNOTSUPP;
}

int chr_fill_mapped(struct file_desc *d, const char *path, const struct stat *st,
		    unsigned int flags)
{
	static const ProtobufCBinaryData none = { 0, NULL };
	ChrFileEntry *e = chr_entry_new(d, path, &none);

	if (!e)
		return -ENOMEM;
	d->fe.type = FILE_TYPE__FILE_CHR;
	e->rdev = st->st_rdev;
	e->flags = flags;
	return 0;
}

/* ---- restore: the messages keep the restore's prefix ---------------------------------------- */
/*
 * A device node removed while open: made again at its path (next to it when
 * taken) with its mode and owner, opened and removed. -errno (errno set too).
 */
static int chr_open_removed(const FileEntry *fe, const char *path, uint32_t flags)
{
	const ChrFileEntry *c = fe->chr;
	struct node_attrs na = { c->has_atime_ns && c->has_mtime_ns, c->atime_ns, c->mtime_ns,
				 c->has_xattrs ? &c->xattrs : NULL };
	char name[PATH_MAX], what[PATH_MAX + 32];
	struct dir_times dt;
	int fd, err = 0;

	if (access(path, F_OK))
		snprintf(name, sizeof(name), "%s", path);
	else
		snprintf(name, sizeof(name), "%s.criu-like-dev.%u.%d", path, fe->id, getpid());
	snprintf(what, sizeof(what), "file %u: removed device node %s", fe->id, path);
	dir_times_save(&dt, name);
	if (mknod(name, S_IFCHR | 0600, (dev_t)c->rdev)) {
		err = errno;
		dir_times_put_back(&dt);
		errno = err;
		return -err;
	}
	fd = rst_open_nonblock(name, flags);
	if (fd < 0)
		err = errno;
	if (fd >= 0 && ((c->has_uid && c->has_gid && fchown(fd, c->uid, c->gid)) ||
			(c->has_mode && fchmod(fd, c->mode & 07777))))
		err = errno;
	/* by name: a terminal's descriptor may take no fsetxattr() of its own */
	if (fd >= 0 && !err && node_attrs_set(-1, name, false, &na, what))
		err = EIO;
	if (unlink(name) && !err)
		err = errno;
	dir_times_put_back(&dt);
	if (fd >= 0 && err)
		close(fd);
	if (err) {
		errno = err;
		return -err;
	}
	return fd;
}

/* Character device @fe at @path, checked to be the same device. */
static int chr_open(const FileEntry *fe, const char *path, uint32_t flags)
{
	struct stat st;
	int fd;

	if (!path) {
		pr_err("file %u: character device %llx has no path\n", fe->id,
		       (unsigned long long)fe->chr->rdev);
		return -EINVAL;
	}
	fd = fe->chr->removed ? chr_open_removed(fe, path, flags) : rst_open_nonblock(path, flags);
	if (fd < 0) {
		pr_perror("file %u: cannot open %s", fe->id, path);
		return neg_errno();
	}
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode) || (uint64_t)st.st_rdev != fe->chr->rdev) {
		pr_err("%s is not character device %llx any more\n", path,
		       (unsigned long long)fe->chr->rdev);
		close(fd);
		return -ESTALE;
	}
	if (rst_drop_nonblock(fd, flags)) {
		close(fd);
		return -EIO;
	}
	return fd;
}

static int open_chr(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const char *path = ctx->files->paths[pos];
	int fd = chr_open(fe, path, fe->chr->flags);

	/* Most devices have no position (ESPIPE) or ignore it. */
	if (fd >= 0 && fe->chr->has_pos && fe->chr->pos &&
	    lseek(fd, (off_t)fe->chr->pos, SEEK_SET) < 0 && errno != ESPIPE)
		pr_warn("%s: cannot seek to %llu: %m\n", path, (unsigned long long)fe->chr->pos);
	return fd;
}

/* orphan_pts_master: the new pairs made, one per terminal of the images (the kind's state). */
struct orphan_ptys {
	size_t n;
	struct {
		uint64_t rdev; /* the dumped slave's */
		int master;
	} p[8];
};

static bool is_dev_tty(uint64_t rdev)
{
	return major(rdev) == TTYAUX_MAJOR && minor(rdev) == 0;
}

/* The slave that /dev/tty stands for: the only pty slave of the images with a session. */
static int dev_tty_target(const struct restore_ctx *ctx, uint64_t *rdev)
{
	const struct rst_kind *k = rst_kind_get(ctx, &chr_kind);
	size_t i;
	int n = 0;

	for (i = 0; i < k->n; i++) {
		const FileEntry *fe = ctx->files->idx.by_id[k->pos[i]];

		if (fe->type == FILE_TYPE__FILE_TTY && is_pts_slave(fe->chr->rdev) &&
		    fe->chr->has_ctty_sid && (!n || *rdev != fe->chr->rdev)) {
			*rdev = fe->chr->rdev;
			n++;
		}
	}
	return n == 1 ? 0 : -ENOENT;
}

/*
 * The master of the new pair standing for the terminal @rdev: made at the
 * first description of it, and sent to the RPC client then (CRIU's
 * orphan-pts-master, with the descriptor). -errno (logged).
 */
static int orphan_master(struct restore_ctx *ctx, uint64_t rdev)
{
	struct rst_kind *k = rst_kind_get(ctx, &chr_kind);
	struct orphan_ptys *o = k->priv;
	int master, unlock = 0, err;
	size_t i;

	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o)
			return -ENOMEM;
		k->priv = o;
	}
	for (i = 0; i < o->n; i++)
		if (o->p[i].rdev == rdev)
			return o->p[i].master;
	if (o->n == ARRAY_SIZE(o->p)) {
		pr_err("more than %zu terminals whose master was outside the tree\n", o->n);
		return -E2BIG;
	}
	/* the pty a bind mount of the tree needed is this one (runc's /dev/console) */
	master = ns_devpts_pty_take((major(rdev) - UNIX98_PTY_SLAVE_MAJOR) * 256 + minor(rdev));
	if (master < 0)
		master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || ioctl(master, TIOCSPTLCK, &unlock)) {
		err = neg_errno();
		pr_perror("cannot make a new pty for terminal %u:%u", major(rdev), minor(rdev));
		if (master >= 0)
			close(master);
		return err;
	}
	/* the terminal's settings, from the entry of its slave that has them */
	for (i = 0; i < k->n; i++) {
		const FileEntry *fe = ctx->files->idx.by_id[k->pos[i]];

		if (fe->type != FILE_TYPE__FILE_TTY || fe->chr->rdev != rdev ||
		    (!fe->chr->termios && !fe->chr->winsize))
			continue;
		err = pty_termios_apply(master, fe->chr->termios, fe->chr->winsize,
					(major(rdev) - UNIX98_PTY_SLAVE_MAJOR) * 256 + minor(rdev));
		if (err) {
			close(master);
			return err;
		}
		break;
	}
	err = cr_notify_fd(ctx->opts, CR_ACT_ORPHAN_PTS_MASTER, 0, master);
	if (err) {
		pr_errno(err, "cannot hand the new master of terminal %u:%u to the RPC client",
			 major(rdev), minor(rdev));
		close(master);
		return err;
	}
	pr_info("terminal %u:%u: a new pty, its master sent to the RPC client\n", major(rdev),
		minor(rdev));
	o->p[o->n].rdev = rdev;
	o->p[o->n++].master = master;
	return master;
}

/* orphan_pts_master: a description of the new slave standing for @fe's terminal. */
static int open_orphan(struct restore_ctx *ctx, const FileEntry *fe)
{
	uint64_t rdev = fe->chr->rdev;
	int master, fd;

	if (is_dev_tty(rdev) && dev_tty_target(ctx, &rdev)) {
		pr_err("file %u: /dev/tty of a job whose terminal is not one pty of the images\n",
		       fe->id);
		return -ENOTTY;
	}
	master = orphan_master(ctx, rdev);
	if (master < 0)
		return master;
	fd = ioctl(master, TIOCGPTPEER, rst_open_flags(fe->chr->flags) | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("file %u: cannot open the new pty's slave", fe->id);
		return neg_errno();
	}
	return fd;
}

/* --shell-job: the controller's own terminal description, as a shell's children share it. */
static int open_tty(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	int fd;

	if (ctx->opts->orphan_pts_master &&
	    (is_pts_slave(fe->chr->rdev) || is_dev_tty(fe->chr->rdev)))
		return open_orphan(ctx, fe);

	if (!ctx->opts->shell_job) {
		pr_err("file %u is the terminal of the dumped job: restore with --shell-job\n",
		       fe->id);
		return -EINVAL;
	}
	for (fd = 0; fd < 3; fd++) {
		if (isatty(fd)) {
			int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);

			return nfd < 0 ? neg_errno() : nfd;
		}
	}
	pr_err("file %u is a terminal, but criu-like has none on fds 0-2 to give it\n", fe->id);
	return -ENOTTY;
}

static int chr_open_mapped(struct restore_ctx *ctx, size_t pos, int flags)
{
	return chr_open(ctx->files->idx.by_id[pos], ctx->files->paths[pos], (uint32_t)flags);
}

static int chr_check(const FileEntry *fe)
{
	return fe->chr ? 0 : rst_file_part_missing(fe);
}

static const ProtobufCBinaryData *chr_path(const FileEntry *fe)
{
	return fe->chr->has_path ? &fe->chr->path : NULL;
}

/* The open description of the orphan terminal whose controlling session is @sid, or -ENOENT. */
static int ctty_fd(const struct restore_ctx *ctx, uint32_t sid, const ChrFileEntry **e)
{
	const struct rst_kind *k = rst_kind_get(ctx, &chr_kind);
	size_t i;

	for (i = 0; i < k->n; i++) {
		const FileEntry *fe = ctx->files->idx.by_id[k->pos[i]];

		if (fe->type == FILE_TYPE__FILE_TTY && is_pts_slave(fe->chr->rdev) &&
		    fe->chr->has_ctty_sid && fe->chr->ctty_sid == sid &&
		    ctx->files->fds[k->pos[i]] >= 0) {
			*e = fe->chr;
			return ctx->files->fds[k->pos[i]];
		}
	}
	return -ENOENT;
}

/* In session leader @t right after setsid(): its new terminal its controlling one again. */
static int chr_set_ctty(struct restore_ctx *ctx, const struct rst_task *t)
{
	const ChrFileEntry *e;
	int fd;

	if (!ctx->files || !ctx->opts->orphan_pts_master || t->pe->sid != t->pe->pid)
		return 0;
	fd = ctty_fd(ctx, t->pe->sid, &e);
	if (fd < 0)
		return 0;
	if (ioctl(fd, TIOCSCTTY, 0)) {
		pr_perror("task %u: cannot make its new terminal its controlling terminal",
			  t->pe->pid);
		return neg_errno();
	}
	return 0;
}

/* In session leader @t once every group exists: the foreground group of its terminal. */
static int chr_set_fg(struct restore_ctx *ctx, const struct rst_task *t)
{
	const ChrFileEntry *e;
	pid_t pgrp;
	int fd;

	if (!ctx->files || !ctx->opts->orphan_pts_master || t->pe->sid != t->pe->pid)
		return 0;
	fd = ctty_fd(ctx, t->pe->sid, &e);
	if (fd < 0 || !e->has_fg_pgrp || !e->fg_pgrp)
		return 0;
	pgrp = (pid_t)e->fg_pgrp;
	if (ioctl(fd, TIOCSPGRP, &pgrp)) {
		pr_perror("task %u: cannot make group %d the foreground of its new terminal",
			  t->pe->pid, pgrp);
		return neg_errno();
	}
	return 0;
}

static void chr_fini(struct restore_ctx *ctx)
{
	struct rst_kind *k = rst_kind_get(ctx, &chr_kind);
	struct orphan_ptys *o = k ? k->priv : NULL;

	/* the client holds the masters now */
	while (o && o->n)
		close(o->p[--o->n].master);
	free(o);
	if (k)
		k->priv = NULL;
}

/* The terminal (FILE_TTY) or another character device. */
static int chr_or_tty_open(struct restore_ctx *ctx, size_t pos)
{
	if (ctx->files->idx.by_id[pos]->type == FILE_TYPE__FILE_TTY)
		return open_tty(ctx, pos);
	return open_chr(ctx, pos);
}

const struct file_kind chr_kind = {
	.name = "character device",
	.match = chr_match,
	.dump = chr_dump,
	.types = { FILE_TYPE__FILE_CHR, FILE_TYPE__FILE_TTY },
	.in_flight = true,
	.check = chr_check,
	.path = chr_path,
	.open = chr_or_tty_open,
	.open_mapped = chr_open_mapped,
	.after_setsid = chr_set_ctty,
	.after_groups = chr_set_fg,
	.fini = chr_fini,
};
