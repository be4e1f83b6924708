// SPDX-License-Identifier: GPL-2.0
/*
 * CRIU's --skip-in-flight: a listening socket of the test with a connection
 * from a client outside the tree that it has not accepted yet. Without the
 * option the dump is refused (the kernel cannot put a connection back in an
 * accept queue); with it the connection is left out. After SIGTERM, restored:
 * nothing is waiting to be accepted, and the listening socket still accepts
 * a new connection. Not restored (dump --leave-running): the waiting
 * connection is still there.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#define PORT_FILE "listen.port"

/* Outside the tree: connect, then wait until the connection ends (a reset after the restore). */
static int client(void *arg)
{
	struct sockaddr_storage ss;
	char buf[16];
	socklen_t len;
	int sk;

	(void)arg;
	if (test_wait_file(PORT_FILE, buf, sizeof(buf), 10000) < 0)
		return 1;
	len = inet_loopback(INET_V4, atoi(buf), &ss);
	sk = tcp_connect_to(&ss, len);
	if (sk < 0 || test_write_file("client.connected", "1"))
		return 1;
	alarm(120);
	while (read(sk, buf, sizeof(buf)) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	unsigned long long t0;
	char buf[16];
	int lsk, c, s;

	test_init(argc, argv);
	lsk = socket(AF_INET, SOCK_STREAM, 0);
	len = inet_loopback(INET_V4, 0, &ss);
	if (lsk < 0 || bind(lsk, (struct sockaddr *)&ss, len) || listen(lsk, 4))
		goto err;
	len = sizeof(a);
	if (getsockname(lsk, (struct sockaddr *)&a, &len))
		goto err;
	snprintf(buf, sizeof(buf), "%d", ntohs(a.sin_port));
	if (test_write_file(PORT_FILE, buf) || test_fork_outside(client, NULL) < 0 ||
	    test_wait_file("client.connected", buf, sizeof(buf), 10000) < 0)
		goto err;
	t0 = test_start_time();
	test_daemon();
	test_waitsig();

	fcntl(lsk, F_SETFL, O_NONBLOCK);
	s = accept(lsk, NULL, NULL);
	if (test_start_time() == t0) {
		if (s < 0) {
			fail("not restored, but the waiting connection is gone: %m");
			return 1;
		}
		pass();
		return 0;
	}
	if (s >= 0 || errno != EAGAIN) {
		fail("restored with --skip-in-flight, but a connection waits to be accepted");
		return 1;
	}
	len = inet_loopback(INET_V4, ntohs(a.sin_port), &ss);
	c = tcp_connect_to(&ss, len);
	fcntl(lsk, F_SETFL, 0);
	if (c < 0 || accept(lsk, NULL, NULL) < 0) {
		fail("the listening socket does not accept after the restore: %m");
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
