// SPDX-License-Identifier: GPL-2.0
/*
 * A root that wrote 40 MiB before forking six children: past 32 MiB kept
 * before its forks, the restore spreads them (Documentation/restore.md,
 * "Siblings forked side by side": a child forks some of its siblings with
 * CLONE_PARENT). Child I writes its own page I after its fork, child 2 leads
 * its own process group. After SIGTERM each child checks that it is still the
 * root's child, in the group it was in, that every page holds what it should
 * and that the pages nobody wrote again are its parent's physical pages
 * again (the same PFN in /proc/PID/pagemap), and the root collects their
 * verdicts.
 */
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

#define NCHILD 6
#define PG 4096
#define NPAGES (40 * 256) /* 40 MiB */
#define SAMPLE 97 /* the PFNs of every 97th page are compared */

static unsigned char *region;

/* What page @i holds in child @c (0: the root). */
static uint64_t seed_of(int c, int i)
{
	return c && i == c ? 5000 + (uint64_t)c : 100 + (uint64_t)i;
}

/* The PFN of page @i of the region in @pid (0: not present, or not shown). */
static uint64_t pfn(pid_t pid, int i)
{
	return test_page_pfn(pid, region + (size_t)i * PG);
}

static int check(int c)
{
	size_t off;

	for (int i = 0; i < NPAGES; i++)
		if (datachk(region + (size_t)i * PG, PG, seed_of(c, i), &off)) {
			test_msg("process %d: page %d differs at %zu\n", c, i, off);
			return 1;
		}
	return 0;
}

/* The pages child @c did not write are its parent's own again. */
static int check_shared(int c, pid_t parent)
{
	for (int i = 0; i < NPAGES; i += SAMPLE) {
		uint64_t mine = pfn(getpid(), i), theirs = pfn(parent, i);

		if (i == c)
			continue;
		if (!mine || mine != theirs) {
			test_msg("child %d: page %d is not its parent's physical page (%llx, "
				 "%llx)\n",
				 c, i, (unsigned long long)mine, (unsigned long long)theirs);
			return 1;
		}
	}
	return 0;
}

static void child(int c, pid_t root, int rfd)
{
	pid_t pgid;

	datagen(region + (size_t)c * PG, PG, seed_of(c, c));
	if (c == 2 && setpgid(0, 0))
		_exit(2);
	pgid = getpgid(0);
	if (write(rfd, "r", 1) != 1)
		_exit(2);
	test_waitsig();
	if (getppid() != root || getpgid(0) != pgid) {
		test_msg("child %d: parent %d (not %d) or group %d (not %d)\n", c, getppid(), root,
			 getpgid(0), pgid);
		_exit(1);
	}
	_exit(check(c) | check_shared(c, root));
}

int main(int argc, char **argv)
{
	pid_t kids[NCHILD], root;
	int rp[2], got = 0, bad = 0, status;
	char ch;

	test_init(argc, argv);
	region = mmap(NULL, (size_t)NPAGES * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED || pipe(rp)) {
		fail("setup: %m");
		return 1;
	}
	for (int i = 0; i < NPAGES; i++)
		datagen(region + (size_t)i * PG, PG, seed_of(0, i));
	root = getpid();
	for (int c = 1; c <= NCHILD; c++) {
		kids[c - 1] = fork();
		if (kids[c - 1] < 0) {
			fail("fork: %m");
			return 1;
		}
		if (kids[c - 1] == 0)
			child(c, root, rp[1]);
	}
	close(rp[1]);
	while (got < NCHILD && read(rp[0], &ch, 1) == 1)
		got++;
	if (got != NCHILD) {
		fail("only %d of %d children became ready", got, NCHILD);
		return 1;
	}
	test_daemon();
	test_waitsig();

	bad = check(0);
	for (int c = 0; c < NCHILD; c++) {
		kill(kids[c], SIGTERM);
		if (waitpid(kids[c], &status, 0) != kids[c] || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			test_msg("child %d ended with status 0x%x\n", c + 1, status);
			bad = 1;
		}
	}
	if (bad) {
		fail("the tree lost its memory, its sharing or its shape (see above)");
		return 1;
	}
	pass();
	return 0;
}
