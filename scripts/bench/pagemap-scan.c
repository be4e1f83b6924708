// SPDX-License-Identifier: GPL-2.0
/*
 * Scan throughput of the dump's memory scanner (criu-like/mem/mem-scan.c):
 * PAGEMAP_SCAN against reading /proc/PID/pagemap, over a stopped child that
 * holds SIZE MiB of written anonymous memory. Built and run by
 * scripts/bench/pagemap-scan.
 *
 *   pagemap-scan [-s MiB] [-r rounds] [-p dense|sparse]
 *
 * dense: every page written (one run); sparse: every other page (one run per
 * page, the worst case for the ioctl's output vector). The two methods
 * alternate round by round after one unmeasured round each, so that a slow
 * phase of the VM hits both (ARCHITECTURE.md 8).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mem-scan.h"
#include "proc-parse.h"
#include "util.h"

#define MAX_ROUNDS 64

static void __attribute__((noreturn)) child(size_t size, unsigned int step, int ready)
{
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(1);
	for (size_t off = 0; off < size; off += step * PAGE_SIZE)
		p[off] = 1;
	if (write(ready, "x", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One scan of the whole task; returns GiB of address space per second, or < 0. */
static double scan_once(pid_t pid, const struct vma_list *vl, unsigned int flags, uint64_t *to_save,
			uint64_t *scanned)
{
	struct shmem_set shm = { 0 };
	struct mem_plan plan;
	double gib, s;
	int err;

	err = mem_scan_task(pid, -1, vl, flags, &shm, &plan);
	if (err) {
		fprintf(stderr, "mem_scan_task: %s\n", strerror(-err));
		return err;
	}
	gib = (double)plan.stats.pages_scanned * PAGE_SIZE / (1UL << 30);
	s = plan.stats.scan_ns / 1e9;
	*to_save = plan.stats.pages_to_save;
	*scanned = plan.stats.pages_scanned;
	if (!!(flags & MEM_SCAN_FALLBACK) != plan.stats.fallback) {
		fprintf(stderr, "PAGEMAP_SCAN unavailable: nothing to compare\n");
		s = -1;
	}
	mem_plan_fini(&plan);
	shmem_set_fini(&shm);
	return s > 0 ? gib / s : -1;
}

static int run(pid_t pid, unsigned int rounds, size_t size)
{
	double ioc[MAX_ROUNDS], rd[MAX_ROUNDS], mi, mr;
	uint64_t save_ioc = 0, save_rd = 0, scanned = 0;
	struct vma_list vl = { 0 };
	int err = proc_parse_maps(pid, true, &vl);

	if (err) {
		fprintf(stderr, "smaps of %d: %s\n", pid, strerror(-err));
		return 1;
	}
	/* one unmeasured round of each: page tables and the pagemap code paths warm */
	if (scan_once(pid, &vl, 0, &save_ioc, &scanned) < 0 ||
	    scan_once(pid, &vl, MEM_SCAN_FALLBACK, &save_rd, &scanned) < 0)
		return 1;
	for (unsigned int i = 0; i < rounds; i++) {
		/* alternate which method goes first */
		unsigned int first = i % 2 ? MEM_SCAN_FALLBACK : 0;

		double a = scan_once(pid, &vl, first, first ? &save_rd : &save_ioc, &scanned);
		double b = scan_once(pid, &vl, first ^ MEM_SCAN_FALLBACK,
				     first ? &save_ioc : &save_rd, &scanned);

		if (a < 0 || b < 0)
			return 1;
		ioc[i] = first ? b : a;
		rd[i] = first ? a : b;
	}
	if (save_ioc != save_rd) {
		fprintf(stderr, "methods disagree: %" PRIu64 " vs %" PRIu64 " pages to save\n",
			save_ioc, save_rd);
		return 1;
	}
	mi = median(ioc, rounds);
	mr = median(rd, rounds);
	printf("scanned %.2f GiB of address space (%zu MiB written area), %" PRIu64
	       " pages to save, %u rounds\n",
	       (double)scanned * PAGE_SIZE / (1UL << 30), size >> 20, save_ioc, rounds);
	printf("PAGEMAP_SCAN     median %8.1f GiB/s  (min %.1f, max %.1f)\n", mi, ioc[0],
	       ioc[rounds - 1]);
	printf("pagemap read     median %8.1f GiB/s  (min %.1f, max %.1f)\n", mr, rd[0],
	       rd[rounds - 1]);
	printf("ratio PAGEMAP_SCAN / read: %.1fx\n", mi / mr);
	vma_list_fini(&vl);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mib = 2048, rounds = 7;
	unsigned int step = 1;
	int opt, p[2], status, ret;
	pid_t pid;
	char c;

	while ((opt = getopt(argc, argv, "s:r:p:")) != -1) {
		if (opt == 's')
			mib = strtoul(optarg, NULL, 0);
		else if (opt == 'r')
			rounds = strtoul(optarg, NULL, 0);
		else if (opt == 'p' && (!strcmp(optarg, "dense") || !strcmp(optarg, "sparse")))
			step = !strcmp(optarg, "sparse") ? 2 : 1;
		else
			return fprintf(stderr, "usage: %s [-s MiB] [-r rounds] [-p dense|sparse]\n",
				       argv[0]),
			       2;
	}
	if (!mib || !rounds || rounds > MAX_ROUNDS)
		return fprintf(stderr, "bad size or rounds (1..%d)\n", MAX_ROUNDS), 2;
	log_set_level(LOG_WARN);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (pipe(p))
		return perror("pipe"), 1;
	pid = fork();
	if (pid < 0)
		return perror("fork"), 1;
	if (pid == 0)
		child(mib << 20, step, p[1]);
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		fprintf(stderr, "the child could not write %lu MiB\n", mib);
		waitpid(pid, NULL, 0);
		return 1;
	}
	/* Stopped, as after the seize of a dump. */
	kill(pid, SIGSTOP);
	waitpid(pid, &status, WUNTRACED);
	printf("pattern %s, %lu MiB\n", step == 1 ? "dense" : "sparse (every other page)", mib);
	ret = run(pid, rounds, mib << 20);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return ret;
}
