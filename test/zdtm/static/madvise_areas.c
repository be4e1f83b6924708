// SPDX-License-Identifier: GPL-2.0
/*
 * madvise() state: pages dropped with MADV_DONTNEED inside a filled area, and
 * areas marked MADV_DONTFORK, MADV_WIPEONFORK, MADV_DONTDUMP, MADV_HUGEPAGE,
 * MADV_NOHUGEPAGE, MADV_RANDOM and MADV_SEQUENTIAL. After SIGTERM the dropped
 * pages must read zero and still not be resident, the rest keep its data,
 * every area keeps its VmFlags letter, and the fork flags still act: a child
 * does not get the DONTFORK area and gets the WIPEONFORK one zeroed.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PG 4096UL
#define APAGES 64
#define DROP_FIRST 10
#define DROP_N 10

struct adv {
	int advice;
	const char *flag; /* in VmFlags */
	unsigned char *p;
};

static struct adv advs[] = {
	{ MADV_DONTFORK, "dc" },   { MADV_WIPEONFORK, "wf" }, { MADV_DONTDUMP, "dd" },
	{ MADV_HUGEPAGE, "hg" },   { MADV_NOHUGEPAGE, "nh" }, { MADV_RANDOM, "rr" },
	{ MADV_SEQUENTIAL, "sr" },
};

#define NADV (sizeof(advs) / sizeof(advs[0]))
#define ADV_SIZE (4 * PG)

static int check_dropped(unsigned char *a)
{
	unsigned char vec[APAGES];

	if (mincore(a, APAGES * PG, vec)) {
		fail("mincore: %m");
		return 1;
	}
	for (int p = 0; p < APAGES; p++) {
		bool dropped = p >= DROP_FIRST && p < DROP_FIRST + DROP_N;

		if (dropped && (vec[p] & 1)) {
			fail("dropped page %d is resident", p);
			return 1;
		}
		if (!dropped && datachk(a + p * PG, PG, 1000 + p, NULL)) {
			fail("page %d lost its data", p);
			return 1;
		}
	}
	for (unsigned long i = DROP_FIRST * PG; i < (DROP_FIRST + DROP_N) * PG; i++)
		if (a[i]) {
			fail("dropped page %lu is not zero", i / PG);
			return 1;
		}
	return 0;
}

/* The child's view: 1 DONTFORK area mapped, 2 WIPEONFORK area not zero. */
static int fork_view(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (!test_faults(advs[0].p, false))
			_exit(1);
		for (unsigned long i = 0; i < ADV_SIZE; i++)
			if (advs[1].p[i])
				_exit(2);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return WEXITSTATUS(status);
}

static int check_advs(void)
{
	char flags[256];
	int r;

	for (size_t i = 0; i < NADV; i++) {
		if (test_vma_flags(advs[i].p, flags, sizeof(flags)) ||
		    !test_vma_has_flag(flags, advs[i].flag)) {
			fail("area %zu: VmFlags \"%s\" lack %s", i, flags, advs[i].flag);
			return 1;
		}
		if (datachk(advs[i].p, ADV_SIZE, 2000 + i, NULL)) {
			fail("area %zu (%s) lost its data", i, advs[i].flag);
			return 1;
		}
	}
	r = fork_view();
	if (r) {
		fail("fork: %s", r == 1	  ? "the child has the DONTFORK area"
				 : r == 2 ? "the WIPEONFORK area is not zero in the child"
					  : "the child failed");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char *a;

	test_init(argc, argv);
	a = mmap(NULL, APAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	for (int p = 0; p < APAGES; p++)
		datagen(a + p * PG, PG, 1000 + p);
	if (madvise(a + DROP_FIRST * PG, DROP_N * PG, MADV_DONTNEED)) {
		fail("MADV_DONTNEED: %m");
		return 1;
	}
	for (size_t i = 0; i < NADV; i++) {
		/* Separate mappings with a gap, so that no two areas merge. */
		advs[i].p = mmap(NULL, ADV_SIZE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (advs[i].p == MAP_FAILED || madvise(advs[i].p, ADV_SIZE, advs[i].advice)) {
			fail("area %zu (%s): %m", i, advs[i].flag);
			return 1;
		}
		datagen(advs[i].p, ADV_SIZE, 2000 + i);
	}
	/* Not check_dropped(): reading the dropped pages would map the zero page. */
	if (check_advs())
		return 1;
	test_daemon();
	test_waitsig();

	if (check_dropped(a) || check_advs())
		return 1;
	pass();
	return 0;
}
