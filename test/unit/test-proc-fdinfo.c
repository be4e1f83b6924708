// SPDX-License-Identifier: GPL-2.0
/*
 * fdinfo, mountinfo and pid-list parsers against fixtures (found as test-proc-fixtures.h says).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc-parse.h"
#include "util.h"

#include "test-proc-fixtures.h"

static void parse_fixture(const char *name, struct fdinfo *fi)
{
	_cleanup_free_ char *t = load(name);

	if (parse_fdinfo(t, fi))
		fail_msg("fixture %s did not parse", name);
}

static void check_common(const struct fdinfo *fi, uint64_t pos, unsigned int flags, int mnt_id,
			 uint64_t ino, enum fdinfo_kind kind)
{
	assert_int_equal(fi->pos, pos);
	assert_int_equal(fi->flags, flags);
	assert_int_equal(fi->mnt_id, mnt_id);
	assert_int_equal(fi->ino, ino);
	assert_int_equal(fi->kind, kind);
}

static void test_fdinfo_plain(void **state)
{
	struct fdinfo fi;

	(void)state;
	parse_fixture("fdinfo-plain", &fi);
	check_common(&fi, 7, 0100000, 27, 861, FDINFO_PLAIN);
	assert_int_equal(fi.n_tfd + fi.n_wd + fi.n_locks + fi.n_fmarks, 0);
	fdinfo_fini(&fi);
	/* before 3.15 there is no mnt_id, before 5.14 no ino; pos may be negative */
	parse_fixture("fdinfo-old", &fi);
	check_common(&fi, (uint64_t)-2, 0100002, -1, 0, FDINFO_PLAIN);
	fdinfo_fini(&fi);
}

static void test_fdinfo_eventfd(void **state)
{
	struct fdinfo fi;

	(void)state;
	parse_fixture("fdinfo-eventfd", &fi);
	check_common(&fi, 0, 04002, 17, 1038, FDINFO_EVENTFD);
	assert_int_equal(fi.eventfd.count, 0x12345); /* printed in hex */
	assert_int_equal(fi.eventfd.id, 1);
	assert_int_equal(fi.eventfd.semaphore, 1);
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-eventfd-old", &fi);
	check_common(&fi, 0, 02, 13, 0, FDINFO_EVENTFD);
	assert_int_equal(fi.eventfd.count, 0xffffffffffffffeULL);
	assert_int_equal(fi.eventfd.id, 0);
	assert_int_equal(fi.eventfd.semaphore, -1);
	fdinfo_fini(&fi);
}

static void test_fdinfo_epoll(void **state)
{
	struct fdinfo fi;

	(void)state;
	parse_fixture("fdinfo-epoll", &fi);
	check_common(&fi, 0, 02000002, 17, 1038, FDINFO_EPOLL);
	assert_int_equal(fi.n_tfd, 2);
	assert_int_equal(fi.tfd[0].tfd, 5);
	assert_int_equal(fi.tfd[0].events, 0x80000019);
	assert_int_equal(fi.tfd[0].data, 0x1122334455667788ULL);
	assert_int_equal(fi.tfd[0].pos, 0);
	assert_int_equal(fi.tfd[0].ino, 0x40e);
	assert_int_equal(fi.tfd[0].sdev, 0x10);
	assert_int_equal(fi.tfd[1].tfd, 7);
	assert_int_equal(fi.tfd[1].events, 0x1c);
	assert_int_equal(fi.tfd[1].data, 7);
	assert_int_equal(fi.tfd[1].ino, 0x2b2f);
	assert_int_equal(fi.tfd[1].sdev, 0xf);
	fdinfo_fini(&fi);
	assert_null(fi.tfd);
	/* before 3.18: no pos/ino/sdev */
	parse_fixture("fdinfo-epoll-old", &fi);
	assert_int_equal(fi.kind, FDINFO_EPOLL);
	assert_int_equal(fi.n_tfd, 1);
	assert_int_equal(fi.tfd[0].tfd, 3);
	assert_int_equal(fi.tfd[0].events, 0x19);
	assert_int_equal(fi.tfd[0].data, 0xffffffff);
	assert_int_equal(fi.tfd[0].ino, 0);
	fdinfo_fini(&fi);
}

