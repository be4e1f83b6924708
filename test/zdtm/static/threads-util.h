/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers of the tests with many threads (cgroup_threads.c, threads_children.c). */
#ifndef ZDTM_THREADS_UTIL_H
#define ZDTM_THREADS_UTIL_H

#include <pthread.h>
#include <string.h>

#include "zdtmtst.h"

/* Start threads @th[0..@n), each running @fn with its index as argument: 0, or -errno after fail(). */
static inline int test_threads_start(pthread_t *th, long n, void *(*fn)(void *))
{
	long i;
	int err;

	for (i = 0; i < n; i++) {
		err = pthread_create(&th[i], NULL, fn, (void *)i);
		if (err) {
			fail("pthread_create of thread %ld: %s", i, strerror(err));
			return -err;
		}
	}
	return 0;
}

#endif
