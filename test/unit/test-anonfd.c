// SPDX-License-Identifier: GPL-2.0
/*
 * eventfd, signalfd, timerfd, epoll, inotify and pidfd. Dump side (as root,
 * on real children, with cr_dump -R): an epoll whose target fd number no
 * longer holds the registered file, an inotify watching an unlinked file, a
 * pidfd of a process outside the tree, are refused
 * with a message naming the pid, the fd and why, and the child runs on. Restore
 * side: the image checks, and each kind opened from a FileEntry as the
 * controller does it (eventfd counter above 32 bits in semaphore mode; an
 * absolute timerfd with unread ticks, armed only by the task holding it;
 * inotify watch descriptors kept across a gap, no stray IN_IGNORED left in
 * the queue; an epoll whose target must be an fd of its task and is
 * registered by that task's fd number).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dump.h"
#include "log.h"
#include "options.h"
#include "../../criu-like/files/files-int.h"
#include "../../criu-like/files/restore-files-int.h"
#include "util.h"

#include "lib/dumper.h"
#include "lib/victim.h"

/* The kinds under test (files/epoll.c, files/timerfd.c). */
extern const struct file_kind epoll_kind, timerfd_kind;

static char dir[] = "/tmp/test-anonfd.XXXXXX";
static pid_t victim;

enum victim_kind {
	V_EPOLL_MOVED, /* the target's fd number was closed, the file lives on at another */
	V_EPOLL_REPLACED, /* the target's fd number now holds another file */
	V_INOTIFY_UNLINKED, /* a watch on a file unlinked since, still open */
	V_PIDFD_OUTSIDE, /* a pidfd of the test itself, outside the dumped tree */
};

/* Set up the victim_kind *@arg in a child; the fd the message must name in *@report (-1: none). */
static int victim_setup(void *arg, void *report)
{
	enum victim_kind kind = *(enum victim_kind *)arg;
	int *ret_fd = report;
	char path[64];
	int p[2], ep, in, fd;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 7 };

	*ret_fd = -1;
	if (kind == V_PIDFD_OUTSIDE) {
		pid_t pid = getppid();

		*ret_fd = (int)syscall(__NR_pidfd_open, pid, 0);
		return *ret_fd < 0 ? -errno : 0;
	}
	if (kind == V_INOTIFY_UNLINKED) {
		snprintf(path, sizeof(path), "%s/watched", dir);
		fd = open(path, O_CREAT | O_RDWR, 0600);
		in = inotify_init1(0);
		if (fd < 0 || in < 0 || inotify_add_watch(in, path, IN_MODIFY) != 1 || unlink(path))
			return -errno;
		*ret_fd = in;
		return 0;
	}
	ep = epoll_create1(0);
	if (ep < 0 || pipe(p) || epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) || dup2(p[0], 40) < 0 ||
	    close(p[0]))
		return -errno;
	if (kind == V_EPOLL_REPLACED) {
		fd = open("/dev/null", O_RDONLY);
		if (fd < 0 || dup2(fd, p[0]) < 0)
			return -errno;
	}
	*ret_fd = p[0];
	return 0;
}

/* A child set up as @kind, which then sleeps; its fd of interest in *@ret_fd. */
static void start_victim(enum victim_kind kind, int *ret_fd)
{
	victim = victim_start_sleeper(victim_setup, &kind, ret_fd, sizeof(*ret_fd));
}

/* cr_dump -R of the victim must fail with -EOPNOTSUPP and log @expect; the victim lives on. */
static void dump_refused(const char *expect)
{
	char imgdir[64];

	snprintf(imgdir, sizeof(imgdir), "%s/img", dir);
	cr_dump_refused(victim, imgdir, expect);
}

static void test_epoll_moved_refused(void **state)
{
	char expect[128];
	int fd;

	(void)state;
	start_victim(V_EPOLL_MOVED, &fd);
	snprintf(expect, sizeof(expect), "pid %d fd 3: epoll target fd %d (inode ", victim, fd);
	dump_refused(expect);
	snprintf(expect, sizeof(expect), "is not open in pid %d", victim);
	dump_refused(expect);
}

static void test_epoll_replaced_refused(void **state)
{
	char expect[128];
	int fd;

	(void)state;
	start_victim(V_EPOLL_REPLACED, &fd);
	snprintf(expect, sizeof(expect), "epoll target fd %d (inode ", fd);
	dump_refused(expect);
	dump_refused("now holds another file than the one registered");
}

static void test_inotify_unlinked_refused(void **state)
{
	char expect[128];
	int fd;

	(void)state;
	start_victim(V_INOTIFY_UNLINKED, &fd);
	snprintf(expect, sizeof(expect), "pid %d fd %d: inotify watch 1 (inode ", victim, fd);
	dump_refused(expect);
	dump_refused("no path leads to the watched file");
}

