// SPDX-License-Identifier: GPL-2.0
/*
 * A SIGTRAP left pending (blocked): one sent with kill() to the process
 * (shared) and one with tgkill() to the thread, each with its siginfo. The
 * seize uses SIGTRAP for its own stops (PTRACE_INTERRUPT): the application's
 * must not be taken for one, nor lost. After SIGTERM both must still be
 * pending (the thread's and the process's sets) with their sender.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

/* Whether SIGTRAP is in the pending set @field of /proc/self/status (SigPnd: or ShdPnd:). */
static int pending_in(const char *field)
{
	unsigned long long mask = 0;
	char line[256];
	FILE *f = fopen("/proc/thread-self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			sscanf(line + strlen(field), "%llx", &mask);
	if (f)
		fclose(f);
	return !!(mask & (1ULL << (SIGTRAP - 1)));
}

int main(int argc, char **argv)
{
	struct timespec zero = { 0, 0 };
	sigset_t trap, pend;
	siginfo_t si;
	pid_t tid;

	test_init(argc, argv);
	sigemptyset(&trap);
	sigaddset(&trap, SIGTRAP);
	sigprocmask(SIG_BLOCK, &trap, NULL);
	tid = (pid_t)syscall(SYS_gettid);
	if (kill(getpid(), SIGTRAP) || syscall(SYS_tgkill, getpid(), tid, SIGTRAP)) {
		fail("setup: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (sigpending(&pend) || !sigismember(&pend, SIGTRAP) || !pending_in("SigPnd:") ||
	    !pending_in("ShdPnd:")) {
		fail("SIGTRAP is no longer pending for the thread (%d) and the process (%d)",
		     pending_in("SigPnd:"), pending_in("ShdPnd:"));
		return 1;
	}
	for (int i = 0; i < 2; i++)
		if (sigtimedwait(&trap, &si, &zero) != SIGTRAP || si.si_pid != getpid()) {
			fail("SIGTRAP %d: %m, pid %d", i, si.si_pid);
			return 1;
		}
	if (sigtimedwait(&trap, &si, &zero) >= 0) {
		fail("a third SIGTRAP was pending");
		return 1;
	}
	pass();
	return 0;
}
