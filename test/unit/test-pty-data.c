// SPDX-License-Identifier: GPL-2.0
/*
 * The data in flight of a pty (pty-data.c). Pure logic: the termios input
 * is put back under, and the escaped byte stream of complete lines, EOF
 * lines and an unfinished line, with line ends, VLNEXT and flow characters
 * in the way. Live, as root, on a pty of the test itself: pty_data_save()
 * reads both directions and leaves them exactly as they were (lines one
 * read() each, the unfinished line still waiting for its end); what cannot
 * be moved (a locked termios, EXTPROC, a packet-mode status byte waiting
 * with output) is refused with nothing consumed; pty_data_put() fills a new
 * pty the same way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <asm/termbits.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dump.h"
#include "image.h"
#include "infect.h"
#include "log.h"
#include "options.h"
#include "seize.h"
#include "../../criu-like/files/pty.h"
#include "util.h"

#include "lib/dumper.h"
#include "lib/logcap.h"
#include "lib/victim.h"

static struct termios2 canon_termios(void)
{
	struct termios2 t = { 0 };

	t.c_iflag = ICRNL | IXON | IXANY | ISTRIP | IUTF8;
	t.c_oflag = OPOST | ONLCR;
	t.c_cflag = CS8 | CREAD | B38400;
	t.c_lflag = ICANON | ISIG | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN | TOSTOP;
	t.c_cc[VINTR] = 3;
	t.c_cc[VERASE] = 0x7f;
	t.c_cc[VKILL] = 0x15;
	t.c_cc[VEOF] = 4;
	t.c_cc[VSTART] = 0x11;
	t.c_cc[VSTOP] = 0x13;
	t.c_cc[VLNEXT] = 0x16;
	t.c_cc[VWERASE] = 0x17;
	t.c_cc[VREPRINT] = 0x12;
	t.c_cc[VMIN] = 1;
	return t;
}

static void test_put_termios(void **state)
{
	struct termios2 t = canon_termios(), tmp;

	(void)state;
	pty_put_termios(&t, &tmp);
	assert_int_equal(tmp.c_lflag, ICANON | IEXTEN | TOSTOP);
	assert_int_equal(tmp.c_iflag, IXON);
	assert_int_equal(tmp.c_oflag, t.c_oflag);
	assert_int_equal(tmp.c_cflag, t.c_cflag);
	assert_int_equal(tmp.c_cc[VLNEXT], 0x16);
	assert_int_equal(tmp.c_cc[VEOF], 0x04);
	assert_int_equal(tmp.c_cc[VERASE], 0);
	assert_int_equal(tmp.c_cc[VKILL], 0);
	assert_int_equal(tmp.c_cc[VWERASE], 0);
	assert_int_equal(tmp.c_cc[VREPRINT], 0);
	/* flow control as it was: a packet-mode master would get a status byte */
	assert_int_equal(tmp.c_cc[VSTART], 0x11);
	assert_int_equal(tmp.c_cc[VSTOP], 0x13);
}

/* ^V and ^D taken by line ends or flow control: others are picked, distinct. */
static void test_put_termios_collisions(void **state)
{
	struct termios2 t = canon_termios(), tmp;

	(void)state;
	t.c_cc[VEOL] = 0x16;
	t.c_cc[VSTOP] = 0x04;
	t.c_cc[VSTART] = 0x01;
	pty_put_termios(&t, &tmp);
	assert_int_not_equal(tmp.c_cc[VLNEXT], 0);
	assert_int_not_equal(tmp.c_cc[VEOF], 0);
	assert_int_not_equal(tmp.c_cc[VLNEXT], tmp.c_cc[VEOF]);
	assert_int_not_equal(tmp.c_cc[VLNEXT], 0x16);
	assert_int_not_equal(tmp.c_cc[VLNEXT], 0x04);
	assert_int_not_equal(tmp.c_cc[VLNEXT], 0x01);
	assert_int_not_equal(tmp.c_cc[VEOF], 0x04);
	assert_int_not_equal(tmp.c_cc[VEOF], 0x16);
	assert_int_not_equal(tmp.c_cc[VEOF], 0x01);
	assert_int_not_equal(tmp.c_cc[VEOF], '\n');
}

