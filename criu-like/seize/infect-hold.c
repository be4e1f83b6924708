// SPDX-License-Identifier: GPL-2.0
/*
 * The hold of the blob's thread mode (Documentation/infect.md, stage 4): a
 * thread of criu-like whose robust futex list holds one entry per parasite
 * area whose threads may be waiting on it. Its futex words (in the areas,
 * shared with the tasks) carry its tid: while it lives, the waiters wait;
 * when criu-like dies (SIGKILL included), the kernel walks the list of each
 * exiting thread, sets FUTEX_OWNER_DIED in every word still owned by it and
 * wakes a waiter of each, and the blob's threads go home. The thread does
 * nothing else: it only has to exist as long as criu-like does.
 *
 * A forked child of criu-like has no such thread (fork copies only the
 * caller): the first hold in a new process starts its own.
 */
#define LOG_PREFIX "infect: "
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "infect-int.h"
#include "log.h"
#include "parasite-rpc.h"

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t hold_pid; /* the process whose thread it is */
static pid_t hold_tid;
static struct robust_list_head hold_head;

/* The word's offset from its entry: the same for every area (parasite_args). */
#define HOLD_FUTEX_OFFSET                             \
	((long)offsetof(struct parasite_args, hold) - \
	 (long)offsetof(struct parasite_args, hold_next))

static void *hold_main(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* its own list in place of the C library's: this thread takes no robust mutex */
	if (syscall(SYS_set_robust_list, &hold_head, sizeof(hold_head)))
		__atomic_store_n(&hold_tid, -errno, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&hold_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	syscall(SYS_futex, &hold_tid, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	for (;;)
		pause();
	return NULL;
}

/* The holding thread of this process, started once (under hold_lock): its tid or -errno. */
static pid_t hold_thread(void)
{
	pthread_attr_t at;
	pthread_t th;
	pid_t tid;
	int err;

	if (hold_pid == getpid() && hold_tid > 0)
		return hold_tid;
	hold_head.list.next = &hold_head.list;
	hold_head.futex_offset = HOLD_FUTEX_OFFSET;
	hold_head.list_op_pending = NULL;
	hold_tid = 0;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&th, &at, hold_main, NULL);
	pthread_attr_destroy(&at);
	if (err) {
		pr_errno(-err, "cannot start the thread that holds the parasites' threads");
		return -err;
	}
	while (!(tid = __atomic_load_n(&hold_tid, __ATOMIC_ACQUIRE)))
		syscall(SYS_futex, &hold_tid, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	if (tid < 0) {
		pr_errno(tid, "set_robust_list of the holding thread");
		return tid;
	}
	hold_pid = getpid();
	return tid;
}

int hold_arm(struct parasite_ctl *ctl)
{
	struct robust_list *e = (struct robust_list *)&ctl->args->hold_next;
	pid_t tid;

	pthread_mutex_lock(&hold_lock);
	tid = hold_thread();
	if (tid > 0) {
		ctl->args->hold = (uint32_t)tid;
		ctl->args->threads_done = 0;
		e->next = hold_head.list.next;
		hold_head.list.next = e;
	}
	pthread_mutex_unlock(&hold_lock);
	return tid > 0 ? 0 : tid;
}

void hold_disarm(struct parasite_ctl *ctl)
{
	struct robust_list *e = (struct robust_list *)&ctl->args->hold_next, **p;

	pthread_mutex_lock(&hold_lock);
	if (hold_pid == getpid())
		for (p = &hold_head.list.next; *p != &hold_head.list; p = &(*p)->next)
			if (*p == e) {
				*p = e->next;
				break;
			}
	pthread_mutex_unlock(&hold_lock);
}
