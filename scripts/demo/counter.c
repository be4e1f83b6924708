// SPDX-License-Identifier: GPL-2.0
/* The demo's victim: prints a counter once a second and keeps a checksummed
 * history of it in memory, so a resumed copy can show it lost nothing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define HISTORY 4096

static uint64_t history[HISTORY];

static uint64_t checksum(uint64_t n)
{
	uint64_t sum = 0, i;

	for (i = 0; i < n && i < HISTORY; i++)
		sum = sum * 31 + history[i];
	return sum;
}

int main(void)
{
	uint64_t counter = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		history[counter % HISTORY] = counter * counter;
		counter++;
		printf("pid %d: counter %llu, memory checksum %016llx\n", getpid(),
		       (unsigned long long)counter, (unsigned long long)checksum(counter));
		sleep(1);
	}
	return 0;
}
