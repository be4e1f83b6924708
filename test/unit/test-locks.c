// SPDX-License-Identifier: GPL-2.0
/*
 * File locks (files/locks.c): fdinfo lock lines turned into entries, leases
 * refused, duplicates told apart, a lock refused without --file-locks; and the lines this kernel prints for locks
 * this process takes (flock, POSIX, OFD) read back as the same locks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../../criu-like/files/files-int.h"
#include "../../criu-like/files/locks.h"
#include "options.h"
#include "proc-parse.h"
#include "util.h"

static void parse_one(const char *lock_line, struct fdinfo *fi)
{
	char text[512];

	snprintf(text, sizeof(text), "pos:\t0\nflags:\t02\nmnt_id:\t30\nino:\t12\nlock:\t%s\n",
		 lock_line);
	assert_int_equal(parse_fdinfo(text, fi), 0);
	assert_int_equal(fi->n_locks, 1);
}

static void test_lines(void **state)
{
	struct fdinfo fi = { 0 };
	FileLockEntry e;

	(void)state;
	parse_one("1: FLOCK  ADVISORY  WRITE 1234 fe:00:12 0 EOF", &fi);
	assert_int_equal(lock_entry_from_fdinfo(&fi.locks[0], 77, &e), 0);
	assert_int_equal(e.kind, FILE_LOCK_KIND__LOCK_FLOCK);
	assert_true(e.write);
	assert_false(e.has_start || e.has_len || e.has_owner_pid);
	fdinfo_fini(&fi);

	parse_one("1: POSIX  ADVISORY  READ 1234 fe:00:12 200 299", &fi);
	assert_int_equal(lock_entry_from_fdinfo(&fi.locks[0], 77, &e), 0);
	assert_int_equal(e.kind, FILE_LOCK_KIND__LOCK_POSIX);
	assert_false(e.write);
	/* the owner is the process whose fdinfo shows it */
	assert_true(e.has_owner_pid);
	assert_int_equal(e.owner_pid, 77);
	assert_int_equal(e.start, 200);
	assert_int_equal(e.len, 100);
	fdinfo_fini(&fi);

	parse_one("2: OFDLCK ADVISORY  WRITE -1 fe:00:12 4096 EOF", &fi);
	assert_int_equal(lock_entry_from_fdinfo(&fi.locks[0], 77, &e), 0);
	assert_int_equal(e.kind, FILE_LOCK_KIND__LOCK_OFD);
	assert_false(e.has_owner_pid);
	assert_int_equal(e.start, 4096);
	assert_int_equal(e.len, 0); /* to the end of the file */
	fdinfo_fini(&fi);
}

static void test_refused(void **state)
{
	struct fdinfo fi = { 0 };
	FileLockEntry e;

	(void)state;
	/* a lease whose break is pending: its target type, to give up or to downgrade */
	parse_one("1: LEASE  BREAKING  UNLCK 1234 fe:00:12 0 EOF", &fi);
	assert_int_equal(lock_entry_from_fdinfo(&fi.locks[0], 1, &e), 0);
	assert_int_equal(e.kind, FILE_LOCK_KIND__LOCK_LEASE);
	assert_true(e.breaking);
	assert_false(e.break_to_read);
	fdinfo_fini(&fi);
	parse_one("1: LEASE  BREAKING  READ 1234 fe:00:12 0 EOF", &fi);
	assert_int_equal(lock_entry_from_fdinfo(&fi.locks[0], 1, &e), 0);
	assert_true(e.breaking && e.break_to_read && e.write);
	fdinfo_fini(&fi);
	parse_one("1: LEASE  BREAKING  WRITE 1234 fe:00:12 0 EOF", &fi);
	assert_int_equal(lock_entry_from_fdinfo(&fi.locks[0], 1, &e), -EOPNOTSUPP);
	fdinfo_fini(&fi);
	parse_one("1: LEASE  BREAKER   WRITE 1234 fe:00:12 0 EOF", &fi);
	assert_int_equal(lock_entry_from_fdinfo(&fi.locks[0], 1, &e), -EBUSY);
	fdinfo_fini(&fi);
	parse_one("1: DELEG  ACTIVE    READ 1234 fe:00:12 0 EOF", &fi);
	assert_int_equal(lock_entry_from_fdinfo(&fi.locks[0], 1, &e), -EOPNOTSUPP);
	fdinfo_fini(&fi);
	parse_one("1: POSIX  ADVISORY  UNLCK 1234 fe:00:12 0 EOF", &fi);
	assert_int_equal(lock_entry_from_fdinfo(&fi.locks[0], 1, &e), -EOPNOTSUPP);
	fdinfo_fini(&fi);
	/* an end before the start is no range */
	parse_one("1: POSIX  ADVISORY  WRITE 1234 fe:00:12 10 5", &fi);
	assert_int_equal(lock_entry_from_fdinfo(&fi.locks[0], 1, &e), -EINVAL);
	fdinfo_fini(&fi);
}

