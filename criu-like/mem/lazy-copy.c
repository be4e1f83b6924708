// SPDX-License-Identifier: GPL-2.0
/*
 * The lazy-pages daemon's second copier (lazy-int.h): a thread that runs
 * one UFFDIO_COPY at a time for the daemon's loop, so that a background
 * chunk is copied on two CPUs at once. A UFFDIO_COPY is all CPU (a page
 * allocated, charged and copied per page, about a third of it the copy):
 * one thread filled 512 MiB at about 0.7 of loopback TCP's bandwidth here.
 * Two threads' ioctls on one uffd share only the mmap lock, for reading.
 * And the daemon's fills (lazy_fill()): by pieces, in halves on both
 * threads, cut short for a fault elsewhere.
 */
#define LOG_PREFIX "lazy-pages: "

#include <errno.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

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

/*
 * A fault or event that comes during a background chunk waited for the
 * whole chunk, both halves: a migrated redis whose requests fault on page
 * after page, each fault behind a 1 MiB chunk (1.6-2 ms under load), paused
 * its clients 174 ms in one migration (scripts/bench/migrate TRACE=: redis
 * woke at the chunks' cadence for 90 ms). Copied by pieces, a copy asks
 * @cut after each piece whether to stop there.
 */
#define LZ_PIECE (128UL << 10)

int lazy_uffd_copy_cut(int uffd, uint64_t dst, const void *src, uint64_t len, bool (*cut)(void *),
		       void *arg, int64_t *copied)
{
	uint64_t off = 0;
	int err = 0;

	while (off < len) {
		uint64_t n = min(len - off, cut ? LZ_PIECE : len - off);
		int64_t c;

		err = lazy_uffd_copy(uffd, dst + off, (const uint8_t *)src + off, n, &c);
		if (err) {
			*copied = off ? (int64_t)off + max(c, (int64_t)0) : c;
			return err;
		}
		off += n;
		if (off < len && cut(arg))
			break;
	}
	*copied = (int64_t)off;
	return 0;
}

/* The copier's half stops where the loop said to (lazy_copier_wait()'s @cut). */
static bool copier_cut(void *arg)
{
	return __atomic_load_n(&((struct lazy_copier *)arg)->cut, __ATOMIC_RELAXED);
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
		cp->err = lazy_uffd_copy_cut(cp->uffd, cp->dst, cp->src, cp->len,
					     cp->cuttable ? copier_cut : NULL, cp, &cp->copied);
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
			uint64_t len, bool cuttable)
{
	pthread_mutex_lock(&cp->lock);
	cp->uffd = uffd;
	cp->cuttable = cuttable;
	__atomic_store_n(&cp->cut, false, __ATOMIC_RELAXED);
	cp->dst = dst;
	cp->src = src;
	cp->len = len;
	cp->busy = true;
	pthread_cond_broadcast(&cp->cond);
	pthread_mutex_unlock(&cp->lock);
}

int lazy_copier_wait(struct lazy_copier *cp, bool (*cut)(void *), void *arg, int64_t *copied)
{
	pthread_mutex_lock(&cp->lock);
	while (cp->busy) {
		struct timespec ts;

		if (!cut || __atomic_load_n(&cp->cut, __ATOMIC_RELAXED)) {
			pthread_cond_wait(&cp->cond, &cp->lock);
			continue;
		}
		/* asked again every 100 us meanwhile: the loop's half may end first */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&cp->cond, &cp->lock, &ts);
		if (cp->busy && cut(arg))
			__atomic_store_n(&cp->cut, true, __ATOMIC_RELAXED);
	}
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

/* ---- the daemon's fills ---- */

/*
 * A copy for task @t into [lo, hi) stops at its piece's end when the daemon
 * has something to read (its epoll set), but for a fault of @t inside [lo,
 * hi): the copy fills that page itself, and the piece that holds it wakes
 * the faulting thread. What is read of @t's uffd here waits in z->stash for
 * drain(). A task that reads its memory through (scripts/bench/lazy) faults
 * again right after each piece, inside the copy: stopping for those cut
 * every chunk (fill 3.26 -> 2.6 GB/s).
 */
struct cut_arg {
	struct lz *z;
	struct lz_task *t;
	uint64_t lo, hi;
};

static bool loop_cut(void *arg)
{
	struct cut_arg *c = arg;
	struct lz *z = c->z;
	struct epoll_event e;
	struct uffd_msg *m;

	if (epoll_wait(z->ep, &e, 1, 0) <= 0)
		return false;
	if (e.data.u64 != ep_key(EP_TASK_UFFD, c->t->idx) || z->nstash == LZ_MSGS)
		return true;
	m = &z->stash[z->nstash];
	if (read(c->t->uffd, m, sizeof(*m)) != sizeof(*m))
		return true;
	z->nstash++;
	return m->event != UFFD_EVENT_PAGEFAULT || m->arg.pagefault.address < c->lo ||
	       m->arg.pagefault.address >= c->hi;
}

