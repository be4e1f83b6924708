/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_UFFD_WP_H
#define CRIU_LIKE_UFFD_WP_H

/*
 * Write-protecting ranges of a task through its userfaultfd (mem/uffd-wp.c):
 * UFFDIO_WRITEPROTECT acts on the uffd's mm from any process, takes the
 * mmap_lock shared and each page table's own lock, so several threads take
 * the ranges in chunks. The largest cost of a freeze at
 * 2 GiB (each PTE is changed), hence also a background job that runs while
 * the dumper does something else.
 */
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/uio.h>

#define UFFD_WP_MAX_THREADS 2
#define UFFD_WP_CHUNK (8UL << 20) /* bytes taken by a thread at a time */

struct uffd_wp_job {
	pid_t pid;
	int uffd;
	struct iovec *iov; /* a copy of the ranges, malloc'ed */
	unsigned int n, nr_threads;
	unsigned long total; /* bytes */
	unsigned long next; /* the next chunk to take (atomic) */
	int err; /* the first error (atomic) */
	bool skip_gone; /* -ENOENT (a range unmapped or moved meanwhile) is not an error */
	pthread_t th[UFFD_WP_MAX_THREADS];
	bool started[UFFD_WP_MAX_THREADS];
	unsigned long long t0_ns;
};

/*
 * Protect the @n ranges @iov of @pid through @uffd now, in this thread and
 * one more for 64 MiB and over (two CPUs or more). 0 or -errno (logged).
 */
int uffd_wp_ranges(pid_t pid, int uffd, const struct iovec *iov, unsigned int n);
/*
 * The same, the task running (a pre-dump round): a range it unmapped or
 * moved since (-ENOENT: not registered there any more) is skipped, with
 * what follows it in the same range. A page left unprotected only reads as
 * written to the next round, which saves it again. -ESRCH (not logged): the
 * address space has ended (the task exited or exec'd).
 */
int uffd_wp_ranges_live(pid_t pid, int uffd, const struct iovec *iov, unsigned int n);

/*
 * The same in the background (the ranges copied): threads take the ranges
 * UFFD_WP_CHUNK bytes at a time; uffd_wp_join() takes what is left in the
 * calling thread, waits for the others and returns the first error (logged);
 * a job not started joins as 0. 0 or -errno.
 */
int uffd_wp_start(struct uffd_wp_job *j, pid_t pid, int uffd, const struct iovec *iov,
		  unsigned int n);
int uffd_wp_join(struct uffd_wp_job *j);
/* Stop @j where it is (a dump that failed) and wait for its threads. */
void uffd_wp_cancel(struct uffd_wp_job *j);

#endif
