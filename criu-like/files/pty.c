// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-terminals of the tree (FILE_PTY): devpts masters (/dev/ptmx) and
 * slaves (/dev/pts/N). The master is the only description of its side a pty
 * has, so its entry carries the state of the terminal, read through the
 * master (the kernel answers termios, window size, session and foreground
 * group of the slave there): termios2, winsize, packet mode, lock, the
 * session whose controlling terminal it is and its foreground group.
 *
 * The data in flight both ways is saved in the master's entry (pty-data.c):
 * read and put back at once through the master's description and one of
 * the slave's that a task of the tree holds (pidfd_getfd(), the same open
 * file: no open or close the tty would notice). With no slave in the tree,
 * only what the slave wrote before is saved.
 *
 * An fd of /dev/tty whose terminal is a pty slave of the tree is that slave
 * with dev_tty set. A slave whose master is not in the tree (the terminal
 * of a job, found by the tty-index of the masters' fdinfo) is left to
 * files-chr.c: FILE_TTY with --shell-job, refused without.
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
#include "restore-files-pty.h"
#include "restore-files-int.h"
#include "log.h"
#include "compat.h"
#include "proc-parse.h"
#include "pty.h"
#include "seize.h"
#include "util.h"

/* Documentation/admin-guide/devices.txt */
#define TTYAUX_MAJOR 5 /* 5:0 /dev/tty, 5:2 /dev/ptmx (and /dev/pts/ptmx) */
#define TTY_MINOR 0
#define PTMX_MINOR 2
#define UNIX98_PTY_SLAVE_MAJOR 136 /* 136..143: /dev/pts/N, N = (major - 136) * 256 + minor */
#define UNIX98_PTY_MAJOR_COUNT 8

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

/* The tty-index line of /proc/PID/fdinfo/FD (pty masters, 4.x), or -1. */
static int fdinfo_tty_index(pid_t pid, const char *fd)
{
	char path[300], line[128];
	int index = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	fp = fopen(path, "re");
	if (!fp)
		return -1;
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
	/* a slave whose master is outside: files-chr.c, FILE_TTY with --shell-job */
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

static int ioctl_int(const struct fd_info *f, uint32_t index, unsigned long req, const char *name,
		     int *v)
{
	*v = 0;
	if (ioctl(f->dfd, req, v)) {
		pr_perror("pid %d fd %d: %s on pty %u", f->pid, f->fd, name, index);
		return neg_errno();
	}
	return 0;
}

static void fill_termios(struct pty_priv *p, const struct termios2 *k)
{
	pty_termios__init(&p->t);
	p->t.iflag = k->c_iflag;
	p->t.oflag = k->c_oflag;
	p->t.cflag = k->c_cflag;
	p->t.lflag = k->c_lflag;
	p->t.line = k->c_line;
	memcpy(p->cc, k->c_cc, NCCS);
	p->t.cc.data = p->cc;
	p->t.cc.len = NCCS;
	p->t.ispeed = k->c_ispeed;
	p->t.ospeed = k->c_ospeed;
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
	p->e.sid = (uint32_t)sid;
	p->e.fg_pgrp = (uint32_t)(sid ? pgrp : 0);
	return 0;
}

/* The slave of pty @index in task @pid, as a dumper fd (the same open file); -1: none. */
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
	return -1;
}

static int tree_slave(const struct dump_ctx *ctx, uint32_t index)
{
	unsigned int i;
	int fd = -1;

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

static int dump_master(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct termios2 k;
	struct winsize ws;
	struct pty_priv *p;
	int index, pkt, lck, err;

	err = ioctl_int(f, 0, TIOCGPTN, "TIOCGPTN", &index);
	if (err)
		return err;
	p = pty_priv_new(d, f, (uint32_t)index, true);
	if (!p)
		return -ENOMEM;
	err = ioctl_int(f, p->e.index, TIOCGPKT, "TIOCGPKT", &pkt);
	if (!err)
		err = ioctl_int(f, p->e.index, TIOCGPTLCK, "TIOCGPTLCK", &lck);
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
	err = ioctl_int(f, index, TIOCGEXCL, "TIOCGEXCL", &excl);
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

static int pty_check(const FileEntry *fe)
{
	return fe->pty ? 0 : rst_file_part_missing(fe);
}

const struct file_kind pty_kind = {
	.name = "pseudo-terminal",
	.match = pty_match,
	.dump = pty_dump,
	.types = { FILE_TYPE__FILE_PTY },
	.check = pty_check,
	.open = rst_pty_open,
	.after_setsid = rst_pty_set_ctty,
	.after_groups = rst_pty_set_fg,
};
