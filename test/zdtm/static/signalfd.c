// SPDX-License-Identifier: GPL-2.0
/*
 * signalfds: a non-blocking one over SIGUSR1 and SIGRTMIN+2 with SIGUSR1
 * blocked and pending at the dump, and a blocking one over SIGUSR2 only.
 * After SIGTERM: the same masks (fdinfo) and flags, the pending SIGUSR1 is
 * read from the first, and a new RT signal with a value arrives through it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "zdtmtst.h"

#define RT_VALUE 4242

/* The sigmask line of @fd's fdinfo into @buf, or -1. */
static int fdinfo_mask(int fd, char *mask, size_t size)
{
	char path[64], buf[512], *p, *e;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		return neg_errno();
	p = strstr(buf, "sigmask:");
	e = p ? strchr(p, '\n') : NULL;
	if (!e || (size_t)(e - p) >= size)
		return -ENOBUFS;
	memcpy(mask, p, (size_t)(e - p));
	mask[e - p] = '\0';
	return 0;
}

static int read_one(int fd, struct signalfd_siginfo *si)
{
	return read(fd, si, sizeof(*si)) == sizeof(*si) ? 0 : neg_errno();
}

static int check_signals(int a)
{
	struct signalfd_siginfo si;
	union sigval val = { .sival_int = RT_VALUE };

	memset(&si, 0, sizeof(si));
	if (read_one(a, &si) || si.ssi_signo != SIGUSR1) {
		fail("the pending SIGUSR1 was not read from the signalfd (signo %u): %m",
		     si.ssi_signo);
		return 1;
	}
	if (read_one(a, &si) == 0 || errno != EAGAIN) {
		fail("a second signal came out of the signalfd, or it blocks");
		return 1;
	}
	if (sigqueue(getpid(), SIGRTMIN + 2, val) || read_one(a, &si) ||
	    si.ssi_signo != (uint32_t)(SIGRTMIN + 2) || si.ssi_int != RT_VALUE) {
		fail("a new SIGRTMIN+2 did not come through the signalfd (signo %u value %d)",
		     si.ssi_signo, si.ssi_int);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char mask_a[64], mask_b[64], now[64];
	int a, b, flags_a, flags_b;
	sigset_t set, set_b;

	test_init(argc, argv);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGRTMIN + 2);
	sigemptyset(&set_b);
	sigaddset(&set_b, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &set, NULL) || sigprocmask(SIG_BLOCK, &set_b, NULL)) {
		fail("sigprocmask: %m");
		return 1;
	}
	a = signalfd(-1, &set, SFD_NONBLOCK);
	b = signalfd(-1, &set_b, SFD_CLOEXEC);
	if (a < 0 || b < 0 || kill(getpid(), SIGUSR1) || fdinfo_mask(a, mask_a, sizeof(mask_a)) ||
	    fdinfo_mask(b, mask_b, sizeof(mask_b))) {
		fail("cannot set up the signalfds: %m");
		return 1;
	}
	flags_a = fcntl(a, F_GETFL);
	flags_b = fcntl(b, F_GETFL);
	test_daemon();
	test_waitsig();

	if (fcntl(a, F_GETFL) != flags_a || fcntl(b, F_GETFL) != flags_b ||
	    !(fcntl(b, F_GETFD) & FD_CLOEXEC)) {
		fail("flags changed: %x %x, expected %x %x", fcntl(a, F_GETFL), fcntl(b, F_GETFL),
		     flags_a, flags_b);
		return 1;
	}
	if (fdinfo_mask(a, now, sizeof(now)) || strcmp(now, mask_a)) {
		fail("the first signalfd's mask is now '%s', expected '%s'", now, mask_a);
		return 1;
	}
	if (fdinfo_mask(b, now, sizeof(now)) || strcmp(now, mask_b)) {
		fail("the second signalfd's mask is now '%s', expected '%s'", now, mask_b);
		return 1;
	}
	if (check_signals(a))
		return 1;
	pass();
	return 0;
}
