/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_UFFD_WP_H
#define CRIU_LIKE_UFFD_WP_H

/*
 * Write-protecting ranges of a task through its userfaultfd (mem/uffd-wp.c):
 * UFFDIO_WRITEPROTECT acts on the uffd's mm from any process, takes the
 * mmap_lock shared and each page table's own lock, so the ranges are split
 * in equal byte shares between threads. The largest cost of a freeze at
 * 2 GiB (each PTE is changed), hence also a background job that runs while
 * the dumper does something else.
 */
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/uio.h>

#define UFFD_WP_MAX_THREADS 2

struct uffd_wp_part {
	int uffd;
	const struct iovec *iov;
	unsigned int n;
	unsigned long from, to; /* bytes of the ranges, counted in order */
	pthread_t th;
	bool started;
	int err;
};

struct uffd_wp_job {
	pid_t pid;
	struct iovec *iov; /* a copy of the ranges, malloc'ed */
	unsigned int n, nr_parts;
	struct uffd_wp_part part[UFFD_WP_MAX_THREADS];
	unsigned long long t0_ns;
};

/*
 * Protect the @n ranges @iov of @pid through @uffd now, in this thread and
 * one more for 64 MiB and over (two CPUs or more). 0 or -errno (logged).
 */
int uffd_wp_ranges(pid_t pid, int uffd, const struct iovec *iov, unsigned int n);

/*
 * The same in the background: every share in a thread of its own (at least
 * one), the ranges copied. uffd_wp_join() waits for them and returns the
 * first error (logged); a job not started joins as 0. 0 or -errno.
 */
int uffd_wp_start(struct uffd_wp_job *j, pid_t pid, int uffd, const struct iovec *iov,
		  unsigned int n);
int uffd_wp_join(struct uffd_wp_job *j);

#endif
