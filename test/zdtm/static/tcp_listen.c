// SPDX-License-Identifier: GPL-2.0
/*
 * TCP sockets that are not connections: listeners without pending
 * connections on 127.0.0.1, on ::1 (IPv6 only) and on :: (dual-stack), each
 * with its own backlog; two listeners sharing one port with SO_REUSEPORT; a
 * socket bound but not listening; a socket never bound. After the restore
 * each listener has the same name and backlog and accepts new connections
 * (the dual-stack one from IPv4 and IPv6 clients) that carry data; the
 * SO_REUSEPORT pair still shares its port (the kernel spreads 32 connections
 * over both: that all go to one has a chance of 2^-31); the bound socket
 * listens on its port; the fresh one connects.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR_LISTENERS 3

static const enum inet_kind kinds[NR_LISTENERS] = { INET_V4, INET_V6, INET_MAPPED };
static const int backlogs[NR_LISTENERS] = { 5, 17, 128 };

/* The maximum backlog of a listener (Linux reports it in tcpi_sacked). */
static int max_backlog(int ls)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(ls, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return -errno;
	return ti.tcpi_sacked;
}

/* Connect to @ss, accept on @ls, a block each way. */
static int try_connection(int ls, const struct sockaddr_storage *ss, unsigned int len)
{
	struct pollfd p = { .fd = ls, .events = POLLIN };
	char out[2048], in[2048];
	int cl = tcp_connect_to(ss, len), sv = -1, ret = -EIO;
	size_t bad;

	if (cl < 0)
		return cl;
	if (poll(&p, 1, 10000) == 1)
		sv = accept(ls, NULL, NULL);
	datagen(out, sizeof(out), 0x11575);
	if (sv >= 0 && send(cl, out, sizeof(out), 0) == sizeof(out) &&
	    recv(sv, in, sizeof(in), MSG_WAITALL) == sizeof(in) &&
	    !datachk(in, sizeof(in), 0x11575, &bad) && send(sv, in, sizeof(in), 0) == sizeof(in) &&
	    recv(cl, out, sizeof(out), MSG_WAITALL) == sizeof(out) &&
	    !datachk(out, sizeof(out), 0x11575, &bad))
		ret = 0;
	close(cl);
	if (sv >= 0)
		close(sv);
	return ret;
}

static int check_listener(int i, int ls, const struct inet_names *n)
{
	struct sockaddr_storage ss = n->local;
	int acc = 0, blog = max_backlog(ls);
	socklen_t len = sizeof(acc);
	char a[64];

	if (getsockopt(ls, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) || !acc || blog != backlogs[i] ||
	    inet_names_check(ls, n)) {
		fail("listener %d: listening %d, backlog %d (expected %d), name %s", i, acc, blog,
		     backlogs[i], inet_str(&n->local, a, sizeof(a)));
		return 1;
	}
	len = inet_loopback(kinds[i], inet_port(&ss), &ss);
	if (try_connection(ls, &ss, len)) {
		fail("listener %d (%s): no connection: %m", i, inet_str(&ss, a, sizeof(a)));
		return 1;
	}
	/* The dual-stack listener takes plain IPv4 clients too. */
	len = inet_loopback(INET_V4, inet_port(&ss), &ss);
	if (kinds[i] == INET_MAPPED && try_connection(ls, &ss, len)) {
		fail("the dual-stack listener takes no IPv4 client: %m");
		return 1;
	}
	return 0;
}

#define REUSEPORT_CONNS 32

