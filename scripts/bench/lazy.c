// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of scripts/bench/lazy.
 *
 *   lazy victim MiB   writes MiB of anonymous memory, prints "ready", then
 *                     spins on CLOCK_REALTIME touching nothing of it; the
 *                     first time it sees time jump (a dump and a restore
 *                     in between) it prints "resumed NS", NS the realtime
 *                     of its first instruction after the restore, roughly;
 *                     then it reads every page ("touched NS" once done)
 *   lazy memcpy MiB   GB/s of memcpy between two populated buffers (median of 5)
 *   lazy touch MiB    GB/s of the first touch of MiB of fresh anonymous memory by
 *                     two threads at once (a write to each 4 KiB page), then
 *                     freed: what two CPUs fill at most with 4 KiB pages, as
 *                     the daemon's two copiers do; run right before a
 *                     restore, it also takes back the guest memory the VM's
 *                     host reclaimed (ARCHITECTURE.md 8), which else the
 *                     restore would fault in at a fraction of that speed
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int victim(size_t len)
{
	unsigned char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
				0);
	int64_t last, t;
	uint64_t sum = 0;

	if (a == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < len; i += 4096)
		memset(a + i, (int)(i >> 12) | 1, 4096);
	printf("ready\n");
	fflush(stdout);
	last = now_ns(CLOCK_REALTIME);
	for (;;) {
		t = now_ns(CLOCK_REALTIME);
		if (t - last > 200000000LL) /* 200 ms: frozen, dumped, restored */
			break;
		last = t;
	}
	printf("resumed %lld\n", (long long)t);
	fflush(stdout);
	for (size_t i = 0; i < len; i += 4096)
		sum += a[i];
	printf("touched %lld %llu\n", (long long)now_ns(CLOCK_REALTIME), (unsigned long long)sum);
	fflush(stdout);
	for (;;)
		pause();
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static int bench_memcpy(size_t len)
{
	char *a = malloc(len), *b = malloc(len);
	double r[5];

	if (!a || !b)
		return 1;
	memset(a, 1, len);
	memset(b, 2, len);
	for (int i = 0; i < 5; i++) {
		int64_t t0 = now_ns(CLOCK_MONOTONIC);

		memcpy(i % 2 ? a : b, i % 2 ? b : a, len);
		r[i] = (double)len / (double)(now_ns(CLOCK_MONOTONIC) - t0);
	}
	qsort(r, 5, sizeof(r[0]), cmp);
	printf("%.2f\n", r[2]);
	return a[len / 2] == 0;
}

struct half {
	unsigned char *a;
	size_t len;
};

static void *touch_half(void *arg)
{
	struct half *h = arg;

	for (size_t i = 0; i < h->len; i += 4096)
		h->a[i] = 1;
	return NULL;
}

static int bench_touch(size_t len)
{
	unsigned char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
				0);
	struct half h[2] = { { a, len / 2 }, { a + len / 2, len - len / 2 } };
	pthread_t th;
	int64_t t0;

	if (a == MAP_FAILED)
		return 1;
	madvise(a, len, MADV_NOHUGEPAGE);
	t0 = now_ns(CLOCK_MONOTONIC);
	if (pthread_create(&th, NULL, touch_half, &h[1]))
		return 1;
	touch_half(&h[0]);
	pthread_join(th, NULL);
	printf("%.2f\n", (double)len / (double)(now_ns(CLOCK_MONOTONIC) - t0));
	return munmap(a, len) != 0;
}

int main(int argc, char **argv)
{
	size_t len = argc > 2 ? strtoul(argv[2], NULL, 0) << 20 : 0;

	if (argc > 2 && !strcmp(argv[1], "victim"))
		return victim(len);
	if (argc > 2 && !strcmp(argv[1], "memcpy"))
		return bench_memcpy(len);
	if (argc > 2 && !strcmp(argv[1], "touch"))
		return bench_touch(len);
	fprintf(stderr, "usage: lazy victim|memcpy|touch MiB\n");
	return 2;
}
