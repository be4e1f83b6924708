// SPDX-License-Identifier: GPL-2.0
/*
 * The data in flight of a pseudo-terminal. Each side of a pty has its own
 * N_TTY line discipline with a read buffer of N_TTY_BUF_SIZE (4096) bytes:
 *
 * - the master's holds what the slave wrote, after output processing
 *   (OPOST: ONLCR...). The master's termios is the raw one the kernel gave
 *   it (the termios ioctls of a master act on the slave), so FIONREAD is
 *   exact and a read returns the bytes as they are;
 * - the slave's holds what the master wrote, after input processing (echo
 *   done, ICRNL, signals...). In canonical mode the line ends are a bitmap
 *   beside the bytes: one read() returns one line, a line ended by VEOF
 *   without that character (an EOF alone reads as 0 bytes), and FIONREAD
 *   counts only the complete lines. The line not yet ended is seen only
 *   once ICANON is off: n_tty_set_termios() then forgets the line ends.
 *
 * Reading consumes, so the dump reads and puts back at once, while the
 * tree is frozen. Putting back uses TIOCSTI, which feeds a byte to the line
 * discipline of the tty it is issued on synchronously (no flip buffer work
 * to wait for; root needs CAP_SYS_ADMIN since dev.tty.legacy_tiocsti of
 * 6.2): on the master a byte lands as it is (raw termios); on the slave it
 * goes through input processing again, so the slave's termios is switched
 * for the time of it to canonical mode with IEXTEN, no echo, no signals, no
 * translation, every byte escaped with VLNEXT and each line ended by its
 * own line end or by VEOF as it was; then the saved termios comes back
 * (ICANON off again makes the whole buffer readable at once).
 */
#define LOG_PREFIX "pty: "

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "log.h"
#include "pty.h"
#include "util.h"

/* "pid P fd N: pty I" at dump, "pty I" at restore */
static const char *where(const struct pty_where *w, char *buf, size_t size)
{
	if (w->pid)
		snprintf(buf, size, "pid %d fd %d: pty %u", w->pid, w->fd, w->index);
	else
		snprintf(buf, size, "pty %u", w->index);
	return buf;
}

#define WHERE(w) where((w), (char[64]){ 0 }, 64)

static bool unusable_ctl(const struct termios2 *tmp, uint8_t c)
{
	return c == '\n' || c == tmp->c_cc[VEOL] || c == tmp->c_cc[VEOL2] ||
	       ((tmp->c_iflag & IXON) && (c == tmp->c_cc[VSTART] || c == tmp->c_cc[VSTOP]));
}

/* A control character for VLNEXT or VEOF that no line end or flow character uses. */
static uint8_t pick_ctl(const struct termios2 *tmp, uint8_t prefer, uint8_t taken)
{
	uint8_t c;

	if (!unusable_ctl(tmp, prefer) && prefer != taken)
		return prefer;
	/* 31 candidates, at most 5 excluded */
	for (c = 1; c < 0x20; c++)
		if (!unusable_ctl(tmp, c) && c != taken)
			break;
	return c;
}

void pty_put_termios(const struct termios2 *t, struct termios2 *tmp)
{
	*tmp = *t;
	tmp->c_iflag = t->c_iflag & (IXON | IXOFF);
	tmp->c_lflag = ICANON | IEXTEN | (t->c_lflag & (NOFLSH | TOSTOP));
	tmp->c_cc[VERASE] = tmp->c_cc[VKILL] = tmp->c_cc[VWERASE] = 0;
	tmp->c_cc[VREPRINT] = tmp->c_cc[VDISCARD] = 0;
	tmp->c_cc[VLNEXT] = pick_ctl(tmp, 0x16 /* ^V */, 0);
	tmp->c_cc[VEOF] = pick_ctl(tmp, 0x04 /* ^D */, tmp->c_cc[VLNEXT]);
}

/* @c ends a line under @tmp (n_tty_receive_char_special(): flow control comes first). */
static bool is_line_end(const struct termios2 *tmp, uint8_t c)
{
	if ((tmp->c_iflag & IXON) && (c == tmp->c_cc[VSTART] || c == tmp->c_cc[VSTOP]))
		return false;
	return c == '\n' || (c && (c == tmp->c_cc[VEOL] || c == tmp->c_cc[VEOL2]));
}

/* The bytes @d's input takes in the slave's read buffer: a line ended by VEOF keeps it there. */
static size_t input_chars(const struct termios2 *tmp, const struct pty_data *d)
{
	size_t off = 0, n = d->in_len, i;

	for (i = 0; i < d->nr_lines && off <= d->in_len; i++) {
		size_t len = d->lines[i];

		if (!len || len > d->in_len - off || !is_line_end(tmp, d->in[off + len - 1]))
			n++;
		off += len;
	}
	return n;
}

