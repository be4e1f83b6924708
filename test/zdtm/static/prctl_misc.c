// SPDX-License-Identifier: GPL-2.0
/*
 * Per-process and per-thread prctl state: the root is a child subreaper, a
 * child has a parent-death signal (SIGUSR2), a second thread has a timer
 * slack of 200 us and the main thread 50 us, and the process has THP
 * disabled. After SIGTERM every value must read the same (the child checks
 * its own), and the child subreaper must still act: an orphaned grandchild
 * becomes the root's child.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static volatile long thread_slack = -1;
static volatile int thread_go;

static void *thread_fn(void *arg)
{
	(void)arg;
	prctl(PR_SET_TIMERSLACK, 200000);
	thread_slack = 0;
	while (!thread_go)
		test_sleep_ms(2);
	thread_slack = prctl(PR_GET_TIMERSLACK);
	return NULL;
}

static int child(int ready)
{
	int sig = 0;

	if (prctl(PR_SET_PDEATHSIG, SIGUSR2) || write(ready, "c", 1) != 1)
		return 2;
	test_waitsig();
	if (prctl(PR_GET_PDEATHSIG, &sig) || sig != SIGUSR2) {
		test_msg("child: parent-death signal %d, expected %d\n", sig, SIGUSR2);
		return 1;
	}
	/* An orphan: its parent (this child) exits, the subreaper root must get it. */
	if (fork() == 0) {
		test_sleep_ms(100);
		_exit(getppid() == getpgrp() ? 0 : 3); /* the root leads the group */
	}
	return 0;
}

int main(int argc, char **argv)
{
	int ready[2], status, sub = 0;
	pthread_t th;
	sigset_t term;
	pid_t kid, orphan;

	test_init(argc, argv);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) || prctl(PR_SET_TIMERSLACK, 50000) ||
	    prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) || pipe(ready)) {
		fail("prctl: %m");
		return 1;
	}
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	if (pthread_create(&th, NULL, thread_fn, NULL)) {
		fail("pthread_create failed");
		return 1;
	}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	kid = fork();
	if (kid == 0)
		_exit(child(ready[1]));
	close(ready[1]);
	if (kid < 0 || test_wait_ready(ready[0], 1)) {
		fail("the child did not start");
		return 1;
	}
	while (thread_slack)
		test_sleep_ms(1);
	test_daemon();
	test_waitsig();

	thread_go = 1;
	pthread_join(th, NULL);
	if (prctl(PR_GET_CHILD_SUBREAPER, &sub) || sub != 1 || prctl(PR_GET_TIMERSLACK) != 50000 ||
	    thread_slack != 200000 || prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) != 1) {
		fail("subreaper %d, slack %d and %ld, THP disabled %d; expected 1, 50000 and "
		     "200000, 1",
		     sub, prctl(PR_GET_TIMERSLACK), thread_slack,
		     prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0));
		return 1;
	}
	if (test_reap_children(&kid, 1)) {
		fail("the child's parent-death signal changed (see its message)");
		return 1;
	}
	orphan = waitpid(-1, &status, 0);
	if (orphan <= 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the orphan did not come to the subreaper root, or saw another parent "
		     "(waitpid %d, status 0x%x)",
		     orphan, status);
		return 1;
	}
	pass();
	return 0;
}
