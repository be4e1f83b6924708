// SPDX-License-Identifier: GPL-2.0
/*
 * A listening TCP socket with 5 connections in its backlog at the dump, never
 * accepted: 5 children of the test connected and wait in recv() for the
 * server to speak first (data sent before accept() is refused by the dump:
 * Documentation/network.md). TCP_INFO of a listener counts its accept queue
 * (tcpi_unacked): 5 before the dump and after the restore. After SIGTERM the
 * root accepts all 5, each from the local port of one child, sends each a
 * checksummed block of its own, gets its checksum back, and finds nothing
 * more queued. Each child checks its block, answers and exits 0.
 *
 * tcp_listen_backlog6 is this file over ::1 (BACKLOG_KIND).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef BACKLOG_KIND
#define BACKLOG_KIND INET_V4
#endif

#define NR_CLIENTS 5
#define BLOCK (128 * 1024)
#define WAIT_MS 30000

static unsigned char block[BLOCK];

/* Read exactly @len bytes within WAIT_MS; 0 or -errno (-EPIPE on EOF). */
static int read_full(int sk, void *buf, size_t len)
{
	struct pollfd p = { .fd = sk, .events = POLLIN };
	size_t got = 0;

	while (got < len) {
		ssize_t n;

		if (poll(&p, 1, WAIT_MS) != 1)
			return -ETIMEDOUT;
		n = recv(sk, (char *)buf + got, len - got, 0);
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			return -errno;
		if (n == 0)
			return -EPIPE;
		got += n > 0 ? n : 0;
	}
	return 0;
}

/* A child: connect, report the local port, wait for the block. */
static int client(int i, const struct sockaddr_storage *ss, unsigned int len, int report)
{
	struct inet_names names;
	uint16_t port;
	size_t bad;
	uint64_t sum;
	int sk = tcp_connect_to(ss, len);

	if (sk < 0 || inet_names_get(sk, &names))
		return 1;
	port = inet_port(&names.local);
	if (write(report, &port, sizeof(port)) != sizeof(port))
		return 1;
	close(report);
	/* Blocked here (no timeout: the dump may come at any time) until the root accepts. */
	if (recv(sk, block, BLOCK, MSG_WAITALL) != BLOCK) {
		test_msg("client %d: the block did not come: %m\n", i);
		return 1;
	}
	if (datachk(block, BLOCK, 0xb10c + i, &bad)) {
		test_msg("client %d: wrong byte at %zu of the block\n", i, bad);
		return 1;
	}
	sum = test_csum(block, BLOCK);
	if (send(sk, &sum, sizeof(sum), 0) != sizeof(sum) || inet_names_check(sk, &names))
		return 1;
	return 0;
}

/* The accept queue of a listener (Linux reports it in tcpi_unacked). */
static int backlog_len(int ls)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(ls, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return -errno;
	return ti.tcpi_unacked;
}

/* Accept one, find its child by port, exchange the block. */
static int serve_one(int ls, const uint16_t *ports)
{
	struct pollfd p = { .fd = ls, .events = POLLIN };
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	uint64_t sum;
	int i, sk, ret;

	sk = poll(&p, 1, WAIT_MS) == 1 ? accept(ls, (struct sockaddr *)&peer, &plen) : -1;
	if (sk < 0) {
		fail("a connection is missing from the backlog: %m");
		return -ENOENT;
	}
	for (i = 0; i < NR_CLIENTS && ports[i] != inet_port(&peer); i++)
		;
	if (i == NR_CLIENTS) {
		fail("an accepted connection comes from port %u, no child's", inet_port(&peer));
		return -ESRCH;
	}
	datagen(block, BLOCK, 0xb10c + i);
	ret = send(sk, block, BLOCK, 0) == BLOCK ? 0 : -errno;
	if (!ret)
		ret = read_full(sk, &sum, sizeof(sum));
	if (ret || sum != test_csum(block, BLOCK)) {
		fail("connection of child %d: the block did not go through (%s)", i,
		     strerror(-ret));
		return -EBADMSG;
	}
	close(sk);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct inet_names names;
	uint16_t ports[NR_CLIENTS];
	pid_t pids[NR_CLIENTS];
	unsigned int len;
	int ls, rep[2], n, i;

	test_init(argc, argv);
	ls = tcp_listen_loopback(BACKLOG_KIND, 8, &ss, &len);
	if (ls < 0 || pipe(rep) || inet_names_get(ls, &names)) {
		fail("cannot set up the listener: %m");
		return 1;
	}
	for (i = 0; i < NR_CLIENTS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			close(ls);
			close(rep[0]);
			_exit(client(i, &ss, len, rep[1]));
		}
		if (pids[i] < 0 || read(rep[0], &ports[i], sizeof(ports[i])) != sizeof(ports[i])) {
			fail("child %d did not connect: %m", i);
			return 1;
		}
	}
	close(rep[0]);
	close(rep[1]);
	n = backlog_len(ls);
	if (n != NR_CLIENTS) {
		fail("%d connections in the backlog before the dump, expected %d", n, NR_CLIENTS);
		return 1;
	}
	test_daemon();
	test_waitsig();

	n = backlog_len(ls);
	if (n != NR_CLIENTS || inet_names_check(ls, &names)) {
		fail("%d connections in the backlog after the restore, expected %d", n, NR_CLIENTS);
		return 1;
	}
	for (i = 0; i < NR_CLIENTS; i++)
		if (serve_one(ls, ports))
			return 1;
	fcntl(ls, F_SETFL, O_NONBLOCK);
	if (accept(ls, NULL, NULL) >= 0 || errno != EAGAIN) {
		fail("a sixth connection was in the backlog");
		return 1;
	}
	for (i = 0; i < NR_CLIENTS; i++) {
		int status = -1;

		if (waitpid(pids[i], &status, 0) != pids[i] || status) {
			fail("child %d ended with status 0x%x", i, status);
			return 1;
		}
	}
	pass();
	return 0;
}
