// SPDX-License-Identifier: GPL-2.0
/*
 * The victim of scripts/bench/predump: SIZE MiB of private anonymous memory,
 * every page written once, then RATE per mille of its pages written per
 * second (10: 1 %), spread over the whole area, in steps of 10 ms.
 *
 *   predump-victim MiB RATE
 *
 * Prints "ready" once filled. SIGUSR2: stop writing for good, print
 * "quiet SUM" (a checksum of every byte of the area). SIGUSR1 (after a
 * restore): print "sum SUM" again, read from the memory as restored.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t quiet, ask;

static void on_sig(int sig)
{
	if (sig == SIGUSR2)
		quiet = 1;
	else
		ask = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* FNV-1a over 64-bit words: every byte counts, and 2 GiB take well under a second. */
static uint64_t sum(const uint64_t *p, size_t words)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < words; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

int main(int argc, char **argv)
{
	size_t len, pages, i, k = 0;
	unsigned long rate;
	uint64_t *mem, t0, written = 0;

	if (argc < 3)
		return 2;
	len = strtoul(argv[1], NULL, 0) << 20;
	rate = strtoul(argv[2], NULL, 0);
	pages = len / 4096;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	for (i = 0; i < len / 8; i++)
		mem[i] = i * 0x9e3779b97f4a7c15ULL;
	signal(SIGUSR1, on_sig);
	signal(SIGUSR2, on_sig);
	printf("ready\n");
	fflush(stdout);
	t0 = now_ms();
	while (!quiet) {
		uint64_t due = (now_ms() - t0) * pages * rate / 1000 / 1000;

		/* page k * 7919 mod pages: all over the area, each page once per cycle */
		for (; written < due && !quiet; written++, k++)
			mem[((k * 7919) % pages) * 512 + k % 512] = written;
		usleep(10000);
	}
	printf("quiet %016llx\n", (unsigned long long)sum(mem, len / 8));
	fflush(stdout);
	for (;;) {
		while (!ask)
			pause();
		ask = 0;
		printf("sum %016llx\n", (unsigned long long)sum(mem, len / 8));
		fflush(stdout);
	}
}
