// SPDX-License-Identifier: GPL-2.0
/*
 * Data in flight both ways through two pseudo-terminals at dump time.
 *
 * Pty C, canonical mode with echo, ICRNL and ONLCR, its master in the root
 * and its slave in a child (a terminal and its shell): 3 KiB written on the
 * slave and not read from the master (the master must read them with their
 * \r\n), and typed on the master, not read by the slave: a line, a line
 * ended by \r (ICRNL made it \n), a line ended by VEOF, a VEOF alone, and
 * a line not yet ended. After SIGTERM the child must read the lines one
 * read() each, the EOF as a 0-byte read, and the unfinished line must wait
 * for the rest of it; the master must hold no second echo of the input.
 *
 * Pty R, raw (no ICANON, no ISIG, no echo, no OPOST), packet mode on the
 * master, locked, both ends in the root: 2 KiB queued each way, control
 * characters included, read back byte for byte.
 */
#include <asm/termbits.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define OUT_C_LEN 3000
#define RAW_LEN 2000
#define WAIT_MS 5000

static const char typed_c[] = "first line\ncr line\rEOF-ended\004\004partial";
/* what each read() of C's slave returns: the \r made \n, VEOF dropped */
static const char *const lines_c[] = { "first line\n", "cr line\n", "EOF-ended", "" };

struct pty {
	int master, slave, index;
};

static int open_pty(struct pty *p)
{
	char path[32];
	int unlock = 0;

	p->master = open("/dev/ptmx", O_RDWR | O_NOCTTY);
	if (p->master < 0 || ioctl(p->master, TIOCSPTLCK, &unlock) ||
	    ioctl(p->master, TIOCGPTN, &p->index))
		return neg_errno();
	snprintf(path, sizeof(path), "/dev/pts/%d", p->index);
	p->slave = open(path, O_RDWR | O_NOCTTY);
	return p->slave < 0 ? neg_errno() : 0;
}

/* C's output: lines of a known pattern; the master sees each \n as \r\n (ONLCR). */
static void gen_output(char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = i % 60 == 59 ? '\n' : (char)('a' + (i * 7) % 26);
}

static size_t onlcr(const char *in, size_t len, char *out)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		if (in[i] == '\n')
			out[n++] = '\r';
		out[n++] = in[i];
	}
	return n;
}

static void gen_raw(unsigned char *buf, size_t len, unsigned int seed)
{
	size_t i;

	/* every byte value, ^C ^Z ^S ^Q \r \n ^D ^V DEL among them */
	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)((i * 13 + seed) & 0xff);
}

static int fionread(int fd)
{
	int n = -1;

	return ioctl(fd, FIONREAD, &n) ? neg_errno() : n;
}

/* Wait (bounded) until FIONREAD of @fd says @n: the tty's flip work is asynchronous. */
static int wait_queued(int fd, int n)
{
	int64_t end = test_now_ms() + WAIT_MS;

	while (fionread(fd) != n) {
		if (test_now_ms() > end)
			return -ETIMEDOUT;
		test_sleep_ms(5);
	}
	return 0;
}

/* Read the echo of what was typed on C until its last character came back. */
static int drain_echo(int master)
{
	char buf[512];
	size_t n = 0;
	int64_t end = test_now_ms() + WAIT_MS;

	while (n < 7 || memcmp(buf + n - 7, "partial", 7)) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		ssize_t r;

		if (test_now_ms() > end || n == sizeof(buf) || poll(&p, 1, WAIT_MS) <= 0)
			return -ETIMEDOUT;
		r = read(master, buf + n, sizeof(buf) - n);
		if (r <= 0)
			return neg_errno();
		n += (size_t)r;
	}
	return 0;
}

static int setup_c(struct pty *c)
{
	char out[OUT_C_LEN], seen[2 * OUT_C_LEN];
	struct termios2 t;

	if (open_pty(c) || ioctl(c->slave, TCGETS2, &t))
		return neg_errno();
	t.c_iflag |= ICRNL;
	t.c_oflag |= OPOST | ONLCR;
	t.c_lflag |= ICANON | ECHO | ISIG | IEXTEN;
	if (ioctl(c->slave, TCSETS2, &t))
		return neg_errno();
	if (write(c->master, typed_c, sizeof(typed_c) - 1) != sizeof(typed_c) - 1 ||
	    drain_echo(c->master))
		return neg_errno();
	gen_output(out, sizeof(out));
	if (write(c->slave, out, sizeof(out)) != sizeof(out))
		return neg_errno();
	return wait_queued(c->master, (int)onlcr(out, sizeof(out), seen));
}

static int setup_r(struct pty *r)
{
	unsigned char in[RAW_LEN], out[RAW_LEN];
	struct termios2 t;
	int one = 1;

	if (open_pty(r) || ioctl(r->slave, TCGETS2, &t))
		return neg_errno();
	t.c_iflag = 0;
	t.c_oflag = 0;
	t.c_lflag = 0;
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (ioctl(r->slave, TCSETS2, &t) || ioctl(r->master, TIOCPKT, &one))
		return neg_errno();
	gen_raw(in, sizeof(in), 1);
	gen_raw(out, sizeof(out), 2);
	if (write(r->master, in, sizeof(in)) != sizeof(in) ||
	    write(r->slave, out, sizeof(out)) != sizeof(out))
		return neg_errno();
	if (wait_queued(r->slave, RAW_LEN) || wait_queued(r->master, RAW_LEN))
		return neg_errno();
	/* locked again: no new open of its slave, the data goes back all the same */
	return ioctl(r->master, TIOCSPTLCK, &one);
}