long pty_input_encode(const struct termios2 *tmp, const struct pty_data *d, uint8_t *buf)
{
	uint8_t lnext = tmp->c_cc[VLNEXT];
	size_t off = 0, n = 0, i, j;

	for (i = 0; i < d->nr_lines; i++) {
		size_t len = d->lines[i];
		bool ended;

		if (len > d->in_len - off)
			return -EINVAL;
		ended = len && is_line_end(tmp, d->in[off + len - 1]);
		for (j = 0; j < len - ended; j++) {
			buf[n++] = lnext;
			buf[n++] = d->in[off + j];
		}
		buf[n++] = ended ? d->in[off + len - 1] : tmp->c_cc[VEOF];
		off += len;
	}
	for (; off < d->in_len; off++) {
		buf[n++] = lnext;
		buf[n++] = d->in[off];
	}
	return (long)n;
}

/* Set @k on the slave (through @fd, either side) and check it took. */
static int set_termios(int fd, const struct termios2 *k, const struct pty_where *w)
{
	struct termios2 now;

	if (ioctl(fd, TCSETS2, k) || ioctl(fd, TCGETS2, &now)) {
		pr_perror("%s: cannot set its termios", WHERE(w));
		return neg_errno();
	}
	/* c_cflag is not compared: pty_set_termios() forces CS8 | CREAD */
	if (now.c_iflag != k->c_iflag || now.c_lflag != k->c_lflag ||
	    memcmp(now.c_cc, k->c_cc, NCCS)) {
		pr_err("%s: the termios did not take (locked with TIOCSLCKTRMIOS?)\n", WHERE(w));
		return -EPERM;
	}
	return 0;
}

static int sti(int fd, const uint8_t *b, size_t n, const struct pty_where *w, const char *side)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (ioctl(fd, TIOCSTI, &b[i])) {
			pr_perror("%s: TIOCSTI on the %s failed after %zu of %zu bytes", WHERE(w),
				  side, i, n);
			return neg_errno();
		}
	}
	return 0;
}

static int fionread(int fd, int *n, const struct pty_where *w, const char *side)
{
	*n = 0;
	if (ioctl(fd, FIONREAD, n)) {
		pr_perror("%s: FIONREAD on the %s", WHERE(w), side);
		return neg_errno();
	}
	return 0;
}

/* What FIONREAD of the slave says once @d is back: complete lines only in canonical mode. */
static size_t input_visible(const struct termios2 *t, const struct pty_data *d)
{
	size_t i, n = 0;

	if (!(t->c_lflag & ICANON))
		return d->in_len;
	for (i = 0; i < d->nr_lines; i++)
		n += d->lines[i];
	return n;
}

static int put_input(int master, int slave, const struct termios2 *t, const struct pty_data *d,
		     const struct pty_where *w)
{
	_cleanup_free_ uint8_t *buf = NULL;
	struct termios2 tmp;
	long n;
	int err;

	pty_put_termios(t, &tmp);
	buf = malloc(2 * d->in_len + d->nr_lines + 1);
	if (!buf)
		return -ENOMEM;
	n = pty_input_encode(&tmp, d, buf);
	if (n < 0) {
		pr_err("%s: %zu input lines do not fit in %zu bytes\n", WHERE(w), d->nr_lines,
		       d->in_len);
		return (int)n;
	}
	err = set_termios(master, &tmp, w);
	if (!err)
		err = sti(slave, buf, (size_t)n, w, "slave");
	return err;
}

int pty_data_put(int master, int slave, const struct termios2 *t, const struct pty_data *d,
		 const struct pty_where *w)
{
	struct termios2 tmp;
	int err = 0, ret, in, out;

	pty_put_termios(t, &tmp);
	if (input_chars(&tmp, d) > PTY_QUEUE_MAX || d->out_len > PTY_QUEUE_MAX) {
		pr_err("%s: %zu bytes of output, %zu of input: more than the %d a tty holds\n",
		       WHERE(w), d->out_len, d->in_len, PTY_QUEUE_MAX);
		return -EINVAL;
	}
	if (slave < 0 && (d->in_len || d->nr_lines)) {
		pr_err("%s: input data but no slave to put it in\n", WHERE(w));
		return -EINVAL;
	}
	if (slave >= 0 && (d->in_len || d->nr_lines))
		err = put_input(master, slave, t, d, w);
	/* back to the saved termios whatever happened (the dump changed it to read) */
	if (slave >= 0) {
		ret = set_termios(master, t, w);
		err = err ? err : ret;
	}
	ret = sti(master, d->out, d->out_len, w, "master");
	err = err ? err : ret;
	if (err)
		return err;
	err = fionread(master, &out, w, "master");
	if (!err && slave >= 0)
		err = fionread(slave, &in, w, "slave");
	if (err)
		return err;
	if ((size_t)out != d->out_len || (slave >= 0 && (size_t)in != input_visible(t, d))) {
		pr_err("%s: %zu and %zu bytes put back, the master holds %d and the slave %d\n",
		       WHERE(w), d->out_len, input_visible(t, d), out, slave >= 0 ? in : 0);
		return -EIO;
	}
	return 0;
}

