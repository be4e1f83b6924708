// SPDX-License-Identifier: GPL-2.0
/*
 * The victim of scripts/bench/cow: writes SIZE MiB of private anonymous
 * memory (each page its own contents), then forks NPROC - 1 children that
 * only wait, the shape of a pre-fork server. Prints "ready" once every
 * child exists. SIGUSR1 makes each process print "sum PID CHECKSUM" of the
 * memory; SIGTERM ends it (the root after its children).
 *
 *   cow SIZE_MIB NPROC
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t want_sum, stop;
static uint64_t *mem;
static size_t words;

static void on_sig(int sig)
{
	if (sig == SIGUSR1)
		want_sum = 1;
	else
		stop = 1;
}

static void print_sum(void)
{
	uint64_t s = 0;
	char line[64];
	int n;

	for (size_t i = 0; i < words; i++)
		s = s * 31 + mem[i];
	n = snprintf(line, sizeof(line), "sum %d %016llx\n", getpid(), (unsigned long long)s);
	if (write(1, line, (size_t)n) != n)
		_exit(3);
}

static void serve(void)
{
	sigset_t none;

	sigemptyset(&none);
	while (!stop) {
		sigsuspend(&none);
		if (want_sum) {
			want_sum = 0;
			print_sum();
		}
	}
}

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) << 20 : 256UL << 20;
	int nproc = argc > 2 ? atoi(argv[2]) : 9;
	struct sigaction sa = { .sa_handler = on_sig };
	sigset_t block;
	pid_t kids[256];

	if (nproc < 1 || nproc > 256)
		return 2;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	words = size / sizeof(*mem);
	for (size_t i = 0; i < words; i++)
		mem[i] = i * 0x9e3779b97f4a7c15ULL;
	for (int i = 1; i < nproc; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			return 1;
		if (kids[i] == 0) {
			serve();
			_exit(0);
		}
	}
	printf("ready\n");
	fflush(stdout);
	serve();
	for (int i = 1; i < nproc; i++) {
		kill(kids[i], SIGTERM);
		waitpid(kids[i], NULL, 0);
	}
	return 0;
}
