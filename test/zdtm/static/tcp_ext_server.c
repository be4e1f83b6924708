// SPDX-License-Identifier: GPL-2.0
/*
 * The other way round from tcp_ext_client: the test is the client, its
 * server outside the tree (an echo server reparented to the runner, as a
 * database or a web service would be). The client sends a checksummed stream
 * all the time and checks the echo; the connection (its local port chosen by
 * the kernel at connect()) must come back to the same server. After SIGTERM
 * it needs 1 MiB more echoed, half-closes, reads the echo to its end, and
 * the server, which saw every byte in order, reports no error in a file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#define SEED 0x5e27e2
#define MORE_AFTER (1 << 20)
#define IDLE_MS 30000
#define PORT_FILE "server.port"
#define RESULT "server.result"

/* Outside the tree: accept one connection, echo it to its end. */
static int server(void *arg)
{
	struct sockaddr_storage ss;
	struct tcp_pump p;
	unsigned int len;
	char out[128];
	int ls, sk, err;

	(void)arg;
	ls = tcp_listen_loopback(INET_V4, 1, &ss, &len);
	snprintf(out, sizeof(out), "%u\n", inet_port(&ss));
	if (ls < 0 || test_write_file(PORT_FILE, out))
		return 1;
	sk = accept(ls, NULL, NULL);
	if (sk < 0)
		return 1;
	tcp_pump_init(&p, sk, SEED, SEED);
	p.echo = true;
	/* No idle limit until the end: the client may be away (dumped) for long. */
	err = 0;
	while (!p.eof && err >= 0)
		err = tcp_pump_step(&p, 1000);
	if (err >= 0)
		err = tcp_pump_finish(&p, IDLE_MS);
	snprintf(out, sizeof(out), "err=%d rcvd=%" PRIu64 " sent=%" PRIu64 "\n", err, p.rcvd,
		 p.sent);
	test_msg("server: %s", out);
	return test_write_file(RESULT, out) ? 1 : 0;
}

static int check_server(const struct tcp_pump *p)
{
	uint64_t rcvd, sent;
	char buf[128];
	int err;

	if (test_wait_file(RESULT, buf, sizeof(buf), IDLE_MS) < 0 ||
	    sscanf(buf, "err=%d rcvd=%" SCNu64 " sent=%" SCNu64, &err, &rcvd, &sent) != 3) {
		fail("no result from the server outside the tree");
		return 1;
	}
	if (err || rcvd != p->sent || sent != p->rcvd || p->rcvd != p->sent) {
		fail("server: %s; client sent %" PRIu64 ", got back %" PRIu64, strtok(buf, "\n"),
		     p->sent, p->rcvd);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct inet_names names;
	struct tcp_pump p;
	unsigned int len;
	uint64_t at_sigterm;
	char buf[16];
	int sk, ret = 0;

	test_init(argc, argv);
	unlink(PORT_FILE);
	unlink(RESULT);
	if (test_fork_outside(server, NULL) < 0 ||
	    test_wait_file(PORT_FILE, buf, sizeof(buf), IDLE_MS) < 0) {
		fail("the server outside the tree did not start");
		return 1;
	}
	len = inet_loopback(INET_V4, atoi(buf), &ss);
	sk = tcp_connect_to(&ss, len);
	if (sk < 0 || inet_names_get(sk, &names)) {
		fail("cannot connect to the server outside the tree");
		return 1;
	}
	tcp_pump_init(&p, sk, SEED, SEED);
	if (tcp_pump_run(&p, MORE_AFTER, IDLE_MS)) {
		fail("the echo does not flow before the dump");
		return 1;
	}
	test_daemon();
	while (test_go() && ret >= 0) {
		ret = tcp_pump_step(&p, 100);
		test_sleep_ms(1);
	}
	if (ret < 0 || inet_names_check(sk, &names)) {
		fail("the connection broke or moved: %s", strerror(-ret));
		return 1;
	}
	at_sigterm = p.rcvd;
	ret = tcp_pump_run(&p, at_sigterm + MORE_AFTER, IDLE_MS);
	if (!ret)
		ret = tcp_pump_finish(&p, IDLE_MS);
	if (ret) {
		fail("the echo stopped after the restore at %" PRIu64 " bytes: %s", p.rcvd,
		     strerror(-ret));
		return 1;
	}
	if (check_server(&p))
		return 1;
	pass();
	return 0;
}
