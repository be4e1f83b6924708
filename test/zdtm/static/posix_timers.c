// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX timers on several clocks, created with raw syscalls so their kernel
 * ids are known, with holes in the id space (two deleted). Periodic timers on
 * CLOCK_MONOTONIC and CLOCK_REALTIME, a 120 s one-shot on CLOCK_BOOTTIME, a
 * disarmed one, and one with SIGEV_THREAD_ID aimed at a second thread. After
 * SIGTERM /proc/self/timers must read the same, the deleted ids must still be
 * free, every timer keeps its interval and a plausible remaining time, and
 * the periodic ones still fire with their own si_timerid and value, the
 * thread timer on its thread.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NTIMERS 7
#define MS 1000000L

enum {
	T_MONO,
	T_GONE1,
	T_REAL,
	T_GONE2,
	T_BOOT,
	T_IDLE,
	T_THREAD
};

struct tmr {
	int clock;
	long interval_ns, value_ns; /* 0/0: left disarmed */
	int id;
	volatile int fired;
	volatile int bad; /* a signal with the wrong timer id, value or thread */
};

static struct tmr t[NTIMERS] = {
	[T_MONO] = { CLOCK_MONOTONIC, 30 * MS, 30 * MS },
	[T_GONE1] = { CLOCK_MONOTONIC, 0, 0 },
	[T_REAL] = { CLOCK_REALTIME, 50 * MS, 50 * MS },
	[T_GONE2] = { CLOCK_MONOTONIC, 0, 0 },
	[T_BOOT] = { CLOCK_BOOTTIME, 0, 0 }, /* 120 s one-shot, armed below */
	[T_IDLE] = { CLOCK_REALTIME, 0, 0 },
	[T_THREAD] = { CLOCK_MONOTONIC, 40 * MS, 40 * MS },
};

static volatile pid_t worker_tid;
static volatile int stop;

static void on_timer(int sig, siginfo_t *si, void *uc)
{
	int i = si->si_value.sival_int - 900;

	(void)uc;
	if (i < 0 || i >= NTIMERS)
		return;
	if (sig != SIGRTMIN + i || si->si_timerid != t[i].id ||
	    (i == T_THREAD && syscall(SYS_gettid) != worker_tid))
		t[i].bad++;
	t[i].fired++;
}

static void *worker(void *arg)
{
	(void)arg;
	worker_tid = syscall(SYS_gettid);
	while (!stop)
		test_sleep_ms(5);
	return NULL;
}

static int create(int i)
{
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + i };
	struct sigaction sa = { .sa_sigaction = on_timer, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct itimerspec its = { { 0, t[i].interval_ns }, { 0, t[i].value_ns } };

	sigemptyset(&sa.sa_mask);
	sev.sigev_value.sival_int = 900 + i;
	if (i == T_THREAD) {
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev._sigev_un._tid = worker_tid;
	}
	if (i == T_BOOT)
		its.it_value.tv_sec = 120;
	if (sigaction(SIGRTMIN + i, &sa, NULL) ||
	    syscall(SYS_timer_create, t[i].clock, &sev, &t[i].id) ||
	    syscall(SYS_timer_settime, t[i].id, 0, &its, NULL))
		return -errno;
	return 0;
}

static long ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000L + ts->tv_nsec;
}

/* Intervals, remaining times, deleted ids; @boot_left: the 120 s timer before, @elapsed ns ago. */
static int check_settings(long boot_left, long elapsed)
{
	for (int i = 0; i < NTIMERS; i++) {
		struct itimerspec cur;
		int r = syscall(SYS_timer_gettime, t[i].id, &cur);

		if (i == T_GONE1 || i == T_GONE2) {
			if (r == 0) {
				fail("timer id %d was deleted but exists", t[i].id);
				return 1;
			}
			continue;
		}
		if (r) {
			fail("timer %d (id %d): timer_gettime: %m", i, t[i].id);
			return 1;
		}
		if (ns(&cur.it_interval) != t[i].interval_ns ||
		    (i == T_IDLE && ns(&cur.it_value)) ||
		    (t[i].interval_ns && ns(&cur.it_value) > t[i].interval_ns)) {
			fail("timer %d (id %d): interval %ld value %ld ns, expected interval %ld",
			     i, t[i].id, ns(&cur.it_interval), ns(&cur.it_value), t[i].interval_ns);
			return 1;
		}
		/* Stopped time may be left out, so at most what it was; and never early. */
		if (i == T_BOOT && (ns(&cur.it_value) > boot_left ||
				    ns(&cur.it_value) < boot_left - elapsed - 1000 * MS)) {
			fail("120 s timer: %ld ns left, had %ld ns %ld ns ago", ns(&cur.it_value),
			     boot_left, elapsed);
			return 1;
		}
	}
	return 0;
}

static int check_firing(void)
{
	static const int periodic[] = { T_MONO, T_REAL, T_THREAD };
	int before[NTIMERS];

	for (int i = 0; i < NTIMERS; i++)
		before[i] = t[i].fired;
	test_sleep_ms(500);
	for (size_t k = 0; k < sizeof(periodic) / sizeof(periodic[0]); k++) {
		int i = periodic[k];

		if (t[i].bad || t[i].fired - before[i] < 3) {
			fail("timer %d (id %d): %d signals in 500 ms, %d with a wrong id, value or "
			     "thread",
			     i, t[i].id, t[i].fired - before[i], t[i].bad);
			return 1;
		}
	}
	if (t[T_BOOT].fired || t[T_IDLE].fired) {
		fail("the 120 s or the disarmed timer fired");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char procs_before[4096], procs_after[4096];
	struct itimerspec boot;
	sigset_t term;
	pthread_t th;
	int64_t t0;

	test_init(argc, argv);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	if (pthread_create(&th, NULL, worker, NULL)) {
		fail("pthread_create failed");
		return 1;
	}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	while (!worker_tid)
		test_sleep_ms(1);
	for (int i = 0; i < NTIMERS; i++) {
		if (create(i)) {
			fail("timer %d: %m", i);
			return 1;
		}
	}
	if (syscall(SYS_timer_delete, t[T_GONE1].id) || syscall(SYS_timer_delete, t[T_GONE2].id) ||
	    test_read_file("/proc/self/timers", procs_before, sizeof(procs_before)) < 0 ||
	    syscall(SYS_timer_gettime, t[T_BOOT].id, &boot)) {
		fail("cannot record the timers: %m");
		return 1;
	}
	t0 = test_now_ms();
	test_daemon();
	test_waitsig();

	if (test_read_file("/proc/self/timers", procs_after, sizeof(procs_after)) < 0 ||
	    strcmp(procs_before, procs_after)) {
		fail("/proc/self/timers changed:\n%s---- now:\n%s", procs_before, procs_after);
		return 1;
	}
	if (check_settings(ns(&boot.it_value), (test_now_ms() - t0) * MS) || check_firing())
		return 1;
	stop = 1;
	pthread_join(th, NULL);
	pass();
	return 0;
}
