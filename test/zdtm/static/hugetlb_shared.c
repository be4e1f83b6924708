// SPDX-License-Identifier: GPL-2.0
/*
 * Shared anonymous hugetlb memory (MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB,
 * 2 MiB pages), shared with a forked child: three huge pages, the parent wrote
 * the first, the child the last, nobody touched the middle one. After SIGTERM:
 * both see both patterns, the area is still hugetlb with 2 MiB pages and named
 * "/anon_hugepage (deleted)", its object holds two huge pages (st_blocks of
 * its map_files link: the middle one still not there), and it is still one
 * object: what the child writes now, the parent reads.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hugetlb-util.h"
#include "zdtmtst.h"

#define NR 3

int main(int argc, char **argv)
{
	int p[2], q[2], st, res = 1;
	long raised;
	char *a = MAP_FAILED, c, link[64];
	struct stat sb;
	pid_t child;
	size_t i;

	test_init(argc, argv);
	/* this test twice over (a leave-running dump keeps the original meanwhile) */
	raised = huge_pool(2 * NR + 2);
	if (raised == HUGE_POOL_FAIL) {
		fail("cannot let the kernel make huge pages on demand: %m");
		return 1;
	}
	a = mmap(NULL, NR * HP, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB | (21 << MAP_HUGE_SHIFT), -1, 0);
	if (a == MAP_FAILED || pipe(p) || pipe(q))
		goto err;
	for (i = 0; i < HP; i += 4096)
		a[i] = (char)('a' + (i / 4096) % 26);
	child = fork();
	if (child < 0)
		goto err;
	if (child == 0) {
		memset(a + 2 * HP, 'C', HP);
		if (write(p[1], "r", 1) != 1 || read(q[0], &c, 1) != 1)
			_exit(1);
		if (huge_check(a, 'C', "/anon_hugepage (deleted)", "child"))
			_exit(2);
		a[2 * HP + 5] = 'N'; /* the parent must see it */
		_exit(write(p[1], "w", 1) == 1 ? 0 : 3);
	}
	if (read(p[0], &c, 1) != 1)
		goto err;
	test_daemon();
	test_waitsig();

	if (huge_check(a, 'C', "/anon_hugepage (deleted)", "parent"))
		goto out_child;
	snprintf(link, sizeof(link), "/proc/self/map_files/%lx-%lx", (unsigned long)a,
		 (unsigned long)a + NR * HP);
	if (stat(link, &sb) || (unsigned long)sb.st_blocks * 512 != 2 * HP) {
		fail("the object holds %lld bytes, not the two huge pages written",
		     (long long)sb.st_blocks * 512);
		goto out_child;
	}
	if (write(q[1], "c", 1) != 1 || read(p[0], &c, 1) != 1 || waitpid(child, &st, 0) != child) {
		fail("cannot tell the child to check: %m");
		goto out;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fail("the child found its memory changed (status %x)", st);
		goto out;
	}
	if (a[2 * HP + 5] != 'N') {
		fail("the child's write is not seen by the parent: no longer one object");
		goto out;
	}
	pass();
	res = 0;
	goto out;
out_child:
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	goto out;
err:
	fail("setup: %m");
out:
	if (a != MAP_FAILED)
		munmap(a, NR * HP);
	if (raised >= 0)
		huge_set_overcommit(raised);
	return res;
}
