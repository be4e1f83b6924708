// SPDX-License-Identifier: GPL-2.0
/*
 * A zombie that leads a process group with a live member: child Z made its
 * own group, child S joined it, then Z exited with status 7 and was left
 * unreaped. After SIGTERM Z must still be a zombie (waitid WNOWAIT sees exit
 * 7) leading group Z in /proc/Z/stat, S must still be in group Z, and a
 * signal to the group must reach S. A restore has to recreate the group
 * leader before S can join it, and then turn it into a zombie.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

/* Field 5 of /proc/PID/stat, the process group; -1 if unreadable. */
static int stat_pgrp(pid_t pid, char *state)
{
	char path[64], buf[1024], *p;
	int pgrp = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (test_read_file(path, buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')))
		return neg_errno();
	if (sscanf(p + 2, "%c %*d %d", state, &pgrp) != 2)
		return -EBADMSG;
	return pgrp;
}

static int member(pid_t leader, int ready)
{
	if (setpgid(0, leader) || write(ready, "s", 1) != 1)
		return 2;
	test_waitsig();
	if (getpgrp() != leader) {
		test_msg("S: group %d, expected %d\n", getpgrp(), leader);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int ready[2], go[2];
	pid_t z, s;
	siginfo_t si = { 0 };
	char st = '?';

	test_init(argc, argv);
	if (pipe(ready) || pipe(go)) {
		fail("pipe: %m");
		return 1;
	}
	z = fork();
	if (z == 0) {
		char c;

		setpgid(0, 0);
		if (write(ready[1], "z", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(7);
	}
	if (z < 0 || test_wait_ready(ready[0], 1)) {
		fail("Z did not start");
		return 1;
	}
	s = fork();
	if (s == 0)
		_exit(member(z, ready[1]));
	if (s < 0 || test_wait_ready(ready[0], 1) || write(go[1], "x", 1) != 1 ||
	    waitid(P_PID, z, &si, WEXITED | WNOWAIT)) {
		fail("S did not join, or Z did not exit: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	memset(&si, 0, sizeof(si));
	if (stat_pgrp(z, &st) != z || st != 'Z' || waitid(P_PID, z, &si, WEXITED | WNOWAIT) ||
	    si.si_code != CLD_EXITED || si.si_status != 7) {
		fail("Z (%d): state %c group %d, wait code %d status %d; expected a zombie leader, "
		     "exit 7",
		     z, st, stat_pgrp(z, &st), si.si_code, si.si_status);
		return 1;
	}
	if (getpgid(s) != z || stat_pgrp(s, &st) != z) {
		fail("S (%d) is in group %d, expected %d", s, getpgid(s), z);
		return 1;
	}
	/* The group still exists: SIGTERM to it reaches S, whose check must pass. */
	if (kill(-z, SIGTERM) || waitpid(s, &si.si_status, 0) != s || !WIFEXITED(si.si_status) ||
	    WEXITSTATUS(si.si_status)) {
		fail("S did not get the group's SIGTERM or its check failed");
		return 1;
	}
	if (waitpid(z, &si.si_status, 0) != z || WEXITSTATUS(si.si_status) != 7) {
		fail("reaping Z gave status 0x%x", si.si_status);
		return 1;
	}
	pass();
	return 0;
}