/*
 * A background chunk in two halves at once, the second by the copier
 * thread. What went in leaves the unserved; if nothing did and a half failed,
 * the chunk is taken again in one piece, whose errors lazy_fill() sorts out.
 * Cut short as loop_cut() says (@c; NULL: never). 0, 1 (take it in one
 * piece) or -errno.
 */
static int fill_halves(struct lz *z, struct lz_task *t, uint64_t addr, uint64_t len,
		       const uint8_t *src, struct cut_arg *c)
{
	uint64_t half = (len / 2) & ~(PAGE_SIZE - 1);
	bool (*cut)(void *) = c ? loop_cut : NULL;
	int64_t got1, got2;
	int err1, err2, err;

	lazy_copier_submit(&z->cp, t->uffd, addr + half, src + half, len - half, c != NULL);
	err1 = lazy_uffd_copy_cut(t->uffd, addr, src, half, cut, c, &got1);
	if (got1 < (int64_t)half)
		__atomic_store_n(&z->cp.cut, true, __ATOMIC_RELAXED);
	err2 = lazy_copier_wait(&z->cp, cut, c, &got2);
	got1 = max(got1, (int64_t)0);
	got2 = max(got2, (int64_t)0);
	z->st.copied += (uint64_t)(got1 + got2);
	if (!err1 && !err2 && (uint64_t)(got1 + got2) < len)
		z->st.cut++;
	err = lazy_ranges_remove(&t->unserved, addr, addr + (uint64_t)got1);
	if (!err)
		err = lazy_ranges_remove(&t->unserved, addr + half, addr + half + (uint64_t)got2);
	if (err)
		return err;
	return (err1 || err2) && !got1 && !got2;
}

/* lazy-int.h */
int lazy_fill(struct lz *z, struct lz_task *t, uint64_t addr, uint64_t len)
{
	const struct lazy_range *r = lazy_ranges_find(&t->unserved, addr);
	const void *src = NULL;
	int64_t copied;
	uint64_t off;
	struct cut_arg c = { z, t, addr, addr };
	int err = 0;

	if (!r)
		return -ENOENT;
	len = min(len, r->vaddr + r->len - addr);
	off = r->off + (addr - r->vaddr);
	if (z->src.ops->map) {
		src = z->src.ops->map(&z->src, t->src_pid, r->level, off, len);
		if (!src && errno != ENODATA)
			err = -(errno ?: EIO);
	}
	if (!src && !err) {
		err = z->src.ops->read(&z->src, t->src_pid, r->level, off, z->buf, len);
		src = z->buf;
	}
	if (err) {
		pr_errno(err, "pid %d: cannot read pages %lx+%lu from the %s", t->src_pid, addr,
			 len, z->src.ops->name);
		return err;
	}
	/* mapped: what a cut leaves is taken later at no cost (not a READ thrown away) */
	c.hi = src != z->buf ? addr + len : addr;
	if (len >= LZ_SPLIT_MIN && lazy_copier_ready(&z->cp)) {
		err = fill_halves(z, t, addr, len, src, c.hi > addr ? &c : NULL);
		if (err <= 0)
			return err;
		c.hi = addr; /* in one piece: its errors sorted out below */
	}
	err = lazy_uffd_copy_cut(t->uffd, addr, src, len, c.hi > addr ? loop_cut : NULL, &c,
				 &copied);
	if (!err && (uint64_t)copied < len)
		z->st.cut++;
	if (err) {
		pr_debug("UFFDIO_COPY %lx+%lu: %d, copy %lld\n", addr, len, err, (long long)copied);
		if (copied > 0)
			err = 0;
		else if (copied == -EEXIST || err == -EEXIST)
			copied = PAGE_SIZE; /* a page is there already: skip it */
		else if (copied == -EAGAIN || err == -EAGAIN)
			return -EAGAIN;
		else if (err == -ENOENT && len > PAGE_SIZE)
			return lazy_fill(z, t, addr, PAGE_SIZE); /* the VMA was split since */
		else if (err == -ENOENT)
			copied = PAGE_SIZE; /* no registered VMA there any more: drop the page */
		else
			return err;
		err = 0;
	}
	z->st.copied += (uint64_t)copied;
	return lazy_ranges_remove(&t->unserved, addr, addr + (uint64_t)copied);
}
