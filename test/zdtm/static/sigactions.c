// SPDX-License-Identifier: GPL-2.0
/*
 * Signal state: handlers with flags and masks, an ignored signal, blocked
 * signals, and a queued real-time signal with a value, still pending. After
 * SIGTERM all of it must be as set up, and the handlers must still run.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "zdtmtst.h"

#define RT_PENDING (SIGRTMIN + 3)
#define RT_VALUE 0x5a17

static volatile sig_atomic_t usr1_count, hup_count, rt_count, rt_value;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGUSR1 && si->si_signo == SIGUSR1)
		usr1_count++;
}

static void on_hup(int sig)
{
	(void)sig;
	hup_count++;
}

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	rt_count++;
	rt_value = si->si_value.sival_int;
}

static int set_handlers(void)
{
	struct sigaction usr1 = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct sigaction hup = { .sa_handler = on_hup, .sa_flags = SA_RESETHAND | SA_NODEFER };
	struct sigaction rt = { .sa_sigaction = on_rt, .sa_flags = SA_SIGINFO };
	struct sigaction ign = { .sa_handler = SIG_IGN };

	sigemptyset(&usr1.sa_mask);
	sigaddset(&usr1.sa_mask, SIGUSR2);
	sigaddset(&usr1.sa_mask, SIGRTMIN + 1);
	sigemptyset(&hup.sa_mask);
	sigemptyset(&rt.sa_mask);
	sigaddset(&rt.sa_mask, SIGALRM);
	sigemptyset(&ign.sa_mask);
	if (sigaction(SIGUSR1, &usr1, NULL) || sigaction(SIGHUP, &hup, NULL) ||
	    sigaction(RT_PENDING, &rt, NULL) || sigaction(SIGUSR2, &ign, NULL))
		return -errno;
	return 0;
}

static bool same_action(const struct sigaction *a, const struct sigaction *b)
{
	if (a->sa_handler != b->sa_handler || a->sa_flags != b->sa_flags)
		return false;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&a->sa_mask, s) != sigismember(&b->sa_mask, s))
			return false;
	return true;
}

static bool same_set(const sigset_t *a, const sigset_t *b)
{
	for (int s = 1; s < NSIG; s++)
		if (sigismember(a, s) != sigismember(b, s))
			return false;
	return true;
}

/* Every disposition and the blocked and pending sets as recorded; 0 or fail(). */
static int check_state(const struct sigaction *before, const sigset_t *blocked)
{
	sigset_t now, pending;

	for (int s = 1; s < NSIG; s++) {
		struct sigaction cur;

		if (s == SIGKILL || s == SIGSTOP || sigaction(s, NULL, &cur))
			continue;
		if (!same_action(&before[s], &cur)) {
			fail("signal %d: disposition changed", s);
			return 1;
		}
	}
	sigprocmask(SIG_BLOCK, NULL, &now);
	if (!same_set(&now, blocked)) {
		fail("blocked signal set changed");
		return 1;
	}
	sigpending(&pending);
	for (int s = 1; s < NSIG; s++) {
		if (sigismember(&pending, s) != (s == RT_PENDING)) {
			fail("signal %d: pending %d, expected %d", s, sigismember(&pending, s),
			     s == RT_PENDING);
			return 1;
		}
	}
	return 0;
}

/* The handlers still run: SIGUSR1 caught, SIGUSR2 ignored, SIGHUP once, RT queued. */
static int check_delivery(void)
{
	sigset_t rt;

	raise(SIGUSR1);
	raise(SIGUSR2);
	raise(SIGHUP);
	sigemptyset(&rt);
	sigaddset(&rt, RT_PENDING);
	sigprocmask(SIG_UNBLOCK, &rt, NULL);
	if (usr1_count != 1 || hup_count != 1 || rt_count != 1 || rt_value != RT_VALUE) {
		fail("handlers ran usr1=%d hup=%d rt=%d (value %#x), expected 1 1 1 (%#x)",
		     (int)usr1_count, (int)hup_count, (int)rt_count, (int)rt_value, RT_VALUE);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct sigaction before[NSIG];
	union sigval val = { .sival_int = RT_VALUE };
	sigset_t blocked;

	test_init(argc, argv);
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGPIPE);
	sigaddset(&blocked, SIGQUIT);
	sigaddset(&blocked, RT_PENDING);
	if (set_handlers() || sigprocmask(SIG_BLOCK, &blocked, NULL) ||
	    sigqueue(getpid(), RT_PENDING, val)) {
		fail("cannot set up the signal state: %m");
		return 1;
	}
	sigprocmask(SIG_BLOCK, NULL, &blocked);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, NULL, &before[s]);
	test_daemon();
	test_waitsig();

	if (check_state(before, &blocked) || check_delivery())
		return 1;
	pass();
	return 0;
}
