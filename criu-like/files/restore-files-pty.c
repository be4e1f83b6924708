// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-terminals of a restore (FILE_PTY, images/pty.proto).
 *
 * A pty gets its dumped index back by opening /dev/ptmx until the kernel
 * gives that index: devpts allocates the lowest free one (ida_alloc_max()),
 * so if the index is free every open below it takes a lower free index and
 * the one wanted comes at the latest after index + 1 opens; the extra masters
 * are closed after. An index that is in use (/dev/pts/N exists) is refused.
 *
 * The master's entry holds the terminal's state: termios2 and window size
 * are set through the master (the kernel applies them to the slave), then
 * packet mode. Every slave description is opened while the pty is unlocked,
 * parked at its f->fds slot, then the lock and the slave's exclusive mode are
 * set, and the data in flight goes back in between (pty-data.c), while the
 * slave is still open in the controller. The controlling terminal is given back by the session leader itself
 * (rst_pty_set_ctty(), rst_pty_set_fg()) with the slave description it
 * inherited from the controller; it also opens /dev/tty again for the
 * descriptions that were /dev/tty (the controller has no terminal to open it).
 */
#define LOG_PREFIX "restore-files: "

#include <asm/termbits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "pty.h"
#include "restore-files-pty.h"
#include "util.h"

#define PTMX_PATH "/dev/ptmx"

/* Flags a description is opened with: never a controlling terminal, never inherited by exec. */
static int pty_open_flags(uint32_t flags)
{
	return (int)(flags & ~(uint32_t)(O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC | O_NOCTTY)) |
	       O_CLOEXEC | O_NOCTTY;
}

static const PtyFileEntry *pty_of(const struct rst_files *f, size_t pos)
{
	const FileEntry *fe = f->idx.by_id[pos];

	return fe->type == FILE_TYPE__FILE_PTY ? fe->pty : NULL;
}

