// SPDX-License-Identifier: GPL-2.0
/*
 * The lazy-pages daemon's second copier (lazy-int.h): a thread that runs
 * one UFFDIO_COPY at a time for the daemon's loop, so that a background
 * chunk is copied on two CPUs at once. A UFFDIO_COPY is all CPU (a page
 * allocated, charged and copied per page, about a third of it the copy):
 * one thread filled 512 MiB at about 0.7 of loopback TCP's bandwidth here.
 * Two threads' ioctls on one uffd share only the mmap lock, for reading.
 */
#define LOG_PREFIX "lazy-pages: "

#include <errno.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>

#include "lazy-int.h"
#include "log.h"
#include "util.h"

int lazy_uffd_copy(int uffd, uint64_t dst, const void *src, uint64_t len, int64_t *copied)
{
	struct uffdio_copy c = { .dst = dst, .src = (uint64_t)(uintptr_t)src, .len = len };
	int err = ioctl(uffd, UFFDIO_COPY, &c) ? neg_errno() : 0;

	*copied = err ? c.copy : (int64_t)len;
	return err;
}

static void *copier_main(void *arg)
{
	struct lazy_copier *cp = arg;

	pthread_mutex_lock(&cp->lock);
	for (;;) {
		while (!cp->busy && !cp->quit)
			pthread_cond_wait(&cp->cond, &cp->lock);
		if (cp->quit)
			break;
		pthread_mutex_unlock(&cp->lock);
		cp->err = lazy_uffd_copy(cp->uffd, cp->dst, cp->src, cp->len, &cp->copied);
		pthread_mutex_lock(&cp->lock);
		cp->busy = false;
		pthread_cond_broadcast(&cp->cond);
	}
	pthread_mutex_unlock(&cp->lock);
	return NULL;
}

bool lazy_copier_ready(struct lazy_copier *cp)
{
	sigset_t all, old;
	int err;

	if (cp->started || cp->failed)
		return cp->started;
	pthread_mutex_init(&cp->lock, NULL);
	pthread_cond_init(&cp->cond, NULL);
	/* the daemon's signals stay with its main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&cp->th, NULL, copier_main, cp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_warn("no second copier thread (%s): the background fill uses one CPU\n",
			strerror(err));
		cp->failed = true;
		return false;
	}
	cp->started = true;
	return true;
}

void lazy_copier_submit(struct lazy_copier *cp, int uffd, uint64_t dst, const void *src,
			uint64_t len)
{
	pthread_mutex_lock(&cp->lock);
	cp->uffd = uffd;
	cp->dst = dst;
	cp->src = src;
	cp->len = len;
	cp->busy = true;
	pthread_cond_broadcast(&cp->cond);
	pthread_mutex_unlock(&cp->lock);
}

int lazy_copier_wait(struct lazy_copier *cp, int64_t *copied)
{
	pthread_mutex_lock(&cp->lock);
	while (cp->busy)
		pthread_cond_wait(&cp->cond, &cp->lock);
	pthread_mutex_unlock(&cp->lock);
	*copied = cp->copied;
	return cp->err;
}

void lazy_copier_stop(struct lazy_copier *cp)
{
	if (!cp->started)
		return;
	pthread_mutex_lock(&cp->lock);
	cp->quit = true;
	pthread_cond_broadcast(&cp->cond);
	pthread_mutex_unlock(&cp->lock);
	pthread_join(cp->th, NULL);
	cp->started = false;
}
