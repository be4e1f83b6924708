// SPDX-License-Identifier: GPL-2.0
/*
 * A non-blocking connect() in flight at the dump (SYN_SENT): the listener,
 * outside the tree, has a full accept queue (backlog 0 and one connection it
 * has not accepted), so the kernel drops the test's SYNs and connect() waits.
 * After the restore the socket is still connecting; the test wakes the
 * process outside (SIGUSR1), which accepts its own connection, then the
 * test's (its SYN comes again after the retransmission timeout), and echoes
 * a line: the connection completes with SO_ERROR 0 on its restored port.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#define WAIT_MS 40000 /* SYN retransmissions back off: 1, 2, 4, 8, 16 s */
#define PORT_FILE "listener.port"
#define RESULT "outside.result"

static int tcp_state(int sk)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	return getsockopt(sk, SOL_TCP, TCP_INFO, &ti, &len) ? -errno : ti.tcpi_state;
}

/* Outside the tree: a full listener until SIGUSR1, then accept and echo once. */
static int listener(void *arg)
{
	struct pollfd p = { .events = POLLIN };
	struct sockaddr_storage ss;
	unsigned int len;
	char port[16], line[32];
	sigset_t usr1;
	int ls, filler, own, sk = -1, sig;
	ssize_t n = -1;

	(void)arg;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	ls = tcp_listen_loopback(INET_V4, 0, &ss, &len);
	filler = ls < 0 ? -1 : tcp_connect_to(&ss, len);
	snprintf(port, sizeof(port), "%u\n", inet_port(&ss));
	if (filler < 0 || test_write_file(PORT_FILE, port) || sigwait(&usr1, &sig))
		return 1;
	own = accept(ls, NULL, NULL);
	p.fd = ls;
	if (own >= 0 && poll(&p, 1, WAIT_MS) == 1)
		sk = accept(ls, NULL, NULL);
	p.fd = sk;
	if (sk >= 0 && poll(&p, 1, WAIT_MS) == 1)
		n = recv(sk, line, sizeof(line), 0);
	if (n <= 0 || send(sk, line, n, 0) != n) {
		test_msg("outside: no connection from the test, or no line: %m\n");
		return 1;
	}
	return test_write_file(RESULT, "ok\n") ? 1 : 0;
}

/* Wait until connect() ends; its SO_ERROR. */
static int connected(int sk)
{
	struct pollfd p = { .fd = sk, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int err = 0;

	if (poll(&p, 1, WAIT_MS) != 1)
		return -ETIMEDOUT;
	if (getsockopt(sk, SOL_SOCKET, SO_ERROR, &err, &len))
		return -errno;
	return -err;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct inet_names names, now;
	char buf[32];
	unsigned int len;
	int sk, ret;
	pid_t out;

	test_init(argc, argv);
	unlink(PORT_FILE);
	unlink(RESULT);
	out = test_fork_outside(listener, NULL);
	if (out < 0 || test_wait_file(PORT_FILE, buf, sizeof(buf), WAIT_MS) < 0) {
		fail("the listener outside the tree did not start");
		return 1;
	}
	len = inet_loopback(INET_V4, atoi(buf), &ss);
	sk = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (sk < 0 || !connect(sk, (struct sockaddr *)&ss, len) || errno != EINPROGRESS) {
		fail("connect() did not stay in flight: %m");
		return 1;
	}
	/* The SYN was dropped (the accept queue is full): connect() waits. */
	test_sleep_ms(100);
	if (tcp_state(sk) != TCP_SYN_SENT || inet_names_get(sk, &names)) {
		fail("the connection is in state %d, not SYN_SENT (%d)", tcp_state(sk),
		     TCP_SYN_SENT);
		return 1;
	}
	test_daemon();
	test_waitsig();

	ret = tcp_state(sk);
	if (ret != TCP_SYN_SENT) {
		fail("after the restore the connection is in state %d, not SYN_SENT", ret);
		return 1;
	}
	if (kill(out, SIGUSR1)) {
		fail("the listener outside the tree is gone: %m");
		return 1;
	}
	/* Its peer is known only once connected: the local name must be the same. */
	ret = connected(sk);
	if (!ret)
		ret = inet_names_get(sk, &now);
	if (ret || memcmp(&now.local, &names.local, sizeof(now.local))) {
		fail("connect() ended with %s, or on another port", strerror(-ret));
		return 1;
	}
	if (send(sk, "hello\n", 6, 0) != 6 ||
	    test_wait_file(RESULT, buf, sizeof(buf), WAIT_MS) < 0 ||
	    recv(sk, buf, sizeof(buf), 0) != 6 || memcmp(buf, "hello\n", 6)) {
		fail("no echo over the connection: %m");
		return 1;
	}
	pass();
	return 0;
}