/* Two listeners on one port: each takes some of REUSEPORT_CONNS connections. */
static int check_reuseport(const int *rp, const struct inet_names *n)
{
	int got[2] = { 0, 0 }, cl[REUSEPORT_CONNS];
	struct sockaddr_storage ss = n[0].local;
	unsigned int len = sizeof(struct sockaddr_in);

	if (inet_names_check(rp[0], &n[0]) || inet_names_check(rp[1], &n[1])) {
		fail("the SO_REUSEPORT listeners lost their names");
		return 1;
	}
	for (int i = 0; i < REUSEPORT_CONNS; i++) {
		cl[i] = tcp_connect_to(&ss, len);
		if (cl[i] < 0) {
			fail("no connection to the SO_REUSEPORT port");
			return 1;
		}
	}
	fcntl(rp[0], F_SETFL, O_NONBLOCK);
	fcntl(rp[1], F_SETFL, O_NONBLOCK);
	/* A connection is queued once the client's last ACK is processed: wait for all. */
	for (int64_t end = test_now_ms() + 10000;
	     got[0] + got[1] < REUSEPORT_CONNS && test_now_ms() < end; test_sleep_ms(10)) {
		for (int j = 0; j < 2; j++)
			for (int sk; (sk = accept(rp[j], NULL, NULL)) >= 0; got[j]++)
				close(sk);
	}
	if (got[0] + got[1] != REUSEPORT_CONNS || !got[0] || !got[1]) {
		fail("SO_REUSEPORT listeners accepted %d and %d of %d connections", got[0], got[1],
		     REUSEPORT_CONNS);
		return 1;
	}
	for (int i = 0; i < REUSEPORT_CONNS; i++)
		close(cl[i]);
	return 0;
}

/* The bound socket must still hold its port and be able to listen on it. */
static int check_bound(int bs, const struct inet_names *n)
{
	struct sockaddr_storage ss;
	unsigned int len;

	if (inet_names_check(bs, n) || listen(bs, 2)) {
		fail("the bound socket lost its name or cannot listen: %m");
		return 1;
	}
	len = inet_loopback(INET_V4, inet_port(&n->local), &ss);
	if (try_connection(bs, &ss, len)) {
		fail("the bound socket, now listening, takes no connection");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct inet_names names[NR_LISTENERS], bnames, rnames[2];
	struct sockaddr_storage ss;
	int ls[NR_LISTENERS], rp[2], bs, fresh, probe, i, one = 1;
	unsigned int len;

	test_init(argc, argv);
	for (i = 0; i < NR_LISTENERS; i++) {
		ls[i] = tcp_listen_loopback(kinds[i], backlogs[i], &ss, &len);
		if (ls[i] < 0 || inet_names_get(ls[i], &names[i])) {
			fail("cannot set up listener %d", i);
			return 1;
		}
	}
	/* The second of the pair binds to the port the kernel gave the first. */
	len = inet_loopback(INET_V4, 0, &ss);
	for (i = 0; i < 2; i++) {
		rp[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (rp[i] < 0 || setsockopt(rp[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
		    bind(rp[i], (struct sockaddr *)&ss, len) || listen(rp[i], 40) ||
		    inet_names_get(rp[i], &rnames[i])) {
			fail("cannot set up the SO_REUSEPORT listeners: %m");
			return 1;
		}
		ss = rnames[0].local;
	}
	bs = socket(AF_INET, SOCK_STREAM, 0);
	fresh = socket(AF_INET, SOCK_STREAM, 0);
	len = inet_loopback(INET_V4, 0, &ss);
	if (bs < 0 || fresh < 0 || bind(bs, (struct sockaddr *)&ss, len) ||
	    inet_names_get(bs, &bnames)) {
		fail("cannot set up the bound socket: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	for (i = 0; i < NR_LISTENERS; i++)
		if (check_listener(i, ls[i], &names[i]))
			return 1;
	if (check_bound(bs, &bnames) || check_reuseport(rp, rnames))
		return 1;
	/* The socket that was never bound connects like a new one. */
	probe = tcp_listen_loopback(INET_V4, 1, &ss, &len);
	if (probe < 0 || connect(fresh, (struct sockaddr *)&ss, len)) {
		fail("the unbound socket cannot connect: %m");
		return 1;
	}
	pass();
	return 0;
}