/* Something to read on @fd within WAIT_MS: a missing byte fails instead of hanging. */
static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, WAIT_MS) == 1;
}

/* Nothing more to read on @fd right now. */
static bool drained(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 0;
}

/* The child holding C's slave: after a byte on @go, the typed lines, one read() each. */
static int child_c(int slave, int go, int back)
{
	char buf[256], b;
	size_t i;
	ssize_t n;

	if (read(go, &b, 1) != 1)
		return 2;
	for (i = 0; i < sizeof(lines_c) / sizeof(lines_c[0]); i++) {
		n = readable(slave) ? read(slave, buf, sizeof(buf)) : -1;
		if (n != (ssize_t)strlen(lines_c[i]) || memcmp(buf, lines_c[i], (size_t)n)) {
			test_msg("child: line %zu: read %zd bytes \"%.*s\", expected \"%s\"\n", i,
				 n, n > 0 ? (int)n : 0, buf, lines_c[i]);
			return 3;
		}
	}
	/* the unfinished line waits for its end, then comes whole */
	if (!drained(slave)) {
		test_msg("child: the unfinished line reads before its end\n");
		return 4;
	}
	if (write(back, "r", 1) != 1)
		return 5;
	n = readable(slave) ? read(slave, buf, sizeof(buf)) : -1;
	if (n != 13 || memcmp(buf, "partial-rest\n", 13)) {
		test_msg("child: the last line: read %zd bytes \"%.*s\"\n", n, n > 0 ? (int)n : 0,
			 buf);
		return 6;
	}
	return 0;
}

static int check_c(const struct pty *c, int go, int back, pid_t child)
{
	char out[OUT_C_LEN], want[2 * OUT_C_LEN], got[2 * OUT_C_LEN + 1], b;
	size_t len = onlcr((gen_output(out, sizeof(out)), out), sizeof(out), want), n = 0;
	int status;

	while (n < sizeof(got) && !drained(c->master)) {
		ssize_t r = read(c->master, got + n, sizeof(got) - n);

		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (n != len || memcmp(got, want, len)) {
		fail("pty C: the master read %zu bytes, expected %zu (the slave's output, no "
		     "echo of the input)",
		     n, len);
		return 1;
	}
	if (write(go, "g", 1) != 1 || read(back, &b, 1) != 1 ||
	    write(c->master, "-rest\n", 6) != 6) {
		fail("pty C: cannot talk to the child: %m");
		return 1;
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("pty C: the child's check failed (status 0x%x)", status);
		return 1;
	}
	return 0;
}

static int read_exact(int fd, unsigned char *buf, size_t len, bool packet)
{
	unsigned char chunk[RAW_LEN + 1];
	size_t n = 0;

	while (n < len) {
		ssize_t r = readable(fd) ? read(fd, chunk, sizeof(chunk)) : -1;

		if (r <= (packet ? 1 : 0) || (packet && chunk[0] != 0) ||
		    n + (size_t)r - packet > len)
			return neg_errno();
		memcpy(buf + n, chunk + packet, (size_t)r - packet);
		n += (size_t)r - packet;
	}
	return drained(fd) ? 0 : -EIO;
}

static int check_r(const struct pty *r)
{
	unsigned char want[RAW_LEN], got[RAW_LEN];
	int lck = 0;

	if (ioctl(r->master, TIOCGPTLCK, &lck) || !lck) {
		fail("pty R: not locked any more");
		return 1;
	}
	gen_raw(want, sizeof(want), 1);
	if (read_exact(r->slave, got, sizeof(got), false) || memcmp(got, want, sizeof(got))) {
		fail("pty R: the slave did not read the %d raw bytes queued for it", RAW_LEN);
		return 1;
	}
	gen_raw(want, sizeof(want), 2);
	if (read_exact(r->master, got, sizeof(got), true) || memcmp(got, want, sizeof(got))) {
		fail("pty R: the master did not read the %d bytes queued for it (packet mode)",
		     RAW_LEN);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pty c, r;
	int go[2], back[2];
	pid_t child;

	test_init(argc, argv);
	if (setup_c(&c) || setup_r(&r) || pipe(go) || pipe(back)) {
		fail("cannot set up the ptys and their data: %m");
		return 1;
	}
	child = fork();
	if (child < 0) {
		fail("fork: %m");
		return 1;
	}
	if (child == 0) {
		close(c.master);
		close(r.master);
		close(r.slave);
		close(go[1]);
		close(back[0]);
		_exit(child_c(c.slave, go[0], back[1]));
	}
	close(c.slave);
	close(go[0]);
	close(back[1]);
	test_daemon();
	test_waitsig();

	if (check_r(&r) || check_c(&c, go[1], back[0], child))
		return 1;
	pass();
	return 0;
}
