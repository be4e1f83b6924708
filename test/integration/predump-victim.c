// SPDX-License-Identifier: GPL-2.0
/*
 * The victim of predump-chain.sh: MiB of private anonymous memory written at
 * random, plus a region created, moved (mremap) and grown between rounds.
 * SIGUSR2: stop writing, save every byte of its memory to FILE.A, print
 * "quiet". SIGUSR1 (after the restore): save it to FILE.B, print "saved".
 *
 * With a third argument "kids" (predump-exit.sh): three children that wait
 * for the pre-dump's write tracking to appear in their own smaps (the
 * parasite registers it while the tree is frozen), so they run again, then
 * the first exits, the second execs "predump-victim sleep FILE" (a new
 * address space), and the third exits 50 ms later (once its memory has
 * been protected, before it is copied), racing the pre-dump.
 *
 * With PREDUMP_VICTIM_THP=1 in its environment (lazy-remote.sh), the large
 * region is MADV_HUGEPAGE before its first touch.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wp-armed.h"

static volatile sig_atomic_t quiet, save;
static unsigned char *big, *moving;
static size_t big_len, moving_len;

static void on_sig(int sig)
{
	if (sig == SIGUSR2)
		quiet = 1;
	else
		save = 1;
}

static void on_chld(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void kid(const char *self, const char *file, int what)
{
	size_t len = 32 << 20;
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
				0);

	if (m == MAP_FAILED)
		_exit(1);
	memset(m, 0x5a, len);
	while (!wp_armed())
		usleep(200);
	if (what == 1)
		execl(self, self, "sleep", file, (char *)NULL);
	if (what == 2)
		usleep(50000);
	_exit(0);
}

static void save_to(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(big, 1, big_len, f) != big_len ||
	    fwrite(moving, 1, moving_len, f) != moving_len || fclose(f))
		perror(path);
}

int main(int argc, char **argv)
{
	size_t mib = argc > 2 ? strtoul(argv[1], NULL, 0) : 16, i;
	unsigned long x = 88172645463325252UL, n = 0;
	char path[4096];

	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "sleep"))
		for (;;)
			pause();
	big_len = mib << 20;
	moving_len = 1 << 20;
	big = mmap(NULL, big_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	moving = mmap(NULL, moving_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED || moving == MAP_FAILED)
		return 1;
	if (getenv("PREDUMP_VICTIM_THP") && madvise(big, big_len, MADV_HUGEPAGE))
		return 1;
	for (i = 0; i < big_len; i += 4096)
		memset(big + i, (int)(i >> 12), 64);
	memset(moving, 7, moving_len);
	signal(SIGUSR1, on_sig);
	signal(SIGUSR2, on_sig);
	if (argc > 3 && !strcmp(argv[3], "kids")) {
		signal(SIGCHLD, on_chld);
		for (i = 0; i < 3; i++)
			if (fork() == 0)
				kid(argv[0], argv[2], (int)i);
	}
	printf("ready\n");
	fflush(stdout);
	while (!quiet) {
		for (i = 0; i < 8; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			big[(x % (big_len / 4096)) * 4096 + (x >> 40) % 4096] = (unsigned char)n;
		}
		/* every 50 rounds: move the region elsewhere, grown by a page, and write it */
		if (++n % 50 == 0) {
			void *dst = mmap(NULL, moving_len + 4096, PROT_NONE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			void *m = mremap(moving, moving_len, moving_len + 4096,
					 MREMAP_MAYMOVE | MREMAP_FIXED, dst);

			if (m == MAP_FAILED)
				return 1;
			moving = m;
			moving_len += 4096;
			moving[moving_len - 1] = (unsigned char)n;
		}
		usleep(2000);
	}
	snprintf(path, sizeof(path), "%s.A", argv[2]);
	save_to(path);
	printf("quiet\n");
	fflush(stdout);
	while (!save)
		pause();
	snprintf(path, sizeof(path), "%s.B", argv[2]);
	save_to(path);
	printf("saved\n");
	fflush(stdout);
	for (;;)
		pause();
}
