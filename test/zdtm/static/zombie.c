// SPDX-License-Identifier: GPL-2.0
/*
 * Zombies: three children exit with known statuses (one killed by a signal)
 * and stay unreaped. After SIGTERM each must still be a zombie with the same
 * pid, and waitpid() must give back exactly its status.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NZOMBIES 3

/* The state letter of @pid from /proc/PID/stat, or '?' */
int main(int argc, char **argv)
{
	static const int expect[NZOMBIES] = { 0, 42, SIGKILL | 0x100 };
	pid_t pid[NZOMBIES];

	test_init(argc, argv);
	for (int i = 0; i < NZOMBIES; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			fail("fork: %m");
			return 1;
		}
		if (pid[i] == 0) {
			if (expect[i] & 0x100)
				raise(expect[i] & 0xff);
			_exit(expect[i]);
		}
	}
	/* Ready only once all of them are zombies, so the dump sees them as such. */
	for (int i = 0; i < NZOMBIES; i++) {
		siginfo_t si;

		if (waitid(P_PID, pid[i], &si, WEXITED | WNOWAIT)) {
			fail("waitid %d: %m", pid[i]);
			return 1;
		}
	}
	test_daemon();
	test_waitsig();

	for (int i = 0; i < NZOMBIES; i++) {
		int status, want = expect[i] & 0x100 ? (expect[i] & 0xff) : expect[i] << 8;
		char st = test_proc_state(pid[i]);

		if (st != 'Z') {
			fail("child %d is in state %c, not a zombie", pid[i], st);
			return 1;
		}
		if (waitpid(pid[i], &status, WNOHANG) != pid[i] || status != want) {
			fail("child %d: status 0x%x, expected 0x%x", pid[i], status, want);
			return 1;
		}
	}
	pass();
	return 0;
}
