/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_LAZY_INT_H
#define CRIU_LIKE_LAZY_INT_H

/*
 * Between the lazy-pages daemon (lazy-pages.c), its guard (lazy-guard.c)
 * and its second copier thread (lazy-copy.c).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/userfaultfd.h>

#include "lazy.h"

enum lazy_guard_type {
	LAZY_GUARD_ADD = 1, /* SCM_RIGHTS: the uffd, then the pidfd (none for a forked child) */
	LAZY_GUARD_DONE, /* task @id has every page: the uffd copy goes */
	LAZY_GUARD_EXIT, /* all done: exit without killing anything */
};

struct lazy_guard_msg {
	uint32_t type;
	uint32_t id;
	int32_t pid;
	int32_t pad;
};

int lazy_guard_start(pid_t *ret_pid, int *ret_sk);
int lazy_guard_send(int sk, uint32_t type, uint32_t id, pid_t pid, int uffd, int pidfd);
/* SIGSTOP @pid, SIGKILL its descendants, then it. */
void lazy_kill_task(pid_t pid, int pidfd);
/* lazy-guard.c: a thread of @pid is traced (the restore has not let the tree go yet). */
bool lazy_task_traced(pid_t pid);
/* lazy-guard.c: SIGSTOP (@stop) or SIGCONT to @pid (@pidfd) and every descendant. */
void lazy_stop_task(pid_t pid, int pidfd, bool stop);

/*
 * UFFDIO_COPY @len bytes from @src to @dst through @uffd: 0 or -errno;
 * @copied: the bytes that went in, or a negative errno (the ioctl's own).
 */
int lazy_uffd_copy(int uffd, uint64_t dst, const void *src, uint64_t len, int64_t *copied);
/*
 * The same by pieces (@cut NULL: in one), asking @cut(@arg) after each
 * whether to stop there (0, *@copied < @len): a fault elsewhere does not
 * wait for a whole background chunk.
 */
int lazy_uffd_copy_cut(int uffd, uint64_t dst, const void *src, uint64_t len, bool (*cut)(void *),
		       void *arg, int64_t *copied);

/* One UFFDIO_COPY at a time in a second thread: submit, copy another part here, wait. */
struct lazy_copier {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started, failed, busy, quit; /* busy, quit: under lock */
	int uffd;
	bool cuttable; /* by pieces, stopping once cut is set */
	bool cut; /* atomic: the loop's word to stop */
	uint64_t dst, len;
	const void *src;
	int err;
	int64_t copied;
};

/* The thread is running (started on the first call); false: copy in one thread. */
bool lazy_copier_ready(struct lazy_copier *cp);
void lazy_copier_submit(struct lazy_copier *cp, int uffd, uint64_t dst, const void *src,
			uint64_t len, bool cuttable);
/*
 * The submitted copy's result, as lazy_uffd_copy()'s, once it is done;
 * meanwhile @cut(@arg) (NULL: none) is asked every 100 us whether the
 * copier is to stop at its next piece's end.
 */
int lazy_copier_wait(struct lazy_copier *cp, bool (*cut)(void *), void *arg, int64_t *copied);
void lazy_copier_stop(struct lazy_copier *cp);

/* ---- the daemon's state (lazy-pages.c), and its copies (lazy-copy.c) ---- */

#define LZ_MSGS 64 /* uffd messages read at once */
#define LZ_SPLIT_MIN (1UL << 20) /* a copy from this size on, in two threads */

enum {
	EP_LISTEN = 1,
	EP_RESTORE,
	EP_GUARD,
	EP_TASK_UFFD,
	EP_TASK_PID,
	EP_SOURCE,
};

struct lz_task {
	uint32_t id;
	size_t idx; /* in lz.t, its epoll keys' */
	pid_t pid; /* the images' pid; 0 for a child forked since */
	pid_t host; /* as the daemon sees it; 0 when not known */
	pid_t src_pid; /* whose pages (the parent's for a forked child) */
	int uffd, pidfd;
	struct lazy_ranges unserved;
	uint64_t *thp; /* the 2 MiB stretches to collapse once every page is in */
	size_t nthp;
	bool gone;
	/* done, but kept until the source confirms its tree is ended (lazy_src_ops.complete) */
	bool held;
	uint64_t prefetch_ns; /* no background chunk before (CLOCK_MONOTONIC): a new child */
	struct lazy_readahead ra; /* of its faults (fault_len()) */
	struct lazy_hot hot; /* what it wrote last, copied first (lazy.h) */
};

struct lz {
	struct lazy_src src;
	int lsk, csk, ep, gsk, gpidfd;
	pid_t guard;
	char sock_path[108];
	struct lz_task **t;
	size_t n;
	uint32_t next_id;
	bool ended; /* the restore sent every task */
	bool failed;
	size_t filled; /* tasks that got every page (not those that exited before) */
	uint8_t *buf;
	struct lazy_copier cp;
	uint64_t start_ns, delay_ns;
	uint64_t deadline_ns; /* until END: the restore's next message, or its connection */
	unsigned int connect_s; /* --timeout */
	size_t rr; /* round robin of the prefetch */
	/* read from a task's uffd by loop_cut() during a copy, for drain() to handle first */
	struct uffd_msg stash[LZ_MSGS];
	size_t nstash;
	struct {
		uint64_t faults, zero, copied, prefetched, events;
		/* copies stopped early for a fault elsewhere or an event (loop_cut()) */
		uint64_t cut;
	} st;
};

static inline uint64_t ep_key(int kind, size_t idx)
{
	return ((uint64_t)kind << 32) | idx;
}

/*
 * UFFDIO_COPY [addr, addr + len) of task @t's range there from the source,
 * in halves on two threads from LZ_SPLIT_MIN on, cut short for a fault
 * elsewhere or an event: 0, -EAGAIN (an event is to be read first) or
 * -errno. What went in leaves @t->unserved; what loop_cut() read of @t's uffd
 * is in z->stash for drain().
 */
int lazy_fill(struct lz *z, struct lz_task *t, uint64_t addr, uint64_t len);

#endif