static void test_fdinfo_signalfd_timerfd(void **state)
{
	struct fdinfo fi;

	(void)state;
	parse_fixture("fdinfo-signalfd", &fi);
	check_common(&fi, 0, 02, 17, 1038, FDINFO_SIGNALFD);
	assert_int_equal(fi.signalfd.sigmask, 0x4200); /* SIGUSR1 (10) and SIGTERM (15) */
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-timerfd", &fi);
	check_common(&fi, 0, 02000002, 17, 1038, FDINFO_TIMERFD);
	assert_int_equal(fi.timerfd.clockid, 1);
	assert_int_equal(fi.timerfd.ticks, 0);
	assert_int_equal(fi.timerfd.settime_flags, 0);
	assert_int_equal(fi.timerfd.it_value_sec, 99);
	assert_int_equal(fi.timerfd.it_value_nsec, 999958292);
	assert_int_equal(fi.timerfd.it_interval_sec, 2);
	assert_int_equal(fi.timerfd.it_interval_nsec, 500);
	fdinfo_fini(&fi);
}

static void test_fdinfo_inotify(void **state)
{
	static const unsigned char h0[8] = { 0x1a, 0xc5, 0x03, 0, 0, 0, 0, 0 };
	static const unsigned char h1[8] = { 0x13, 0, 0, 0, 0, 0, 0, 0 };
	struct fdinfo fi;

	(void)state;
	parse_fixture("fdinfo-inotify", &fi);
	check_common(&fi, 0, 04000, 17, 1038, FDINFO_INOTIFY);
	assert_int_equal(fi.n_wd, 2);
	assert_int_equal(fi.wd[0].wd, 2);
	assert_int_equal(fi.wd[0].ino, 0x3c51a);
	assert_int_equal(fi.wd[0].sdev, 0xfe00000);
	assert_int_equal(fi.wd[0].mask, 2);
	assert_int_equal(fi.wd[0].ignored_mask, 0);
	assert_int_equal(fi.wd[0].fhandle_bytes, 8);
	assert_int_equal(fi.wd[0].fhandle_type, 1);
	assert_memory_equal(fi.wd[0].fhandle, h0, 8);
	assert_int_equal(fi.wd[1].wd, 1);
	assert_int_equal(fi.wd[1].ino, 0x13);
	assert_int_equal(fi.wd[1].mask, 0x300);
	assert_memory_equal(fi.wd[1].fhandle, h1, 8);
	fdinfo_fini(&fi);
	/* a filesystem that cannot encode file handles: no fhandle part */
	parse_fixture("fdinfo-inotify-nofh", &fi);
	assert_int_equal(fi.kind, FDINFO_INOTIFY);
	assert_int_equal(fi.n_wd, 1);
	assert_int_equal(fi.wd[0].wd, 0x1f);
	assert_int_equal(fi.wd[0].ino, 0xffffffffffffULL);
	assert_int_equal(fi.wd[0].sdev, 0x800001);
	assert_int_equal(fi.wd[0].mask, 0xfff);
	assert_int_equal(fi.wd[0].fhandle_bytes, 0);
	fdinfo_fini(&fi);
}

