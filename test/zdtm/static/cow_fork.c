// SPDX-License-Identifier: GPL-2.0
/*
 * Copy-on-write sharing across fork (Documentation/memory.md, section 7).
 * The root writes a region of private anonymous memory and forks two
 * children; the first forks a grandchild. After the forks some pages are
 * written again (by the root, a child, the grandchild, and by the child after
 * its own fork), one is dropped with MADV_DONTNEED in a child, and the rest
 * stay shared: the dump saves those once (PE_PARENT_SHARED). After SIGTERM
 * every process checks every page of its region (and its heap copy) against
 * what it should hold, and the root collects its children's verdicts.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NPAGES 64
#define PG 4096

enum node {
	ROOT,
	CHILD_A,
	CHILD_B,
	GRAND
};

static unsigned char *region;
static unsigned char *heap; /* malloc'ed before the forks: shared too */

/* The seed page @i of @n should hold; 0: zeros (dropped). */
static uint64_t expected(enum node n, int i)
{
	if (n == ROOT && i == 0)
		return 900;
	if ((n == CHILD_A || n == GRAND) && i == 2) /* dropped before the grandchild was forked */
		return 0;
	if (n == CHILD_A && i == 3)
		return 1100;
	if ((n == CHILD_A || n == GRAND) && i % 4 == 1)
		return 1000 + i;
	if (n == GRAND && i % 8 == 6)
		return 1200 + i;
	return 100 + i;
}

static void put(int i, uint64_t seed)
{
	datagen(region + (size_t)i * PG, PG, seed);
}

static int check(enum node n)
{
	static const unsigned char zero[PG];
	size_t off;

	for (int i = 0; i < NPAGES; i++) {
		uint64_t s = expected(n, i);
		const unsigned char *p = region + (size_t)i * PG;

		if (s ? datachk(p, PG, s, &off) : memcmp(p, zero, PG)) {
			test_msg("node %d: page %d differs (expected seed %lu)\n", n, i,
				 (unsigned long)s);
			return 1;
		}
	}
	if (datachk(heap, 3 * PG, 77, &off)) {
		test_msg("node %d: heap differs at %zu\n", n, off);
		return 1;
	}
	return 0;
}

#ifdef COW_CHECK_SHARED
/* The PFN of page @i of the region in @pid (0: none, or not visible). */
static uint64_t pfn(pid_t pid, int i)
{
	return test_page_pfn(pid, region + (size_t)i * PG);
}

/* Page @i of @n is the same physical page as its parent's: they shared it at the dump. */
static bool shared_with_parent(enum node n, int i)
{
	switch (n) {
	case CHILD_B:
		return i != 0;
	case CHILD_A:
		return i > 3 && i % 4 != 1;
	case GRAND:
		return i != 3 && i % 8 != 6;
	default:
		return false;
	}
}

/* After the restore too: the pages the tree shared are shared again. */
static int check_shared(enum node n)
{
	pid_t pp = getppid();

	for (int i = 0; i < NPAGES; i++) {
		uint64_t mine = pfn(getpid(), i), theirs = pfn(pp, i);
		bool same = mine && mine == theirs;

		/* dropped: reads map the zero page (or a fresh one), either way not a fork's */
		if ((n == CHILD_A || n == GRAND) && i == 2)
			continue;
		if (!mine) {
			test_msg("node %d: page %d has no PFN in pagemap\n", n, i);
			return 1;
		}
		if (same != shared_with_parent(n, i)) {
			test_msg("node %d: page %d is %sthe parent's physical page\n", n, i,
				 same ? "" : "not ");
			return 1;
		}
	}
	return 0;
}
#else
static int check_shared(enum node n)
{
	return n < 0;
}
#endif

static int wait_child(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		test_msg("child %d ended with status 0x%x\n", pid, status);
		return 1;
	}
	return 0;
}

static void ready(int fd)
{
	if (write(fd, "r", 1) != 1)
		_exit(2);
}

static void grandchild(int rfd)
{
	for (int i = 6; i < NPAGES; i += 8)
		put(i, 1200 + i);
	ready(rfd);
	test_waitsig();
	_exit(check(GRAND) | check_shared(GRAND));
}

static void child_a(int rfd)
{
	pid_t g;
	int bad;

	for (int i = 1; i < NPAGES; i += 4)
		put(i, 1000 + i);
	madvise(region + 2 * PG, PG, MADV_DONTNEED);
	g = fork();
	if (g < 0)
		_exit(2);
	if (g == 0)
		grandchild(rfd);
	put(3, 1100); /* after the fork: the grandchild keeps the root's page */
	ready(rfd);
	test_waitsig();
	bad = check(CHILD_A) | check_shared(CHILD_A);
	_exit(bad | wait_child(g));
}

int main(int argc, char **argv)
{
	pid_t a, b;
	int rp[2], got = 0, bad;
	char c;

	test_init(argc, argv);
	region = mmap(NULL, NPAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	heap = malloc(3 * PG);
	if (region == MAP_FAILED || !heap || pipe(rp)) {
		fail("setup: %m");
		return 1;
	}
	for (int i = 0; i < NPAGES; i++)
		put(i, 100 + i);
	datagen(heap, 3 * PG, 77);
	a = fork();
	if (a == 0)
		child_a(rp[1]);
	b = fork();
	if (b == 0) {
		ready(rp[1]);
		test_waitsig();
		_exit(check(CHILD_B) | check_shared(CHILD_B));
	}
	if (a < 0 || b < 0) {
		fail("fork: %m");
		return 1;
	}
	put(0, 900); /* after the forks: the children keep the old page */
	close(rp[1]);
	while (got < 3 && read(rp[0], &c, 1) == 1)
		got++;
	if (got != 3) {
		fail("only %d of 3 descendants became ready", got);
		return 1;
	}
	test_daemon();
	test_waitsig();

	bad = check(ROOT) | wait_child(a) | wait_child(b);
	if (bad) {
		fail("the tree lost memory (see the messages above)");
		return 1;
	}
	pass();
	return 0;
}
