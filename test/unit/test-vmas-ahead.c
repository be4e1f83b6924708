// SPDX-License-Identifier: GPL-2.0
/*
 * A tree's smaps read before its freeze (mem/vmas-ahead.c): the comparison
 * of the maps read in the freeze with the smaps read ahead (pure), and on a
 * live child: its list taken while its VMAs are unchanged, refused once it
 * mapped something since the read, refused for a pid not read. The live
 * part needs root and a BPF task_vma iterator (skipped without).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc-parse.h"
#include "vmas-ahead.h"

static struct vma_entry ve(unsigned long start, unsigned long end, const char *path,
			   const char *anon)
{
	return (struct vma_entry){ .start = start,
				   .end = end,
				   .prot = PROT_READ | PROT_WRITE,
				   .kind = path ? VMA_FILE : VMA_ANON,
				   .path = (char *)path,
				   .anon_name = (char *)anon };
}

static void test_same(void **state)
{
	struct vma_entry a[2] = { ve(0x1000, 0x3000, "/lib/x.so", NULL),
				  ve(0x5000, 0x9000, NULL, "buf") };
	struct vma_entry b[2] = { ve(0x1000, 0x3000, "/lib/x.so", NULL),
				  ve(0x5000, 0x9000, NULL, "buf") };
	struct vma_list la = { .nr = 2, .vmas = a }, lb = { .nr = 2, .vmas = b };

	(void)state;
	b[0].rss = 40; /* the counters of smaps are not compared */
	assert_true(vmas_ahead_same(&la, &lb));
	b[1].anon_name = "other"; /* renamed since the read (prctl PR_SET_VMA) */
	assert_false(vmas_ahead_same(&la, &lb));
	b[1].anon_name = "buf";
	b[0].path = "/lib/y.so"; /* another file at the same place */
	assert_false(vmas_ahead_same(&la, &lb));
	b[0].path = "/lib/x.so";
	b[1].end = 0xa000; /* grown */
	assert_false(vmas_ahead_same(&la, &lb));
	b[1].end = 0x9000;
	b[1].prot = PROT_READ;
	assert_false(vmas_ahead_same(&la, &lb));
	b[1].prot = PROT_READ | PROT_WRITE;
	lb.nr = 1; /* unmapped */
	assert_false(vmas_ahead_same(&la, &lb));
}

/*
 * A child that maps a page for each byte it reads from @in, then answers on
 * @out: its pid, or -errno.
 */
static pid_t child_start(int *to, int *from)
{
	int a[2], b[2];
	pid_t pid;

	if (pipe(a) || pipe(b))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		char c;

		close(a[1]);
		close(b[0]);
		while (read(a[0], &c, 1) == 1) {
			if (mmap(NULL, 4096 * 3, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
			    MAP_FAILED)
				_exit(1);
			if (write(b[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	*to = a[1];
	*from = b[0];
	return pid;
}

static void test_live(void **state)
{
	struct vma_list l = { 0 };
	struct vmas_ahead *a;
	int to = -1, from = -1, st;
	pid_t pid;
	char c = 'm';

	(void)state;
	if (geteuid())
		skip();
	pid = child_start(&to, &from);
	assert_true(pid > 0);
	a = vmas_ahead_read(&pid, 1);
	if (!a) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		skip(); /* no BPF task_vma iterator here */
	}
	assert_int_equal(vmas_ahead_take(a, pid, &l), 0);
	assert_true(l.nr > 0);
	vma_list_fini(&l);
	assert_int_equal(vmas_ahead_take(a, pid, &l), -ENOENT); /* taken once */
	assert_int_equal(vmas_ahead_take(a, pid + 100000, &l), -ENOENT);
	vmas_ahead_free(a);

	a = vmas_ahead_read(&pid, 1);
	assert_non_null(a);
	assert_int_equal(write(to, &c, 1), 1);
	assert_int_equal(read(from, &c, 1), 1);
	assert_int_equal(vmas_ahead_take(a, pid, &l), -ESTALE);
	vmas_ahead_free(a);

	close(to);
	close(from);
	assert_int_equal(waitpid(pid, &st, 0), pid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
