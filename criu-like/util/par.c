// SPDX-License-Identifier: GPL-2.0
/*
 * The big lock of a parallel run and the tracer thread's requests (par.h).
 * The lock makes the workers' code as safe as one thread's: shared tables
 * (files, shared memory, image ids, statistics) are only ever touched with
 * it held, and a worker gives it up only where it waits for its parasite or
 * reads what belongs to its own task. ptrace requests are answered for the
 * thread that attached: a worker hands them to the tracer thread and waits,
 * keeping the big lock if it held it: the tracer acts in its name, so the
 * worker's section is not broken by the hand-over.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>

#include "par.h"

static pthread_mutex_t big = PTHREAD_MUTEX_INITIALIZER;
static __thread bool held; /* this thread holds the big lock */
static __thread bool dropped; /* ... and gave it up for a while (par_drop()) */
static __thread unsigned int pinned; /* par_pin() depth: par_drop() does nothing */
static __thread bool worker; /* not the tracer thread */

/* A request of par_tracer_run(), queued on the worker's stack. */
struct tracer_req {
	int (*fn)(void *arg);
	void *arg;
	int ret;
	bool done;
	struct tracer_req *next;
};

/* The tracer's queue and the number of workers, under their own lock. */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER; /* a request, or a worker gone */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER; /* a request answered */
static struct tracer_req *reqs; /* the order does not matter: one per waiting worker */
static unsigned int nr_workers;

bool par_drop(void)
{
	if (!held || pinned)
		return false;
	held = false;
	dropped = true;
	pthread_mutex_unlock(&big);
	return true;
}

void par_take(bool was_dropped)
{
	if (!was_dropped)
		return;
	pthread_mutex_lock(&big);
	held = true;
	dropped = false;
}

bool par_hold(void)
{
	if (held || !dropped)
		return false;
	par_take(true);
	return true;
}

void par_unhold(bool taken)
{
	if (taken)
		par_drop();
}

void par_pin(void)
{
	pinned++;
}

void par_unpin(void)
{
	pinned--;
}

void par_cond_wait(pthread_cond_t *cv)
{
	held = false;
	pthread_cond_wait(cv, &big);
	held = true;
}

int par_tracer_run(int (*fn)(void *arg), void *arg)
{
	struct tracer_req r = { .fn = fn, .arg = arg };

	if (!worker)
		return fn(arg);
	pthread_mutex_lock(&q_lock);
	r.next = reqs;
	reqs = &r;
	pthread_cond_signal(&q_cv);
	while (!r.done)
		pthread_cond_wait(&done_cv, &q_lock);
	pthread_mutex_unlock(&q_lock);
	return r.ret;
}

void par_tracer_serve(void)
{
	pthread_mutex_lock(&q_lock);
	for (;;) {
		while (reqs) {
			struct tracer_req *r = reqs;

			reqs = r->next;
			pthread_mutex_unlock(&q_lock);
			r->ret = r->fn(r->arg);
			pthread_mutex_lock(&q_lock);
			r->done = true;
			pthread_cond_broadcast(&done_cv);
		}
		if (!nr_workers)
			break;
		pthread_cond_wait(&q_cv, &q_lock);
	}
	pthread_mutex_unlock(&q_lock);
}

void par_workers_add(int n)
{
	pthread_mutex_lock(&q_lock);
	nr_workers += n;
	pthread_mutex_unlock(&q_lock);
}

void par_worker_enter(void)
{
	worker = true;
	pthread_mutex_lock(&big);
	held = true;
}

void par_worker_leave(void)
{
	held = false;
	pthread_mutex_unlock(&big);
	pthread_mutex_lock(&q_lock);
	nr_workers--;
	pthread_cond_signal(&q_cv);
	pthread_mutex_unlock(&q_lock);
}

/* par_for(): the indices are taken in order by every thread. */
struct par_for {
	int (*fn)(void *arg, unsigned int i);
	void *arg;
	int *errs;
	bool *ran;
	unsigned int n;
	atomic_uint next;
	atomic_bool stop;
};

static void *par_for_thread(void *arg)
{
	struct par_for *f = arg;
	unsigned int i;

	while (!atomic_load(&f->stop) && (i = atomic_fetch_add(&f->next, 1)) < f->n) {
		f->errs[i] = f->fn(f->arg, i);
		if (f->ran)
			f->ran[i] = true;
		if (f->errs[i])
			atomic_store(&f->stop, true);
	}
	return NULL;
}

/*
 * A worker with an fs context of its own, the same cwd and root: the kernel
 * drops a thread's share of it only after pthread_join() has returned
 * (exit_fs() after exit_mm()'s wake-up), and setns() into a mount namespace
 * fails with EINVAL while another thread shares the caller's (ci20d:
 * runc-lazy-fail, "cannot enter the tree's mount namespace: Invalid
 * argument" right after the restore's image reads side by side).
 */
static void *par_for_worker(void *arg)
{
	if (unshare(CLONE_FS))
		return NULL; /* the caller's own pass takes every index left */
	return par_for_thread(arg);
}

int par_for(unsigned int n, int (*fn)(void *arg, unsigned int i), void *arg, int *errs, bool *ran)
{
	struct par_for f = { .fn = fn, .arg = arg, .errs = errs, .ran = ran, .n = n };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t th[16];
	unsigned int nth = 0, want = cpus > 1 ? (unsigned int)cpus - 1 : 0, i;
	sigset_t all, old;

	if (want > n - (n > 0))
		want = n ? n - 1 : 0;
	if (want > sizeof(th) / sizeof(th[0]))
		want = sizeof(th) / sizeof(th[0]);
	atomic_init(&f.next, 0);
	atomic_init(&f.stop, false);
	for (i = 0; i < n; i++) {
		errs[i] = 0;
		if (ran)
			ran[i] = false;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (; nth < want; nth++)
		if (pthread_create(&th[nth], NULL, par_for_worker, &f))
			break;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	par_for_thread(&f);
	while (nth)
		pthread_join(th[--nth], NULL);
	for (i = 0; i < n; i++)
		if (errs[i])
			return errs[i];
	return 0;
}