static void test_fdinfo_fanotify(void **state)
{
	static const unsigned char h[8] = { 0x13, 0, 0, 0, 0, 0, 0, 0 };
	struct fdinfo fi;

	(void)state;
	parse_fixture("fdinfo-fanotify", &fi);
	check_common(&fi, 0, 02, 17, 1038, FDINFO_FANOTIFY);
	assert_int_equal(fi.fanotify.flags, 0);
	assert_int_equal(fi.fanotify.event_flags, 0x8000);
	assert_int_equal(fi.n_fmarks, 2);
	assert_int_equal(fi.fmarks[0].kind, FANOTIFY_MARK_MOUNT);
	assert_int_equal(fi.fmarks[0].mnt_id, 0x1b); /* the root mount, 27 */
	assert_int_equal(fi.fmarks[0].mflags, 0);
	assert_int_equal(fi.fmarks[0].mask, 0x20);
	assert_int_equal(fi.fmarks[1].kind, FANOTIFY_MARK_INODE);
	assert_int_equal(fi.fmarks[1].ino, 0x13);
	assert_int_equal(fi.fmarks[1].sdev, 0xfe00000);
	assert_int_equal(fi.fmarks[1].mask, 2);
	assert_int_equal(fi.fmarks[1].fhandle_bytes, 8);
	assert_int_equal(fi.fmarks[1].fhandle_type, 1);
	assert_memory_equal(fi.fmarks[1].fhandle, h, 8);
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-fanotify-sb", &fi);
	assert_int_equal(fi.kind, FDINFO_FANOTIFY);
	assert_int_equal(fi.fanotify.flags, 0x10);
	assert_int_equal(fi.n_fmarks, 2);
	assert_int_equal(fi.fmarks[0].kind, FANOTIFY_MARK_SB);
	assert_int_equal(fi.fmarks[0].sdev, 0xfe00000);
	assert_int_equal(fi.fmarks[0].mflags, 1);
	assert_int_equal(fi.fmarks[0].mask, 0x4000000);
	assert_int_equal(fi.fmarks[0].ignored_mask, 8);
	assert_int_equal(fi.fmarks[1].kind, FANOTIFY_MARK_INODE);
	assert_int_equal(fi.fmarks[1].fhandle_bytes, 0);
	fdinfo_fini(&fi);
}

static void test_fdinfo_pidfd(void **state)
{
	struct fdinfo fi;

	(void)state;
	parse_fixture("fdinfo-pidfd", &fi);
	check_common(&fi, 0, 02000002, 4, 7126, FDINFO_PIDFD);
	assert_int_equal(fi.pidfd.pid, 7125);
	assert_int_equal(fi.pidfd.nspid, 7125);
	assert_int_equal(fi.pidfd.nspid_levels, 1);
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-pidfd-exited", &fi);
	assert_int_equal(fi.kind, FDINFO_PIDFD);
	assert_int_equal(fi.pidfd.pid, -1);
	assert_int_equal(fi.pidfd.nspid, -1);
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-pidfd-nested", &fi);
	assert_int_equal(fi.pidfd.pid, 5000);
	assert_int_equal(fi.pidfd.nspid_levels, 3);
	assert_int_equal(fi.pidfd.nspids[0], 5000);
	assert_int_equal(fi.pidfd.nspids[1], 20);
	assert_int_equal(fi.pidfd.nspids[2], 1);
	assert_int_equal(fi.pidfd.nspid, 1);
	fdinfo_fini(&fi);
}

static void check_lock(const struct fdinfo_lock *l, const char *cls, const char *type, pid_t pid,
		       unsigned int maj, unsigned int min, uint64_t ino, int64_t start, int64_t end)
{
	assert_string_equal(l->lclass, cls);
	assert_string_equal(l->type, type);
	assert_int_equal(l->pid, pid);
	assert_int_equal(l->dev_major, maj);
	assert_int_equal(l->dev_minor, min);
	assert_int_equal(l->ino, ino);
	assert_int_equal(l->start, start);
	assert_int_equal(l->end, end);
}

static void test_fdinfo_locks(void **state)
{
	struct fdinfo fi;

	(void)state;
	parse_fixture("fdinfo-flock", &fi);
	check_common(&fi, 0, 0100002, 27, 10953160, FDINFO_PLAIN);
	assert_int_equal(fi.n_locks, 1);
	assert_string_equal(fi.locks[0].line, "1: FLOCK  ADVISORY  READ 7125 fe:00:10953160 0 EOF");
	check_lock(&fi.locks[0], "FLOCK", "READ", 7125, 0xfe, 0, 10953160, 0, -1);
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-ofdlock", &fi);
	assert_int_equal(fi.n_locks, 1);
	check_lock(&fi.locks[0], "OFDLCK", "WRITE", -1, 0xfe, 0, 10953162, 10, 29);
	fdinfo_fini(&fi);
	/* several locks, unknown lines of newer kernels skipped */
	parse_fixture("fdinfo-locks", &fi);
	check_common(&fi, 5, 0100002, 27, 42, FDINFO_PLAIN);
	assert_int_equal(fi.n_locks, 4);
	check_lock(&fi.locks[0], "POSIX", "WRITE", 1234, 0xfe, 0, 42, 0, -1);
	check_lock(&fi.locks[1], "POSIX", "READ", 1234, 0xfe, 0, 42, 100, 9223372036854775806LL);
	check_lock(&fi.locks[2], "LEASE", "READ", 77, 0x103, 0x1f, 42, 0, -1);
	check_lock(&fi.locks[3], "FLOCK", "WRITE", 88, 0, 0, 0, 0, -1);
	fdinfo_fini(&fi);
	assert_null(fi.locks);
}

