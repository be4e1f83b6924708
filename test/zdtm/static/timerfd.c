// SPDX-License-Identifier: GPL-2.0
/*
 * timerfds on several clocks: a 50 ms periodic one never read (its ticks
 * pile up), a one-shot that fired before the dump and was never read, a
 * one-shot due in 2 s, a one-shot in an hour on CLOCK_BOOTTIME and an
 * absolute CLOCK_REALTIME one an hour ahead. After SIGTERM: the same clocks,
 * flags and intervals; no timer has more time left than it was given, nor
 * less than it would have had without the dump; the unread expirations are
 * still there; the periodic one still ticks; the 2 s one fires when it says.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NSEC 1000000000LL
#define MSEC 1000000LL
#define HOUR_NS (3600 * NSEC)
#define SOON_NS (2 * NSEC)
#define PERIOD_NS (50 * MSEC)
#define SLACK_NS (100 * MSEC)

static int64_t ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * NSEC + ts->tv_nsec;
}

static struct timespec ns_ts(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / NSEC, .tv_nsec = ns % NSEC };

	return ts;
}

static int arm(int clock, int flags, int tflags, int64_t value, int64_t interval)
{
	struct itimerspec its = { .it_value = ns_ts(value), .it_interval = ns_ts(interval) };
	int fd = timerfd_create(clock, flags);

	if (fd < 0 || timerfd_settime(fd, tflags, &its, NULL))
		return neg_errno();
	return fd;
}

/* The time left on @fd, its interval in *@interval; -1 on error. */
static int64_t left_ns(int fd, int64_t *interval)
{
	struct itimerspec its;

	if (timerfd_gettime(fd, &its))
		return neg_errno();
	if (interval)
		*interval = ts_ns(&its.it_interval);
	return ts_ns(&its.it_value);
}

/* The value of "KEY: N" in @fd's fdinfo (N read in @base), or -1. */
static long long fdinfo_val(int fd, const char *key, int base)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (test_read_file(path, buf, sizeof(buf)) < 0 || !(p = strstr(buf, key)))
		return neg_errno();
	return strtoll(p + strlen(key), NULL, base);
}

/* Time left on a timer given @given ns @elapsed ns ago, in the window the dump allows. */
static int check_left(int fd, const char *name, int64_t given, int64_t elapsed)
{
	int64_t left = left_ns(fd, NULL);

	if (left <= 0 || left > given || left < given - elapsed - SLACK_NS) {
		fail("%s: %lld ns left, expected %lld..%lld", name, (long long)left,
		     (long long)(given - elapsed - SLACK_NS), (long long)given);
		return 1;
	}
	return 0;
}

static int check_periodic(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t ticks = 0;
	int64_t interval;

	if (left_ns(fd, &interval) < 0 || interval != PERIOD_NS) {
		fail("periodic: interval %lld ns, expected %lld", (long long)interval, PERIOD_NS);
		return 1;
	}
	if (read(fd, &ticks, sizeof(ticks)) != sizeof(ticks) || ticks < 2) {
		fail("periodic: %llu ticks piled up, expected at least 2: %m",
		     (unsigned long long)ticks);
		return 1;
	}
	if (poll(&pfd, 1, (int)((PERIOD_NS + SLACK_NS) / MSEC)) != 1 ||
	    read(fd, &ticks, sizeof(ticks)) != sizeof(ticks) || !ticks) {
		fail("periodic: no tick within %lld ms after the read",
		     (PERIOD_NS + SLACK_NS) / MSEC);
		return 1;
	}
	return 0;
}

/* The one-shot that fired before the dump: its expiration is still unread. */
static int check_fired(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t ticks = 0;

	if (poll(&pfd, 1, 0) != 1 || read(fd, &ticks, sizeof(ticks)) != sizeof(ticks) ||
	    ticks != 1) {
		fail("fired: the unread expiration was lost (%llu ticks)",
		     (unsigned long long)ticks);
		return 1;
	}
	return 0;
}

/* The 2 s one: fires when timerfd_gettime() says, or has fired once. */
static int check_soon(int fd, int64_t elapsed)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t ticks = 0;
	int64_t left = left_ns(fd, NULL), t0, waited;

	if (left > 0) {
		if (check_left(fd, "soon", SOON_NS, elapsed))
			return 1;
		t0 = test_now_ms();
		if (poll(&pfd, 1, (int)((left + SLACK_NS) / MSEC) + 1) != 1) {
			fail("soon: did not fire within %lld ms of the %lld ms it had left",
			     SLACK_NS / MSEC, (long long)(left / MSEC));
			return 1;
		}
		waited = (test_now_ms() - t0) * MSEC;
		if (waited < left - 10 * MSEC) {
			fail("soon: fired after %lld ms, %lld ms early", (long long)(waited / MSEC),
			     (long long)((left - waited) / MSEC));
			return 1;
		}
	}
	if (read(fd, &ticks, sizeof(ticks)) != sizeof(ticks) || ticks != 1) {
		fail("soon: %llu expirations, expected 1", (unsigned long long)ticks);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int periodic, fired, soon, hour, abs_rt;
	struct timespec now;
	int64_t t0, elapsed;

	test_init(argc, argv);
	t0 = test_now_ms();
	clock_gettime(CLOCK_REALTIME, &now);
	periodic = arm(CLOCK_MONOTONIC, TFD_NONBLOCK, 0, PERIOD_NS, PERIOD_NS);
	fired = arm(CLOCK_MONOTONIC, 0, 0, MSEC, 0);
	soon = arm(CLOCK_MONOTONIC, TFD_NONBLOCK, 0, SOON_NS, 0);
	hour = arm(CLOCK_BOOTTIME, 0, 0, HOUR_NS, 0);
	abs_rt = arm(CLOCK_REALTIME, TFD_CLOEXEC, TFD_TIMER_ABSTIME, ts_ns(&now) + HOUR_NS, 0);
	if (periodic < 0 || fired < 0 || soon < 0 || hour < 0 || abs_rt < 0) {
		fail("cannot set up the timerfds: %m");
		return 1;
	}
	test_sleep_ms(120); /* the periodic one ticks twice, the 1 ms one fires */
	test_daemon();
	test_waitsig();
	elapsed = (test_now_ms() - t0) * MSEC;

	if (fdinfo_val(hour, "clockid:", 10) != CLOCK_BOOTTIME ||
	    fdinfo_val(abs_rt, "clockid:", 10) != CLOCK_REALTIME ||
	    fdinfo_val(abs_rt, "settime flags:", 8) != TFD_TIMER_ABSTIME ||
	    fcntl(periodic, F_GETFL) != (O_RDWR | O_NONBLOCK) ||
	    !(fcntl(abs_rt, F_GETFD) & FD_CLOEXEC)) {
		fail("clocks, settime flags or file flags changed");
		return 1;
	}
	if (check_left(hour, "boottime hour", HOUR_NS, elapsed) ||
	    check_left(abs_rt, "realtime absolute hour", HOUR_NS, elapsed) ||
	    check_periodic(periodic) || check_fired(fired) || check_soon(soon, elapsed))
		return 1;
	pass();
	return 0;
}
