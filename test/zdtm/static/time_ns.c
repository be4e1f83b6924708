// SPDX-License-Identifier: GPL-2.0
/*
 * The test in a time namespace of its own, with CLOCK_MONOTONIC and
 * CLOCK_BOOTTIME offsets: it comes back in a new time namespace with the
 * same offsets (a restore on the boot of the dump), and neither clock went
 * backwards as the test sees them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define MONO_OFF 123456
#define BOOT_OFF 654321

static ino_t ns_ino(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

int main(int argc, char **argv)
{
	struct timespec m0, b0, m1, b1;
	long long mono = -1, boot = -1;
	/* the runner's (pid 1 is the init of the container in the ns modes, in this one too) */
	ino_t outside = ns_ino("/proc/self/ns/time");

	/* before test_init(): its daemon is the first task born in the namespace */
	if (test_timens(MONO_OFF, BOOT_OFF))
		return 1;
	test_init(argc, argv);
	clock_gettime(CLOCK_MONOTONIC, &m0);
	clock_gettime(CLOCK_BOOTTIME, &b0);
	if (m0.tv_sec < MONO_OFF || b0.tv_sec < BOOT_OFF) {
		fail("the offsets do not apply: monotonic %lld boottime %lld", (long long)m0.tv_sec,
		     (long long)b0.tv_sec);
		return 1;
	}
	test_daemon();
	test_waitsig();

	clock_gettime(CLOCK_MONOTONIC, &m1);
	clock_gettime(CLOCK_BOOTTIME, &b1);
	if (test_timens_offsets(&mono, &boot) || mono != MONO_OFF || boot != BOOT_OFF) {
		fail("offsets monotonic %lld boottime %lld, expected %d %d", mono, boot, MONO_OFF,
		     BOOT_OFF);
		return 1;
	}
	if (ns_ino("/proc/self/ns/time") == outside) {
		fail("the test is back in the time namespace it was started in");
		return 1;
	}
	if (m1.tv_sec < m0.tv_sec || b1.tv_sec < b0.tv_sec) {
		fail("a clock went backwards: monotonic %lld -> %lld, boottime %lld -> %lld",
		     (long long)m0.tv_sec, (long long)m1.tv_sec, (long long)b0.tv_sec,
		     (long long)b1.tv_sec);
		return 1;
	}
	pass();
	return 0;
}
