// SPDX-License-Identifier: GPL-2.0
/*
 * Victim of image-check.sh: state that a missing or altered image loses
 * quietly unless the restore checks its images.
 *
 *   image-victim	a pipe holding 1000 unread bytes, 64 KiB of shared
 *			anonymous memory and 256 KiB of private anonymous memory,
 *			each filled with a pattern; prints "ready PID" (flushed)
 *			and waits. On SIGUSR1 it checks all three and prints
 *			"check ok" or "check bad: WHAT" (flushed), then waits again.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PIPE_BYTES 1000
#define SHM_SIZE (64 << 10)
#define PRIV_SIZE (256 << 10)

static volatile sig_atomic_t check_req;

static void on_usr1(int sig)
{
	(void)sig;
	check_req = 1;
}

static uint8_t pattern(size_t i, unsigned int seed)
{
	return (uint8_t)((i * 31 + seed) ^ (i >> 9));
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pattern(i, seed);
}

/* The first index where @p differs from its pattern, or -ENOENT: none. */
static long differs(const uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pattern(i, seed))
			return (long)i;
	return -ENOENT;
}

static void check(int rfd, const uint8_t *shm, const uint8_t *priv)
{
	uint8_t buf[PIPE_BYTES + 1];
	ssize_t n = read(rfd, buf, sizeof(buf));
	long at;

	if (n != PIPE_BYTES) {
		printf("check bad: the pipe holds %zd bytes, %d expected\n", n < 0 ? -errno : n,
		       PIPE_BYTES);
	} else if ((at = differs(buf, PIPE_BYTES, 1)) >= 0) {
		printf("check bad: pipe byte %ld\n", at);
	} else if ((at = differs(shm, SHM_SIZE, 2)) >= 0) {
		printf("check bad: shared memory byte %ld is %u\n", at, shm[at]);
	} else if ((at = differs(priv, PRIV_SIZE, 3)) >= 0) {
		printf("check bad: private memory byte %ld\n", at);
	} else {
		printf("check ok\n");
		/* the same data again, for a later check */
		if (write(rfd + 1, buf, PIPE_BYTES) != PIPE_BYTES)
			printf("check bad: cannot refill the pipe\n");
	}
	fflush(stdout);
}

int main(void)
{
	uint8_t buf[PIPE_BYTES], *shm, *priv;
	struct sigaction sa = { .sa_handler = on_usr1 };
	int p[2];

	/* read end then write end, adjacent: check() refills through rfd + 1 */
	if (pipe2(p, O_NONBLOCK) || p[1] != p[0] + 1)
		return 1;
	fill(buf, PIPE_BYTES, 1);
	if (write(p[1], buf, PIPE_BYTES) != PIPE_BYTES)
		return 1;
	shm = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	priv = mmap(NULL, PRIV_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED || priv == MAP_FAILED)
		return 1;
	fill(shm, SHM_SIZE, 2);
	fill(priv, PRIV_SIZE, 3);
	sigaction(SIGUSR1, &sa, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	for (;;) {
		pause();
		if (check_req) {
			check_req = 0;
			check(p[0], shm, priv);
		}
	}
}
