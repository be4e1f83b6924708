// SPDX-License-Identifier: GPL-2.0
/*
 * Write-protecting a task's ranges through its userfaultfd, in up to
 * UFFD_WP_MAX_THREADS threads (include/uffd-wp.h).
 */
#define LOG_PREFIX "mem: "

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#include "compat.h"
#include "log.h"
#include "mem-xfer.h"
#include "uffd-wp.h"
#include "util.h"

/* Write-protect the bytes [from, to) of the ranges, counted one after the other. */
static void *part_run(void *arg)
{
	struct uffd_wp_part *p = arg;
	unsigned long pos = 0;
	unsigned int i;

	for (i = 0; i < p->n && !p->err && pos < p->to; i++) {
		unsigned long a = (unsigned long)p->iov[i].iov_base, len = p->iov[i].iov_len;
		unsigned long s = max(pos, p->from), e = min(pos + len, p->to);
		struct uffdio_writeprotect wp = { .mode = UFFDIO_WRITEPROTECT_MODE_WP };

		if (s < e) {
			wp.range = (struct uffdio_range){ a + (s - pos), e - s };
			if (ioctl(p->uffd, UFFDIO_WRITEPROTECT, &wp))
				p->err = neg_errno();
		}
		pos += len;
	}
	return NULL;
}

/* Split the ranges in @nr shares of whole pages. */
static void split(struct uffd_wp_part *p, unsigned int nr, int uffd, const struct iovec *iov,
		  unsigned int n)
{
	unsigned long total = 0, share;
	unsigned int i;

	for (i = 0; i < n; i++)
		total += iov[i].iov_len;
	share = (total / nr) & PAGE_MASK;
	for (i = 0; i < nr; i++)
		p[i] = (struct uffd_wp_part){ .uffd = uffd,
					      .iov = iov,
					      .n = n,
					      .from = i * share,
					      .to = i + 1 == nr ? total : (i + 1) * share };
}

static unsigned int nr_threads(const struct iovec *iov, unsigned int n)
{
	unsigned long total = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	for (unsigned int i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (total < (64UL << 20) || cpus < 2)
		return 1;
	return (unsigned int)min((long)UFFD_WP_MAX_THREADS, cpus);
}

static int parts_err(pid_t pid, const struct uffd_wp_part *p, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		if (p[i].err) {
			pr_errno(p[i].err, "pid %d: UFFDIO_WRITEPROTECT", pid);
			return p[i].err;
		}
	return 0;
}

int uffd_wp_ranges(pid_t pid, int uffd, const struct iovec *iov, unsigned int n)
{
	struct uffd_wp_part p[UFFD_WP_MAX_THREADS];
	unsigned int i, nr = nr_threads(iov, n);

	split(p, nr, uffd, iov, n);
	for (i = 1; i < nr; i++)
		p[i].started = !pthread_create(&p[i].th, NULL, part_run, &p[i]);
	/* a thread that could not start: its share is done here */
	for (i = 0; i < nr; i++)
		if (!i || !p[i].started)
			part_run(&p[i]);
	for (i = 1; i < nr; i++)
		if (p[i].started)
			pthread_join(p[i].th, NULL);
	return parts_err(pid, p, nr);
}

int uffd_wp_start(struct uffd_wp_job *j, pid_t pid, int uffd, const struct iovec *iov,
		  unsigned int n)
{
	unsigned int i;

	memset(j, 0, sizeof(*j));
	j->pid = pid;
	j->t0_ns = mem_now_ns();
	if (!n)
		return 0;
	j->iov = malloc(n * sizeof(*iov));
	if (!j->iov)
		return -ENOMEM;
	memcpy(j->iov, iov, n * sizeof(*iov));
	j->n = n;
	j->nr_parts = nr_threads(iov, n);
	split(j->part, j->nr_parts, uffd, j->iov, n);
	for (i = 0; i < j->nr_parts; i++) {
		int e = pthread_create(&j->part[i].th, NULL, part_run, &j->part[i]);

		if (e) {
			/* done here, now: slower, not wrong */
			part_run(&j->part[i]);
			continue;
		}
		j->part[i].started = true;
	}
	return 0;
}

int uffd_wp_join(struct uffd_wp_job *j)
{
	int err;

	for (unsigned int i = 0; i < j->nr_parts; i++)
		if (j->part[i].started) {
			pthread_join(j->part[i].th, NULL);
			j->part[i].started = false;
		}
	err = parts_err(j->pid, j->part, j->nr_parts);
	if (j->n)
		pr_debug("pid %d: %u ranges write-protected in the background in %u threads, "
			 "%llu us after the start\n",
			 j->pid, j->n, j->nr_parts, (mem_now_ns() - j->t0_ns) / 1000);
	free(j->iov);
	j->iov = NULL;
	j->n = j->nr_parts = 0;
	return err;
}
