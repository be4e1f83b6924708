// SPDX-License-Identifier: GPL-2.0
/*
 * Which buffer sizes a program fixed (SO_BUF_LOCK, 5.14): a loopback TCP
 * connection whose client left both to the kernel's autotuning and whose
 * server set SO_RCVBUF (receive locked), a UDP socket with SO_SNDBUF set
 * (send locked) and one with SO_BUF_LOCK set explicitly to both. After
 * SIGTERM each must report the same SO_BUF_LOCK: the restore sets buffer
 * sizes, which lock them, and must not leave a tuned socket locked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK 72
#endif

static int buf_lock(int sk)
{
	int v = -1;
	socklen_t len = sizeof(v);

	return getsockopt(sk, SOL_SOCKET, SO_BUF_LOCK, &v, &len) ? neg_errno() : v;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int lsk, cli, srv, u1, u2, v = 200000, both = 3, i;
	int want[4], got;
	int *sks[4] = { &cli, &srv, &u1, &u2 };

	test_init(argc, argv);
	lsk = socket(AF_INET, SOCK_STREAM, 0);
	cli = socket(AF_INET, SOCK_STREAM, 0);
	u1 = socket(AF_INET, SOCK_DGRAM, 0);
	u2 = socket(AF_INET, SOCK_DGRAM, 0);
	if (lsk < 0 || cli < 0 || u1 < 0 || u2 < 0 || bind(lsk, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(lsk, 1) || getsockname(lsk, (struct sockaddr *)&a, &len) ||
	    connect(cli, (struct sockaddr *)&a, sizeof(a)))
		goto err;
	srv = accept(lsk, NULL, NULL);
	if (srv < 0 || setsockopt(srv, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) ||
	    setsockopt(u1, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)) ||
	    setsockopt(u2, SOL_SOCKET, SO_BUF_LOCK, &both, sizeof(both)) || write(cli, "x", 1) != 1)
		goto err;
	close(lsk);
	for (i = 0; i < 4; i++)
		want[i] = buf_lock(*sks[i]);
	if (want[0] != 0 || want[1] != 2 || want[2] != 1 || want[3] != 3) {
		fail("setup: SO_BUF_LOCK %d %d %d %d, expected 0 2 1 3", want[0], want[1], want[2],
		     want[3]);
		return 1;
	}
	test_daemon();
	test_waitsig();

	for (i = 0; i < 4; i++) {
		got = buf_lock(*sks[i]);
		if (got != want[i]) {
			fail("socket %d: SO_BUF_LOCK %d, it was %d", i, got, want[i]);
			return 1;
		}
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
