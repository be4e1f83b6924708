// SPDX-License-Identifier: GPL-2.0
/*
 * The top terabytes of the address space reserved PROT_NONE (what a JVM or
 * a sanitizer does with its heap reservation), around what the test itself
 * has mapped there. criu-like's restore maps its shared area where the
 * kernel puts it in the controller, which is almost surely inside such a
 * saved VMA: the restore must move it out of the way, and every user of the
 * area follow it (the cwd lock of the restore used the old place and the
 * task died of a SIGSEGV before its restorer: CI, integration/mqueue-notify,
 * 1 run in about 60). After SIGTERM every reservation is still there,
 * PROT_NONE, and faults.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define LO 0x7e0000000000UL /* below every mmap base x86-64 picks (at most 1 TiB down) */
#define TOP 0x7ffffffff000UL /* TASK_SIZE with 4-level page tables */
#define STACK_ROOM (64UL << 20) /* left below the stack, for it to grow */
#define MAX_RES 64

struct range {
	uint64_t start, end;
};

static char maps[1 << 16];

/* /proc/self/maps into @r (sorted, as the kernel lists them), read with no allocation; -errno. */
static int read_maps(struct range *r, int max, uint64_t *stack, struct range *none, int *nnone)
{
	int fd = open("/proc/self/maps", O_RDONLY), n = 0;
	ssize_t len = 0, got;
	char *l;

	if (fd < 0)
		return -errno;
	while ((got = read(fd, maps + len, sizeof(maps) - 1 - (size_t)len)) > 0)
		len += got;
	close(fd);
	maps[len] = 0;
	if (nnone)
		*nnone = 0;
	for (l = maps; l && *l && n < max; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		unsigned long s, e;
		char perms[8] = "";

		if (sscanf(l, "%lx-%lx %7s", &s, &e, perms) < 2)
			continue;
		r[n++] = (struct range){ s, e };
		if (stack && !strncmp(strchrnul(l, '\n') - 7, "[stack]", 7))
			*stack = s;
		if (none && !strcmp(perms, "---p") && *nnone < 4096)
			none[(*nnone)++] = (struct range){ s, e };
	}
	return n;
}

static struct range res[MAX_RES], cur[4096], none[4096];

/* The gaps of [LO, TOP) but the stack's room, each reserved: their number, or -errno. */
static int reserve(void)
{
	uint64_t stack = 0, prev = LO;
	int n = read_maps(cur, 4096, &stack, NULL, NULL), nres = 0;

	if (n < 0 || !stack)
		return n < 0 ? n : -ENOENT;
	for (int i = 0; i <= n && nres < MAX_RES; i++) {
		/* [vsyscall] lies above TOP */
		uint64_t s = i < n && cur[i].start < TOP ? cur[i].start : TOP;
		uint64_t e = i < n && cur[i].end < TOP ? cur[i].end : TOP;
		uint64_t hi = s == stack ? s - STACK_ROOM : s;

		if (e <= LO)
			continue;
		if (hi > prev && hi - prev >= (1UL << 20)) {
			void *m = mmap((void *)prev, hi - prev, PROT_NONE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
					       MAP_FIXED_NOREPLACE,
				       -1, 0);

			if (m != (void *)prev) {
				test_msg("mmap of %lx-%lx: %m\n", prev, hi);
				return m == MAP_FAILED ? -errno : -EEXIST;
			}
			res[nres++] = (struct range){ prev, hi };
		}
		prev = e > prev ? e : prev;
	}
	return nres;
}

int main(int argc, char **argv)
{
	uint64_t total = 0;
	int nres, nnone;

	test_init(argc, argv);
	nres = reserve();
	if (nres <= 0) {
		fail("no reservation made");
		return 1;
	}
	for (int i = 0; i < nres; i++)
		total += res[i].end - res[i].start;
	test_msg("%d reservations, %lu GiB\n", nres, total >> 30);
	test_daemon();
	test_waitsig();

	if (read_maps(cur, 4096, NULL, none, &nnone) < 0) {
		fail("cannot read the maps");
		return 1;
	}
	for (int i = 0; i < nres; i++) {
		uint64_t c = res[i].start;

		/* covered by PROT_NONE mappings end to end (merged or split differently) */
		for (int j = 0; j < nnone; j++)
			if (none[j].start <= c && c < none[j].end)
				c = none[j].end;
		if (c < res[i].end) {
			fail("the reservation %lx-%lx is not PROT_NONE from %lx", res[i].start,
			     res[i].end, c);
			return 1;
		}
		if (!test_faults((void *)(res[i].end - 4096), false)) {
			fail("the reservation %lx-%lx can be read", res[i].start, res[i].end);
			return 1;
		}
	}
	pass();
	return 0;
}