static void test_pidfd_refused(void **state)
{
	char expect[160];
	int fd;

	(void)state;
	start_victim(V_PIDFD_OUTSIDE, &fd);
	snprintf(expect, sizeof(expect),
		 "pid %d fd %d: a pidfd of pid %d, which is not a task of the dumped tree", victim,
		 fd, getpid());
	dump_refused(expect);
	/* a pidfd of a child reaped since is dumped now (zdtm pidfd_dead) */
}

/* ---- restore side ---- */

/* A restore context holding the single file @fe, in its kind's list. */
struct one_file {
	struct restore_ctx ctx;
	struct rst_files files;
	FileEntry *by_id[1];
	const struct file_kind *kind_at[1];
	struct rst_kind kinds[32];
	size_t pos0;
};

static struct one_file of;

/* Open @fe as the controller would, in a tree of the single task @t (or none). */
static int open_in(FileEntry *fe, struct rst_task *t)
{
	memset(&of, 0, sizeof(of));
	of.by_id[0] = fe;
	of.files.idx.by_id = of.by_id;
	of.files.idx.n = 1;
	of.ctx.files = &of.files;
	of.kind_at[0] = file_kind_of_type(fe->type);
	assert_non_null(of.kind_at[0]);
	assert_true(nr_file_kinds <= ARRAY_SIZE(of.kinds));
	of.files.kind_at = of.kind_at;
	of.files.kinds = of.kinds;
	of.kinds[file_kind_index(of.kind_at[0])].pos = &of.pos0;
	of.kinds[file_kind_index(of.kind_at[0])].n = 1;
	of.ctx.tasks = t;
	of.ctx.nr_tasks = t ? 1 : 0;
	return of.kind_at[0]->open(&of.ctx, 0);
}

static int open_one(FileEntry *fe)
{
	return open_in(fe, NULL);
}

/* What a task holding the file of open_one() at @fd does once its fds are in place. */
static int post_install(int fd)
{
	PstreeEntry pe = PSTREE_ENTRY__INIT;
	FdEntry fde = FD_ENTRY__INIT, *fds[1] = { &fde };
	struct rst_task_files tf = { .nr_fds = 1, .fds = fds };
	struct rst_task t = { .pe = &pe, .files = &tf };

	pe.pid = (uint32_t)getpid();
	fde.fd = (uint32_t)fd;
	fde.id = of.by_id[0]->id;
	of.ctx.tasks = &t;
	of.ctx.nr_tasks = 1;
	return epoll_kind.installed(&of.ctx, &t) ?: timerfd_kind.installed(&of.ctx, &t);
}

/* The image check of @fe, by the kind of its type, as the restore does it. */
static int check_entry(const FileEntry *fe)
{
	return file_kind_of_type(fe->type)->check(fe);
}

static void test_check_entries(void **state)
{
	FileEntry fe = FILE_ENTRY__INIT;
	TimerfdFileEntry te = TIMERFD_FILE_ENTRY__INIT;

	(void)state;
	fe.id = 1;
	fe.type = FILE_TYPE__FILE_EVENTFD;
	assert_int_equal(check_entry(&fe), -EINVAL); /* no eventfd part */
	fe.type = FILE_TYPE__FILE_TIMERFD;
	fe.timerfd = &te;
	assert_int_equal(check_entry(&fe), 0);
	te.value_nsec = 1000000000ull;
	assert_int_equal(check_entry(&fe), -EINVAL);
	fe.type = FILE_TYPE__FILE_REG;
	assert_int_equal(check_entry(&fe), -EINVAL);
}

