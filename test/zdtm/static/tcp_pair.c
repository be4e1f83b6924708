// SPDX-License-Identifier: GPL-2.0
/*
 * A TCP connection between two processes of the tree over loopback: the root
 * accepts (its listening socket stays open), a child connects. Each sends its
 * own checksummed stream and checks the other's, all the time, offering more
 * than the other reads, so the send and receive queues of both ends hold
 * data at the dump. After SIGTERM the root needs 1 MiB more from the child
 * (the exchange goes on after the restore), then both half-close, read to the
 * end and compare counts: every byte arrived, in order, once.
 *
 * tcp_pair6 (::1) and tcp_pair_mapped (a v4-mapped client, ::ffff:127.0.0.1,
 * to a dual-stack listener) are this file with another TCP_PAIR_KIND.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef TCP_PAIR_KIND
#define TCP_PAIR_KIND INET_V4
#endif

#define SEED_SERVER 0x5e7e7
#define SEED_CLIENT 0xc11e7
#define MORE_AFTER (1 << 20)
#define IDLE_MS 30000

struct counts {
	uint64_t sent, rcvd;
	int err; /* -errno of the child's pump, 0 when it ended cleanly */
};

/* The child: pump until the root half-closes, finish, report the counts. */
static int client(const struct sockaddr_storage *ss, unsigned int len, int report)
{
	struct counts c = { 0 };
	struct tcp_pump p;
	int sk = tcp_connect_to(ss, len);

	if (sk < 0)
		return 1;
	tcp_pump_init(&p, sk, SEED_CLIENT, SEED_SERVER);
	while (!p.eof) {
		c.err = tcp_pump_step(&p, 100);
		if (c.err < 0)
			break;
		test_sleep_ms(1); /* a steady trickle, not a busy loop */
	}
	if (c.err >= 0)
		c.err = tcp_pump_finish(&p, IDLE_MS);
	c.sent = p.sent;
	c.rcvd = p.rcvd;
	if (c.err)
		test_msg("client: %s after %llu bytes out, %llu in\n", strerror(-c.err),
			 (unsigned long long)c.sent, (unsigned long long)c.rcvd);
	return write(report, &c, sizeof(c)) == sizeof(c) && !c.err ? 0 : 1;
}

static int check_end(struct tcp_pump *p, int report, pid_t child)
{
	struct counts c;
	int status;

	if (read(report, &c, sizeof(c)) != sizeof(c) || waitpid(child, &status, 0) != child) {
		fail("the client did not report: %m");
		return 1;
	}
	if (c.err || status) {
		fail("the client failed: %s (status 0x%x)", strerror(-c.err), status);
		return 1;
	}
	if (c.sent != p->rcvd || c.rcvd != p->sent) {
		fail("bytes lost: client sent %llu, server got %llu; server sent %llu, client got "
		     "%llu",
		     (unsigned long long)c.sent, (unsigned long long)p->rcvd,
		     (unsigned long long)p->sent, (unsigned long long)c.rcvd);
		return 1;
	}
	test_msg("%llu bytes to the client, %llu from it, all checked\n",
		 (unsigned long long)p->sent, (unsigned long long)p->rcvd);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct inet_names names;
	unsigned int len;
	struct tcp_pump p;
	int ls, sk, rep[2], ret = 0;
	uint64_t at_sigterm;
	pid_t child;

	test_init(argc, argv);
	ls = tcp_listen_loopback(TCP_PAIR_KIND, 4, &ss, &len);
	if (ls < 0 || pipe(rep)) {
		fail("cannot set up the listener: %m");
		return 1;
	}
	child = fork();
	if (child == 0) {
		close(ls);
		close(rep[0]);
		_exit(client(&ss, len, rep[1]));
	}
	close(rep[1]);
	sk = child > 0 ? accept(ls, NULL, NULL) : -1;
	if (sk < 0) {
		fail("no connection from the client: %m");
		return 1;
	}
	tcp_pump_init(&p, sk, SEED_SERVER, SEED_CLIENT);
	/* Fill the queues before the dump can come. */
	if (inet_names_get(sk, &names) || tcp_pump_run(&p, MORE_AFTER, IDLE_MS)) {
		fail("the stream does not flow before the dump: %m");
		return 1;
	}
	test_daemon();
	while (test_go() && ret >= 0) {
		ret = tcp_pump_step(&p, 100);
		test_sleep_ms(1);
	}
	if (ret < 0) {
		fail("stream broken at %llu bytes in: %s", (unsigned long long)p.rcvd,
		     strerror(-ret));
		return 1;
	}
	if (inet_names_check(sk, &names)) {
		fail("the connection has other addresses after the restore");
		return 1;
	}
	at_sigterm = p.rcvd;
	ret = tcp_pump_run(&p, at_sigterm + MORE_AFTER, IDLE_MS);
	if (ret) {
		fail("the stream stopped after the restore at %llu bytes in (%llu at SIGTERM): %s",
		     (unsigned long long)p.rcvd, (unsigned long long)at_sigterm, strerror(-ret));
		return 1;
	}
	ret = tcp_pump_finish(&p, IDLE_MS);
	if (ret) {
		fail("the end of the stream: %s", strerror(-ret));
		return 1;
	}
	if (check_end(&p, rep[0], child))
		return 1;
	pass();
	return 0;
}
