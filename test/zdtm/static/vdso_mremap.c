// SPDX-License-Identifier: GPL-2.0
/*
 * A task that moved its vDSO with mremap: [vvar], [vvar_vclock] and [vdso]
 * moved together (the vDSO's code reads the data pages at a fixed distance)
 * into an area of its own. After SIGTERM the three are at the moved addresses
 * and the moved vDSO's clock_gettime, found through its own symbol table,
 * reads a time between two real syscalls: a restore that puts the vDSO back
 * where the kernel first mapped it makes that call fault.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vdso-util.h"
#include "zdtmtst.h"

typedef int (*gettime_t)(clockid_t, struct timespec *);

static int64_t ns(const struct timespec *t)
{
	return t->tv_sec * 1000000000LL + t->tv_nsec;
}

static int check(unsigned long vdso, const char *when)
{
	gettime_t fn = (gettime_t)vdso_sym(vdso, "__vdso_clock_gettime");
	struct timespec a, b, c;

	if (!fn) {
		fail("%s: no __vdso_clock_gettime in the vDSO at %lx", when, vdso);
		return -EINVAL;
	}
	if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a) || fn(CLOCK_MONOTONIC, &b) ||
	    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &c)) {
		fail("%s: clock_gettime: %m", when);
		return neg_errno();
	}
	if (ns(&b) < ns(&a) || ns(&b) > ns(&c)) {
		fail("%s: the moved vDSO reads %lld, outside %lld..%lld", when, (long long)ns(&b),
		     (long long)ns(&a), (long long)ns(&c));
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct area vv[4], vd[2], now[4];
	unsigned long lo, hi, delta;
	int nvv, i, n;
	char *dst;

	test_init(argc, argv);
	nvv = find_areas("[vvar", vv, 4);
	if (find_areas("[vdso]", vd, 2) != 1 || nvv < 1) {
		fail("no [vdso] and [vvar] here");
		return 1;
	}
	lo = vd[0].start;
	hi = vd[0].end;
	for (i = 0; i < nvv; i++) {
		lo = vv[i].start < lo ? vv[i].start : lo;
		hi = vv[i].end > hi ? vv[i].end : hi;
	}
	/* a free place of the same size, 16 pages away from anything of ours */
	dst = mmap(NULL, hi - lo + 32 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dst == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	dst += 16 * 4096;
	delta = (unsigned long)dst - lo;
	for (i = 0; i < nvv; i++)
		if (mremap((void *)vv[i].start, vv[i].end - vv[i].start, vv[i].end - vv[i].start,
			   MREMAP_MAYMOVE | MREMAP_FIXED, vv[i].start + delta) == MAP_FAILED) {
			fail("mremap of [vvar] at %lx: %m", vv[i].start);
			return 1;
		}
	if (mremap((void *)vd[0].start, vd[0].end - vd[0].start, vd[0].end - vd[0].start,
		   MREMAP_MAYMOVE | MREMAP_FIXED, vd[0].start + delta) == MAP_FAILED) {
		fail("mremap of [vdso]: %m");
		return 1;
	}
	if (check(vd[0].start + delta, "before"))
		return 1;

	test_daemon();
	test_waitsig();

	n = find_areas("[vdso]", now, 4);
	if (n != 1 || now[0].start != vd[0].start + delta) {
		fail("[vdso] is at %lx, not at %lx where it was moved", n ? now[0].start : 0,
		     vd[0].start + delta);
		return 1;
	}
	n = find_areas("[vvar", now, 4);
	for (i = 0; i < nvv; i++)
		if (n != nvv || now[i].start != vv[i].start + delta) {
			fail("[vvar] area %d is at %lx, not at %lx", i, i < n ? now[i].start : 0,
			     vv[i].start + delta);
			return 1;
		}
	if (check(vd[0].start + delta, "after"))
		return 1;
	pass();
	return 0;
}