/* The rarer variants, captured by `capture DIR more`. */
static void test_fdinfo_more(void **state)
{
	static const unsigned char h[12] = { 0x41, 0xd4 };
	struct fdinfo fi;

	(void)state;
	parse_fixture("fdinfo-lease", &fi);
	check_common(&fi, 0, 0120000, 27, 10952883, FDINFO_PLAIN);
	assert_int_equal(fi.n_locks, 1);
	check_lock(&fi.locks[0], "LEASE", "READ", 27024, 0xfe, 0, 10952883, 0, -1);
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-posixlock", &fi);
	assert_int_equal(fi.n_locks, 1);
	check_lock(&fi.locks[0], "POSIX", "WRITE", 27024, 0xfe, 0, 10952913, 0, -1);
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-fanotify-fs", &fi);
	check_common(&fi, 0, 02, 17, 1038, FDINFO_FANOTIFY);
	assert_int_equal(fi.fanotify.flags, 0x200); /* FAN_REPORT_FID */
	assert_int_equal(fi.fanotify.event_flags, 0x8000);
	assert_int_equal(fi.n_fmarks, 1);
	assert_int_equal(fi.fmarks[0].kind, FANOTIFY_MARK_SB);
	assert_int_equal(fi.fmarks[0].sdev, 0xfe00000);
	assert_int_equal(fi.fmarks[0].mask, 0x100); /* FAN_CREATE */
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-inotify-proc", &fi);
	check_common(&fi, 0, 0, 17, 1038, FDINFO_INOTIFY);
	assert_int_equal(fi.n_wd, 1);
	assert_int_equal(fi.wd[0].ino, 0xd441);
	assert_int_equal(fi.wd[0].sdev, 0x15);
	assert_int_equal(fi.wd[0].mask, 1);
	assert_int_equal(fi.wd[0].fhandle_bytes, 12);
	assert_int_equal(fi.wd[0].fhandle_type, 0x81);
	assert_memory_equal(fi.wd[0].fhandle, h, 12);
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-timerfd-abs", &fi);
	check_common(&fi, 0, 02, 17, 1038, FDINFO_TIMERFD);
	assert_int_equal(fi.timerfd.clockid, 0);
	assert_int_equal(fi.timerfd.settime_flags, 1); /* TFD_TIMER_ABSTIME */
	assert_int_equal(fi.timerfd.it_value_sec, 2306171785ULL);
	assert_int_equal(fi.timerfd.it_value_nsec, 933156159);
	assert_int_equal(fi.timerfd.it_interval_sec, 0);
	assert_int_equal(fi.timerfd.it_interval_nsec, 0);
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-pidfd-ns", &fi);
	check_common(&fi, 0, 02000002, 4, 91952, FDINFO_PIDFD);
	assert_int_equal(fi.pidfd.pid, 27025);
	assert_int_equal(fi.pidfd.nspid_levels, 2);
	assert_int_equal(fi.pidfd.nspids[0], 27025);
	assert_int_equal(fi.pidfd.nspid, 1);
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-pidfd-reaped", &fi);
	assert_int_equal(fi.kind, FDINFO_PIDFD);
	assert_int_equal(fi.pidfd.pid, -1);
	assert_int_equal(fi.pidfd.nspid_levels, 1);
	assert_int_equal(fi.pidfd.nspid, -1);
	fdinfo_fini(&fi);
}

