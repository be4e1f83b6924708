// SPDX-License-Identifier: GPL-2.0
/*
 * The vDSO: the auxiliary vector's AT_SYSINFO_EHDR must still point at the
 * [vdso] mapping (the restorer moves it back to where it was), with [vvar]
 * right before it, and the vDSO clocks must keep working: CLOCK_MONOTONIC
 * never goes back, CLOCK_REALTIME agrees with a raw syscall within 100 ms,
 * and gettimeofday() agrees too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

/* The start of the mapping named @name in /proc/self/maps, 0 if none. */
static unsigned long named_start(const char *name)
{
	char maps[65536], *l;
	unsigned long s = 0;

	if (test_read_file("/proc/self/maps", maps, sizeof(maps)) < 0)
		return 0;
	for (l = maps; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t ll = strcspn(l, "\n"), nl = strlen(name);

		if (ll > nl && !strncmp(l + ll - nl, name, nl) && sscanf(l, "%lx-", &s) == 1)
			return s;
	}
	return 0;
}

static long ns_of(const struct timespec *t)
{
	return t->tv_sec * 1000000000L + t->tv_nsec;
}

static int check_clocks(struct timespec *last_mono)
{
	struct timespec mono, vreal, sreal;
	struct timeval tv;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &vreal);
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &sreal);
	gettimeofday(&tv, NULL);
	if (ns_of(&mono) < ns_of(last_mono)) {
		fail("CLOCK_MONOTONIC went back by %ld ns", ns_of(last_mono) - ns_of(&mono));
		return 1;
	}
	if (ns_of(&sreal) - ns_of(&vreal) > 100000000L || ns_of(&sreal) < ns_of(&vreal) ||
	    labs((long)tv.tv_sec - (long)sreal.tv_sec) > 1) {
		fail("vDSO CLOCK_REALTIME %ld ns, syscall %ld ns, gettimeofday %ld s",
		     ns_of(&vreal), ns_of(&sreal), (long)tv.tv_sec);
		return 1;
	}
	*last_mono = mono;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long ehdr, vdso, vvar, vdso0, vvar0;
	struct timespec mono = { 0, 0 };

	test_init(argc, argv);
	ehdr = getauxval(AT_SYSINFO_EHDR);
	vdso0 = named_start("[vdso]");
	vvar0 = named_start("[vvar]");
	if (!ehdr || ehdr != vdso0 || !vvar0 || check_clocks(&mono)) {
		fail("AT_SYSINFO_EHDR %#lx, [vdso] %#lx, [vvar] %#lx", ehdr, vdso0, vvar0);
		return 1;
	}
	test_daemon();
	test_waitsig();

	vdso = named_start("[vdso]");
	vvar = named_start("[vvar]");
	if (vdso != vdso0 || vvar != vvar0 || getauxval(AT_SYSINFO_EHDR) != vdso) {
		fail("[vdso] %#lx [vvar] %#lx AT_SYSINFO_EHDR %#lx, were %#lx %#lx", vdso, vvar,
		     getauxval(AT_SYSINFO_EHDR), vdso0, vvar0);
		return 1;
	}
	for (int i = 0; i < 100; i++)
		if (check_clocks(&mono))
			return 1;
	pass();
	return 0;
}
