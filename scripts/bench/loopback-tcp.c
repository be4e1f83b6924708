// SPDX-License-Identifier: GPL-2.0
/*
 * The loopback TCP bandwidth of this machine, the ceiling of the page server
 * over 127.0.0.1 (scripts/bench/page-server): a child sends SIZE MiB in 1 MiB
 * writes from a buffer it wrote once, the parent receives into a 1 MiB
 * buffer; both ends as the page server has them (TCP_NODELAY, default
 * buffers). Prints the GB/s (10^9 bytes) of the median of ROUNDS rounds.
 *
 *   loopback-tcp [-s MiB] [-r rounds]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double round_once(unsigned long mib)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1, c;
	char *buf = malloc(CHUNK);
	unsigned long long left = (unsigned long long)mib << 20, total = left;
	double t0, t1;
	pid_t pid;

	if (l < 0 || !buf || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sa, &sl)) {
		perror("listen");
		exit(1);
	}
	memset(buf, 0x5a, CHUNK);
	pid = fork();
	if (!pid) {
		int s = socket(AF_INET, SOCK_STREAM, 0);

		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)))
			_exit(1);
		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while (left) {
			ssize_t n = write(s, buf, left < CHUNK ? left : CHUNK);

			if (n <= 0)
				_exit(1);
			left -= (unsigned long long)n;
		}
		_exit(0);
	}
	c = accept(l, NULL, NULL);
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	t0 = now();
	while (left) {
		ssize_t n = read(c, buf, CHUNK);

		if (n <= 0) {
			perror("read");
			exit(1);
		}
		left -= (unsigned long long)n;
	}
	t1 = now();
	waitpid(pid, NULL, 0);
	close(c);
	close(l);
	free(buf);
	return (double)total / (t1 - t0) / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long mib = 1024, rounds = 5, i;
	double r[64];
	int opt;

	while ((opt = getopt(argc, argv, "s:r:")) != -1) {
		if (opt == 's')
			mib = strtoul(optarg, NULL, 0);
		else if (opt == 'r')
			rounds = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (!rounds || rounds > 64)
		return 2;
	for (i = 0; i < rounds; i++)
		r[i] = round_once(mib);
	qsort(r, rounds, sizeof(r[0]), cmp);
	printf("loopback TCP, %lu MiB x %lu: median %.2f GB/s (min %.2f, max %.2f)\n", mib, rounds,
	       r[rounds / 2], r[0], r[rounds - 1]);
	return 0;
}