/* /dev/net/tun: "iff:" names the device, empty when the fd is no device's queue */
static void test_fdinfo_tun(void **state)
{
	struct fdinfo fi;

	(void)state;
	parse_fixture("fdinfo-tun", &fi);
	check_common(&fi, 0, 02104002, 24, 104, FDINFO_TUN);
	assert_string_equal(fi.tun.iff, "tap0");
	fdinfo_fini(&fi);
	parse_fixture("fdinfo-tun-none", &fi);
	check_common(&fi, 0, 02100002, 24, 104, FDINFO_TUN);
	assert_string_equal(fi.tun.iff, "");
	fdinfo_fini(&fi);
	assert_int_equal(parse_fdinfo("pos:\t0\nflags:\t02\niff:\ttun15charsname0\n", &fi), 0);
	assert_string_equal(fi.tun.iff, "tun15charsname0");
	fdinfo_fini(&fi);
}

static void test_fdinfo_garbage(void **state)
{
	static const char *bad[] = {
		"",
		"pos:\t0\n",
		"flags:\t02\n",
		"pos:\t0\nflags:\t09\n",
		"pos:\tx\nflags:\t02\n",
		"pos:\t0\npos:\t0\nflags:\t02\n",
		"pos:\t0\nflags:\t02\nno colon line\n",
		"pos:\t0\nflags:\t02\nmnt_id:\t-3\n",
		"pos:\t0\nflags:\t02\neventfd-id: 1\n", /* no count */
		"pos:\t0\nflags:\t02\neventfd-count: zz\n",
		"pos:\t0\nflags:\t02\neventfd-count: 1\nsigmask:\t0\n", /* two kinds */
		"pos:\t0\nflags:\t02\ntfd: 3 events: 19\n",
		"pos:\t0\nflags:\t02\ntfd: 3 events: 19 data: 1 pos:0 ino:1\n",
		"pos:\t0\nflags:\t02\ninotify wd:1 ino:1 sdev:1 mask:1\n",
		"pos:\t0\nflags:\t02\ninotify wd:1 ino:1 sdev:1 mask:1 ignored_mask:0 "
		"fhandle-bytes:2 "
		"fhandle-type:1 f_handle:12\n",
		"pos:\t0\nflags:\t02\ninotify wd:1 ino:1 sdev:1 mask:1 ignored_mask:0 "
		"fhandle-bytes:81 "
		"fhandle-type:1 f_handle:12\n",
		"pos:\t0\nflags:\t02\nfanotify ino:1 sdev:1 mflags:0 mask:1 ignored_mask:0\n",
		"pos:\t0\nflags:\t02\nfanotify flags:0 event-flags:0\nfanotify flags:0 "
		"event-flags:0\n",
		"pos:\t0\nflags:\t02\nclockid: 1\nticks: 0\n", /* half a timerfd */
		"pos:\t0\nflags:\t02\nclockid: 1\nticks: 0\nsettime flags: 00\nit_value: (1 2)\n"
		"it_interval: (0, 0)\n",
		"pos:\t0\nflags:\t02\nNSpid:\t1\n", /* no Pid: */
		"pos:\t0\nflags:\t02\nPid:\t-2\nNSpid:\t1\n",
		"pos:\t0\nflags:\t02\nlock:\t1: POSIX ADVISORY WRITE 1 fe:00:1 0\n",
		"pos:\t0\nflags:\t02\nlock:\t1: POSIX ADVISORY WRITE x fe:00:1 0 EOF\n",
		"pos:\t0\nflags:\t02\nlock:\t1: POSIX ADVISORY WRITE 1 fe:00:1 0 EOF extra\n",
		"pos:\t0\nflags:\t02\nlock:\t1: POSIX ADVISORY WRITE 1 fe00:1 0 EOF\n",
		"pos:\t0\nflags:\t02\niff:\ttun16charsname00\n", /* longer than IFNAMSIZ - 1 */
		"pos:\t0\nflags:\t02\niff:\ttap0 tap1\n",
		"pos:\t0\nflags:\t02\neventfd-count: 1\niff:\ttap0\n", /* two kinds */
	};
	struct fdinfo fi = { .pos = 4242 };
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (parse_fdinfo(bad[i], &fi) != -EINVAL)
			fail_msg("fdinfo case %u was accepted: %s", i, bad[i]);
	}
	assert_int_equal(fi.pos, 4242);
}

