// SPDX-License-Identifier: GPL-2.0
/*
 * A task that unmapped its [vdso], [vvar] and [vvar_vclock] (munmap of each)
 * and a child forked after that. After SIGTERM, in both: none of them is
 * mapped again (a restore that leaves the restoring kernel's areas in place
 * fails), the code the dump's injection borrowed (no vDSO to put it in) runs
 * as before, and the clock still reads through the real syscall.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vdso-util.h"
#include "zdtmtst.h"

static int unmap_all(const char *name)
{
	struct area a[4];
	int i, n = find_areas(name, a, 4);

	for (i = 0; i < n; i++)
		if (munmap((void *)a[i].start, a[i].end - a[i].start))
			return neg_errno();
	return n;
}

static int check(const char *who)
{
	struct area a[4];
	struct timespec t0, t1;

	if (find_areas("[vdso]", a, 4) || find_areas("[vvar", a, 4)) {
		fail("%s: a [vdso] or [vvar] is mapped again", who);
		return -EINVAL;
	}
	if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t0) ||
	    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t1) || t1.tv_sec < t0.tv_sec) {
		fail("%s: clock_gettime: %m", who);
		return neg_errno();
	}
	return 0;
}

int main(int argc, char **argv)
{
	int p[2], q[2], st;
	pid_t child;
	char c;

	test_init(argc, argv);
	if (unmap_all("[vdso]") <= 0 || unmap_all("[vvar") <= 0) {
		fail("no vDSO to unmap here, or munmap failed: %m");
		return 1;
	}
	if (check("before") || pipe(p) || pipe(q))
		return 1;
	child = fork();
	if (child < 0) {
		fail("fork: %m");
		return 1;
	}
	if (child == 0) {
		if (write(p[1], "r", 1) != 1 || read(q[0], &c, 1) != 1)
			_exit(1);
		_exit(check("child") ? 2 : 0);
	}
	if (read(p[0], &c, 1) != 1) {
		fail("the child did not start");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (check("parent")) {
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
		return 1;
	}
	if (write(q[1], "c", 1) != 1 || waitpid(child, &st, 0) != child) {
		fail("cannot tell the child to check: %m");
		return 1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fail("the child found a vDSO, or crashed (status %x)", st);
		return 1;
	}
	pass();
	return 0;
}
