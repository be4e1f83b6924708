// SPDX-License-Identifier: GPL-2.0
/*
 * A child stopped by SIGSTOP (job control, not ptrace) must still be stopped
 * after SIGTERM, and must resume with SIGCONT and then exit normally.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

int main(int argc, char **argv)
{
	int status;
	pid_t pid;
	char st;

	test_init(argc, argv);
	pid = fork();
	if (pid < 0) {
		fail("fork: %m");
		return 1;
	}
	if (pid == 0) {
		raise(SIGSTOP);
		_exit(7); /* only after SIGCONT */
	}
	if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status)) {
		fail("child %d did not stop (status 0x%x)", pid, status);
		return 1;
	}
	test_daemon();
	test_waitsig();

	st = test_proc_state(pid);
	if (st != 'T') {
		fail("child %d is in state %c, expected T (stopped)", pid, st);
		return 1;
	}
	kill(pid, SIGCONT);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7) {
		fail("child %d ended with status 0x%x, expected exit 7", pid, status);
		return 1;
	}
	pass();
	return 0;
}
