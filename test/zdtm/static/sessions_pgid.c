// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions and process groups across a tree. The root leads session S0.
 * Child A leads its own group, child B joined A's group, child D stays in the
 * root's group, child C leads a new session, in which grandchild C1 leads
 * its own group and grandchild C2 stays in C's group. After SIGTERM every
 * process must have its pid, ppid, pgid and sid, seen by itself and by the
 * root (getpgid/getsid of the others).
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

enum {
	ROOT,
	A,
	B,
	C,
	D,
	C1,
	C2,
	NPROC
};

struct ids {
	int idx; /* which process, in the readiness message */
	pid_t pid, ppid, pgid, sid;
};

/* Filled before ready; children fill their own entry before forking grandchildren. */
static struct ids want[NPROC];

static void record(int i)
{
	want[i].idx = i;
	want[i].pid = getpid();
	want[i].ppid = getppid();
	want[i].pgid = getpgrp();
	want[i].sid = getsid(0);
}

static int same(int i)
{
	const struct ids *w = &want[i];

	if (getpid() != w->pid || (i != ROOT && getppid() != w->ppid) || getpgrp() != w->pgid ||
	    getsid(0) != w->sid) {
		test_msg("process %d: pid/ppid/pgid/sid %d/%d/%d/%d, expected %d/%d/%d/%d\n", i,
			 getpid(), getppid(), getpgrp(), getsid(0), w->pid, w->ppid, w->pgid,
			 w->sid);
		return 1;
	}
	return 0;
}

/* A process that sits until SIGTERM; C also forks and reaps C1 and C2. */
static int member(int i, int ready)
{
	pid_t kids[2];
	int nk = 0, bad;

	if (i == A || i == C1)
		setpgid(0, 0);
	if (i == B)
		setpgid(0, want[A].pid);
	if (i == C)
		setsid();
	record(i);
	for (int k = C1; i == C && k <= C2; k++) {
		kids[nk] = fork();
		if (kids[nk] == 0)
			_exit(member(k, ready));
		nk++;
	}
	if (write(ready, &want[i], sizeof(want[i])) != sizeof(want[i]))
		return 2;
	test_waitsig();
	bad = same(i);
	return bad | (nk ? (test_reap_children(kids, nk) ? 1 : 0) : 0);
}

int main(int argc, char **argv)
{
	pid_t kids[4];
	int ready[2];

	test_init(argc, argv);
	record(ROOT);
	if (pipe(ready)) {
		fail("pipe: %m");
		return 1;
	}
	for (int i = A; i <= D; i++) {
		kids[i - A] = fork();
		if (kids[i - A] == 0)
			_exit(member(i, ready[1]));
		/* B joins A's group: A must have made it first. */
		if (i == A && (read(ready[0], &want[A], sizeof(want[A])) != sizeof(want[A]) ||
			       want[A].idx != A)) {
			fail("A did not start");
			return 1;
		}
	}
	close(ready[1]);
	for (int n = 0; n < NPROC - 2; n++) {
		struct ids got;

		if (read(ready[0], &got, sizeof(got)) != sizeof(got) || got.idx <= A ||
		    got.idx >= NPROC) {
			fail("only %d processes became ready", n + 2);
			return 1;
		}
		want[got.idx] = got;
	}
	if (want[A].pgid != want[A].pid || want[B].pgid != want[A].pid ||
	    want[C].sid != want[C].pid || want[C1].pgid != want[C1].pid ||
	    want[C1].sid != want[C].pid || want[C2].pgid != want[C].pid ||
	    want[D].pgid != want[ROOT].pgid) {
		fail("the layout was not built as designed");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (same(ROOT)) {
		fail("the root's ids changed");
		return 1;
	}
	for (int i = A; i < NPROC; i++) {
		if (getpgid(want[i].pid) != want[i].pgid || getsid(want[i].pid) != want[i].sid) {
			fail("process %d (pid %d): pgid %d sid %d seen from the root, expected %d "
			     "%d",
			     i, want[i].pid, getpgid(want[i].pid), getsid(want[i].pid),
			     want[i].pgid, want[i].sid);
			return 1;
		}
	}
	if (test_reap_children(kids, 4)) {
		fail("a process saw other ids (see the messages)");
		return 1;
	}
	pass();
	return 0;
}
