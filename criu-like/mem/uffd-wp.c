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
static int protect_bytes(const struct uffd_wp_job *j, unsigned long from, unsigned long to)
{
	unsigned long pos = 0;

	for (unsigned int i = 0; i < j->n && pos < to; i++) {
		unsigned long a = (unsigned long)j->iov[i].iov_base, len = j->iov[i].iov_len;
		unsigned long s = max(pos, from), e = min(pos + len, to);
		struct uffdio_writeprotect wp = { .mode = UFFDIO_WRITEPROTECT_MODE_WP };

		if (s < e) {
			wp.range = (struct uffdio_range){ a + (s - pos), e - s };
			if (ioctl(j->uffd, UFFDIO_WRITEPROTECT, &wp)) {
				if (errno != ENOENT || !j->skip_gone)
					return neg_errno();
				pr_debug("pid %d: %llx-%llx is gone: not protected\n", j->pid,
					 (unsigned long long)wp.range.start,
					 (unsigned long long)(wp.range.start + wp.range.len));
			}
		}
		pos += len;
	}
	return 0;
}

/* Take chunks until none is left (or one failed). */
static void *worker(void *arg)
{
	struct uffd_wp_job *j = arg;

	for (;;) {
		unsigned long k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		unsigned long from = k * UFFD_WP_CHUNK;
		int err;

		if (from >= j->total || __atomic_load_n(&j->err, __ATOMIC_RELAXED))
			break;
		err = protect_bytes(j, from, min(from + UFFD_WP_CHUNK, j->total));
		if (err) {
			int zero = 0;

			__atomic_compare_exchange_n(&j->err, &zero, err, false, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static unsigned int nr_threads(unsigned long total)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (total < (64UL << 20) || cpus < 2)
		return 1;
	return (unsigned int)min((long)UFFD_WP_MAX_THREADS, cpus);
}

/* Set up @j; @threads: started now (the caller takes chunks too at join). */
static int job_init(struct uffd_wp_job *j, pid_t pid, int uffd, const struct iovec *iov,
		    unsigned int n, unsigned int threads, bool skip_gone)
{
	memset(j, 0, sizeof(*j));
	j->skip_gone = skip_gone;
	j->pid = pid;
	j->uffd = uffd;
	j->t0_ns = mem_now_ns();
	if (!n)
		return 0;
	j->iov = malloc(n * sizeof(*iov));
	if (!j->iov)
		return -ENOMEM;
	memcpy(j->iov, iov, n * sizeof(*iov));
	j->n = n;
	for (unsigned int i = 0; i < n; i++)
		j->total += iov[i].iov_len;
	j->nr_threads = min(threads, (unsigned int)UFFD_WP_MAX_THREADS);
	for (unsigned int i = 0; i < j->nr_threads; i++)
		j->started[i] = !pthread_create(&j->th[i], NULL, worker, j);
	return 0;
}

int uffd_wp_start(struct uffd_wp_job *j, pid_t pid, int uffd, const struct iovec *iov,
		  unsigned int n)
{
	unsigned long total = 0;

	for (unsigned int i = 0; i < n; i++)
		total += iov[i].iov_len;
	return job_init(j, pid, uffd, iov, n, nr_threads(total), false);
}

int uffd_wp_join(struct uffd_wp_job *j)
{
	int err;

	/* what no thread took yet (all of it if none started) */
	if (j->n)
		worker(j);
	for (unsigned int i = 0; i < j->nr_threads; i++)
		if (j->started[i]) {
			pthread_join(j->th[i], NULL);
			j->started[i] = false;
		}
	err = j->err;
	/* live: an address space gone (ESRCH) is the caller's to report */
	if (err && !(err == -ESRCH && j->skip_gone))
		pr_errno(err, "pid %d: UFFDIO_WRITEPROTECT", j->pid);
	else if (j->n)
		pr_debug("pid %d: %u ranges (%lu MiB) write-protected, %u threads and the "
			 "caller, %llu us after the start\n",
			 j->pid, j->n, j->total >> 20, j->nr_threads,
			 (mem_now_ns() - j->t0_ns) / 1000);
	free(j->iov);
	j->iov = NULL;
	j->n = j->nr_threads = 0;
	return err;
}

void uffd_wp_cancel(struct uffd_wp_job *j)
{
	int zero = 0;

	__atomic_compare_exchange_n(&j->err, &zero, -ECANCELED, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < j->nr_threads; i++)
		if (j->started[i]) {
			pthread_join(j->th[i], NULL);
			j->started[i] = false;
		}
	free(j->iov);
	j->iov = NULL;
	j->n = j->nr_threads = 0;
}

static int wp_ranges(pid_t pid, int uffd, const struct iovec *iov, unsigned int n, bool live)
{
	struct uffd_wp_job j;
	unsigned long total = 0;
	int err;

	for (unsigned int i = 0; i < n; i++)
		total += iov[i].iov_len;
	/* this thread is one of them */
	err = job_init(&j, pid, uffd, iov, n, nr_threads(total) - 1, live);
	return err ?: uffd_wp_join(&j);
}

int uffd_wp_ranges(pid_t pid, int uffd, const struct iovec *iov, unsigned int n)
{
	return wp_ranges(pid, uffd, iov, n, false);
}

int uffd_wp_ranges_live(pid_t pid, int uffd, const struct iovec *iov, unsigned int n)
{
	return wp_ranges(pid, uffd, iov, n, true);
}
