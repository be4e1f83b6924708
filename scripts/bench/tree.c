// SPDX-License-Identifier: GPL-2.0
/*
 * The victim of scripts/bench/tree: a root that forks N-1 children; each
 * child writes 64 KiB of its own memory and waits in pause(). "ready" on
 * stdout once every child has written its memory.
 *
 *   tree-victim N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHILD_MEM (64 << 10)

static void child(int wfd, int i)
{
	char *p = malloc(CHILD_MEM);

	if (!p)
		_exit(1);
	memset(p, i & 0xff, CHILD_MEM);
	if (write(wfd, "x", 1) != 1)
		_exit(1);
	close(wfd);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0, p[2], i;
	char c;

	if (n < 1 || n > 10000) {
		fprintf(stderr, "usage: tree-victim N\n");
		return 2;
	}
	if (pipe(p))
		return 1;
	for (i = 1; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid) {
			close(p[0]);
			child(p[1], i);
		}
	}
	close(p[1]);
	for (i = 1; i < n; i++)
		if (read(p[0], &c, 1) != 1)
			return 1;
	close(p[0]);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
