/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_PAR_H
#define CRIU_LIKE_PAR_H

/*
 * Worker threads beside the tracer thread (util/par.c, Documentation/infect.md
 * "The commands of a tree in parallel"). While workers run, a thread runs
 * criu-like's code holding the big lock; it drops it only around a wait or
 * a read that touches nothing shared (par_drop(), par_take()). ptrace
 * requests, which only the tracer thread may make, go to it through
 * par_tracer_run(). Outside a parallel run every call here is a no-op or a
 * direct call.
 */
#include <pthread.h>
#include <stdbool.h>

/*
 * Drop the big lock if this thread holds it and is not pinned: true when it
 * was dropped (give that to par_take()). Nothing shared may be touched until
 * par_take(), but inside par_hold() .. par_unhold().
 */
bool par_drop(void);
void par_take(bool dropped);

/* Within a par_drop() section, the big lock for a moment: give the result to par_unhold(). */
bool par_hold(void);
void par_unhold(bool taken);

/*
 * Until par_unpin(), par_drop() keeps the lock: for a section whose shared
 * state must look to the other workers as if it ran at once (nesting).
 */
void par_pin(void);
void par_unpin(void);

/*
 * @fn(@arg) run on the tracer thread (at once when this is it): its return
 * value. The calling worker keeps the big lock if it holds it: @fn runs in
 * its name.
 */
int par_tracer_run(int (*fn)(void *arg), void *arg);

/*
 * The tracer thread, which holds no big lock: after par_workers_add() and
 * the workers' start, serve par_tracer_run() requests until every worker has
 * left.
 */
void par_workers_add(int n);
void par_tracer_serve(void);

/* A worker thread: from its start (the big lock taken) to its end (given back). */
void par_worker_enter(void);
void par_worker_leave(void);

/* Wait on @cv with the big lock (held by this thread), as pthread_cond_wait(). */
void par_cond_wait(pthread_cond_t *cv);

/*
 * @fn(@arg, i) for each i in [0, @n), its result in @errs[i], on up to one
 * thread per CPU, the caller one of them, without the big lock: @fn must be
 * safe side by side with itself. No i is started after one failed (@errs of
 * those left 0, @ran[i] false if @ran is not NULL). Returns the first
 * failure in the order of i, or 0.
 */
int par_for(unsigned int n, int (*fn)(void *arg, unsigned int i), void *arg, int *errs, bool *ran);

#endif
