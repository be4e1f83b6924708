// SPDX-License-Identifier: GPL-2.0
/*
 * The victim of snapshot-kill.sh: MiB of private anonymous memory written at
 * random without a pause; every 4096 writes it stores how many it made in
 * the first 8 bytes of FILE (a shared file mapping, which no snapshot
 * write-protects), so that the script sees from outside whether it runs.
 * MODE "fork": every 2^20 writes a child writes 256 pages of the area and
 * exits, waited for. MODE "munmap": every 2^20 writes a 32 MiB area of
 * written pages is unmapped and mapped again (at the same place if it can).
 * MODE "quit" (snapshot-exit.sh): first a child with 16 MiB of its own,
 * written, which prints "kid PID SUM" (a checksum of them) and exits as
 * soon as it runs with its memory write-protected (a "uw" VMA in its
 * smaps) and traced (the snapshot holds it at its exit while it copies; it
 * is not traced while the protection is armed before the freeze), so during
 * the copy; restored, it finds no protection and waits: SIGUSR1 makes it print
 * "kid-check PID SUM" from its memory then.
 *
 *   snapshot-victim MiB FILE [fork|munmap|quit]
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wp-armed.h"

#define SIDE (32UL << 20)

static void side_effect(const char *mode, unsigned char *big, size_t len, unsigned char **side)
{
	size_t i;

	if (!strcmp(mode, "fork")) {
		pid_t c = fork();

		if (c == 0) {
			for (i = 0; i < 256; i++)
				big[(i * 7919 % (len / 4096)) * 4096] ^= 1;
			_exit(0);
		}
		if (c > 0)
			waitpid(c, NULL, 0);
	} else if (!strcmp(mode, "munmap")) {
		munmap(*side, SIDE);
		*side = mmap(*side, SIDE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			     0);
		if (*side == MAP_FAILED)
			_exit(1);
		for (i = 0; i < SIDE; i += 4096)
			(*side)[i] = (unsigned char)i;
	}
}

#define KID_LEN (16UL << 20)

static volatile sig_atomic_t kid_check;

static void on_usr1(int sig)
{
	(void)sig;
	kid_check = 1;
}

static uint64_t sum_of(const unsigned char *p, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < len; i += 64)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static void quitter(void)
{
	unsigned char *m = mmap(NULL, KID_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	size_t i;

	if (m == MAP_FAILED)
		_exit(1);
	for (i = 0; i < KID_LEN; i += 64)
		m[i] = (unsigned char)(i * 2654435761U >> 13);
	signal(SIGUSR1, on_usr1);
	printf("kid %d %llu\n", getpid(), (unsigned long long)sum_of(m, KID_LEN));
	fflush(stdout);
	for (;;) {
		/* armed and held: the copy, not the arming before the freeze */
		if (wp_armed() && traced())
			_exit(0);
		if (kid_check) {
			kid_check = 0;
			printf("kid-check %d %llu\n", getpid(),
			       (unsigned long long)sum_of(m, KID_LEN));
			fflush(stdout);
		}
		usleep(1000);
	}
}

int main(int argc, char **argv)
{
	size_t mib = argc > 2 ? strtoul(argv[1], NULL, 0) : 0, len = mib << 20, i;
	uint64_t x = 88172645463325252ULL, n = 0;
	volatile uint64_t *count;
	const char *mode = argc > 3 ? argv[3] : "";
	unsigned char *big, *side;
	int fd;

	if (!mib)
		return 2;
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 4096))
		return 1;
	count = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	/* mapped first, so above the big area: the snapshot copies it last */
	side = mmap(NULL, SIDE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	big = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (count == MAP_FAILED || big == MAP_FAILED || side == MAP_FAILED)
		return 1;
	if (!strcmp(mode, "quit") && fork() == 0)
		quitter();
	memset(side, 1, SIDE);
	for (i = 0; i < len; i += 4096)
		memset(big + i, (int)(i >> 12), 64);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		big[(x % (len / 4096)) * 4096 + (x >> 40) % 4096] = (unsigned char)n;
		if (!(++n & 4095))
			*count = n;
		if (!(n & ((1 << 20) - 1)))
			side_effect(mode, big, len, &side);
	}
}
