// SPDX-License-Identifier: GPL-2.0
/*
 * Children forked while the pages are still lazy (mode lazy: the daemon
 * waits 100 ms before its background copy), as a shell forks them: one
 * exits at once, one sleeps past the daemon's holdoff for new children
 * (50 ms, lazy-pages.c) without touching memory and then reads it all. The
 * daemon gives a new child no background chunk during its holdoff, drops the
 * one that exited (ESRCH) and must then fill the sleeper, which must see
 * every page as it was, as must the parent after the children are gone.
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define SIZE (32UL << 20)
#define SEED 91

static int wait_ok(pid_t pid)
{
	int status;

	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status)
									       : -1;
}

int main(int argc, char **argv)
{
	unsigned char *a;
	pid_t quick, sleeper;
	size_t bad;
	int r;

	test_init(argc, argv);
	a = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	datagen(a, SIZE, SEED);
	test_daemon();
	test_waitsig();

	/* nothing of the area read yet: its pages are lazy */
	quick = fork();
	if (quick == 0)
		_exit(0);
	sleeper = fork();
	if (sleeper == 0) {
		test_sleep_ms(200);
		r = datachk(a, SIZE, SEED, &bad) ? 1 : 0;
		a[SIZE - 1] ^= 0xff; /* its own copy: not the parent's */
		_exit(r);
	}
	if (wait_ok(quick)) {
		fail("the child that exits at once did not exit 0");
		return 1;
	}
	r = wait_ok(sleeper);
	if (r) {
		fail("the sleeping child saw wrong memory (status %d)", r);
		return 1;
	}
	if (datachk(a, SIZE, SEED, &bad)) {
		fail("the parent's memory is wrong at offset %zu", bad);
		return 1;
	}
	pass();
	return 0;
}
