// SPDX-License-Identifier: GPL-2.0
/*
 * The victim of scripts/bench/threads: N threads (64 KiB stacks) that wait in
 * pause(); "ready" on stdout once all exist.
 *
 *   threads-victim N
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0, i;
	pthread_attr_t at;

	if (n < 0 || n > 10000) {
		fprintf(stderr, "usage: threads-victim N\n");
		return 2;
	}
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 << 10);
	for (i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &at, idle, NULL))
			return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
