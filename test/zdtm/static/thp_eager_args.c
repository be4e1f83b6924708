// SPDX-License-Identifier: GPL-2.0
/*
 * An eager page inside a region of huge pages. The command line moved into
 * an 8 MiB MADV_HUGEPAGE region full of datagen data, in the middle of one
 * of its 2 MiB stretches, as systemd's rename_process() moves it into a
 * mapping of its own (here with PR_SET_MM_MAP, which takes
 * CAP_CHECKPOINT_RESTORE; PR_SET_MM_ARG_START takes CAP_SYS_RESOURCE). A lazy
 * restore reads the arguments' pages eagerly (/proc/PID/cmdline reads them
 * through the kernel, which does not wait for the lazy-pages daemon), and
 * the first touch of that page, in a VMA with MADV_HUGEPAGE, is given a
 * huge page: 2 MiB of zeros where the daemon's UFFDIO_COPY then finds pages
 * (EEXIST) and skips them, unless the restore drops them first
 * (Documentation/lazy-pages.md, "Transparent huge pages"). After SIGTERM
 * the data around the title and /proc/self/cmdline must be as they were.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "zdtmtst.h"

#define HPAGE (2UL << 20)
#define REGION (8UL << 20)
#define PAGE 4096UL
#define TITLE_AT (3UL << 20) /* in the middle of the second stretch */
#define SEED 0x7a11

static const char title[] = "thp_eager_args: a title in a huge page";

/* AnonHugePages (kB) of the VMA starting at @p; -1: not found. */
static long huge_kb(const void *p)
{
	char line[512], want[32];
	long kb = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return neg_errno();
	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, want, strlen(want)))
			in = 1;
		else if (in && !strncmp(line, "AnonHugePages:", 14)) {
			kb = strtol(line + 14, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

/* struct prctl_mm_map of linux/prctl.h, whose other definitions clash with sys/prctl.h */
struct mm_map {
	uint64_t start_code, end_code, start_data, end_data, start_brk, brk, start_stack;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint64_t *auxv;
	uint32_t auxv_size, exe_fd;
};

/*
 * The command line at [@start, @end): PR_SET_MM_MAP with every other field
 * as it is (fields 26-28 and 45-51 of /proc/self/stat, the brk, no auxv).
 */
static int move_cmdline(unsigned long start, unsigned long end)
{
	unsigned long long f[52] = { 0 };
	struct mm_map m;
	char stat[2048], *p;
	int field = 3;

	if (test_read_file("/proc/self/stat", stat, sizeof(stat)) < 0 || !(p = strrchr(stat, ')')))
		return -EIO;
	for (p += 2; *p && field < 52; field++) {
		f[field] = strtoull(p, NULL, 10); /* field 3, the state, reads 0 */
		p += strcspn(p, " ");
		p += *p == ' ';
	}
	m = (struct mm_map){ .start_code = f[26],
			     .end_code = f[27],
			     .start_stack = f[28],
			     .start_data = f[45],
			     .end_data = f[46],
			     .start_brk = f[47],
			     .brk = (uint64_t)(uintptr_t)sbrk(0),
			     .arg_start = start,
			     .arg_end = end,
			     .env_start = f[50],
			     .env_end = f[51],
			     .exe_fd = (uint32_t)-1 };
	return prctl(PR_SET_MM, PR_SET_MM_MAP, &m, sizeof(m), 0) ? neg_errno() : 0;
}

/* REGION at a 2 MiB boundary, a VMA of its own between PROT_NONE ones. */
static unsigned char *region(void)
{
	size_t span = REGION + 2 * HPAGE;
	unsigned char *p = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (unsigned char *)(((unsigned long)p + HPAGE) & ~(HPAGE - 1));
	if (mprotect(a, REGION, PROT_READ | PROT_WRITE) || madvise(a, REGION, MADV_HUGEPAGE))
		return NULL;
	return a;
}

/* The data of @p but the title's page: datagen's stream, the page skipped. */
static int check_data(const unsigned char *p, size_t *off)
{
	if (datachk_at(p, TITLE_AT, SEED, 0, off))
		return -EILSEQ;
	if (datachk_at(p + TITLE_AT + PAGE, REGION - TITLE_AT - PAGE, SEED, TITLE_AT + PAGE, off)) {
		*off += TITLE_AT + PAGE;
		return -EILSEQ;
	}
	return 0;
}

static int check_cmdline(void)
{
	char buf[256];
	long n = test_read_file("/proc/self/cmdline", buf, sizeof(buf));

	return n == (long)sizeof(title) && !memcmp(buf, title, sizeof(title)) ? 0 : -EILSEQ;
}

int main(int argc, char **argv)
{
	unsigned char *p;
	size_t off = 0;
	long kb;
	int err;

	test_init(argc, argv);
	p = region();
	if (!p) {
		fail("mmap/madvise of the region: %m");
		return 1;
	}
	datagen_at(p, TITLE_AT, SEED, 0);
	datagen_at(p + TITLE_AT + PAGE, REGION - TITLE_AT - PAGE, SEED, TITLE_AT + PAGE);
	memcpy(p + TITLE_AT, title, sizeof(title));
	err = move_cmdline((unsigned long)(p + TITLE_AT),
			   (unsigned long)(p + TITLE_AT + sizeof(title)));
	if (err) {
		fail("PR_SET_MM_MAP: %s", strerror(-err));
		return 1;
	}
	kb = huge_kb(p);
	if (check_cmdline() || kb <= 0) {
		fail("cmdline not moved, or no huge page to start with (AnonHugePages %ld kB): "
		     "cannot tell",
		     kb);
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (check_data(p, &off)) {
		fail("data around the title's page differs at offset %zu (the title at %lu)", off,
		     TITLE_AT);
		return 1;
	}
	if (check_cmdline()) {
		fail("/proc/self/cmdline is not the title any more");
		return 1;
	}
	test_msg("AnonHugePages %ld kB before the dump, %ld kB now\n", kb, huge_kb(p));
	pass();
	return 0;
}
