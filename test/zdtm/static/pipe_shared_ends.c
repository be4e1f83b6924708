// SPDX-License-Identifier: GPL-2.0
/*
 * One pipe whose both ends are held by a parent and its child (inherited: the
 * same descriptions), with 40 records of 100 bytes in flight. After SIGTERM
 * the parent reads 20 records, then the child reads what is left: it must
 * get exactly the other 20, in order, and then find the pipe empty. A
 * restore that gives each process its own pipe (a copy of the data) makes
 * the child read the first records again.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "zdtmtst.h"

#define REC 100
#define NREC 40

static int read_recs(int fd, int first, int n)
{
	unsigned char buf[REC];

	for (int i = first; i < first + n; i++)
		if (read(fd, buf, REC) != REC || datachk(buf, REC, 600 + i, NULL)) {
			test_msg("record %d missing or wrong\n", i);
			return 1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	int p[2], go[2], ready[2];
	unsigned char buf[REC];
	pid_t kid;
	char c;

	test_init(argc, argv);
	if (pipe(p) || pipe(go) || pipe(ready) || fcntl(p[0], F_SETFL, O_NONBLOCK)) {
		fail("pipe: %m");
		return 1;
	}
	for (int i = 0; i < NREC; i++) {
		datagen(buf, REC, 600 + i);
		if (write(p[1], buf, REC) != REC) {
			fail("write: %m");
			return 1;
		}
	}
	kid = fork();
	if (kid == 0) {
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		test_waitsig();
		/* The parent says when it has taken its half. */
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(read_recs(p[0], NREC / 2, NREC / 2) || read(p[0], buf, 1) != -1 ||
		      errno != EAGAIN);
	}
	if (kid < 0 || test_wait_ready(ready[0], 1)) {
		fail("the child did not start");
		return 1;
	}
	test_daemon();
	test_waitsig();

	kill(kid, SIGTERM);
	if (read_recs(p[0], 0, NREC / 2)) {
		fail("the parent's half of the pipe data is wrong");
		return 1;
	}
	if (write(go[1], "g", 1) != 1 || test_reap_children(&kid, 1)) {
		fail("the child did not get exactly the second half: the pipe is not shared");
		return 1;
	}
	pass();
	return 0;
}
