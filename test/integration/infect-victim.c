// SPDX-License-Identifier: GPL-2.0
/*
 * Victim of the infection tests, and its signal sender.
 *
 *   infect-victim victim	8 threads: 5 checksum their own memory with
 *				integer and floating-point sums, 1 checks that
 *				its vector and general registers keep known
 *				values (AVX-512 when the CPU has it), 1 sleeps
 *				in read() on a pipe; main sleeps in nanosleep.
 *				Handlers count SIGRTMIN (queued by the sender)
 *				and SIGALRM (a 5 ms itimer). A line
 *				"progress P errors E rt R" every 10 ms;
 *				SIGUSR1 prints "final ..." and exits.
 *   infect-victim tree		a parent and a child, each with a POSIX timer,
 *				a sigaltstack, an ignored signal and a few
 *				fds, sleeping until killed.
 *   infect-victim novdso	unmaps its vDSO, then sleeps in pause().
 *   infect-victim seccomp	socket() fails with EPERM (a seccomp filter);
 *				every 10 ms checks it still does and prints a
 *				counter and the number of times it did not.
 *   infect-victim sender PID	sigqueue(PID, SIGRTMIN) every millisecond;
 *				on SIGTERM prints "sent N" (queued ones only).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stddef.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>

#define WORDS (16 * 1024)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static atomic_ulong rt_received, alarms, progress, errors;
static volatile sig_atomic_t stop_sender, report;

static void on_rt(int sig)
{
	(void)sig;
	atomic_fetch_add(&rt_received, 1);
}

static void on_alarm(int sig)
{
	(void)sig;
	atomic_fetch_add(&alarms, 1);
}

static void on_usr1(int sig)
{
	(void)sig;
	report = 1;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static void *checksummer(void *arg)
{
	uint64_t *buf = malloc(WORDS * sizeof(*buf)), seed = (uintptr_t)arg << 32;

	for (;;) {
		uint64_t sum = 0, sum2 = 0;
		double d = 0, d2 = 0;
		size_t i;

		seed++;
		for (i = 0; i < WORDS; i++) {
			buf[i] = mix(seed + i);
			sum += buf[i];
			d += (double)(buf[i] >> 40);
		}
		for (i = 0; i < WORDS; i++) {
			if (buf[i] != mix(seed + i))
				atomic_fetch_add(&errors, 1);
			sum2 += buf[i];
			d2 += (double)(buf[i] >> 40);
		}
		if (sum != sum2 || d != d2)
			atomic_fetch_add(&errors, 1);
		atomic_fetch_add(&progress, 1);
	}
	return NULL;
}

/* Hold known values in registers for a few milliseconds at a time and check them. */
__attribute__((target("avx512f"))) static unsigned long regs_check_avx512(unsigned long n)
{
	static const uint64_t pat[8]
		__attribute__((aligned(64))) = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL,
						 0x1111222233334444ULL, 0x5555666677778888ULL,
						 0x99990000aaaabbbbULL, 0xccccddddeeeeffffULL,
						 0x0f0f0f0f0f0f0f0fULL, 0xf0f0f0f0f0f0f0f0ULL };
	unsigned long bad = 0;

	__asm__ volatile("vmovdqa64 (%[p]), %%zmm17\n\t"
			 "vmovdqa64 (%[p]), %%zmm5\n\t"
			 "movabs $0x1234567890abcdef, %%r12\n\t"
			 "1:\n\t"
			 "vpcmpeqq (%[p]), %%zmm17, %%k1\n\t"
			 "kmovw %%k1, %%eax\n\t"
			 "cmp $0xff, %%eax\n\t"
			 "jne 2f\n\t"
			 "vpcmpeqq (%[p]), %%zmm5, %%k1\n\t"
			 "kmovw %%k1, %%eax\n\t"
			 "cmp $0xff, %%eax\n\t"
			 "jne 2f\n\t"
			 "movabs $0x1234567890abcdef, %%rax\n\t"
			 "cmp %%rax, %%r12\n\t"
			 "je 3f\n\t"
			 "2:\n\t"
			 "inc %[bad]\n\t"
			 "vmovdqa64 (%[p]), %%zmm17\n\t"
			 "vmovdqa64 (%[p]), %%zmm5\n\t"
			 "movabs $0x1234567890abcdef, %%r12\n\t"
			 "3:\n\t"
			 "dec %[n]\n\t"
			 "jnz 1b\n\t"
			 : [bad] "+r"(bad), [n] "+r"(n)
			 : [p] "r"(pat)
			 : "rax", "r12", "xmm5", "xmm17", "k1", "cc", "memory");
	return bad;
}

