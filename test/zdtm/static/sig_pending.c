// SPDX-License-Identifier: GPL-2.0
/*
 * Blocked signals left pending with their siginfo: a standard signal from
 * kill() (SI_USER, our pid), one from sigqueue() with a value, three queued
 * instances of one real-time signal (order and values), a real-time signal
 * with a hand-made siginfo (foreign pid and uid, SI_QUEUE) and one directed
 * at the thread with tgkill(). After SIGTERM the pending sets (per thread and
 * shared) must be the same and every siginfo must come back as queued: a
 * restore that re-sends signals by number loses the values and the queue.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

#define SIG_RTQ (SIGRTMIN + 2)
#define SIG_FAKE (SIGRTMIN + 5)
#define SIG_THR (SIGRTMIN + 6)
#define FAKE_PID 4242
#define FAKE_UID 77

struct expect {
	int signo, code, pid, uid, value;
};

/* The ShdPnd and SigPnd lines of /proc/self/status. */
static int pending_lines(char *buf, size_t size)
{
	char status[4096], *shd, *sig;

	if (test_read_file("/proc/self/status", status, sizeof(status)) < 0)
		return -EIO;
	sig = strstr(status, "SigPnd:");
	shd = strstr(status, "ShdPnd:");
	if (!shd || !sig)
		return -ENOENT;
	shd[strcspn(shd, "\n")] = '\0';
	sig[strcspn(sig, "\n")] = '\0';
	snprintf(buf, size, "%s %s", sig, shd);
	return 0;
}

static int queue_all(void)
{
	siginfo_t si = { .si_signo = SIG_FAKE, .si_code = SI_QUEUE };
	pid_t me = getpid();

	if (kill(me, SIGUSR1) || sigqueue(me, SIGUSR2, (union sigval){ .sival_int = 0x1234 }))
		return -errno;
	for (int i = 1; i <= 3; i++)
		if (sigqueue(me, SIG_RTQ, (union sigval){ .sival_int = 100 + i }))
			return -errno;
	si.si_pid = FAKE_PID;
	si.si_uid = FAKE_UID;
	si.si_value.sival_int = 0xabcdef;
	if (syscall(SYS_rt_sigqueueinfo, me, SIG_FAKE, &si))
		return -errno;
	if (syscall(SYS_tgkill, me, syscall(SYS_gettid), SIG_THR))
		return -errno;
	return 0;
}

static int take_all(void)
{
	int me = getpid(), uid = getuid();
	const struct expect want[] = {
		{ SIGUSR1, SI_USER, me, uid, -1 },
		{ SIGUSR2, SI_QUEUE, me, uid, 0x1234 },
		{ SIG_RTQ, SI_QUEUE, me, uid, 101 },
		{ SIG_RTQ, SI_QUEUE, me, uid, 102 },
		{ SIG_RTQ, SI_QUEUE, me, uid, 103 },
		{ SIG_FAKE, SI_QUEUE, FAKE_PID, FAKE_UID, 0xabcdef },
		/* tgkill() gives SI_TKILL or, on newer kernels, SI_USER: both accepted. */
		{ SIG_THR, SI_TKILL, me, uid, -1 },
	};
	struct timespec zero = { 0, 0 };

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct expect *w = &want[i];
		siginfo_t si;
		sigset_t one;

		sigemptyset(&one);
		sigaddset(&one, w->signo);
		if (sigtimedwait(&one, &si, &zero) != w->signo) {
			fail("signal %d (instance %zu) is no longer pending: %m", w->signo, i);
			return 1;
		}
		if (w->code == SI_TKILL && si.si_code == SI_USER)
			si.si_code = SI_TKILL;
		if (si.si_code != w->code || si.si_pid != w->pid || (int)si.si_uid != w->uid ||
		    (w->value >= 0 && si.si_value.sival_int != w->value)) {
			fail("signal %d: code %d pid %d uid %d value %#x, expected %d %d %d %#x",
			     w->signo, si.si_code, si.si_pid, si.si_uid, si.si_value.sival_int,
			     w->code, w->pid, w->uid, w->value);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	char before[256], after[256];
	sigset_t block, pend;

	test_init(argc, argv);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	sigaddset(&block, SIG_RTQ);
	sigaddset(&block, SIG_FAKE);
	sigaddset(&block, SIG_THR);
	if (sigprocmask(SIG_BLOCK, &block, NULL) || queue_all() ||
	    pending_lines(before, sizeof(before))) {
		fail("cannot queue the signals: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (pending_lines(after, sizeof(after)) || strcmp(before, after)) {
		fail("pending sets changed: before \"%s\", after \"%s\"", before, after);
		return 1;
	}
	if (take_all())
		return 1;
	sigpending(&pend);
	for (int s = 1; s < NSIG; s++) {
		if (sigismember(&pend, s)) {
			fail("signal %d pending more often than it was queued", s);
			return 1;
		}
	}
	pass();
	return 0;
}