static void test_encode(void **state)
{
	/* "ab\n" | "xy" (VEOF) | "" (VEOF) | "e!" (VEOL '!') | "a\n" \n-literal + VEOF? no: "q\x13" | rest "p\n" */
	static const uint8_t in[] = "ab\nxye!q\x13p\n";
	static const uint32_t lines[] = { 3, 2, 0, 2, 2 };
	static const uint8_t want[] = { 0x16, 'a', 0x16, 'b',  '\n', /* its own end */
					0x16, 'x', 0x16, 'y',  0x04, /* VEOF */
					0x04, /* EOF alone */
					0x16, 'e', '!', /* VEOL */
					0x16, 'q', 0x16, 0x13, 0x04, /* VSTOP is no end */
					0x16, 'p', 0x16, '\n' }; /* unfinished */
	struct pty_data d = { .in = in, .in_len = sizeof(in) - 1, .lines = lines, .nr_lines = 5 };
	struct termios2 t = canon_termios(), tmp;
	uint8_t buf[64];
	long n;

	(void)state;
	t.c_cc[VEOL] = '!';
	pty_put_termios(&t, &tmp);
	n = pty_input_encode(&tmp, &d, buf);
	assert_int_equal(n, sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));

	/* without IXON the stop character may end a line (VEOL2) */
	t.c_iflag &= ~(tcflag_t)IXON;
	t.c_cc[VEOL2] = 0x13;
	pty_put_termios(&t, &tmp);
	n = pty_input_encode(&tmp, &d, buf);
	assert_int_equal(n, sizeof(want) - 2);
	assert_memory_equal(buf + 14, ((const uint8_t[]){ 0x16, 'q', 0x13, 0x16, 'p' }), 5);

	/* lines longer than the input */
	d.in_len = 4;
	assert_int_equal(pty_input_encode(&tmp, &d, buf), -EINVAL);
}

/* Live tests: a pty of our own. */
struct pty {
	int master, slave;
};

static int open_pty(struct pty *p, const struct termios2 *t)
{
	char path[32];
	int unlock = 0, n;

	p->master = open("/dev/ptmx", O_RDWR | O_NOCTTY);
	if (p->master < 0 || ioctl(p->master, TIOCSPTLCK, &unlock) ||
	    ioctl(p->master, TIOCGPTN, &n))
		return -errno;
	snprintf(path, sizeof(path), "/dev/pts/%d", n);
	p->slave = open(path, O_RDWR | O_NOCTTY);
	if (p->slave < 0)
		return -errno;
	return t ? ioctl(p->slave, TCSETS2, t) : 0;
}

static void close_pty(struct pty *p)
{
	close(p->master);
	close(p->slave);
}

static ssize_t read_ready(int fd, void *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 2000) == 1 ? read(fd, buf, len) : -ETIMEDOUT;
}

static bool drained(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 0;
}

/* What was typed, then its echo read away: everything was processed. */
static void type(struct pty *p, const char *s, const char *echo_end)
{
	char buf[256];
	size_t n = 0, e = strlen(echo_end);

	assert_int_equal(write(p->master, s, strlen(s)), (ssize_t)strlen(s));
	while (n < e || memcmp(buf + n - e, echo_end, e)) {
		ssize_t r = read_ready(p->master, buf + n, sizeof(buf) - n);

		assert_true(r > 0);
		n += (size_t)r;
	}
}

static void wait_queued(int fd, int n)
{
	int i, q = -1;

	for (i = 0; i < 400 && q != n; i++) {
		assert_int_equal(ioctl(fd, FIONREAD, &q), 0);
		if (q != n)
			usleep(5000);
	}
	assert_int_equal(q, n);
}

