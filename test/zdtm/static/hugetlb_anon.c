// SPDX-License-Identifier: GPL-2.0
/*
 * Private anonymous hugetlb memory (MAP_HUGETLB, 2 MiB pages): three huge
 * pages, the first and the last written with a pattern, the middle never
 * touched; a forked child that wrote over the last one (its own copy) and
 * reads the first as its parent left it. After SIGTERM, in both: the data,
 * the middle page still not there, and the area still hugetlb with 2 MiB
 * pages (smaps KernelPageSize, VmFlags ht). Without enough free huge pages
 * the test lets the kernel make them on demand (vm.nr_overcommit_hugepages:
 * surplus pages, which hold no memory once freed) and puts the setting back
 * at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hugetlb-util.h"
#include "zdtmtst.h"

#define NR 3

int main(int argc, char **argv)
{
	long raised;
	int p[2], q[2], st, res = 1;
	static unsigned char mc[HP / 4096];
	char *a = MAP_FAILED, c;
	pid_t child;
	size_t i;

	test_init(argc, argv);
	/* enough for this test twice over (a leave-running dump keeps the original meanwhile) */
	raised = huge_pool(2 * NR + 2);
	if (raised == HUGE_POOL_FAIL) {
		fail("cannot let the kernel make huge pages on demand: %m");
		return 1;
	}
	a = mmap(NULL, NR * HP, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (21 << MAP_HUGE_SHIFT), -1, 0);
	if (a == MAP_FAILED || pipe(p) || pipe(q))
		goto err;
	for (i = 0; i < HP; i += 4096)
		a[i] = (char)('a' + (i / 4096) % 26);
	memset(a + 2 * HP, 'P', HP);
	child = fork();
	if (child < 0)
		goto err;
	if (child == 0) {
		memset(a + 2 * HP, 'C', HP);
		if (write(p[1], "r", 1) != 1 || read(q[0], &c, 1) != 1)
			_exit(1);
		_exit(huge_check(a, 'C', NULL, "child") ? 2 : 0);
	}
	if (read(p[0], &c, 1) != 1)
		goto err;
	test_daemon();
	test_waitsig();

	if (huge_check(a, 'P', NULL, "parent"))
		goto out_child;
	/* the middle huge page: never touched, still not there */
	if (mincore(a + HP, HP, mc) || (mc[0] & 1)) {
		fail("the untouched huge page is there after the restore");
		goto out_child;
	}
	if (write(q[1], "c", 1) != 1 || waitpid(child, &st, 0) != child) {
		fail("cannot tell the child to check: %m");
		goto out;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fail("the child found its memory changed (status %x)", st);
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
