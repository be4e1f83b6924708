// SPDX-License-Identifier: GPL-2.0
/*
 * Victim of the dump tests (dump-proc.sh, dump-failures.sh, scripts/bench/dump).
 *
 *   dump-victim state		4 threads with their own blocked masks, a
 *				sigaltstack, handlers, an itimer, a POSIX timer,
 *				a lowered rlimit, umask 027, cwd /tmp, a file at
 *				a position, a pipe holding data, oom_score_adj
 *				321, the child-subreaper flag; sleeps.
 *   dump-victim mem MIB [tree]	MIB MiB of anonymous memory, every page written
 *   dump-victim mem MIB huge	the same, 2 MiB-aligned and MADV_HUGEPAGE (transparent huge pages)
 *				with a pattern the victim checks; with "tree",
 *				the memory is in a child and the parent only
 *				counts. Each process prints "tick N errors E"
 *				every 10 ms (the child prefixes "child").
 *   dump-victim socket		holds a vsock socket (not dumpable yet) and ticks.
 *   dump-victim forest N [MIB]	a root and N-1 children, 1 MiB each, ticking as "mem"
 *				does, each line prefixed with "pI " (I = 0..N-1);
 *				with MIB, each checks instead the MIB MiB the root
 *				wrote before its forks (shared, copy-on-write).
 *
 * Each prints "ready PID" on stdout (flushed) once set up.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void on_sig(int sig)
{
	(void)sig;
}

static void *thread_fn(void *arg)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1 + (int)(intptr_t)arg);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (;;)
		pause();
	return NULL;
}

static int do_state(void)
{
	static char altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_handler = on_sig, .sa_flags = SA_ONSTACK | SA_RESTART };
	struct itimerval it = { { 5, 0 }, { 100, 0 } };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + 2 };
	struct itimerspec its = { { 7, 0 }, { 200, 0 } };
	struct rlimit rl = { 1000, 2000 };
	pthread_t th;
	timer_t timer;
	int i, fd, p[2];

	sigaltstack(&ss, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGRTMIN + 2, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	setitimer(ITIMER_REAL, &it, NULL);
	sigaction(SIGALRM, &sa, NULL);
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) || timer_settime(timer, 0, &its, NULL))
		return 1;
	setrlimit(RLIMIT_NOFILE, &rl);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fd = open("/proc/self/oom_score_adj", O_WRONLY);
	if (fd < 0 || write(fd, "321", 3) != 3 || close(fd))
		return 1;
	umask(027);
	if (chdir("/tmp"))
		return 1;
	fd = open("/etc/passwd", O_RDONLY);
	if (fd < 0 || lseek(fd, 17, SEEK_SET) != 17 || pipe(p) || write(p[1], "in flight", 9) != 9)
		return 1;
	for (i = 0; i < 3; i++)
		pthread_create(&th, NULL, thread_fn, (void *)(intptr_t)i);
	printf("ready %d\n", getpid());
	fflush(stdout);
	for (;;)
		pause();
}

static void tick_loop(const char *who, uint64_t *mem, size_t words)
{
	unsigned long n = 0, errors = 0;
	size_t i;

	for (;;) {
		for (i = 0; i < words; i += 512)
			if (mem[i] != i * 2654435761u)
				errors++;
		printf("%stick %lu errors %lu\n", who, n++, errors);
		fflush(stdout);
		usleep(10000);
	}
}

static uint64_t *fill(size_t mib, size_t *words, bool huge)
{
	size_t align = huge ? 2UL << 20 : 0, i;
	uint64_t *mem;
	char *p;

	*words = mib << 17;
	p = mmap(NULL, (mib << 20) + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	if (p == MAP_FAILED)
		exit(1);
	if (huge) {
		p = (char *)(((uintptr_t)p + align - 1) & ~(align - 1));
		if (madvise(p, mib << 20, MADV_HUGEPAGE))
			exit(1);
	}
	mem = (uint64_t *)p;
	for (i = 0; i < *words; i++)
		mem[i] = i * 2654435761u;
	return mem;
}

int main(int argc, char **argv)
{
	size_t words = 0;
	uint64_t *mem;

	if (argc >= 2 && !strcmp(argv[1], "state"))
		return do_state();
	if (argc >= 3 && !strcmp(argv[1], "mem")) {
		if (argc >= 4 && !strcmp(argv[3], "cow")) {
			/* filled, then forked: the child shares every page with its parent */
			pid_t pid;

			mem = fill(strtoul(argv[2], NULL, 0), &words, false);
			pid = fork();
			if (pid == 0)
				tick_loop("child ", mem, words);
			printf("ready %d child %d\n", getpid(), pid);
			tick_loop("", mem, words);
		}
		if (argc >= 4 && !strcmp(argv[3], "tree")) {
			pid_t pid = fork();

			if (pid == 0) {
				mem = fill(strtoul(argv[2], NULL, 0), &words, false);
				tick_loop("child ", mem, words);
			}
			printf("ready %d child %d\n", getpid(), pid);
			tick_loop("", NULL, 0);
		}
		mem = fill(strtoul(argv[2], NULL, 0), &words,
			   argc >= 4 && !strcmp(argv[3], "huge"));
		printf("ready %d\n", getpid());
		tick_loop("", mem, words);
	}
	if (argc >= 3 && !strcmp(argv[1], "forest")) {
		int n = atoi(argv[2]), i;
		size_t shared = argc >= 4 ? (size_t)atoi(argv[3]) : 0;
		char who[16] = "p0 ";

		mem = shared ? fill(shared, &words, false) : NULL;
		for (i = 1; i < n; i++)
			if (fork() == 0) {
				snprintf(who, sizeof(who), "p%d ", i);
				break;
			}
		if (!shared)
			mem = fill(1, &words, false);
		if (!strcmp(who, "p0 ")) {
			printf("ready %d\n", getpid());
			fflush(stdout);
		}
		tick_loop(who, mem, words);
	}
	if (argc >= 2 && !strcmp(argv[1], "socket")) {
		/* vsock sockets are not dumped: refused at dump time. */
		if (socket(AF_VSOCK, SOCK_SEQPACKET, 0) < 0)
			return 1;
		printf("ready %d\n", getpid());
		tick_loop("", NULL, 0);
	}
	fprintf(stderr, "usage: dump-victim state | mem MIB [tree|huge|cow] | forest N | socket\n");
	return 2;
}