static struct pty_data view(const struct pty_queues *q)
{
	return (struct pty_data){ .out = q->out,
				  .out_len = q->out_len,
				  .in = q->in,
				  .in_len = q->in_len,
				  .lines = q->lines,
				  .nr_lines = q->nr_lines };
}

/* One read() per complete line: canonical mode returns a line at a time. */
static int read_lines(int slave, struct pty_queues *q, const struct pty_where *w)
{
	for (;;) {
		struct pollfd p = { .fd = slave, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 0) < 0) {
			pr_perror("%s: poll on the slave", WHERE(w));
			return neg_errno();
		}
		if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) {
			pr_err("%s: the slave is hung up (poll 0x%x)\n", WHERE(w), p.revents);
			return -EIO;
		}
		if (!(p.revents & POLLIN))
			return 0;
		if (q->nr_lines >= PTY_QUEUE_MAX || q->in_len >= PTY_QUEUE_MAX)
			return -EOVERFLOW;
		r = read(slave, q->in + q->in_len, sizeof(q->in) - q->in_len);
		if (r < 0) {
			pr_perror("%s: cannot read the slave", WHERE(w));
			return neg_errno();
		}
		q->lines[q->nr_lines++] = (uint32_t)r;
		q->in_len += (size_t)r;
	}
}

/* With VMIN = VTIME = 0 a read returns what is there, 0 when nothing is. */
static int read_rest(int slave, struct pty_queues *q, const struct pty_where *w)
{
	for (;;) {
		ssize_t r;

		if (q->in_len >= sizeof(q->in))
			return -EOVERFLOW;
		r = read(slave, q->in + q->in_len, sizeof(q->in) - q->in_len);
		if (r < 0) {
			pr_perror("%s: cannot read the slave", WHERE(w));
			return neg_errno();
		}
		if (!r)
			return 0;
		q->in_len += (size_t)r;
	}
}

/* The complete lines, then ICANON off to see the rest (the line not yet ended). */
static int read_input(int master, int slave, const struct termios2 *t, struct pty_queues *q,
		      const struct pty_where *w)
{
	struct termios2 raw = *t, tmp;
	struct pty_data d;
	int err = 0;

	if (t->c_lflag & ICANON)
		err = read_lines(slave, q, w);
	raw.c_lflag &= ~(tcflag_t)ICANON;
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (!err)
		err = set_termios(master, &raw, w);
	if (!err)
		err = read_rest(slave, q, w);
	d = view(q);
	pty_put_termios(t, &tmp);
	if (!err && input_chars(&tmp, &d) > PTY_QUEUE_MAX)
		err = -EOVERFLOW;
	if (err == -EOVERFLOW)
		pr_err("%s: more than %d bytes were queued for the slave: some are lost\n",
		       WHERE(w), PTY_QUEUE_MAX);
	return err;
}

static int read_output(int master, struct pty_queues *q, const struct pty_where *w)
{
	for (;;) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 0) < 0) {
			pr_perror("%s: poll on the master", WHERE(w));
			return neg_errno();
		}
		if (!(p.revents & POLLIN))
			return 0;
		if (q->out_len >= sizeof(q->out)) {
			pr_err("%s: more than %d bytes were queued for the master: some are lost\n",
			       WHERE(w), PTY_QUEUE_MAX);
			return -ENOBUFS;
		}
		r = read(master, q->out + q->out_len, sizeof(q->out) - q->out_len);
		if (r <= 0) {
			pr_perror("%s: cannot read the master", WHERE(w));
			return r ? neg_errno() : -EIO;
		}
		q->out_len += (size_t)r;
	}
}

/* In packet mode a status byte (TIOCPKT_STOP, _FLUSHREAD...) waits for the master's reader. */
static int status_pending(int master, bool *pending, const struct pty_where *w)
{
	struct pollfd p = { .fd = master, .events = POLLPRI };

	if (poll(&p, 1, 0) < 0) {
		pr_perror("%s: poll on the master", WHERE(w));
		return neg_errno();
	}
	*pending = p.revents & POLLPRI;
	return 0;
}

static int set_packet(int master, int on, const struct pty_where *w)
{
	if (ioctl(master, TIOCPKT, &on)) {
		pr_perror("%s: TIOCPKT %d", WHERE(w), on);
		return neg_errno();
	}
	return 0;
}

