// SPDX-License-Identifier: GPL-2.0
/*
 * Children stopped by the job-control signals other than SIGSTOP, each in a
 * process group of its own whose parent (this test) is in another group of
 * the same session, as a shell's jobs are: SIGTSTP (^Z), SIGTTIN (a read
 * from the terminal in the background) and SIGTTOU. After SIGTERM each must
 * be stopped again by the same signal (waitpid() with WUNTRACED reports it,
 * as a shell would see it), and go on with SIGCONT and exit normally.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR 3

static const int sigs[NR] = { SIGTSTP, SIGTTIN, SIGTTOU };

int main(int argc, char **argv)
{
	pid_t pid[NR];
	int status, i;

	test_init(argc, argv);
	for (i = 0; i < NR; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			fail("fork: %m");
			return 1;
		}
		if (pid[i] == 0) {
			setpgid(0, 0);
			for (;;)
				pause();
		}
		setpgid(pid[i], pid[i]);
		kill(pid[i], sigs[i]);
		if (waitpid(pid[i], &status, WUNTRACED) != pid[i] || !WIFSTOPPED(status) ||
		    WSTOPSIG(status) != sigs[i]) {
			fail("child %d: status 0x%x, expected stopped by %d", pid[i], status,
			     sigs[i]);
			return 1;
		}
	}
	test_daemon();
	test_waitsig();

	for (i = 0; i < NR; i++) {
		pid_t r = 0;

		/*
		 * A restored child stops again: its parent hears of it with the
		 * signal. One that was not restored (leave-running) stays stopped
		 * as it was and reports nothing new: seen stopped, nothing to check.
		 */
		for (int n = 0; n < 100 && r == 0; n++) {
			r = waitpid(pid[i], &status, WUNTRACED | WNOHANG);
			if (r == 0)
				usleep(10000);
		}
		if (r == 0 && test_proc_state(pid[i]) == 'T') {
			test_msg("child %d: stopped, no new stop reported: not restored\n", pid[i]);
		} else if (r != pid[i] || !WIFSTOPPED(status) || WSTOPSIG(status) != sigs[i]) {
			fail("child %d: status 0x%x after the restore, expected stopped by %d (%s)",
			     pid[i], status, sigs[i], strsignal(sigs[i]));
			return 1;
		}
		kill(pid[i], SIGCONT);
		kill(pid[i], SIGKILL);
		if (waitpid(pid[i], &status, 0) != pid[i] || !WIFSIGNALED(status)) {
			fail("child %d ended with status 0x%x", pid[i], status);
			return 1;
		}
	}
	pass();
	return 0;
}
