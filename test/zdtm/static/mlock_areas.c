// SPDX-License-Identifier: GPL-2.0
/*
 * Locked memory: an area mapped MAP_LOCKED with data, one locked later with
 * mlock() over part of a larger mapping (the VMA splits), one locked with
 * mlock2(MLOCK_ONFAULT) and never touched in its second half. After SIGTERM
 * each must keep its data and its VmFlags ("lo" locked, and "lf" for the
 * on-fault one), the on-fault area's untouched pages must still not be
 * resident, and the unlocked rest of the split mapping must not be locked.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PG 4096
#define N 16

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01
#endif

/* Whether the smaps entry of the VMA at @addr has VmFlags @flag. */
static int vm_flag(void *addr, const char *flag)
{
	char line[512], want[32];
	unsigned long s, e, a = (unsigned long)addr;
	int in = 0, found = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	snprintf(want, sizeof(want), " %s", flag);
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = a >= s && a < e;
		else if (in && !strncmp(line, "VmFlags:", 8))
			found = strstr(line + 8, want) != NULL;
	}
	if (f)
		fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	unsigned char *lk, *sp, *of, vec[N];

	test_init(argc, argv);
	lk = mmap(NULL, N * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED,
		  -1, 0);
	sp = mmap(NULL, N * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	of = mmap(NULL, N * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (lk == MAP_FAILED || sp == MAP_FAILED || of == MAP_FAILED)
		goto err;
	datagen(lk, N * PG, 1);
	datagen(sp, N * PG, 2);
	if (mlock(sp + 4 * PG, 8 * PG) || syscall(SYS_mlock2, of, N * PG, MLOCK_ONFAULT))
		goto err;
	datagen(of, N / 2 * PG, 3);
	test_daemon();
	test_waitsig();

	if (datachk(lk, N * PG, 1, NULL) || datachk(sp, N * PG, 2, NULL) ||
	    datachk(of, N / 2 * PG, 3, NULL)) {
		fail("the data of a locked area changed");
		return 1;
	}
	if (!vm_flag(lk, "lo") || !vm_flag(sp + 4 * PG, "lo") || vm_flag(sp, "lo") ||
	    vm_flag(sp + 12 * PG, "lo") || !vm_flag(of, "lf")) {
		fail("VmFlags: MAP_LOCKED %d, mlock()ed part %d, unlocked parts %d %d, on-fault %d",
		     vm_flag(lk, "lo"), vm_flag(sp + 4 * PG, "lo"), vm_flag(sp, "lo"),
		     vm_flag(sp + 12 * PG, "lo"), vm_flag(of, "lf"));
		return 1;
	}
	if (mincore(of, N * PG, vec)) {
		fail("mincore: %m");
		return 1;
	}
	for (int i = N / 2; i < N; i++)
		if (vec[i] & 1) {
			fail("page %d of the MLOCK_ONFAULT area is resident, never touched before",
			     i);
			return 1;
		}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
