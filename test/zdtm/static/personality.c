// SPDX-License-Identifier: GPL-2.0
/*
 * The execution domain flags: personality(PER_LINUX | ADDR_NO_RANDOMIZE |
 * UNAME26 | ADDR_COMPAT_LAYOUT). After SIGTERM personality() must return the
 * same value, and UNAME26 must still act: uname() reports a 2.6.x release.
 */
#include <string.h>
#include <sys/personality.h>
#include <sys/utsname.h>

#include "zdtmtst.h"

#define PERS (PER_LINUX | ADDR_NO_RANDOMIZE | UNAME26 | ADDR_COMPAT_LAYOUT)

int main(int argc, char **argv)
{
	struct utsname u;
	int p;

	test_init(argc, argv);
	if (personality(PERS) < 0 || personality(0xffffffff) != PERS || uname(&u) ||
	    strncmp(u.release, "2.6.", 4)) {
		fail("cannot set the personality %#x", PERS);
		return 1;
	}
	test_daemon();
	test_waitsig();

	p = personality(0xffffffff);
	if (p != PERS) {
		fail("personality %#x, expected %#x", p, PERS);
		return 1;
	}
	if (uname(&u) || strncmp(u.release, "2.6.", 4)) {
		fail("UNAME26 set but uname() reports release %s", u.release);
		return 1;
	}
	pass();
	return 0;
}
