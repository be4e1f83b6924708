// SPDX-License-Identifier: GPL-2.0
/*
 * An interval timer (ITIMER_REAL, 20 ms) that must keep its interval and keep
 * firing: after SIGTERM, 500 ms must bring a plausible number of SIGALRMs.
 */
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#include "zdtmtst.h"

#define INTERVAL_US 20000

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
	(void)sig;
	ticks++;
}

/* Sleep @ms of monotonic time; SIGALRM interrupts nanosleep, so loop. */
static void sleep_ms(long ms)
{
	struct timespec end, now;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	do {
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec ||
		 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, INTERVAL_US }, { 0, INTERVAL_US } }, cur;
	int start;

	test_init(argc, argv);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL)) {
		fail("cannot arm the timer: %m");
		return 1;
	}
	/* Armed and firing before ready; a loaded machine may take a while. */
	for (int i = 0; i < 200 && ticks < 2; i++)
		sleep_ms(10);
	if (ticks < 2) {
		fail("timer fired %d times in 2 s before ready", (int)ticks);
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (getitimer(ITIMER_REAL, &cur)) {
		fail("getitimer: %m");
		return 1;
	}
	if (cur.it_interval.tv_sec || cur.it_interval.tv_usec != INTERVAL_US ||
	    cur.it_value.tv_sec || cur.it_value.tv_usec > INTERVAL_US) {
		fail("timer is interval %ld.%06ld value %ld.%06ld, expected interval 0.%06d",
		     (long)cur.it_interval.tv_sec, (long)cur.it_interval.tv_usec,
		     (long)cur.it_value.tv_sec, (long)cur.it_value.tv_usec, INTERVAL_US);
		return 1;
	}
	start = ticks;
	sleep_ms(500);
	/*
	 * 25 expected. On a loaded machine expirations that find SIGALRM still
	 * pending merge into one signal, so only a floor is safe; none may come early.
	 */
	if (ticks - start < 3 || ticks - start > 26) {
		fail("timer fired %d times in 500 ms, expected up to 25", (int)ticks - start);
		return 1;
	}
	test_msg("timer fired %d times in 500 ms\n", (int)ticks - start);
	pass();
	return 0;
}
