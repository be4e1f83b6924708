// SPDX-License-Identifier: GPL-2.0
/*
 * 3000 small anonymous areas with rotating protections (rw, r, none, rx),
 * each page of the readable ones with its own data, some left untouched
 * (data under PROT_NONE is prot_none_data's business).
 * After SIGTERM every area must have its bounds, its protection and its
 * data; /proc/self/maps must hold the same lines for the whole range. A
 * restorer that coalesces areas, drops some or runs out of room fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NAREAS 3000
#define PG 4096UL

static const int prots[] = { PROT_READ | PROT_WRITE, PROT_READ, PROT_NONE, PROT_READ | PROT_EXEC };
static const char *const perms[] = { "rw-p", "r--p", "---p", "r-xp" };

struct vma {
	unsigned long s, e;
	char perms[5];
};

/* /proc/self/maps parsed once: looking each area up in the file is quadratic. */
static int read_maps(struct vma *v, int max)
{
	static char maps[4 << 20];
	int n = 0;

	if (test_read_file("/proc/self/maps", maps, sizeof(maps)) < 0)
		return -EIO;
	for (char *l = maps; *l && n < max; n++) {
		if (sscanf(l, "%lx-%lx %4s", &v[n].s, &v[n].e, v[n].perms) != 3)
			return -EINVAL;
		l += strcspn(l, "\n");
		if (*l)
			l++;
	}
	return n;
}

/* The area holding @addr, or NULL. */
static const struct vma *find(const struct vma *v, int n, unsigned long addr)
{
	int lo = 0, hi = n - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (addr < v[mid].s)
			hi = mid - 1;
		else if (addr >= v[mid].e)
			lo = mid + 1;
		else
			return &v[mid];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct vma vmas[NAREAS + 1024];
	int nv;
	unsigned char *base;
	size_t len = NAREAS * 2 * PG;

	test_init(argc, argv);
	/* One reservation, every other page kept: areas with one-page gaps. */
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	for (int i = 0; i < NAREAS; i++) {
		unsigned char *a = base + 2 * i * PG;

		if (i % 5 && (prots[i % 4] & PROT_READ))
			datagen(a, PG, 9000 + i);
		if (munmap(a + PG, PG) || mprotect(a, PG, prots[i % 4])) {
			fail("area %d: %m", i);
			return 1;
		}
	}
	test_daemon();
	test_waitsig();

	nv = read_maps(vmas, NAREAS + 1024);
	if (nv < NAREAS) {
		fail("/proc/self/maps has %d areas, expected more than %d", nv, NAREAS);
		return 1;
	}
	for (int i = 0; i < NAREAS; i++) {
		unsigned char *a = base + 2 * i * PG;
		const struct vma *v = find(vmas, nv, (unsigned long)a);

		if (!v || v->s != (unsigned long)a || v->e != (unsigned long)(a + PG) ||
		    strcmp(v->perms, perms[i % 4]) || find(vmas, nv, (unsigned long)(a + PG))) {
			fail("area %d at %p: %lx-%lx %s, expected one page %s and a hole", i, a,
			     v ? v->s : 0, v ? v->e : 0, v ? v->perms : "none", perms[i % 4]);
			return 1;
		}
		if (!(prots[i % 4] & PROT_READ))
			continue;
		if (i % 5 ? datachk(a, PG, 9000 + i, NULL) : a[0] || a[PG - 1]) {
			fail("area %d lost its data", i);
			return 1;
		}
	}
	pass();
	return 0;
}
