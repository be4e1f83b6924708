// SPDX-License-Identifier: GPL-2.0
/*
 * The pty kind of the dump (files/pty.c), root: a child holding a pty pair
 * is seized, infected and its files dumped. The master's entry must carry
 * the index, termios, window size, packet mode and lock; the slave's the
 * index. Data in flight either way must be in the master's entry (output,
 * input; pty-data.c), and the child must find its data intact afterwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <asm/termbits.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dump.h"
#include "image.h"
#include "infect.h"
#include "log.h"
#include "options.h"
#include "seize.h"
#include "util.h"

#include "lib/dumper.h"
#include "lib/victim.h"

#include "files.pb-c.h"

enum victim_kind {
	V_PAIR, /* a pair at rest: 40x120 window, no echo, packet mode */
	V_TO_MASTER, /* 5 bytes written on the slave, unread by the master */
	V_TO_SLAVE, /* 7 bytes written on the master, unread by the slave */
};

struct report {
	pid_t pid;
	int master, slave, index;
};

#define REPORT_FD 200

static pid_t victim;
static char dir[] = "/tmp/test-pty.XXXXXX";

/* In the child: a pair set up as the victim_kind *@arg, described in the struct report @report. */
static int victim_setup(void *arg, void *report)
{
	enum victim_kind kind = *(enum victim_kind *)arg;
	struct report *r = report;
	struct winsize ws = { .ws_row = 40, .ws_col = 120 };
	struct termios2 t;
	char path[32];
	int unlock = 0, one = 1;

	r->pid = getpid();
	r->master = open("/dev/ptmx", O_RDWR | O_NOCTTY);
	if (r->master < 0 || ioctl(r->master, TIOCSPTLCK, &unlock) ||
	    ioctl(r->master, TIOCGPTN, &r->index))
		return -errno;
	snprintf(path, sizeof(path), "/dev/pts/%d", r->index);
	r->slave = open(path, O_RDWR | O_NOCTTY);
	if (r->slave < 0 || ioctl(r->slave, TCGETS2, &t))
		return -errno;
	t.c_lflag &= ~(tcflag_t)(ECHO | ICANON);
	if (ioctl(r->slave, TCSETS2, &t) || ioctl(r->master, TIOCSWINSZ, &ws))
		return -errno;
	switch (kind) {
	case V_PAIR:
		return ioctl(r->master, TIOCPKT, &one) ? -errno : 0;
	case V_TO_MASTER:
		return write(r->slave, "hello", 5) == 5 ? 0 : -EIO;
	case V_TO_SLAVE:
		return write(r->master, "goodbye", 7) == 7 ? 0 : -EIO;
	}
	return -EINVAL;
}

/* After SIGUSR1: the data in flight is still there. */
static int victim_check(void *arg, const void *report)
{
	enum victim_kind kind = *(enum victim_kind *)arg;
	const struct report *r = report;
	char buf[16];

	usleep(20000); /* the tty's flip buffer work */
	if (kind == V_TO_MASTER)
		return read(r->master, buf, sizeof(buf)) == 5 && !memcmp(buf, "hello", 5) ? 0 : 1;
	if (kind == V_TO_SLAVE)
		return read(r->slave, buf, sizeof(buf)) == 7 && !memcmp(buf, "goodbye", 7) ? 0 : 1;
	return 0;
}

static const struct victim_ops victim_ops = {
	.setup = victim_setup,
	.check = victim_check,
	.report_fd = REPORT_FD,
};

static int start_victim(enum victim_kind kind, struct report *r)
{
	victim = victim_start(&victim_ops, &kind, -1, r, sizeof(*r));
	usleep(50000); /* the data reached the other side's queue */
	return victim < 0 ? victim : 0;
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(strcpy(dir, "/tmp/test-pty.XXXXXX")));
	return 0;
}

static int teardown(void **state)
{
	char cmd[64];

	(void)state;
	victim_kill(&victim);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -EIO : 0;
}

static const PtyFileEntry *pty_entry(ProtobufCMessage **files, size_t n, bool master)
{
	for (size_t i = 0; i < n; i++) {
		const FileEntry *fe = (const FileEntry *)files[i];

		if (fe->type == FILE_TYPE__FILE_PTY && fe->pty && fe->pty->master == master)
			return fe->pty;
	}
	return NULL;
}

static void test_pair(void **state)
{
	const PtyFileEntry *m, *s;
	ProtobufCMessage **files;
	struct report r;
	struct cr_options opts = { 0 };
	size_t n;
	int imgfd;

	(void)state;
	assert_int_equal(start_victim(V_PAIR, &r), 0);
	imgfd = img_dir_open(dir, false);
	assert_true(imgfd >= 0);
	assert_int_equal(dump_tree_files(victim, imgfd, &opts), 0);
	read_records(imgfd, CR_IMG_FILES, 0, &files, &n);
	m = pty_entry(files, n, true);
	s = pty_entry(files, n, false);
	assert_non_null(m);
	assert_non_null(s);
	assert_int_equal(m->index, r.index);
	assert_int_equal(s->index, r.index);
	assert_non_null(m->termios);
	assert_non_null(m->winsize);
	assert_int_equal(m->winsize->row, 40);
	assert_int_equal(m->winsize->col, 120);
	assert_int_equal(m->termios->lflag & (ECHO | ICANON), 0);
	assert_int_equal(m->termios->cc.len, NCCS);
	assert_true(m->has_packet && m->packet);
	assert_true(m->has_locked && !m->locked);
	assert_true(m->has_sid && m->sid == 0);
	assert_null(s->termios);
	img_free_records(files, n);
	close(imgfd);
	victim_finish(&victim);
}

static void saved(enum victim_kind kind, const char *data)
{
	ProtobufCMessage **files;
	const PtyFileEntry *m;
	struct cr_options opts = { 0 };
	struct report r;
	size_t n, len = strlen(data);
	int imgfd;

	assert_int_equal(start_victim(kind, &r), 0);
	imgfd = img_dir_open(dir, false);
	assert_true(imgfd >= 0);
	assert_int_equal(dump_tree_files(victim, imgfd, &opts), 0);
	read_records(imgfd, CR_IMG_FILES, 0, &files, &n);
	close(imgfd);
	m = pty_entry(files, n, true);
	assert_non_null(m);
	if (kind == V_TO_MASTER) {
		assert_true(m->has_output && m->output.len == len);
		assert_memory_equal(m->output.data, data, len);
		assert_false(m->has_input);
	} else {
		/* non-canonical: no complete lines, all of it is the rest */
		assert_true(m->has_input && m->input.len == len);
		assert_memory_equal(m->input.data, data, len);
		assert_int_equal(m->n_input_lines, 0);
		assert_false(m->has_output);
	}
	img_free_records(files, n);
	/* The child works on, its data still queued. */
	victim_finish(&victim);
}

static void test_to_master_saved(void **state)
{
	(void)state;
	saved(V_TO_MASTER, "hello");
}

static void test_to_slave_saved(void **state)
{
	(void)state;
	saved(V_TO_SLAVE, "goodbye");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pair, setup, teardown),
		cmocka_unit_test_setup_teardown(test_to_master_saved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_to_slave_saved, setup, teardown),
	};

	if (geteuid()) {
		fprintf(stderr, "test-pty: needs root (ptrace, parasite)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