/* The queues fill_canon() made, read: the output, the lines one read() each, then the last one. */
static void check_canon_queues(struct pty *p)
{
	char buf[128];

	assert_int_equal(read_ready(p->master, buf, sizeof(buf)), 10);
	assert_memory_equal(buf, "out\r\nput\r\n", 10);
	assert_int_equal(read_ready(p->slave, buf, sizeof(buf)), 8);
	assert_memory_equal(buf, "line \x16\x7f\n", 8);
	assert_int_equal(read_ready(p->slave, buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "eof", 3);
	assert_int_equal(read_ready(p->slave, buf, sizeof(buf)), 0);
	assert_true(drained(p->slave)); /* "half" waits for its end */
	assert_true(drained(p->master)); /* and nothing was echoed again */
	assert_int_equal(write(p->master, "!\r", 2), 2);
	assert_int_equal(read_ready(p->slave, buf, sizeof(buf)), 6);
	assert_memory_equal(buf, "half!\n", 6);
}

static void fill_canon(struct pty *p, struct termios2 *t)
{
	*t = canon_termios();
	assert_int_equal(open_pty(p, t), 0);
	/* a literal ^V and DEL (after VLNEXT), \r made \n, a VEOF line, an EOF alone */
	type(p,
	     "line \x16\x16\x16\x7f\r"
	     "eof\x04\x04half",
	     "half");
	assert_int_equal(write(p->slave, "out\nput\n", 8), 8); /* ONLCR: "\n" -> "\r\n" */
	assert_int_equal(ioctl(p->slave, TCGETS2, t), 0);
	wait_queued(p->master, 10);
}

static void test_save_canonical(void **state)
{
	struct pty_where w = { .pid = 1, .fd = 3 };
	struct pty_queues *q = calloc(1, sizeof(*q));
	struct termios2 t, now;
	struct pty p;

	(void)state;
	assert_non_null(q);
	fill_canon(&p, &t);
	assert_int_equal(pty_data_save(p.master, p.slave, &t, false, &w, q), 0);
	assert_int_equal(q->out_len, 10);
	assert_memory_equal(q->out, "out\r\nput\r\n", 10);
	assert_int_equal(q->nr_lines, 3);
	assert_int_equal(q->lines[0], 8);
	assert_int_equal(q->lines[1], 3);
	assert_int_equal(q->lines[2], 0);
	assert_int_equal(q->in_len, 15);
	assert_memory_equal(q->in, "line \x16\x7f\neofhalf", 15);
	/* the termios as it was, every byte back in its place */
	assert_int_equal(ioctl(p.slave, TCGETS2, &now), 0);
	assert_memory_equal(&now, &t, sizeof(t));
	check_canon_queues(&p);
	close_pty(&p);
	free(q);
}

/* pty_data_put() into a new pty gives the same reads as the one saved. */
static void test_put_new(void **state)
{
	struct pty_where w = { .index = 0 };
	struct pty_queues *q = calloc(1, sizeof(*q));
	struct pty_data d;
	struct termios2 t;
	struct pty p, n;

	(void)state;
	assert_non_null(q);
	fill_canon(&p, &t);
	assert_int_equal(pty_data_save(p.master, p.slave, &t, false, &w, q), 0);
	close_pty(&p);
	d = (struct pty_data){ .out = q->out,
			       .out_len = q->out_len,
			       .in = q->in,
			       .in_len = q->in_len,
			       .lines = q->lines,
			       .nr_lines = q->nr_lines };
	assert_int_equal(open_pty(&n, &t), 0);
	assert_int_equal(pty_data_put(n.master, n.slave, &t, &d, &w), 0);
	check_canon_queues(&n);
	close_pty(&n);
	free(q);
}

static bool status_waits(int master)
{
	struct pollfd p = { .fd = master, .events = POLLPRI };

	return poll(&p, 1, 0) == 1;
}

static void test_refusals(void **state)
{
	struct pty_where w = { .pid = 1, .fd = 3 };
	struct pty_queues *q = calloc(1, sizeof(*q));
	struct termios2 t = canon_termios(), raw;
	struct termios lk = { 0 };
	int one = 1, n;
	struct pty p;
	char buf[16];

	(void)state;
	assert_non_null(q);
	/* EXTPROC */
	t.c_lflag |= EXTPROC;
	assert_int_equal(open_pty(&p, &t), 0);
	assert_int_equal(ioctl(p.slave, TCGETS2, &t), 0);
	assert_int_equal(pty_data_save(p.master, p.slave, &t, false, &w, q), 0); /* nothing */
	assert_int_equal(write(p.slave, "x", 1), 1);
	wait_queued(p.master, 1);
	assert_int_equal(ioctl(p.slave, TCGETS2, &t), 0);
	assert_int_equal(pty_data_save(p.master, p.slave, &t, false, &w, q), -EOPNOTSUPP);
	assert_int_equal(read_ready(p.master, buf, sizeof(buf)), 1);
	close_pty(&p);

	/* a locked termios */
	t = canon_termios();
	assert_int_equal(open_pty(&p, &t), 0);
	lk.c_lflag = ICANON;
	assert_int_equal(ioctl(p.slave, TIOCSLCKTRMIOS, &lk), 0);
	assert_int_equal(write(p.slave, "y", 1), 1);
	wait_queued(p.master, 1);
	assert_int_equal(ioctl(p.slave, TCGETS2, &t), 0);
	assert_int_equal(pty_data_save(p.master, p.slave, &t, false, &w, q), -EOPNOTSUPP);
	assert_int_equal(read_ready(p.master, buf, sizeof(buf)), 1);
	close_pty(&p);

	/* packet mode, output stopped by ^S: TIOCPKT_STOP waits with the output */
	t = canon_termios();
	assert_int_equal(open_pty(&p, &t), 0);
	assert_int_equal(write(p.slave, "zz", 2), 2);
	wait_queued(p.master, 2);
	assert_int_equal(ioctl(p.master, TIOCPKT, &one), 0);
	assert_int_equal(write(p.master, "\x13", 1), 1);
	/* the flip work makes the status; its wake-up is for POLLIN only (pty_stop()) */
	for (n = 0; n < 200 && !status_waits(p.master); n++)
		usleep(10000);
	assert_true(status_waits(p.master));
	assert_int_equal(ioctl(p.slave, TCGETS2, &t), 0);
	assert_int_equal(pty_data_save(p.master, p.slave, &t, true, &w, q), -EOPNOTSUPP);
	n = (int)read_ready(p.master, buf, sizeof(buf));
	assert_int_equal(n, 1); /* the status byte first */
	assert_int_equal(buf[0] & TIOCPKT_STOP, TIOCPKT_STOP);
	assert_int_equal(read_ready(p.master, buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "\0zz", 3);
	close_pty(&p);

	/* raw mode stopped by ^S without packet mode: moved, still stopped */
	raw = canon_termios();
	raw.c_lflag = 0;
	raw.c_iflag = IXON; /* IXANY would start it again with the next byte */
	assert_int_equal(open_pty(&p, &raw), 0);
	assert_int_equal(write(p.slave, "ab", 2), 2);
	assert_int_equal(write(p.master,
			       "\x13"
			       "cd",
			       3),
			 3);
	wait_queued(p.slave, 2);
	wait_queued(p.master, 2);
	assert_int_equal(fcntl(p.slave, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(write(p.slave, "e", 1), -1); /* stopped */
	assert_int_equal(ioctl(p.slave, TCGETS2, &raw), 0);
	assert_int_equal(pty_data_save(p.master, p.slave, &raw, false, &w, q), 0);
	assert_int_equal(q->out_len, 2);
	assert_int_equal(q->in_len, 2);
	assert_int_equal(q->nr_lines, 0);
	assert_int_equal(read_ready(p.slave, buf, sizeof(buf)), 2);
	assert_memory_equal(buf, "cd", 2);
	assert_int_equal(read_ready(p.master, buf, sizeof(buf)), 2);
	assert_memory_equal(buf, "ab", 2);
	assert_int_equal(write(p.slave, "e", 1), -1); /* output still stopped */
	assert_int_equal(errno, EAGAIN);
	close_pty(&p);
	free(q);
}

/* Packet mode with a status byte waiting, input queued: moved, the status kept. */
static void test_status_kept(void **state)
{
	struct pty_where w = { .pid = 1, .fd = 3 };
	struct pty_queues *q = calloc(1, sizeof(*q));
	struct termios2 t = canon_termios();
	int one = 1, i;
	struct pty p;
	char buf[16];

	(void)state;
	assert_non_null(q);
	t.c_lflag &= ~(tcflag_t)ECHO;
	assert_int_equal(open_pty(&p, &t), 0);
	assert_int_equal(ioctl(p.master, TIOCPKT, &one), 0);
	assert_int_equal(write(p.master, "abc\n\x13", 5), 5); /* a line, then ^S */
	wait_queued(p.slave, 4);
	for (i = 0; i < 200 && !status_waits(p.master); i++)
		usleep(10000);
	assert_true(status_waits(p.master));
	assert_int_equal(ioctl(p.slave, TCGETS2, &t), 0);
	assert_int_equal(pty_data_save(p.master, p.slave, &t, true, &w, q), 0);
	assert_int_equal(q->nr_lines, 1);
	assert_int_equal(q->in_len, 4);
	assert_true(status_waits(p.master));
	assert_int_equal(read_ready(p.master, buf, sizeof(buf)), 1);
	assert_int_equal(buf[0] & TIOCPKT_STOP, TIOCPKT_STOP);
	assert_int_equal(read_ready(p.slave, buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "abc\n", 4);
	close_pty(&p);
	free(q);
}

#define FLOOD_MAX 65536

/* Fill the output of @p until the writer would block: the master's buffer and its flip buffer. */
static size_t flood(struct pty *p, uint8_t *buf, size_t size)
{
	size_t n = 0, i;
	ssize_t r;

	for (i = 0; i < size; i++)
		buf[i] = (uint8_t)(i * 31 + i / 251);
	assert_int_equal(fcntl(p->slave, F_SETFL, O_NONBLOCK), 0);
	while (n < size && (r = write(p->slave, buf + n, min(size - n, (size_t)1000))) > 0)
		n += (size_t)r;
	assert_true(n > PTY_QUEUE_MAX && n < size);
	wait_queued(p->master, PTY_QUEUE_MAX);
	return n;
}

static void read_everything(int fd, uint8_t *buf, size_t len)
{
	size_t n = 0;

	while (n < len) {
		ssize_t r = read_ready(fd, buf + n, len - n);

		assert_true(r > 0);
		n += (size_t)r;
	}
	assert_true(drained(fd));
}

/* A full master queue (more may wait behind it) is refused, everything left in place. */
static void test_full_output_refused(void **state)
{
	struct pty_where w = { .pid = 1, .fd = 3 };
	struct pty_queues *q = calloc(1, sizeof(*q));
	uint8_t *buf = malloc(FLOOD_MAX), *got = malloc(FLOOD_MAX);
	struct termios2 t = canon_termios();
	struct pty p;
	size_t n;

	(void)state;
	assert_non_null(q);
	assert_non_null(buf);
	assert_non_null(got);
	t.c_oflag = 0;
	t.c_lflag = 0;
	t.c_iflag = 0;
	assert_int_equal(open_pty(&p, &t), 0);
	n = flood(&p, buf, FLOOD_MAX);
	assert_int_equal(ioctl(p.slave, TCGETS2, &t), 0);
	assert_int_equal(pty_data_save(p.master, p.slave, &t, false, &w, q), -EOPNOTSUPP);
	read_everything(p.master, got, n);
	assert_memory_equal(got, buf, n);
	close_pty(&p);
	free(got);
	free(buf);
	free(q);
}

/* The victim of the failed dump: pty A with data both ways, pty B refused (EXTPROC, data). */
struct two_ptys {
	struct pty a, b;
};

static int victim_setup(void *arg, void *report)
{
	struct two_ptys *v = arg;
	struct termios2 t;

	*(char *)report = 'r';
	fill_canon(&v->a, &t);
	t = canon_termios();
	t.c_lflag |= EXTPROC;
	if (open_pty(&v->b, &t) || write(v->b.slave, "x", 1) != 1)
		return -EIO;
	wait_queued(v->b.master, 1);
	return 0;
}

/* cmocka's asserts in a child: a failure ends it with a non-zero status */
static int victim_check(void *arg, const void *report)
{
	struct two_ptys *v = arg;

	(void)report;
	check_canon_queues(&v->a);
	return 0;
}

static const struct victim_ops victim_ops = {
	.setup = victim_setup,
	.check = victim_check,
	.report_fd = VICTIM_REPORT_FD,
};

static void test_failed_dump_puts_back(void **state)
{
	char dir[] = "/tmp/test-pty-data.XXXXXX", b;
	struct cr_options opts = { 0 };
	struct two_ptys v;
	int imgfd, err;
	const char *log;
	pid_t victim;

	(void)state;
	assert_non_null(mkdtemp(dir));
	victim = victim_start(&victim_ops, &v, -1, &b, 1);
	assert_true(victim > 0);
	imgfd = img_dir_open(dir, false);
	assert_true(imgfd >= 0);
	logcap_start(LOG_DEBUG);
	err = dump_tree_files(victim, imgfd, &opts);
	log = logcap_stop();
	close(imgfd);
	assert_int_equal(err, -EOPNOTSUPP);
	/* pty 0 was read (and put back) before pty 1 was refused */
	if (!strstr(log, "10 bytes for the master, 15 for the slave (3 complete lines)") ||
	    !strstr(log, "in EXTPROC mode: not supported"))
		fail_msg("the dump's log:\n%s", log);
	victim_finish(&victim);
	assert_int_equal(rm_rf(dir), 0);
}

int main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_put_termios),
		cmocka_unit_test(test_put_termios_collisions),
		cmocka_unit_test(test_encode),
	};
	const struct CMUnitTest live[] = {
		cmocka_unit_test(test_save_canonical),
		cmocka_unit_test(test_put_new),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_status_kept),
		cmocka_unit_test(test_full_output_refused),
		cmocka_unit_test(test_failed_dump_puts_back),
	};
	int err = cmocka_run_group_tests_name("pure", pure, NULL, NULL);

	if (geteuid()) {
		fprintf(stderr, "test-pty-data: live tests need root (TIOCSTI)\n");
		return err;
	}
	return err | cmocka_run_group_tests_name("live", live, NULL, NULL);
}
