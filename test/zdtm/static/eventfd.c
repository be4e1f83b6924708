// SPDX-License-Identifier: GPL-2.0
/*
 * eventfds: one with a counter above 32 bits, non-blocking, open twice
 * (dup: one description); one in semaphore mode holding 3. After SIGTERM the
 * counters, the flags, the sharing and the semaphore mode must be the same,
 * and both must still count.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "zdtmtst.h"

#define BIG_COUNT 0x123456789abull
#define SEM_COUNT 3

/* The eventfd-count line of @fd's fdinfo, or -1. */
static long long fdinfo_count(int fd)
{
	char path[64], buf[512], *p;
	unsigned long long v;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		return neg_errno();
	p = strstr(buf, "eventfd-count:");
	if (!p || sscanf(p, "eventfd-count: %llx", &v) != 1)
		return -EBADMSG;
	return (long long)v;
}

static int check_big(int a, int a2, int flags)
{
	uint64_t v = 0;

	if (fcntl(a, F_GETFL) != flags || fcntl(a2, F_GETFL) != flags) {
		fail("the big eventfd's flags changed: %x, expected %x", fcntl(a, F_GETFL), flags);
		return 1;
	}
	if (fdinfo_count(a) != (long long)BIG_COUNT) {
		fail("the big eventfd's fdinfo says %llx, expected %llx", fdinfo_count(a),
		     BIG_COUNT);
		return 1;
	}
	/* Read through the dup: the same description, so the counter drops to 0 for both. */
	if (read(a2, &v, sizeof(v)) != sizeof(v) || v != BIG_COUNT) {
		fail("the big eventfd read %llx, expected %llx", (unsigned long long)v, BIG_COUNT);
		return 1;
	}
	if (read(a, &v, sizeof(v)) != -1 || errno != EAGAIN) {
		fail("the big eventfd is not empty after a read through its dup (or blocks)");
		return 1;
	}
	v = 5;
	if (write(a, &v, sizeof(v)) != sizeof(v) || read(a2, &v, sizeof(v)) != sizeof(v) ||
	    v != 5) {
		fail("the big eventfd no longer counts: %m");
		return 1;
	}
	return 0;
}

static int check_sem(int s)
{
	uint64_t v;
	int i;

	for (i = 0; i < SEM_COUNT; i++) {
		v = 0;
		if (read(s, &v, sizeof(v)) != sizeof(v) || v != 1) {
			fail("semaphore read %d gave %llu, expected 1 (semaphore mode lost?)", i,
			     (unsigned long long)v);
			return 1;
		}
	}
	if (read(s, &v, sizeof(v)) != -1 || errno != EAGAIN) {
		fail("the semaphore eventfd is not empty after %d reads", SEM_COUNT);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t v = BIG_COUNT;
	int a, a2, s, flags;

	test_init(argc, argv);
	a = eventfd(0, EFD_NONBLOCK);
	s = eventfd(SEM_COUNT, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
	if (a < 0 || s < 0 || write(a, &v, sizeof(v)) != sizeof(v) || (a2 = dup(a)) < 0) {
		fail("cannot set up the eventfds: %m");
		return 1;
	}
	flags = fcntl(a, F_GETFL);
	test_daemon();
	test_waitsig();

	if (!(fcntl(s, F_GETFD) & FD_CLOEXEC) || (fcntl(a, F_GETFD) & FD_CLOEXEC)) {
		fail("close-on-exec bits changed");
		return 1;
	}
	if (check_big(a, a2, flags) || check_sem(s))
		return 1;
	pass();
	return 0;
}