/* ---- mountinfo ---- */

static void check_mount(const struct mount_entry *m, int id, int parent, unsigned int maj,
			unsigned int min, const char *root, const char *mp, const char *opts,
			const char *fstype, const char *source, const char *sopts)
{
	assert_int_equal(m->mnt_id, id);
	assert_int_equal(m->parent_id, parent);
	assert_int_equal(m->major, maj);
	assert_int_equal(m->minor, min);
	assert_string_equal(m->root, root);
	assert_string_equal(m->mountpoint, mp);
	assert_string_equal(m->options, opts);
	assert_string_equal(m->fstype, fstype);
	assert_string_equal(m->source, source);
	assert_string_equal(m->super_options, sopts);
}

static void test_mountinfo_capture(void **state)
{
	_cleanup_free_ char *t = load("mountinfo-capture");
	_cleanup_free_ char *p = load("mountinfo-propagation");
	struct mount_list l;
	const struct mount_entry *m;

	(void)state;
	assert_int_equal(parse_mountinfo(t, &l), 0);
	assert_int_equal(l.nr, 20);
	check_mount(&l.mnts[0], 22, 27, 0, 21, "/", "/proc", "rw,relatime", "proc", "proc", "rw");
	m = &l.mnts[5];
	check_mount(m, 27, 1, 254, 0, "/", "/", "rw,relatime", "ext4", "/dev/vda",
		    "rw,discard,resv_strict,resuid=65534,resgid=65534");
	assert_int_equal(m->shared + m->master + m->propagate_from, 0);
	assert_false(m->unbindable);
	check_mount(&l.mnts[19], 41, 31, 0, 38, "/", "/sys/fs/cgroup/unified", "rw,relatime",
		    "cgroup2", "cgroup2", "rw");
	mount_list_fini(&l);
	assert_null(l.mnts);

	assert_int_equal(parse_mountinfo(p, &l), 0);
	assert_int_equal(l.nr, 4);
	m = &l.mnts[0];
	check_mount(m, 66, 46, 0, 40, "/", "/tmp/mi/a dir", "rw,relatime", "tmpfs",
		    "src with space", "rw,size=1024k");
	assert_int_equal(m->shared, 1);
	assert_int_equal(m->master, 0);
	m = &l.mnts[1];
	assert_string_equal(m->mountpoint, "/tmp/mi/b");
	assert_int_equal(m->shared, 2);
	assert_int_equal(m->master, 1);
	m = &l.mnts[2];
	check_mount(m, 68, 46, 0, 41, "/", "/tmp/mi/u", "rw,relatime", "tmpfs", "none", "rw");
	assert_true(m->unbindable);
	assert_int_equal(m->shared, 0);
	m = &l.mnts[3];
	check_mount(m, 69, 46, 0, 40, "/sub\ttab\\back", "/tmp/mi/c", "rw,relatime", "tmpfs",
		    "src with space", "rw,size=1024k");
	assert_int_equal(m->shared, 1);
	mount_list_fini(&l);
}

static void test_mountinfo_hard(void **state)
{
	_cleanup_free_ char *t = load("mountinfo-hard");
	struct mount_list l;
	const struct mount_entry *m;

	(void)state;
	assert_int_equal(parse_mountinfo(t, &l), 0);
	assert_int_equal(l.nr, 5);
	check_mount(&l.mnts[0], 15, 1, 0, 3, "/", "/", "rw", "rootfs", "rootfs", "rw");
	m = &l.mnts[1];
	check_mount(m, 20, 15, 8, 1, "/a b\tc\nd\\e", "/mnt/x y", "rw,noatime", "ext4", "/dev/sda1",
		    "rw,errors=remount-ro");
	assert_int_equal(m->shared, 3);
	assert_int_equal(m->master, 1);
	assert_int_equal(m->propagate_from, 7);
	/* an empty source: two spaces */
	m = &l.mnts[2];
	check_mount(m, 21, 20, 0, 45, "/", "/mnt/u", "ro,nosuid", "tmpfs", "", "rw,size=4k");
	assert_true(m->unbindable);
	/* an optional field we do not know is skipped */
	m = &l.mnts[3];
	check_mount(m, 22, 20, 0, 46, "/", "/mnt/f", "rw", "fuse.sshfs", "user@host:/dir x",
		    "rw,user_id=0");
	assert_int_equal(m->shared, 4);
	check_mount(&l.mnts[4], 4294, 22, 259, 1048575, "/", "/mnt/big", "rw", "ext4",
		    "/dev/nvme0n1p1", "rw");
	mount_list_fini(&l);
}