static void test_lease(void **state)
{
	struct fdinfo fi = { 0 };
	FileLockEntry e, f;

	(void)state;
	parse_one("1: LEASE  ACTIVE    WRITE 1234 fe:00:12 0 EOF", &fi);
	assert_int_equal(lock_entry_from_fdinfo(&fi.locks[0], 1, &e), 0);
	assert_int_equal(e.kind, FILE_LOCK_KIND__LOCK_LEASE);
	assert_true(e.write);
	assert_false(e.has_start);
	fdinfo_fini(&fi);
	parse_one("2: LEASE  ACTIVE    READ 99 fe:00:12 0 EOF", &fi);
	assert_int_equal(lock_entry_from_fdinfo(&fi.locks[0], 2, &f), 0);
	assert_false(f.write);
	fdinfo_fini(&fi);
	/* one lease per description: the same seen through another task's fd */
	f.write = true;
	assert_true(lock_entry_same(&e, &f));
	f.write = false;
	assert_false(lock_entry_same(&e, &f));
}

static void test_same(void **state)
{
	FileLockEntry a, b;

	(void)state;
	file_lock_entry__init(&a);
	a.kind = FILE_LOCK_KIND__LOCK_POSIX;
	a.write = true;
	a.owner_pid = 5;
	a.start = 0;
	a.len = 10;
	b = a;
	assert_true(lock_entry_same(&a, &b));
	b.owner_pid = 6; /* another owner's lock on the same range */
	assert_false(lock_entry_same(&a, &b));
	b = a;
	b.write = false;
	assert_false(lock_entry_same(&a, &b));
	b = a;
	b.len = 0;
	assert_false(lock_entry_same(&a, &b));
}

/* The lock lines of our own fd @fd, as entries; returns how many. */
static size_t own_locks(int fd, FileLockEntry *e, size_t max)
{
	struct fdinfo fi = { 0 };
	size_t i;

	assert_int_equal(proc_parse_fdinfo(getpid(), fd, &fi), 0);
	assert_true(fi.n_locks <= max);
	for (i = 0; i < fi.n_locks; i++)
		assert_int_equal(lock_entry_from_fdinfo(&fi.locks[i], getpid(), &e[i]), 0);
	fdinfo_fini(&fi);
	return i;
}

static void test_live(void **state)
{
	char path[] = "/tmp/test-locks.XXXXXX";
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 10, .l_len = 5 };
	_cleanup_close_ int fd = mkstemp(path), ofd = -1, fd2 = -1;
	FileLockEntry e[4];

	(void)state;
	assert_true(fd >= 0);
	ofd = open(path, O_RDWR);
	fd2 = open(path, O_RDWR);
	unlink(path);
	assert_true(ofd >= 0 && fd2 >= 0);
	assert_int_equal(flock(fd2, LOCK_SH), 0);
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	fl.l_type = F_RDLCK;
	fl.l_start = 100;
	fl.l_len = 0;
	assert_int_equal(fcntl(ofd, F_OFD_SETLK, &fl), 0);

	/* each description shows only the locks taken through it */
	assert_int_equal(own_locks(fd, e, 4), 1);
	assert_int_equal(e[0].kind, FILE_LOCK_KIND__LOCK_POSIX);
	assert_true(e[0].write);
	assert_int_equal(e[0].owner_pid, getpid());
	assert_int_equal(e[0].start, 10);
	assert_int_equal(e[0].len, 5);
	assert_int_equal(own_locks(ofd, e, 4), 1);
	assert_int_equal(e[0].kind, FILE_LOCK_KIND__LOCK_OFD);
	assert_false(e[0].write);
	assert_int_equal(e[0].start, 100);
	assert_int_equal(e[0].len, 0);
	assert_int_equal(own_locks(fd2, e, 4), 1);
	assert_int_equal(e[0].kind, FILE_LOCK_KIND__LOCK_FLOCK);
	assert_false(e[0].write);
}

/* Without --file-locks a held lock fails the dump; with it, it passes the check. */
static void test_check_option(void **state)
{
	struct cr_options o;
	struct dump_ctx ctx = { .opts = &o };
	struct fd_info f = { .pid = 42, .fd = 7, .link = "/x" };
	struct fdinfo fi = { 0 };

	(void)state;
	cr_options_init(&o);
	assert_int_equal(locks_check(&ctx, &f), 0); /* no lock */
	parse_one("1: FLOCK  ADVISORY  WRITE 1234 fe:00:12 0 EOF", &fi);
	f.locks = fi.locks;
	f.n_locks = fi.n_locks;
	assert_int_equal(locks_check(&ctx, &f), -EOPNOTSUPP);
	o.file_locks = true;
	assert_int_equal(locks_check(&ctx, &f), 0);
	fdinfo_fini(&fi);
	cr_options_fini(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines), cmocka_unit_test(test_refused),
		cmocka_unit_test(test_lease), cmocka_unit_test(test_same),
		cmocka_unit_test(test_live),  cmocka_unit_test(test_check_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
