// SPDX-License-Identifier: GPL-2.0
/*
 * The three interval timers at once: ITIMER_REAL as a 100 s one-shot (its
 * remaining time must be plausible: never more than it was, never less than
 * what the elapsed time explains), ITIMER_VIRTUAL every 10 ms and ITIMER_PROF
 * every 20 ms of CPU time. After SIGTERM the settings must be the same, and
 * burning CPU must bring SIGVTALRM and SIGPROF.
 */
#include <signal.h>
#include <sys/time.h>

#include "zdtmtst.h"

static volatile sig_atomic_t vt_ticks, prof_ticks, real_ticks;

static void on_sig(int sig)
{
	if (sig == SIGVTALRM)
		vt_ticks++;
	else if (sig == SIGPROF)
		prof_ticks++;
	else
		real_ticks++;
}

/*
 * setitimer() on a CPU-time timer adds one tick to the value (set_cpu_itimer,
 * kernel/time/itimer.c), so right after one is set, a value up to interval +
 * a tick is what the kernel shows: allow 10 ms (HZ=100).
 */
#define TICK_SLACK_US 10000

static long us(const struct timeval *tv)
{
	return tv->tv_sec * 1000000L + tv->tv_usec;
}

/* Burn CPU until both CPU-time timers fired @n more times, or 5 s passed. */
static void burn(int n)
{
	int vt = vt_ticks, prof = prof_ticks;
	int64_t end = test_now_ms() + 5000;
	volatile uint64_t x = 0;

	while ((vt_ticks - vt < n || prof_ticks - prof < n) && test_now_ms() < end)
		for (int i = 0; i < 100000; i++)
			x += i;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sig, .sa_flags = SA_RESTART };
	struct itimerval real = { { 0, 0 }, { 100, 0 } }, vt = { { 0, 10000 }, { 0, 10000 } },
			 prof = { { 0, 20000 }, { 0, 20000 } }, cur, real0;
	int64_t t0;
	int vt0, prof0;

	test_init(argc, argv);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGVTALRM, &sa, NULL) || sigaction(SIGPROF, &sa, NULL) ||
	    sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &real, NULL) ||
	    setitimer(ITIMER_VIRTUAL, &vt, NULL) || setitimer(ITIMER_PROF, &prof, NULL)) {
		fail("cannot arm the timers: %m");
		return 1;
	}
	burn(2);
	if (vt_ticks < 2 || prof_ticks < 2 || getitimer(ITIMER_REAL, &real0)) {
		fail("CPU timers did not fire before ready: %d %d", (int)vt_ticks, (int)prof_ticks);
		return 1;
	}
	t0 = test_now_ms();
	test_daemon();
	test_waitsig();

	if (getitimer(ITIMER_REAL, &cur) || us(&cur.it_interval) ||
	    us(&cur.it_value) > us(&real0.it_value) ||
	    us(&cur.it_value) < us(&real0.it_value) - (test_now_ms() - t0) * 1000 - 1000000) {
		fail("ITIMER_REAL: interval %ld value %ld us; had value %ld us %ld ms ago",
		     us(&cur.it_interval), us(&cur.it_value), us(&real0.it_value),
		     (long)(test_now_ms() - t0));
		return 1;
	}
	if (getitimer(ITIMER_VIRTUAL, &cur) || us(&cur.it_interval) != 10000 ||
	    us(&cur.it_value) > 10000 + TICK_SLACK_US || us(&cur.it_value) <= 0) {
		fail("ITIMER_VIRTUAL: interval %ld value %ld us, expected 10000",
		     us(&cur.it_interval), us(&cur.it_value));
		return 1;
	}
	if (getitimer(ITIMER_PROF, &cur) || us(&cur.it_interval) != 20000 ||
	    us(&cur.it_value) > 20000 + TICK_SLACK_US || us(&cur.it_value) <= 0) {
		fail("ITIMER_PROF: interval %ld value %ld us, expected 20000", us(&cur.it_interval),
		     us(&cur.it_value));
		return 1;
	}
	vt0 = vt_ticks;
	prof0 = prof_ticks;
	burn(3);
	if (vt_ticks - vt0 < 3 || prof_ticks - prof0 < 3 || real_ticks) {
		fail("after SIGTERM: %d SIGVTALRM, %d SIGPROF, %d SIGALRM in up to 5 s of CPU",
		     (int)(vt_ticks - vt0), (int)(prof_ticks - prof0), (int)real_ticks);
		return 1;
	}
	pass();
	return 0;
}
