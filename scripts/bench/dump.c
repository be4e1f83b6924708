// SPDX-License-Identifier: GPL-2.0
/*
 * Memory dump throughput: a child writes SIZE MiB of anonymous memory and
 * waits; each round seizes and infects it, runs dump_task_mm() into DIR
 * (pages spliced to the image, crc32c of every run), cures and releases it,
 * then dd writes the same number of bytes to DIR. Rounds alternate dump and
 * dd (ARCHITECTURE.md 8); the first of each is a warm-up. Prints the median
 * GiB/s and the ratios to memcpy and to dd. Run as root.
 *
 *   dump -s MiB -d DIR [-r rounds] [-p]   (-p: print the memory progress line)
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "dump.h"
#include "image.h"
#include "infect.h"
#include "log.h"
#include "util.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* files.c is not linked here: only the exe goes through it, and its id is not looked at. */
int dump_file_by_fd(struct dump_ctx *ctx, pid_t pid, int fd, const char *path, int flags,
		    uint32_t *id)
{
	struct stat st;

	(void)ctx, (void)pid, (void)path, (void)flags;
	if (fstat(fd, &st))
		return -errno;
	*id = (uint32_t)st.st_ino;
	return 0;
}

static pid_t start_child(size_t size)
{
	int p[2];
	pid_t pid;
	char c = 0;

	if (pipe(p))
		return -errno;
	pid = fork();
	if (pid == 0) {
		uint8_t *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
		size_t i;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (m == MAP_FAILED)
			_exit(1);
		for (i = 0; i < size; i += 64)
			m[i] = (uint8_t)(i >> 12);
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1)
		pid = -EIO;
	close(p[0]);
	return pid;
}

static void clean_dir(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -f %s/*.img %s/dd.out", dir, dir);
	if (system(cmd))
		fprintf(stderr, "cannot clean %s\n", dir);
}

/* One dump of @pid into @dir: ns spent in dump_task_mm(), or 0 on failure. */
static bool progress;

static uint64_t dump_once(pid_t pid, const char *dir, uint64_t *bytes)
{
	struct dump_ctx ctx = { .next_pages_id = 1, .progress = progress };
	struct dump_task dt = { 0 };
	struct pstree *t = NULL;
	uint64_t t0, ns = 0;
	int err;

	clean_dir(dir);
	ctx.dirfd = open(dir, O_DIRECTORY | O_RDONLY);
	if (ctx.dirfd < 0 || seize_tree(pid, NULL, &t))
		return 0;
	dt.t = t->root;
	ctx.tree = t, ctx.nr_tasks = 1, ctx.tasks = &dt;
	err = proc_parse_stat(pid, 0, &dt.stat);
	if (!err)
		err = proc_parse_maps(pid, true, &dt.vmas);
	if (!err)
		err = parasite_infect(pid, &pid, 1, &dt.ctl);
	t0 = now_ns();
	if (!err)
		err = dump_task_mm(&ctx, &dt);
	if (!err)
		ns = now_ns() - t0;
	if (dt.ctl)
		parasite_cure(dt.ctl);
	unseize_tree(t, UNSEIZE_RESUME);
	vma_list_fini(&dt.vmas);
	mem_plan_fini(&dt.plan);
	shmem_set_fini(&ctx.shm);
	close(ctx.dirfd);
	*bytes = ctx.stats.bytes_written;
	return ns;
}

static uint64_t dd_once(const char *dir, size_t mib)
{
	char cmd[512];
	uint64_t t0;

	clean_dir(dir);
	snprintf(cmd, sizeof(cmd), "dd if=/dev/zero of=%s/dd.out bs=1M count=%zu 2>/dev/null", dir,
		 mib);
	t0 = now_ns();
	if (system(cmd))
		return 0;
	return now_ns() - t0;
}

static double memcpy_gibs(size_t size)
{
	uint8_t *a = malloc(size), *b = malloc(size);
	uint64_t best = UINT64_MAX, t0;
	int i;

	memset(a, 1, size);
	memset(b, 2, size);
	for (i = 0; i < 5; i++) {
		t0 = now_ns();
		memcpy(b, a, size);
		best = min(best, now_ns() - t0);
	}
	free(a);
	free(b);
	return (double)size / (1 << 30) * 1e9 / (double)best;
}

static double crc_gibs(size_t size)
{
	uint8_t *a = malloc(size);
	uint64_t best = UINT64_MAX, t0;
	volatile uint32_t sink;
	int i;

	memset(a, 3, size);
	for (i = 0; i < 5; i++) {
		t0 = now_ns();
		sink = crc32c(0, a, size);
		best = min(best, now_ns() - t0);
	}
	(void)sink;
	free(a);
	return (double)size / (1 << 30) * 1e9 / (double)best;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	size_t mib = 512, size;
	const char *dir = "/dev/shm";
	unsigned int rounds = 5, i;
	uint64_t dump_ns[64], dd_ns[64], bytes = 0;
	double gib, dump_g, dd_g, mc_g;
	pid_t pid;
	int opt;

	while ((opt = getopt(argc, argv, "s:d:r:p")) != -1) {
		if (opt == 's')
			mib = strtoul(optarg, NULL, 0);
		else if (opt == 'd')
			dir = optarg;
		else if (opt == 'p')
			progress = true;
		else if (opt == 'r')
			rounds = min(strtoul(optarg, NULL, 0), 64UL);
		else
			return 2;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	size = mib << 20;
	pid = start_child(size);
	if (pid < 0)
		return 1;
	/* Warm-up of both, then alternate. */
	if (!dump_once(pid, dir, &bytes) || !dd_once(dir, mib))
		goto fail;
	for (i = 0; i < rounds; i++) {
		dump_ns[i] = dump_once(pid, dir, &bytes);
		dd_ns[i] = dd_once(dir, mib);
		if (!dump_ns[i] || !dd_ns[i])
			goto fail;
	}
	clean_dir(dir);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	qsort(dump_ns, rounds, sizeof(*dump_ns), cmp_u64);
	qsort(dd_ns, rounds, sizeof(*dd_ns), cmp_u64);
	gib = (double)bytes / (1 << 30);
	dump_g = gib * 1e9 / (double)dump_ns[rounds / 2];
	dd_g = (double)mib / 1024 * 1e9 / (double)dd_ns[rounds / 2];
	mc_g = memcpy_gibs(min(size, (size_t)512 << 20));
	printf("%5zu MiB to %-10s dump %6.2f GiB/s  dd %6.2f GiB/s  memcpy %6.2f GiB/s  "
	       "crc32c %6.2f GiB/s  dump/dd %.2f  dump/memcpy %.2f\n",
	       mib, dir, dump_g, dd_g, mc_g, crc_gibs(64 << 20), dump_g / dd_g, dump_g / mc_g);
	return 0;
fail:
	fprintf(stderr, "dump bench: a round failed\n");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 1;
}
