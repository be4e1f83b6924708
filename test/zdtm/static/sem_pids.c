// SPDX-License-Identifier: GPL-2.0
/*
 * The last pid of each SysV semaphore (semctl GETPID, "sempid") and the
 * values: the test, a child that stays and a child that exited did semops
 * on two sets, one semaphore was never touched (last pid 0), one set was
 * given its values with SETALL and one of them is at SEMVMX. After the
 * restore every value and every last pid is the same, the dead child's
 * too. In a container the set is its IPC namespace's; elsewhere the test
 * unshares an IPC namespace of its own first (semaphores of the host's
 * namespace are not the tree's).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

static int ids[2];
static const int nsems[2] = { 5, 3 };
static int vals[2][5], pids[2][5];

static int op(int set, unsigned short num, short delta)
{
	struct sembuf s = { .sem_num = num, .sem_op = delta, .sem_flg = IPC_NOWAIT };

	return semop(ids[set], &s, 1);
}

static int snapshot(int v[2][5], int p[2][5])
{
	int s, i;

	for (s = 0; s < 2; s++)
		for (i = 0; i < nsems[s]; i++) {
			v[s][i] = semctl(ids[s], i, GETVAL);
			p[s][i] = semctl(ids[s], i, GETPID);
			if (v[s][i] < 0 || p[s][i] < 0) {
				fail("set %d semaphore %d: GETVAL/GETPID: %m", s, i);
				return neg_errno();
			}
		}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned short all[3] = { 32767, 7, 0 };
	union semun arg = { .array = all };
	int now_v[2][5], now_p[2][5], status, s, i, pfd[2];
	pid_t stay, gone;
	char c;

	test_init(argc, argv);
	if (!test_in_container() && unshare(CLONE_NEWIPC)) {
		fail("unshare(CLONE_NEWIPC): %m");
		return 1;
	}
	ids[0] = semget(IPC_PRIVATE, nsems[0], 0600);
	ids[1] = semget(0x5e3a1d5, nsems[1], IPC_CREAT | IPC_EXCL | 0640);
	if (ids[0] < 0 || ids[1] < 0) {
		fail("semget: %m");
		return 1;
	}
	if (semctl(ids[1], 0, SETALL, arg) || op(0, 0, 3)) {
		fail("SETALL/semop: %m");
		return 1;
	}
	if (pipe(pfd)) {
		fail("pipe: %m");
		return 1;
	}
	stay = fork();
	if (stay == 0) {
		close(pfd[1]);
		if (op(0, 1, 1) || op(1, 1, -2))
			_exit(1);
		/* stays until the end: the restore must make it again with its pid */
		_exit(read(pfd[0], &c, 1) < 0 ? 2 : 0);
	}
	close(pfd[0]);
	gone = fork();
	if (gone == 0)
		_exit(op(0, 2, 2) || op(0, 3, 0) || op(1, 2, 0) ? 1 : 0);
	if (waitpid(gone, &status, 0) != gone || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the child that exits failed its semops (%#x)", status);
		return 1;
	}
	/* the staying child's semops are done once its pid is the last of set 0 semaphore 1 */
	while (semctl(ids[0], 1, GETPID) != stay)
		usleep(1000);
	if (snapshot(vals, pids))
		return 1;
	if (pids[0][0] != getpid() || pids[0][2] != gone || pids[0][4] != 0 || pids[1][1] != stay ||
	    vals[1][0] != 32767) {
		fail("the semops did not leave what the test expects");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (snapshot(now_v, now_p))
		goto out;
	for (s = 0; s < 2; s++)
		for (i = 0; i < nsems[s]; i++)
			if (now_v[s][i] != vals[s][i] || now_p[s][i] != pids[s][i]) {
				fail("set %d semaphore %d: value %d last pid %d, expected %d and "
				     "%d",
				     s, i, now_v[s][i], now_p[s][i], vals[s][i], pids[s][i]);
				goto out;
			}
	/* and they still work: a semop makes the test the last pid */
	if (op(0, 4, 1) || semctl(ids[0], 4, GETPID) != getpid() || op(0, 4, -1)) {
		fail("semop after the restore: %m");
		goto out;
	}
	if (write(pfd[1], "x", 1) != 1 || waitpid(stay, &status, 0) != stay) {
		fail("the staying child");
		goto out;
	}
	semctl(ids[0], 0, IPC_RMID);
	semctl(ids[1], 0, IPC_RMID);
	pass();
	return 0;
out:
	kill(stay, SIGKILL);
	semctl(ids[0], 0, IPC_RMID);
	semctl(ids[1], 0, IPC_RMID);
	return 1;
}
