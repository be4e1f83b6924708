// SPDX-License-Identifier: GPL-2.0
/*
 * SIGCHLD ignored (SIG_IGN): the kernel reaps exited children at once. After
 * SIGTERM the disposition must still be SIG_IGN and still act: a child forked
 * now and exiting leaves no zombie, and wait() reports ECHILD once it is
 * gone. A restore that leaves SIGCHLD at its default makes a zombie.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static int leaves_no_zombie(void)
{
	char path[64];
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	for (int i = 0; i < 2000 && access(path, F_OK) == 0; i++)
		test_sleep_ms(1);
	return access(path, F_OK) != 0 && wait(NULL) == -1 && errno == ECHILD;
}

int main(int argc, char **argv)
{
	struct sigaction cur;

	test_init(argc, argv);
	if (signal(SIGCHLD, SIG_IGN) == SIG_ERR || !leaves_no_zombie()) {
		fail("SIGCHLD SIG_IGN does not reap here");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (sigaction(SIGCHLD, NULL, &cur) || cur.sa_handler != SIG_IGN) {
		fail("SIGCHLD is no longer ignored");
		return 1;
	}
	if (!leaves_no_zombie()) {
		fail("an exited child stays a zombie: SIGCHLD SIG_IGN does not act");
		return 1;
	}
	pass();
	return 0;
}
