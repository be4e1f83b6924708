// SPDX-License-Identifier: GPL-2.0
/*
 * TCP connections the server of the tree half-closed (shutdown(SHUT_WR)),
 * their client outside the tree still sending. Connection A: the client read
 * the server's 64 KiB and its FIN (A is in FIN_WAIT2) and then sent 1 MiB the
 * server has not read. Connection B: the server queued 4 MiB and its FIN
 * behind them, which the client has not read (B is in FIN_WAIT1). The peer
 * of a half-closed end would be in CLOSE_WAIT, which criu-like refuses, so
 * the client stays outside. After the restore A and B are still half-closed
 * (FIN_WAIT1 or FIN_WAIT2: the restore sends the FIN again,
 * Documentation/network.md), the server reads A's 1 MiB to the client's end,
 * the client reads B's 4 MiB and its end, and neither side saw an error.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#define A_SERVER (64 * 1024) /* the server's bytes on A before its FIN */
#define A_CLIENT (1 << 20) /* the client's bytes on A after that FIN */
#define B_SERVER (4 << 20) /* the server's bytes on B, the FIN behind them */
#define SEED_A_SERVER 0xa5
#define SEED_A_CLIENT 0xac
#define SEED_B_SERVER 0xb5
#define WAIT_MS 30000
#define READY "client.ready"
#define RESULT "client.result"

struct client_arg {
	struct sockaddr_storage ss;
	unsigned int len;
};

/* Read to EOF, checking the stream of @seed; the count or -errno. */
static int64_t read_to_eof(int sk, uint64_t seed)
{
	static unsigned char buf[64 * 1024];
	uint64_t got = 0;
	size_t bad;

	for (;;) {
		ssize_t n = recv(sk, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return got;
		if (datachk_at(buf, n, seed, got, &bad))
			return -EILSEQ;
		got += n;
	}
}

/* Send @len bytes of the stream of @seed, blocking. 0 or -errno. */
static int send_stream(int sk, uint64_t seed, size_t len)
{
	static unsigned char buf[64 * 1024];
	size_t done = 0;

	while (done < len) {
		size_t n = len - done < sizeof(buf) ? len - done : sizeof(buf);
		ssize_t w;

		datagen_at(buf, n, seed, done);
		w = send(sk, buf, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		done += w;
	}
	return 0;
}

static int big_sndbuf(int sk)
{
	int size = 8 << 20; /* doubled by the kernel: room for B_SERVER and more */

	return setsockopt(sk, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) ? -errno : 0;
}

/* Outside the tree: A read to its end and 1 MiB sent, then B after SIGUSR1. */
static int client(void *p)
{
	struct client_arg *arg = p;
	int64_t a_rcvd = -1, b_rcvd = -1;
	sigset_t usr1;
	char out[160];
	int a, b, sig, err;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	a = tcp_connect_to(&arg->ss, arg->len);
	b = a < 0 ? -1 : tcp_connect_to(&arg->ss, arg->len);
	if (b < 0)
		return 1;
	err = big_sndbuf(a);
	if (!err)
		a_rcvd = read_to_eof(a, SEED_A_SERVER);
	if (!err && a_rcvd < 0)
		err = a_rcvd;
	if (!err)
		err = send_stream(a, SEED_A_CLIENT, A_CLIENT);
	if (!err)
		err = test_write_file(READY, "ready\n");
	if (!err)
		err = sigwait(&usr1, &sig) ? -EINTR : 0;
	if (!err && shutdown(a, SHUT_WR))
		err = -errno;
	if (!err) {
		b_rcvd = read_to_eof(b, SEED_B_SERVER);
		err = b_rcvd < 0 ? b_rcvd : shutdown(b, SHUT_WR) ? -errno : 0;
	}
	snprintf(out, sizeof(out), "err=%d a_rcvd=%" PRId64 " b_rcvd=%" PRId64 "\n", err, a_rcvd,
		 b_rcvd);
	test_msg("client: %s", out);
	return test_write_file(RESULT, out) ? 1 : 0;
}

static int tcp_state(int sk)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	return getsockopt(sk, SOL_TCP, TCP_INFO, &ti, &len) ? -errno : ti.tcpi_state;
}

/* Both half-closed by us: A as the dump saw it, or FIN_WAIT1 again after a restore. */
static int check_states(int a, int b, bool restored)
{
	int sa = tcp_state(a), sb = tcp_state(b);

	if ((sa == TCP_FIN_WAIT2 || (restored && sa == TCP_FIN_WAIT1)) && sb == TCP_FIN_WAIT1)
		return 0;
	fail("%s: A is in state %d, B in %d (FIN_WAIT1 is %d, FIN_WAIT2 %d)",
	     restored ? "after the restore" : "before the dump", sa, sb, TCP_FIN_WAIT1,
	     TCP_FIN_WAIT2);
	return -EINVAL;
}

static int check_client(int64_t a_rcvd_server)
{
	int64_t a_rcvd, b_rcvd;
	char buf[160];
	int err;

	if (test_wait_file(RESULT, buf, sizeof(buf), WAIT_MS) < 0 ||
	    sscanf(buf, "err=%d a_rcvd=%" SCNd64 " b_rcvd=%" SCNd64, &err, &a_rcvd, &b_rcvd) != 3) {
		fail("no result from the client outside the tree");
		return 1;
	}
	if (err || a_rcvd != A_SERVER || b_rcvd != B_SERVER || a_rcvd_server != A_CLIENT) {
		fail("client: %s (expected %d on A, %d on B); server: %" PRId64
		     " on A (expected %d)",
		     strtok(buf, "\n"), A_SERVER, B_SERVER, a_rcvd_server, A_CLIENT);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct client_arg arg;
	int64_t a_rcvd, b_rcvd;
	char buf[16];
	int ls, a, b;
	pid_t cl;

	test_init(argc, argv);
	unlink(READY);
	unlink(RESULT);
	ls = tcp_listen_loopback(INET_V4, 4, &arg.ss, &arg.len);
	cl = ls < 0 ? -1 : test_fork_outside(client, &arg);
	a = cl > 0 ? accept(ls, NULL, NULL) : -1;
	b = a < 0 ? -1 : accept(ls, NULL, NULL);
	if (b < 0 || big_sndbuf(b) || send_stream(a, SEED_A_SERVER, A_SERVER) ||
	    shutdown(a, SHUT_WR) || send_stream(b, SEED_B_SERVER, B_SERVER) ||
	    shutdown(b, SHUT_WR)) {
		fail("cannot set up the connections: %m");
		return 1;
	}
	close(ls);
	if (test_wait_file(READY, buf, sizeof(buf), WAIT_MS) < 0) {
		fail("the client outside the tree did not read A to its end");
		return 1;
	}
	if (check_states(a, b, false))
		return 1;
	test_daemon();
	test_waitsig();

	if (check_states(a, b, true))
		return 1;
	if (kill(cl, SIGUSR1)) {
		fail("the client %d is gone: %m", cl);
		return 1;
	}
	a_rcvd = read_to_eof(a, SEED_A_CLIENT);
	b_rcvd = read_to_eof(b, 0);
	if (a_rcvd < 0 || b_rcvd != 0) {
		fail("reading A to its end: %" PRId64 ", B: %" PRId64, a_rcvd, b_rcvd);
		return 1;
	}
	if (check_client(a_rcvd))
		return 1;
	pass();
	return 0;
}
