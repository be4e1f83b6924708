// SPDX-License-Identifier: GPL-2.0
/*
 * The machine's own limits for scripts/bench/restore, for SIZE MiB:
 *   memcpy   copy between two populated buffers
 *   pread    read a file of SIZE MiB (page cache) into fresh anonymous
 *            memory with large preadv calls: what the restorer does, so the
 *            ceiling of a restore (page faults included)
 *   touch    first touch of fresh anonymous memory (memset): the bandwidth
 *            at which this machine hands out new pages of that size
 * With -H the fresh memory is 2 MiB-aligned and MADV_HUGEPAGE (transparent
 * huge pages, in the `madvise` mode as well as `always`).
 * Each is run ROUNDS times after a warm-up; the median is printed as
 * "memcpy X pread Y touch Z" in GiB/s.
 *
 *   restore-limits -s MIB -f FILE [-r ROUNDS] [-H]
 *
 * FILE is created (SIZE MiB) if shorter than that.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (64UL << 20)
#define HUGE (2UL << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double run_memcpy(char *dst, const char *src, size_t size)
{
	double t = now();

	memcpy(dst, src, size);
	return now() - t;
}

static int huge;

/* Fresh anonymous memory; with -H, 2 MiB-aligned and MADV_HUGEPAGE. Freed with unmap_fresh(). */
static char *map_fresh(size_t size)
{
	size_t align = huge ? HUGE : 0;
	char *p = mmap(NULL, size + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	if (huge) {
		char *a = (char *)(((unsigned long)p + HUGE - 1) & ~(HUGE - 1));

		if (a > p)
			munmap(p, (size_t)(a - p));
		munmap(a + size, HUGE - (size_t)(a - p));
		p = a;
		if (madvise(p, size, MADV_HUGEPAGE)) {
			perror("madvise");
			exit(1);
		}
	}
	return p;
}

static double run_touch(size_t size)
{
	char *mem = map_fresh(size);
	double t = now();

	memset(mem, 0x3c, size);
	t = now() - t;
	munmap(mem, size);
	return t;
}

static double run_pread(int fd, size_t size)
{
	char *mem = map_fresh(size);
	size_t off;
	double t;

	t = now();
	for (off = 0; off < size; off += CHUNK) {
		struct iovec iov = { mem + off, size - off < CHUNK ? size - off : CHUNK };

		if (preadv(fd, &iov, 1, (off_t)off) != (ssize_t)iov.iov_len) {
			perror("preadv");
			exit(1);
		}
	}
	t = now() - t;
	munmap(mem, size);
	return t;
}

int main(int argc, char **argv)
{
	size_t size = 0;
	const char *file = NULL;
	int rounds = 5, c, i, fd;
	double tm[32], tp[32], tt[32];
	char *a, *b;
	struct stat st;

	while ((c = getopt(argc, argv, "s:f:r:H")) != -1) {
		if (c == 's')
			size = strtoul(optarg, NULL, 0) << 20;
		else if (c == 'f')
			file = optarg;
		else if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 'H')
			huge = 1;
	}
	if (!size || !file || rounds < 1 || rounds > 31) {
		fprintf(stderr, "usage: restore-limits -s MIB -f FILE [-r ROUNDS] [-H]\n");
		return 2;
	}
	a = malloc(size);
	b = malloc(size);
	if (!a || !b)
		return 1;
	memset(a, 0x5a, size);
	memset(b, 0xa5, size);
	fd = open(file, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || fstat(fd, &st))
		return 1;
	if ((size_t)st.st_size < size && pwrite(fd, a, size, 0) != (ssize_t)size)
		return 1;
	/* Warm-up of both, then alternate (ARCHITECTURE.md 8). */
	run_memcpy(b, a, size);
	run_pread(fd, size);
	run_touch(size);
	for (i = 0; i < rounds; i++) {
		tm[i] = run_memcpy(i & 1 ? a : b, i & 1 ? b : a, size);
		tp[i] = run_pread(fd, size);
		tt[i] = run_touch(size);
	}
	qsort(tm, (size_t)rounds, sizeof(double), cmp_double);
	qsort(tp, (size_t)rounds, sizeof(double), cmp_double);
	qsort(tt, (size_t)rounds, sizeof(double), cmp_double);
	printf("memcpy %.2f pread %.2f touch %.2f\n", (double)size / tm[rounds / 2] / (1 << 30),
	       (double)size / tp[rounds / 2] / (1 << 30),
	       (double)size / tt[rounds / 2] / (1 << 30));
	close(fd);
	return 0;
}
