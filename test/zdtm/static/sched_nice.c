// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduling per thread: the main thread at nice 7, one thread at nice 12
 * under SCHED_BATCH, one under SCHED_IDLE, one at nice 3, one under SCHED_RR at
 * priority 3 (it sleeps: no CPU taken from the others), and a child process at
 * nice 15. After SIGTERM each must have its nice value, policy and priority
 * back (read per tid with getpriority, sched_getscheduler and sched_getparam).
 * The CPU affinity is sched_affinity's business. In a user namespace that
 * may not use SCHED_RR, the RR thread is checked as it stays (rr_denied()).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

struct want {
	pid_t tid;
	int nice, policy, prio;
};

enum {
	MAIN,
	BATCH,
	IDLE,
	NICE3,
	RR,
	CHILD,
	N
};

static struct want want[N] = {
	[MAIN] = { 0, 7, SCHED_OTHER }, [BATCH] = { 0, 12, SCHED_BATCH },
	[IDLE] = { 0, 0, SCHED_IDLE },	[NICE3] = { 0, 3, SCHED_OTHER },
	[RR] = { 0, 0, SCHED_RR, 3 },	[CHILD] = { 0, 15, SCHED_OTHER },
};

static volatile int stop;

/* Set the calling thread up as want[i]. */
static int apply(int i)
{
	struct want *w = &want[i];
	struct sched_param sp = { .sched_priority = w->prio };

	if (sched_setscheduler(0, w->policy, &sp) || setpriority(PRIO_PROCESS, 0, w->nice))
		return -errno;
	return 0;
}

/*
 * SCHED_RR in a user namespace of the runner's (mode userns) needs
 * CAP_SYS_NICE in the initial one, or an RLIMIT_RTPRIO above 0, which a
 * machine may not give (raising it needs CAP_SYS_RESOURCE): there the RR
 * thread stays as it was, SCHED_OTHER at nice 0, and is checked as such.
 */
static bool rr_denied(int i, int err)
{
	struct rlimit rl;

	if (i != RR || err != -EPERM || getrlimit(RLIMIT_RTPRIO, &rl) || rl.rlim_cur)
		return false;
	test_msg("SCHED_RR denied (RLIMIT_RTPRIO 0, no CAP_SYS_NICE in the initial user "
		 "namespace): that thread checked as SCHED_OTHER\n");
	want[RR].policy = SCHED_OTHER;
	want[RR].prio = 0;
	return true;
}

static void *thread_fn(void *arg)
{
	int i = (int)(long)arg, err = apply(i);
	pid_t tid = syscall(SYS_gettid);

	/* published once want[i] holds what to check: main() waits for it */
	__atomic_store_n(&want[i].tid, err && !rr_denied(i, err) ? -1 : tid, __ATOMIC_RELEASE);
	while (!stop)
		test_sleep_ms(5);
	return NULL;
}

static int check(int i)
{
	const struct want *w = &want[i];
	struct sched_param sp = { .sched_priority = -1 };
	int nice, pol;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, w->tid);
	pol = sched_getscheduler(w->tid);
	sched_getparam(w->tid, &sp);
	if (nice != w->nice || pol != w->policy || sp.sched_priority != w->prio) {
		fail("task %d (tid %d): nice %d policy %d priority %d, expected nice %d policy %d "
		     "priority %d",
		     i, w->tid, nice, pol, sp.sched_priority, w->nice, w->policy, w->prio);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t th[RR - BATCH + 1];
	sigset_t term;
	int ret = 0;
	pid_t kid;

	test_init(argc, argv);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	for (int i = BATCH; i <= RR; i++)
		if (pthread_create(&th[i - BATCH], NULL, thread_fn, (void *)(long)i)) {
			fail("pthread_create failed");
			return 1;
		}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	kid = fork();
	if (kid == 0) {
		apply(CHILD);
		test_waitsig();
		_exit(0);
	}
	want[CHILD].tid = kid;
	want[MAIN].tid = syscall(SYS_gettid);
	if (kid < 0 || apply(MAIN)) {
		fail("setup: %m");
		return 1;
	}
	for (int i = 0; i < N; i++)
		while (!__atomic_load_n(&want[i].tid, __ATOMIC_ACQUIRE) ||
		       (i == CHILD && getpriority(PRIO_PROCESS, kid) != 15))
			test_sleep_ms(1);
	for (int i = 0; i < N; i++)
		if (want[i].tid < 0 || check(i))
			return 1;
	test_daemon();
	test_waitsig();

	for (int i = 0; i < N && !ret; i++)
		ret = check(i);
	stop = 1;
	for (int i = 0; i <= RR - BATCH; i++)
		pthread_join(th[i], NULL);
	if (test_reap_children(&kid, 1))
		ret = 1;
	if (!ret)
		pass();
	return ret;
}