static void test_mountinfo_garbage(void **state)
{
	static const char *bad[] = {
		"garbage\n",
		"15 1 0:3 / / rw rootfs rootfs rw\n", /* no separator */
		"15 1 0:3 / / rw - rootfs rootfs\n",
		"15 1 0:3 / / rw -\n",
		"15 1 03 / / rw - rootfs rootfs rw\n",
		"15 x 0:3 / / rw - rootfs rootfs rw\n",
		"15 1 0:3 / / rw shared:x - rootfs rootfs rw\n",
		"15 1 0:3 / / rw shared:0 - rootfs rootfs rw\n",
		"15 1 0:3 / / rw  - rootfs rootfs rw\n",
		"15 1 0:3 /\\000 / rw - rootfs rootfs rw\n",
		"15 1 0:3 / / rw - rootfs rootfs rw extra\n",
		"15 1 0:3 / / rw - rootfs rootfs rw\n16",
	};
	struct mount_list l = { .nr = 77 };
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (parse_mountinfo(bad[i], &l) != -EINVAL)
			fail_msg("mountinfo case %u was accepted: %s", i, bad[i]);
	}
	assert_int_equal(l.nr, 77);
	assert_int_equal(parse_mountinfo("", &l), 0);
	assert_int_equal(l.nr, 0);
}

/* ---- pid lists ---- */

static void test_pid_list(void **state)
{
	_cleanup_free_ char *t = load("children-list");
	_cleanup_free_ char *e = load("empty");
	pid_t *pids = (pid_t *)1;
	unsigned int nr = 9;

	(void)state;
	assert_int_equal(parse_pid_list(t, &pids, &nr), 0);
	assert_int_equal(nr, 3);
	assert_int_equal(pids[0], 7);
	assert_int_equal(pids[1], 123);
	assert_int_equal(pids[2], 4567);
	free(pids);
	assert_int_equal(parse_pid_list(e, &pids, &nr), 0);
	assert_int_equal(nr, 0);
	assert_null(pids);
	nr = 5;
	assert_int_equal(parse_pid_list("1 x 3 ", &pids, &nr), -EINVAL);
	assert_int_equal(parse_pid_list("1 -3 ", &pids, &nr), -EINVAL);
	assert_int_equal(parse_pid_list("0 ", &pids, &nr), -EINVAL);
	assert_int_equal(parse_pid_list("12a ", &pids, &nr), -EINVAL);
	assert_int_equal(parse_pid_list("99999999999 ", &pids, &nr), -EINVAL);
	assert_int_equal(nr, 5);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fdinfo_plain),
		cmocka_unit_test(test_fdinfo_eventfd),
		cmocka_unit_test(test_fdinfo_epoll),
		cmocka_unit_test(test_fdinfo_signalfd_timerfd),
		cmocka_unit_test(test_fdinfo_inotify),
		cmocka_unit_test(test_fdinfo_fanotify),
		cmocka_unit_test(test_fdinfo_pidfd),
		cmocka_unit_test(test_fdinfo_locks),
		cmocka_unit_test(test_fdinfo_more),
		cmocka_unit_test(test_fdinfo_tun),
		cmocka_unit_test(test_fdinfo_garbage),
		cmocka_unit_test(test_mountinfo_capture),
		cmocka_unit_test(test_mountinfo_hard),
		cmocka_unit_test(test_mountinfo_garbage),
		cmocka_unit_test(test_pid_list),
	};

	fixtures_init(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
