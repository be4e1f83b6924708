// SPDX-License-Identifier: GPL-2.0
/*
 * CRIU's --tcp-close: the restore brings TCP connections back closed. A
 * loopback connection (both ends in the test) with data queued and a
 * listening socket: after SIGTERM, each end of the connection must be a
 * closed TCP socket (TCP_INFO state TCP_CLOSE) whose read fails and whose
 * options stay (TCP_NODELAY), and the listening socket must still accept.
 * Not restored (dump --leave-running: its start time is the same), the
 * connection must still be open with its data.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

static int closed(int sk, const char *what)
{
	struct tcp_info ti = {};
	socklen_t len = sizeof(ti);
	int nd = 0;
	socklen_t nlen = sizeof(nd);
	char c;

	if (getsockopt(sk, IPPROTO_TCP, TCP_INFO, &ti, &len) || ti.tcpi_state != TCP_CLOSE ||
	    read(sk, &c, 1) >= 0 || getsockopt(sk, IPPROTO_TCP, TCP_NODELAY, &nd, &nlen) || !nd) {
		fail("%s: state %u, nodelay %d, read %s", what, ti.tcpi_state, nd, strerror(errno));
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long t0;
	char buf[8];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int lsk, cli, srv, c2, s2, one = 1;

	test_init(argc, argv);
	lsk = socket(AF_INET, SOCK_STREAM, 0);
	cli = socket(AF_INET, SOCK_STREAM, 0);
	if (lsk < 0 || cli < 0 || bind(lsk, (struct sockaddr *)&a, sizeof(a)) || listen(lsk, 4) ||
	    getsockname(lsk, (struct sockaddr *)&a, &len) ||
	    connect(cli, (struct sockaddr *)&a, sizeof(a)))
		goto err;
	srv = accept(lsk, NULL, NULL);
	if (srv < 0 || setsockopt(cli, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(srv, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    write(cli, "queued", 6) != 6)
		goto err;
	t0 = test_start_time();
	test_daemon();
	test_waitsig();

	if (test_start_time() == t0) {
		/* not restored: the connection is as it was */
		if (read(srv, buf, sizeof(buf)) != 6 || memcmp(buf, "queued", 6)) {
			fail("not restored, but the connection lost its data");
			return 1;
		}
		pass();
		return 0;
	}
	if (closed(cli, "client") || closed(srv, "server"))
		return 1;
	c2 = socket(AF_INET, SOCK_STREAM, 0);
	if (c2 < 0 || connect(c2, (struct sockaddr *)&a, sizeof(a)) ||
	    (s2 = accept(lsk, NULL, NULL)) < 0) {
		fail("the listening socket does not accept after the restore: %m");
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