static void *reg_checker(void *arg)
{
	(void)arg;
	if (!__builtin_cpu_supports("avx512f"))
		return checksummer((void *)99);
	for (;;) {
		unsigned long bad = regs_check_avx512(2000000);

		if (bad)
			atomic_fetch_add(&errors, bad);
		atomic_fetch_add(&progress, 1);
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	int p[2];
	char c;

	(void)arg;
	if (pipe(p))
		abort();
	for (;;) {
		/* Interrupted by handlers now and then: EINTR is fine, data is not. */
		if (read(p[0], &c, 1) >= 0)
			atomic_fetch_add(&errors, 1);
	}
	return NULL;
}

static int victim(void)
{
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } };
	struct sigaction sa = { 0 };
	pthread_t th;
	long i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sa.sa_handler = on_rt;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGRTMIN, &sa, NULL);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (i = 1; i <= 5; i++)
		pthread_create(&th, NULL, checksummer, (void *)i);
	pthread_create(&th, NULL, reg_checker, NULL);
	pthread_create(&th, NULL, sleeper, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	printf("started\n");
	while (!report) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		printf("progress %lu errors %lu rt %lu alarms %lu\n", atomic_load(&progress),
		       atomic_load(&errors), atomic_load(&rt_received), atomic_load(&alarms));
	}
	printf("final progress %lu errors %lu rt %lu alarms %lu\n", atomic_load(&progress),
	       atomic_load(&errors), atomic_load(&rt_received), atomic_load(&alarms));
	return 0;
}

static void tree_member(void)
{
	static char altstack[64 * 1024];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2 };
	struct itimerspec its = { { 0, 10 * 1000 * 1000 }, { 0, 10 * 1000 * 1000 } };
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_ONSTACK | SA_RESTART };
	timer_t t;
	int p[2];

	if (sigaltstack(&ss, NULL) || sigaction(SIGUSR2, &sa, NULL) ||
	    timer_create(CLOCK_MONOTONIC, &sev, &t) || timer_settime(t, 0, &its, NULL) || pipe(p))
		abort();
	signal(SIGHUP, SIG_IGN);
	for (;;)
		pause();
}

static int tree(void)
{
	if (fork() == 0)
		tree_member();
	tree_member();
	return 0;
}

static int novdso(void)
{
	char line[256];
	unsigned long start, end;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			munmap((void *)start, end - start);
	if (f)
		fclose(f);
	for (;;)
		pause();
	return 0;
}

static int seccomp_victim(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { ARRAY_LEN(f), f };
	unsigned long n = 0, errors = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		abort();
	for (;;) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		int s;

		nanosleep(&ts, NULL);
		s = socket(AF_UNIX, SOCK_DGRAM, 0);
		if (s >= 0 || errno != EPERM)
			errors++;
		if (s >= 0)
			close(s);
		printf("progress %lu errors %lu\n", ++n, errors);
	}
	return 0;
}

static void on_term(int sig)
{
	(void)sig;
	stop_sender = 1;
}

static int sender(pid_t pid)
{
	struct timespec next;
	unsigned long sent = 0;
	union sigval v = { 0 };

	signal(SIGTERM, on_term);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop_sender) {
		next.tv_nsec += 1000 * 1000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		v.sival_int = (int)sent;
		if (sigqueue(pid, SIGRTMIN, v) == 0)
			sent++;
		else if (errno != EAGAIN)
			break;
	}
	printf("sent %lu\n", sent);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "victim"))
		return victim();
	if (argc == 2 && !strcmp(argv[1], "seccomp"))
		return seccomp_victim();
	if (argc == 2 && !strcmp(argv[1], "novdso"))
		return novdso();
	if (argc == 2 && !strcmp(argv[1], "tree"))
		return tree();
	if (argc == 3 && !strcmp(argv[1], "sender"))
		return sender(atoi(argv[2]));
	fprintf(stderr, "usage: %s victim | sender PID\n", argv[0]);
	return 2;
}
