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

/* One UFFDIO_COPY at a time in a second thread: submit, copy another part here, wait. */
struct lazy_copier {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started, failed, busy, quit; /* busy, quit: under lock */
	int uffd;
	uint64_t dst, len;
	const void *src;
	int err;
	int64_t copied;
};

/* The thread is running (started on the first call); false: copy in one thread. */
bool lazy_copier_ready(struct lazy_copier *cp);
void lazy_copier_submit(struct lazy_copier *cp, int uffd, uint64_t dst, const void *src,
			uint64_t len);
/* The submitted copy's result, as lazy_uffd_copy()'s, once it is done. */
int lazy_copier_wait(struct lazy_copier *cp, int64_t *copied);
void lazy_copier_stop(struct lazy_copier *cp);

#endif
