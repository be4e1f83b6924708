// SPDX-License-Identifier: GPL-2.0
/*
 * TCP sockets that are not connections: listeners without pending
 * connections on 127.0.0.1, on ::1 (IPv6 only) and on :: (dual-stack), each
 * with its own backlog; a socket bound but not listening; a socket never
 * bound. After the restore each listener has the same name and backlog and
 * accepts new connections (the dual-stack one from IPv4 and IPv6 clients) that
 * carry data; the bound socket listens on its port; the fresh one connects.
 */
#include <errno.h>
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
	struct inet_names names[NR_LISTENERS], bnames;
	struct sockaddr_storage ss;
	int ls[NR_LISTENERS], bs, fresh, probe, i;
	unsigned int len;

	test_init(argc, argv);
	for (i = 0; i < NR_LISTENERS; i++) {
		ls[i] = tcp_listen_loopback(kinds[i], backlogs[i], &ss, &len);
		if (ls[i] < 0 || inet_names_get(ls[i], &names[i])) {
			fail("cannot set up listener %d", i);
			return 1;
		}
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
	if (check_bound(bs, &bnames))
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