static void test_open_eventfd(void **state)
{
	FileEntry fe = FILE_ENTRY__INIT;
	EventfdFileEntry e = EVENTFD_FILE_ENTRY__INIT;
	uint64_t v = 0;
	int fd;

	(void)state;
	fe.id = 1;
	fe.type = FILE_TYPE__FILE_EVENTFD;
	fe.eventfd = &e;
	e.flags = O_RDWR | O_NONBLOCK;
	e.counter = 0x500000002ull;
	e.semaphore = true;
	fd = open_one(&fe);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(read(fd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(v, 1); /* semaphore mode: one at a time */
	close(fd);
}

static void test_open_timerfd(void **state)
{
	FileEntry fe = FILE_ENTRY__INIT;
	TimerfdFileEntry e = TIMERFD_FILE_ENTRY__INIT;
	struct itimerspec its;
	uint64_t ticks = 0;
	int fd;

	(void)state;
	fe.id = 2;
	fe.type = FILE_TYPE__FILE_TIMERFD;
	fe.timerfd = &e;
	e.flags = O_RDWR;
	e.clockid = CLOCK_REALTIME;
	e.settime_flags = TFD_TIMER_ABSTIME;
	e.value_sec = 3600;
	e.interval_sec = 60;
	e.ticks = 3;
	fd = open_one(&fe);
	assert_true(fd >= 0);
	/* disarmed until the first task holding it is in place */
	assert_int_equal(timerfd_gettime(fd, &its), 0);
	assert_int_equal(its.it_value.tv_sec + its.it_value.tv_nsec, 0);
	assert_int_equal(post_install(fd), 0);
	assert_int_equal(timerfd_gettime(fd, &its), 0);
	assert_true(its.it_value.tv_sec >= 3598 && its.it_value.tv_sec <= 3600);
	assert_int_equal(its.it_interval.tv_sec, 60);
	assert_int_equal(read(fd, &ticks, sizeof(ticks)), sizeof(ticks));
	assert_int_equal(ticks, 3);
	close(fd);
}

static void test_open_inotify(void **state)
{
	FileEntry fe = FILE_ENTRY__INIT;
	InotifyFileEntry e = INOTIFY_FILE_ENTRY__INIT;
	InotifyWatchEntry w[2] = { INOTIFY_WATCH_ENTRY__INIT, INOTIFY_WATCH_ENTRY__INIT };
	InotifyWatchEntry *wp[2] = { &w[0], &w[1] };
	char file[64], buf[256];
	int fd, f;

	(void)state;
	snprintf(file, sizeof(file), "%s/f", dir);
	f = open(file, O_CREAT | O_WRONLY, 0600);
	assert_true(f >= 0);
	fe.id = 3;
	fe.type = FILE_TYPE__FILE_INOTIFY;
	fe.inotify = &e;
	e.flags = O_RDONLY | O_NONBLOCK;
	e.n_watches = 2;
	e.watches = wp;
	w[0].wd = 2;
	w[0].mask = IN_CREATE;
	w[0].path.data = (uint8_t *)dir;
	w[0].path.len = strlen(dir);
	w[1].wd = 7; /* five descriptors skipped */
	w[1].mask = IN_MODIFY;
	w[1].path.data = (uint8_t *)file;
	w[1].path.len = strlen(file);
	fd = open_one(&fe);
	assert_true(fd >= 0);
	/* no IN_IGNORED of the skipping left behind */
	assert_int_equal(read(fd, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(write(f, "x", 1), 1);
	assert_true(read(fd, buf, sizeof(buf)) >= (ssize_t)sizeof(struct inotify_event));
	assert_int_equal(((struct inotify_event *)buf)->wd, 7);
	close(fd);
	close(f);
	/* descriptors out of order, and a path gone: refused */
	w[1].wd = 1;
	assert_int_equal(open_one(&fe), -EINVAL);
	w[1].wd = 9;
	unlink(file);
	assert_int_equal(open_one(&fe), -ENOENT);
}

/* An epoll target must be an fd of its task; it is registered by that task, by that number. */
static void test_open_epoll(void **state)
{
	FileEntry fe = FILE_ENTRY__INIT;
	EpollFileEntry e = EPOLL_FILE_ENTRY__INIT;
	EpollTargetEntry te = EPOLL_TARGET_ENTRY__INIT, *tes[1] = { &te };
	PstreeEntry pe = PSTREE_ENTRY__INIT;
	FdEntry fd_t = FD_ENTRY__INIT, fd_ep = FD_ENTRY__INIT, *fds[2] = { &fd_t, &fd_ep };
	struct rst_task_files tf = { .nr_fds = 1, .fds = fds + 1 };
	struct rst_task t = { .pe = &pe, .files = &tf };
	struct epoll_event ev = { 0 };
	int p[2], fd;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	fe.id = 4;
	fe.type = FILE_TYPE__FILE_EPOLL;
	fe.epoll = &e;
	e.flags = O_RDWR;
	e.owner_pid = pe.pid = (uint32_t)getpid();
	e.n_targets = 1;
	e.targets = tes;
	te.tfd = (uint32_t)p[0];
	te.events = EPOLLIN;
	te.data = 0xabcull;
	fd_t.fd = (uint32_t)p[0];
	fd_t.id = 5;
	fd_ep.fd = 100;
	fd_ep.id = 4;
	/* the task's table lacks the target's fd: refused before any fork */
	assert_int_equal(open_in(&fe, &t), -EINVAL);
	tf.fds = fds;
	tf.nr_fds = 2;
	fd = open_in(&fe, &t);
	assert_true(fd >= 0);
	assert_int_equal(epoll_wait(fd, &ev, 1, 0), 0); /* no target before the task is in place */
	of.files.fds = &fd;
	assert_int_equal(epoll_kind.installed(&of.ctx, &t), 0);
	assert_int_equal(epoll_wait(fd, &ev, 1, 0), 1);
	assert_int_equal(ev.data.u64, 0xabc);
	/* keyed by the task's fd number: MOD by it works */
	ev.events = EPOLLIN;
	ev.data.u64 = 0xdef;
	assert_int_equal(epoll_ctl(fd, EPOLL_CTL_MOD, p[0], &ev), 0);
	close(fd);
	close(p[0]);
	close(p[1]);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(strcpy(dir, "/tmp/test-anonfd.XXXXXX")));
	return 0;
}

static int teardown(void **state)
{
	char cmd[96];

	(void)state;
	victim_kill(&victim);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -EIO : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_check_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_eventfd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_timerfd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_inotify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_epoll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_epoll_moved_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_epoll_replaced_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inotify_unlinked_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pidfd_refused, setup, teardown),
	};

	if (geteuid()) {
		printf("test-anonfd: skipped, the dump side needs root\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
