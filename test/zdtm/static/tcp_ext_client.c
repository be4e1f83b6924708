// SPDX-License-Identifier: GPL-2.0
/*
 * A TCP echo server alone in the tree, its client outside it (reparented to
 * the runner, so no dump sees it). The client sends a checksummed stream all
 * the time and checks the echo as it comes back, on one connection: any
 * error ends it, and it never reconnects. After SIGTERM the server needs
 * 1 MiB more from the client (the conversation goes on after the restore),
 * then tells the client (SIGUSR1) to half-close; the server echoes the rest,
 * half-closes, and the client writes what it saw to a file: every byte it
 * sent came back in order, the connection kept its local port. The host's
 * tables raw are as they were (the packet holder's rules go in them, and
 * iptables-nft makes the tables: a dump and its restore leave none behind).
 *
 * tcp_ext_client6 (::1) and tcp_ext_client_mapped (an IPv4 client of a
 * dual-stack listener: the server's socket holds ::ffff:127.0.0.1) are this
 * file with another EXT_KIND; tcp_ext_client_iptables is this file with the
 * network lock of iptables (its .desc).
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef EXT_KIND
#define EXT_KIND INET_V4
#endif

#define SEED 0xec40c11e
#define MORE_AFTER (1 << 20)
#define IDLE_MS 30000
#define RESULT "ext-client.result"

static volatile sig_atomic_t stop;

static void on_usr1(int sig)
{
	(void)sig;
	stop = 1;
}

struct client_arg {
	struct sockaddr_storage ss;
	unsigned int len;
};

/* Outside the tree: send, check the echo, until SIGUSR1; the result into RESULT. */
static int client(void *a)
{
	struct client_arg *arg = a;
	struct sockaddr_storage local, again;
	socklen_t ll = sizeof(local), al = sizeof(again);
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct tcp_pump p;
	char out[256];
	int sk, err = 0;

	sigaction(SIGUSR1, &sa, NULL);
	sk = tcp_connect_to(&arg->ss, arg->len);
	if (sk < 0 || getsockname(sk, (struct sockaddr *)&local, &ll))
		return 1;
	tcp_pump_init(&p, sk, SEED, SEED);
	while (!stop && !err) {
		err = tcp_pump_step(&p, 100);
		if (err > 0)
			err = 0;
		if (!err && p.eof)
			err = -EPIPE; /* the server must not close first */
		test_sleep_ms(1);
	}
	if (!err)
		err = tcp_pump_finish(&p, IDLE_MS);
	if (!err && (getsockname(sk, (struct sockaddr *)&again, &al) ||
		     inet_port(&again) != inet_port(&local)))
		err = -ENOTCONN;
	snprintf(out, sizeof(out), "err=%d sent=%" PRIu64 " rcvd=%" PRIu64 " port=%u\n", err,
		 p.sent, p.rcvd, inet_port(&local));
	test_msg("client: %s", out);
	return test_write_file(RESULT, out) ? 1 : 0;
}

/* After the echo pump ended: the client's view must match the server's. */
static int check_client(const struct tcp_pump *p)
{
	char buf[256];
	uint64_t sent, rcvd;
	unsigned int port;
	int err;

	if (test_wait_file(RESULT, buf, sizeof(buf), IDLE_MS) < 0) {
		fail("the client outside the tree wrote no result (%s)", RESULT);
		return 1;
	}
	if (sscanf(buf, "err=%d sent=%" SCNu64 " rcvd=%" SCNu64 " port=%u", &err, &sent, &rcvd,
		   &port) != 4) {
		fail("bad client result: %s", buf);
		return 1;
	}
	if (err) {
		fail("the client saw an error: %s (%s)", strerror(-err), buf);
		return 1;
	}
	if (sent != p->rcvd || rcvd != sent || p->sent != sent) {
		fail("stream incomplete: client sent %" PRIu64 ", got back %" PRIu64
		     "; server got %" PRIu64 ", echoed %" PRIu64,
		     sent, rcvd, p->rcvd, p->sent);
		return 1;
	}
	test_msg("%" PRIu64 " bytes sent by the client, all echoed in order\n", sent);
	return 0;
}

/* The host's tables raw (nothing without nft) */
#define RAW_TABLES "nft list tables 2>/dev/null | grep ' raw$' || true"

int main(int argc, char **argv)
{
	static char raw0[256], raw1[256];
	struct client_arg arg;
	struct inet_names names;
	struct tcp_pump p;
	int ls, sk, ret = 0;
	uint64_t at_sigterm;
	pid_t cl;

	test_init(argc, argv);
	unlink(RESULT);
	ls = tcp_listen_loopback(EXT_KIND, 4, &arg.ss, &arg.len);
	if (ls < 0) {
		fail("cannot listen: %s", strerror(-ls));
		return 1;
	}
	if (EXT_KIND == INET_MAPPED) /* an IPv4 client: the server sees it v4-mapped */
		arg.len = inet_loopback(INET_V4, inet_port(&arg.ss), &arg.ss);
	cl = test_fork_outside(client, &arg);
	sk = cl > 0 ? accept(ls, NULL, NULL) : -1;
	if (sk < 0) {
		fail("no connection from the client outside the tree: %m");
		return 1;
	}
	tcp_pump_init(&p, sk, SEED, SEED);
	p.echo = true;
	if (inet_names_get(sk, &names) || tcp_pump_run(&p, MORE_AFTER, IDLE_MS)) {
		fail("the stream does not flow before the dump");
		return 1;
	}
	if (test_sh_output(RAW_TABLES, raw0, sizeof(raw0))) {
		fail("cannot list the host's nftables tables");
		return 1;
	}
	test_daemon();
	while (test_go() && ret >= 0) {
		ret = tcp_pump_step(&p, 100);
		test_sleep_ms(1);
	}
	if (ret < 0) {
		fail("stream broken at %" PRIu64 " bytes in: %s", p.rcvd, strerror(-ret));
		return 1;
	}
	if (inet_names_check(sk, &names)) {
		fail("the connection has other addresses after the restore");
		return 1;
	}
	if (EXT_KIND == INET_MAPPED &&
	    !IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&names.peer)->sin6_addr)) {
		fail("the peer of the dual-stack socket is not v4-mapped");
		return 1;
	}
	at_sigterm = p.rcvd;
	ret = tcp_pump_run(&p, at_sigterm + MORE_AFTER, IDLE_MS);
	if (ret) {
		fail("the stream stopped after the restore at %" PRIu64 " bytes (%" PRIu64
		     " at SIGTERM): %s",
		     p.rcvd, at_sigterm, strerror(-ret));
		return 1;
	}
	if (kill(cl, SIGUSR1)) {
		fail("the client %d is gone: %m", cl);
		return 1;
	}
	ret = tcp_pump_finish(&p, IDLE_MS);
	if (ret) {
		fail("the end of the stream: %s", strerror(-ret));
		return 1;
	}
	if (check_client(&p))
		return 1;
	if (test_sh_output(RAW_TABLES, raw1, sizeof(raw1)) ||
	    test_same_text("the host's tables raw", raw0, raw1))
		return 1;
	pass();
	return 0;
}