/* The position of the master of pty @index in the index, or -1. */
static long master_pos(const struct rst_files *f, uint32_t index)
{
	size_t i;

	for (i = 0; i < f->idx.n; i++) {
		const PtyFileEntry *p = pty_of(f, i);

		if (p && p->master && p->index == index)
			return (long)i;
	}
	return -1;
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
		fd = open(PTMX_PATH, pty_open_flags(flags));
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

static int termios_of(const PtyFileEntry *p, struct termios2 *k)
{
	const PtyTermios *t = p->termios;

	if (t->cc.len != NCCS) {
		pr_err("pty %u: termios with %zu control characters, expected %d\n", p->index,
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

static int set_termios(int fd, const PtyFileEntry *p)
{
	const PtyWinsize *w = p->winsize;
	struct termios2 k;
	struct winsize ws;

	if (p->termios) {
		int err = termios_of(p, &k);

		if (err)
			return err;
		if (ioctl(fd, TCSETS2, &k)) {
			pr_perror("pty %u: cannot set its termios", p->index);
			return neg_errno();
		}
	}
	if (w) {
		ws.ws_row = (unsigned short)w->row;
		ws.ws_col = (unsigned short)w->col;
		ws.ws_xpixel = (unsigned short)w->xpixel;
		ws.ws_ypixel = (unsigned short)w->ypixel;
		if (ioctl(fd, TIOCSWINSZ, &ws)) {
			pr_perror("pty %u: cannot set its window size", p->index);
			return neg_errno();
		}
	}
	return 0;
}

static int set_int(int fd, unsigned long req, int v, const char *name, uint32_t index)
{
	if (ioctl(fd, req, &v)) {
		pr_perror("pty %u: %s", index, name);
		return neg_errno();
	}
	return 0;
}

/* Every slave description of pty @index, opened and parked at its slot; the pty is unlocked. */
static int open_slaves(struct rst_files *f, uint32_t index)
{
	bool excl = false;
	int last = -1;
	size_t i;

	for (i = 0; i < f->idx.n; i++) {
		const PtyFileEntry *p = pty_of(f, i);
		char path[32];
		int fd;

		if (!p || p->master || p->index != index)
			continue;
		/* the path the tree saw, /dev/pts/N of the devpts restore runs in */
		snprintf(path, sizeof(path), "/dev/pts/%u", index);
		fd = open(path, pty_open_flags(p->flags));
		if (fd < 0) {
			pr_perror("pty %u: cannot open its slave %s", index, path);
			return neg_errno();
		}
		f->fds[i] = fd;
		last = fd;
		excl |= p->has_exclusive && p->exclusive;
	}
	/* TIOCEXCL is the slave's: later opens but root's fail with EBUSY */
	return excl ? set_int(last, TIOCEXCL, 0, "TIOCEXCL", index) : 0;
}

/* The first slave description of pty @index opened by open_slaves(), or -1. */
static int opened_slave(const struct rst_files *f, uint32_t index)
{
	size_t i;

	for (i = 0; i < f->idx.n; i++) {
		const PtyFileEntry *p = pty_of(f, i);

		if (p && !p->master && p->index == index && f->fds[i] >= 0)
			return f->fds[i];
	}
	return -1;
}

/* The data in flight, with the slave's termios already set (the one it is read under). */
static int put_data(const struct rst_files *f, int fd, const PtyFileEntry *p)
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
	return pty_data_put(fd, opened_slave(f, p->index), &k, &d, &w);
}

static int open_master(struct rst_files *f, size_t pos)
{
	const PtyFileEntry *p = pty_of(f, pos);
	int fd, err;

	fd = open_ptmx_at(p->index, p->flags);
	if (fd < 0)
		return fd;
	err = set_int(fd, TIOCSPTLCK, 0, "cannot unlock it", p->index);
	if (!err)
		err = set_termios(fd, p);
	if (!err && p->has_packet && p->packet)
		err = set_int(fd, TIOCPKT, 1, "cannot set packet mode", p->index);
	if (!err)
		err = open_slaves(f, p->index);
	if (!err)
		err = put_data(f, fd, p);
	if (!err && p->has_locked && p->locked)
		err = set_int(fd, TIOCSPTLCK, 1, "cannot lock it", p->index);
	if (err) {
		close(fd);
		return err;
	}
	pr_debug("pty %u: master opened\n", p->index);
	return fd;
}

int rst_pty_open(struct restore_ctx *ctx, size_t pos)
{
	struct rst_files *f = ctx->files;
	const PtyFileEntry *p = pty_of(f, pos);
	long mpos;
	int fd;

	/* a slave opened with its master, or a master opened for a slave before it */
	if (f->fds[pos] >= 0) {
		fd = f->fds[pos];
		f->fds[pos] = -1;
		return fd;
	}
	if (p->master)
		return open_master(f, pos);
	mpos = master_pos(f, p->index);
	if (mpos < 0) {
		pr_err("file %u: pty slave %u without its master in files.img\n",
		       f->idx.by_id[pos]->id, p->index);
		return -EINVAL;
	}
	fd = open_master(f, (size_t)mpos);
	if (fd < 0)
		return fd;
	f->fds[mpos] = fd;
	fd = f->fds[pos];
	f->fds[pos] = -1;
	return fd;
}

/* The master entry of the pty whose controlling terminal session @sid had, or NULL. */
static const PtyFileEntry *ctty_of(const struct rst_files *f, uint32_t sid, long *slave)
{
	const PtyFileEntry *m = NULL;
	size_t i;

	*slave = -1;
	for (i = 0; !m && i < f->idx.n; i++) {
		const PtyFileEntry *p = pty_of(f, i);

		if (p && p->master && p->has_sid && p->sid == sid)
			m = p;
	}
	for (i = 0; m && *slave < 0 && i < f->idx.n; i++) {
		const PtyFileEntry *p = pty_of(f, i);

		if (p && !p->master && p->index == m->index && f->fds[i] >= 0)
			*slave = (long)i;
	}
	return m;
}

/*
 * The slave descriptions that were opened as /dev/tty, opened by the
 * controller as /dev/pts/N: now that the session has its terminal, /dev/tty
 * again, at the same service fd, for this leader and every task it forks.
 */
static int reopen_dev_tty(const struct rst_files *f, uint32_t index, uint32_t pid)
{
	size_t i;

	for (i = 0; i < f->idx.n; i++) {
		const PtyFileEntry *p = pty_of(f, i);
		int fd;

		if (!p || p->master || p->index != index || !p->has_dev_tty || !p->dev_tty)
			continue;
		fd = open("/dev/tty", pty_open_flags(p->flags));
		if (fd < 0 || dup3(fd, f->fds[i], O_CLOEXEC) < 0) {
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

int rst_pty_set_ctty(struct restore_ctx *ctx, const struct rst_task *t)
{
	const struct rst_files *f = ctx->files;
	const PtyFileEntry *m;
	long s;

	if (!f || t->pe->sid != t->pe->pid)
		return 0;
	m = ctty_of(f, t->pe->sid, &s);
	if (!m)
		return 0;
	if (s < 0) {
		pr_err("task %u: pty %u is the controlling terminal of its session, but no "
		       "description of its slave is in the images\n",
		       t->pe->pid, m->index);
		return -EINVAL;
	}
	if (ioctl(f->fds[s], TIOCSCTTY, 0)) {
		pr_perror("task %u: cannot make pty %u its controlling terminal", t->pe->pid,
			  m->index);
		return neg_errno();
	}
	return reopen_dev_tty(f, m->index, t->pe->pid);
}

int rst_pty_set_fg(struct restore_ctx *ctx, const struct rst_task *t)
{
	const struct rst_files *f = ctx->files;
	const PtyFileEntry *m;
	pid_t pgrp;
	long s;

	if (!f || t->pe->sid != t->pe->pid)
		return 0;
	m = ctty_of(f, t->pe->sid, &s);
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