/* What cannot be read and put back, refused before anything is read. */
static int check_movable(int master, const struct termios2 *t, int out, int in,
			 const struct pty_where *w)
{
	struct termios lk;
	size_t i;

	if (t->c_lflag & EXTPROC) {
		pr_err("%s: %d bytes queued for the master and %d for the slave, in EXTPROC "
		       "mode: not supported\n",
		       WHERE(w), out, in);
		return -EOPNOTSUPP;
	}
	/*
	 * Behind a full line discipline more may wait in the flip buffer: input
	 * not yet processed, output that a write back could not be sure to fit
	 * (how much the flip buffer takes depends on the sizes of the writes).
	 */
	if (out >= PTY_QUEUE_MAX || in >= PTY_QUEUE_MAX) {
		pr_err("%s: a queue is full (%d bytes for the master, %d for the slave), more "
		       "may wait behind it: not supported\n",
		       WHERE(w), out, in);
		return -EOPNOTSUPP;
	}
	if (ioctl(master, TIOCGLCKTRMIOS, &lk)) {
		pr_perror("%s: TIOCGLCKTRMIOS", WHERE(w));
		return neg_errno();
	}
	for (i = 0; i < NCCS && !lk.c_cc[i]; i++)
		;
	if (lk.c_iflag || lk.c_lflag || i < NCCS) {
		pr_err("%s: its termios is locked (TIOCSLCKTRMIOS), the data in flight cannot "
		       "be read and put back: not supported\n",
		       WHERE(w));
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * TIOCSTI needs CAP_SYS_ADMIN in the initial user namespace (or the tty as
 * controlling terminal): tried on a pty of our own before anything is consumed.
 */
static int sti_allowed(const struct pty_where *w)
{
	_cleanup_close_ int fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	uint8_t b = 'x';

	if (fd < 0 || ioctl(fd, TIOCSTI, &b)) {
		pr_perror("%s: data in flight, but TIOCSTI, which puts it back, fails (needs "
			  "CAP_SYS_ADMIN)",
			  WHERE(w));
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Read both directions, then put everything back, also what was read before an error. */
static int move_out_and_back(int master, int slave, const struct termios2 *t, bool packet,
			     bool output, const struct pty_where *w, struct pty_queues *q)
{
	struct pty_data d;
	int err = 0, ret;

	if (slave >= 0)
		err = read_input(master, slave, t, q, w);
	if (output) {
		ret = packet ? set_packet(master, 0, w) : 0;
		if (!ret)
			ret = read_output(master, q, w);
		err = err ? err : ret;
	}
	d = view(q);
	/* what cannot go back was logged as lost */
	if (err == -EOVERFLOW)
		d.in_len = d.nr_lines = 0;
	d.out_len = min(d.out_len, (size_t)PTY_QUEUE_MAX);
	ret = pty_data_put(master, slave, t, &d, w);
	if (output && packet && set_packet(master, 1, w) && !ret)
		ret = -EIO;
	return err ? err : ret;
}

int pty_data_save(int master, int slave, const struct termios2 *t, bool packet,
		  const struct pty_where *w, struct pty_queues *q)
{
	bool canon = t->c_lflag & ICANON, status = false;
	int out, in = 0, err;

	q->out_len = q->in_len = q->nr_lines = 0;
	err = fionread(master, &out, w, "master");
	if (!err && slave >= 0)
		err = fionread(slave, &in, w, "slave");
	/*
	 * A canonical line not yet ended shows nowhere: look whenever a slave
	 * is there. With EXTPROC, FIONREAD counts it (n_tty_ioctl()).
	 */
	if (err || (!out && !in && (slave < 0 || !canon || (t->c_lflag & EXTPROC))))
		return err;
	if ((fcntl(master, F_GETFL) & O_ACCMODE) == O_WRONLY) {
		pr_err("%s: data may be in flight, but the master's description is write-only: "
		       "not supported\n",
		       WHERE(w));
		return -EOPNOTSUPP;
	}
	err = check_movable(master, t, out, in, w);
	if (!err && packet)
		err = status_pending(master, &status, w);
	if (err)
		return err;
	/* TIOCPKT off and on again would drop the status byte */
	if (status && out) {
		pr_err("%s: packet mode with a status byte and %d bytes unread by the master: "
		       "not supported\n",
		       WHERE(w), out);
		return -EOPNOTSUPP;
	}
	err = sti_allowed(w);
	if (!err)
		err = move_out_and_back(master, slave, t, packet, !status, w, q);
	if (!err)
		pr_debug("%s: %zu bytes for the master, %zu for the slave (%zu complete lines)\n",
			 WHERE(w), q->out_len, q->in_len, q->nr_lines);
	return err;
}
