// SPDX-License-Identifier: GPL-2.0
/*
 * SysV IPC of an IPC namespace of the test's own: a 56-byte segment and a
 * 3-page one attached (read-write, and read-only at a second address), a
 * segment no one attached, one marked for removal while attached, a
 * semaphore set with values, a message queue with typed messages. After the
 * restore (in a new IPC namespace): the same ids, keys, sizes and contents,
 * the attaches at their addresses with their rights, the values, and the
 * messages in order; the removed segment goes at its last detach.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PG 4096
#define KEY 0x5a17

union semun {
	int val;
	unsigned short *array;
};

struct msgbuf_t {
	long type;
	char text[32];
};

int main(int argc, char **argv)
{
	int small, big, idle, gone, sem, msg, i;
	unsigned short vals[3] = { 7, 0, 32767 }, got[3];
	char *ps, *pb, *pr, *pi, *pg;
	struct shmid_ds ds;
	struct msgbuf_t m;
	union semun su;

	test_init(argc, argv);
	if (unshare(CLONE_NEWIPC) || test_ns_apart_from_parent("ipc") != 1) {
		fail("unshare(CLONE_NEWIPC): %m");
		return 1;
	}
	small = shmget(KEY, 56, IPC_CREAT | 0640);
	big = shmget(KEY + 1, 3 * PG, IPC_CREAT | 0600);
	idle = shmget(KEY + 2, PG, IPC_CREAT | 0666);
	gone = shmget(IPC_PRIVATE, 2 * PG, IPC_CREAT | 0600);
	sem = semget(KEY + 3, 3, IPC_CREAT | 0600);
	msg = msgget(KEY + 4, IPC_CREAT | 0600);
	if (small < 0 || big < 0 || idle < 0 || gone < 0 || sem < 0 || msg < 0) {
		fail("cannot create the objects: %m");
		return 1;
	}
	ps = shmat(small, NULL, 0);
	pb = shmat(big, NULL, 0);
	pr = shmat(big, NULL, SHM_RDONLY);
	pi = shmat(idle, NULL, 0);
	pg = shmat(gone, NULL, 0);
	if (ps == (void *)-1 || pb == (void *)-1 || pr == (void *)-1 || pi == (void *)-1 ||
	    pg == (void *)-1) {
		fail("shmat: %m");
		return 1;
	}
	strcpy(ps, "fifty-six bytes at most");
	for (i = 0; i < 3 * PG; i++)
		pb[i] = (char)(i * 7);
	strcpy(pi, "nobody attached");
	shmdt(pi);
	strcpy(pg, "going");
	shmctl(gone, IPC_RMID, NULL);
	su.array = vals;
	if (semctl(sem, 0, SETALL, su)) {
		fail("SETALL: %m");
		return 1;
	}
	for (i = 1; i <= 3; i++) {
		m.type = i * 10;
		snprintf(m.text, sizeof(m.text), "message %d", i);
		if (msgsnd(msg, &m, strlen(m.text) + 1, 0)) {
			fail("msgsnd: %m");
			return 1;
		}
	}
	test_daemon();
	test_waitsig();
	/* restored in an IPC namespace of its own again, not its parent's */
	if (test_ns_apart_from_parent("ipc") != 1) {
		fail("the IPC namespace is its parent's after the restore");
		return 1;
	}

	if (shmget(KEY, 0, 0) != small || shmget(KEY + 1, 0, 0) != big ||
	    shmget(KEY + 2, 0, 0) != idle || semget(KEY + 3, 0, 0) != sem ||
	    msgget(KEY + 4, 0) != msg) {
		fail("an object has another id or is gone");
		return 1;
	}
	if (strcmp(ps, "fifty-six bytes at most") || shmctl(small, IPC_STAT, &ds) ||
	    ds.shm_segsz != 56 || (ds.shm_perm.mode & 0777) != 0640) {
		fail("the 56-byte segment changed");
		return 1;
	}
	for (i = 0; i < 3 * PG; i++)
		if (pb[i] != (char)(i * 7) || pr[i] != pb[i]) {
			fail("the 3-page segment differs at byte %d", i);
			return 1;
		}
	pb[5] = 'x';
	if (pr[5] != 'x') {
		fail("the two attaches of one segment are not one segment any more");
		return 1;
	}
	pi = shmat(idle, NULL, SHM_RDONLY);
	if (pi == (void *)-1 || strcmp(pi, "nobody attached")) {
		fail("the segment no one attached lost its contents");
		return 1;
	}
	if (strcmp(pg, "going") || shmctl(gone, IPC_STAT, &ds) || !(ds.shm_perm.mode & SHM_DEST)) {
		fail("the segment marked for removal is not marked any more");
		return 1;
	}
	shmdt(pg);
	if (shmctl(gone, IPC_STAT, &ds) == 0 || errno != EINVAL) {
		fail("the marked segment did not go at its last detach");
		return 1;
	}
	su.array = got;
	if (semctl(sem, 0, GETALL, su) || memcmp(got, vals, sizeof(vals))) {
		fail("semaphore values %u %u %u", got[0], got[1], got[2]);
		return 1;
	}
	for (i = 1; i <= 3; i++) {
		char want[32];

		snprintf(want, sizeof(want), "message %d", i);
		if (msgrcv(msg, &m, sizeof(m.text), 0, IPC_NOWAIT) < 0 || m.type != i * 10 ||
		    strcmp(m.text, want)) {
			fail("message %d: type %ld \"%s\"", i, m.type, m.text);
			return 1;
		}
	}
	pass();
	return 0;
}
