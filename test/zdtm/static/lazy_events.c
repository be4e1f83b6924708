// SPDX-License-Identifier: GPL-2.0
/*
 * What a lazily restored task does to memory whose pages have not come in
 * yet (mode lazy: the daemon waits 100 ms before its background copy, so
 * this runs on missing pages): after SIGTERM, before reading anything, it
 * moves a part of its area with mremap(), drops another with
 * MADV_DONTNEED, unmaps a third, and forks a child that reads and writes
 * the area. Every page must then hold its data (at its new address for the
 * moved part), the dropped part zeros, the unmapped part must fault, and
 * the child must have seen the same. A daemon that serves pages at their
 * old addresses after the mremap, fills dropped pages from the images, or
 * ignores the child's uffd fails it.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define MB (1UL << 20)
#define SIZE (32 * MB)
#define SEED 77
/* offsets in the area */
#define MOVE_AT (4 * MB)
#define MOVE_LEN (4 * MB)
#define DROP_AT (12 * MB)
#define DROP_LEN (2 * MB)
#define UNMAP_AT (20 * MB)
#define UNMAP_LEN (1 * MB)

static int check_kept(unsigned char *a, const unsigned char *moved)
{
	size_t bad;

	if (datachk_at(a, MOVE_AT, SEED, 0, &bad) ||
	    datachk_at(a + MOVE_AT + MOVE_LEN, DROP_AT - MOVE_AT - MOVE_LEN, SEED,
		       MOVE_AT + MOVE_LEN, &bad) ||
	    datachk_at(a + DROP_AT + DROP_LEN, UNMAP_AT - DROP_AT - DROP_LEN, SEED,
		       DROP_AT + DROP_LEN, &bad) ||
	    datachk_at(a + UNMAP_AT + UNMAP_LEN, SIZE - UNMAP_AT - UNMAP_LEN, SEED,
		       UNMAP_AT + UNMAP_LEN, &bad))
		return 1;
	if (datachk_at(moved, MOVE_LEN, SEED, MOVE_AT, &bad))
		return 2;
	for (size_t i = 0; i < DROP_LEN; i++)
		if (a[DROP_AT + i])
			return 3;
	if (!test_faults(a + UNMAP_AT, false))
		return 4;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char *a, *dst, *moved;
	int status, r;
	pid_t pid;

	test_init(argc, argv);
	a = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* a reserved place to move to, away from the area */
	dst = mmap(NULL, MOVE_LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || dst == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	datagen(a, SIZE, SEED);
	test_daemon();
	test_waitsig();

	/* nothing of the area read yet: its pages are lazy */
	moved = mremap(a + MOVE_AT, MOVE_LEN, MOVE_LEN, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (moved != dst) {
		fail("mremap: %m");
		return 1;
	}
	if (madvise(a + DROP_AT, DROP_LEN, MADV_DONTNEED) || munmap(a + UNMAP_AT, UNMAP_LEN)) {
		fail("madvise/munmap: %m");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		r = check_kept(a, moved);
		/* a write of the child's own must not reach the parent */
		a[0] ^= 0xff;
		_exit(r);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		fail("the child did not exit");
		return 1;
	}
	if (WEXITSTATUS(status)) {
		fail("the child saw wrong memory (check %d)", WEXITSTATUS(status));
		return 1;
	}
	r = check_kept(a, moved);
	if (r) {
		fail("wrong memory after mremap/madvise/munmap/fork (check %d)", r);
		return 1;
	}
	pass();
	return 0;
}
