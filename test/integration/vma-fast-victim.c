// SPDX-License-Identifier: GPL-2.0
/*
 * The victim of vma-fast.sh: one VMA of each kind the dump asks smaps
 * about (Documentation/memory.md, "The VMAs without smaps' walk"): a guard
 * (PROT_NONE, empty) and a PROT_NONE area holding a page, the zero page
 * only, written anonymous memory, a huge page made by MADV_COLLAPSE (no
 * MADV_HUGEPAGE), MADV_HUGEPAGE and MADV_NOHUGEPAGE areas, MADV_DONTFORK /
 * WIPEONFORK / DONTDUMP / SEQUENTIAL / RANDOM, mlock and mlock on fault,
 * MAP_NORESERVE, MAP_GROWSDOWN, shared anonymous memory, a private file
 * mapping with a page copied and one only read; then it forks CHILDREN
 * (2) that write a page each, sharing the rest. Prints "ready" and waits.
 *
 *   vma-fast-victim DIR [CHILDREN]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 1
#endif

#define PG 4096UL
#define MB (1UL << 20)

static char *anon(size_t len, int prot, int flags)
{
	char *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static void advise(char *p, size_t len, int advice)
{
	if (madvise(p, len, advice)) {
		perror("madvise");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int kids = argc > 2 ? atoi(argv[2]) : 2;
	char path[4096], *p, *thp;
	int fd;

	if (argc < 2)
		return 2;
	anon(4 * PG, PROT_NONE, 0); /* a guard */
	p = anon(4 * PG, PROT_READ | PROT_WRITE, 0);
	p[PG] = 1;
	mprotect(p, 4 * PG, PROT_NONE); /* PROT_NONE holding a page */
	p = anon(4 * PG, PROT_READ, 0);
	if (*(volatile char *)p) /* the zero page only */
		return 1;
	p = anon(64 * MB, PROT_READ | PROT_WRITE, 0);
	memset(p, 7, 64 * MB); /* anonymous, shared with the children after the fork */
	/* a huge page of its own (MADV_COLLAPSE), 2 MiB aligned, no MADV_HUGEPAGE */
	p = anon(8 * MB, PROT_READ | PROT_WRITE, 0);
	thp = (char *)(((unsigned long)p + 2 * MB - 1) & ~(2 * MB - 1));
	memset(thp, 3, 4 * MB);
	if (madvise(thp, 4 * MB, MADV_COLLAPSE))
		perror("MADV_COLLAPSE (no huge page then)");
	p = anon(4 * MB, PROT_READ | PROT_WRITE, 0);
	advise(p, 4 * MB, MADV_HUGEPAGE);
	memset(p, 4, 4 * MB);
	p = anon(4 * MB, PROT_READ | PROT_WRITE, 0);
	advise(p, 4 * MB, MADV_NOHUGEPAGE);
	memset(p, 5, 4 * MB);
	static const int advices[] = { MADV_DONTFORK, MADV_WIPEONFORK, MADV_DONTDUMP,
				       MADV_SEQUENTIAL, MADV_RANDOM };
	for (size_t i = 0; i < sizeof(advices) / sizeof(advices[0]); i++) {
		p = anon(8 * PG, PROT_READ | PROT_WRITE, 0);
		advise(p, 8 * PG, advices[i]);
		p[0] = (char)i;
	}
	p = anon(4 * PG, PROT_READ | PROT_WRITE, 0);
	if (mlock(p, 4 * PG))
		perror("mlock");
	p = anon(8 * PG, PROT_READ | PROT_WRITE, 0);
	if (mlock2(p, 8 * PG, MLOCK_ONFAULT))
		perror("mlock2");
	p[0] = 1;
	anon(16 * PG, PROT_READ | PROT_WRITE, MAP_NORESERVE)[0] = 1;
	anon(16 * PG, PROT_READ | PROT_WRITE, MAP_GROWSDOWN)[15 * PG] = 1;
	p = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	p[0] = 1;
	snprintf(path, sizeof(path), "%s/file", argv[1]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 8 * PG))
		return 1;
	p = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	p[0] = 1; /* copied */
	if (*(volatile char *)(p + 4 * PG)) /* only read: the file's page */
		return 1;
	p = mmap(NULL, 8 * PG, PROT_READ, MAP_PRIVATE, fd, 0); /* never touched */
	if (p == MAP_FAILED)
		return 1;
	for (int i = 0; i < kids; i++) {
		if (fork() == 0) {
			anon(4 * PG, PROT_READ | PROT_WRITE, 0)[0] = (char)i;
			for (;;)
				pause();
		}
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
