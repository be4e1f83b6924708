// SPDX-License-Identifier: GPL-2.0
/*
 * The main thread's stack, grown by 2 MiB of recursion (each frame with its
 * own data), waits for SIGTERM at the deepest point. After SIGTERM each frame
 * checks its data on the way up, then the stack must still grow on demand:
 * a 4 MiB recursion, deeper than before (the [stack] area must have kept its
 * grows-down flag, "gd" in VmFlags).
 */
#include <string.h>
#include <sys/resource.h>

#include "zdtmtst.h"

#define FRAME 4096
#define DEPTH_BEFORE 512 /* 2 MiB */
#define DEPTH_AFTER 1024 /* 4 MiB */

static int bad_frames;

static __attribute__((noinline)) void recurse(int depth, int max)
{
	unsigned char frame[FRAME];

	datagen(frame, sizeof(frame), 20000 + depth);
	if (depth + 1 < max)
		recurse(depth + 1, max);
	if (datachk(frame, sizeof(frame), 20000 + depth, NULL))
		bad_frames++;
	__asm__ volatile("" ::"r"(frame) : "memory");
}

static __attribute__((noinline)) void ready_then_wait(int depth, int max)
{
	unsigned char frame[FRAME];

	datagen(frame, sizeof(frame), 20000 + depth);
	if (depth + 1 < max) {
		ready_then_wait(depth + 1, max);
	} else {
		char flags[256];

		if (test_vma_flags(frame, flags, sizeof(flags)) || !test_vma_has_flag(flags, "gd"))
			test_msg("stack VmFlags \"%s\" lack gd before the dump\n", flags);
		test_daemon();
		test_waitsig();
		if (test_vma_flags(frame, flags, sizeof(flags)) ||
		    !test_vma_has_flag(flags, "gd")) {
			test_msg("stack VmFlags \"%s\" lack gd after SIGTERM\n", flags);
			bad_frames += 1000000;
		}
	}
	if (datachk(frame, sizeof(frame), 20000 + depth, NULL))
		bad_frames++;
	__asm__ volatile("" ::"r"(frame) : "memory");
}

int main(int argc, char **argv)
{
	struct rlimit rl;

	test_init(argc, argv);
	if (getrlimit(RLIMIT_STACK, &rl) ||
	    (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (DEPTH_AFTER + 256) * FRAME)) {
		fail("RLIMIT_STACK %lu is too small for the test", (unsigned long)rl.rlim_cur);
		return 1;
	}
	ready_then_wait(0, DEPTH_BEFORE);
	if (bad_frames) {
		fail("%d stack frames lost their data (1000000 and more: the grows-down flag)",
		     bad_frames);
		return 1;
	}
	recurse(0, DEPTH_AFTER);
	if (bad_frames) {
		fail("the stack did not grow right after the restore (%d bad frames)", bad_frames);
		return 1;
	}
	pass();
	return 0;
}
