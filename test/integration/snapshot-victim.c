// SPDX-License-Identifier: GPL-2.0
/*
 * The victim of snapshot-kill.sh: MiB of private anonymous memory written at
 * random without a pause; every 4096 writes it stores how many it made in
 * the first 8 bytes of FILE (a shared file mapping, which no snapshot
 * write-protects), so that the script sees from outside whether it runs.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t mib = argc > 2 ? strtoul(argv[1], NULL, 0) : 0, len = mib << 20, i;
	uint64_t x = 88172645463325252ULL, n = 0;
	volatile uint64_t *count;
	unsigned char *big;
	int fd;

	if (!mib)
		return 2;
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 4096))
		return 1;
	count = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	big = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (count == MAP_FAILED || big == MAP_FAILED)
		return 1;
	for (i = 0; i < len; i += 4096)
		memset(big + i, (int)(i >> 12), 64);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		big[(x % (len / 4096)) * 4096 + (x >> 40) % 4096] = (unsigned char)n;
		if (!(++n & 4095))
			*count = n;
	}
}
