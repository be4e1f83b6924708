// SPDX-License-Identifier: GPL-2.0
/*
 * Zombies: three children exit with known statuses (one killed by a signal)
 * and stay unreaped, the one of exit 42 as uid 1000 and gid 1001. After
 * SIGTERM each must still be a zombie with the same pid, waitid() must
 * report the uid it died with and waitpid() give back exactly its status.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NZOMBIES 3
#define ZOMBIE_UID 1000 /* the uid and gid of zombie 1 */
#define ZOMBIE_GID 1001

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
			if (i == 1 && (setresgid(ZOMBIE_GID, ZOMBIE_GID, ZOMBIE_GID) ||
				       setresuid(ZOMBIE_UID, ZOMBIE_UID, ZOMBIE_UID)))
				_exit(1);
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
		uid_t uid = i == 1 ? ZOMBIE_UID : getuid();
		siginfo_t si = { 0 };

		if (st != 'Z') {
			fail("child %d is in state %c, not a zombie", pid[i], st);
			return 1;
		}
		if (waitid(P_PID, pid[i], &si, WEXITED | WNOWAIT) || si.si_uid != uid) {
			fail("child %d: waitid: %m, uid %u, expected %u", pid[i], si.si_uid, uid);
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
