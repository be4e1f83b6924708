// SPDX-License-Identifier: GPL-2.0
/*
 * A TCP server alone in the tree and its client outside it, each with 8 MiB
 * in its send queue at the dump: written, never acknowledged, because the
 * other end stopped reading (its receive queue full, its window closed).
 * SO_SNDBUFFORCE makes room for it. After SIGTERM the server wakes the client
 * (SIGUSR1); both read everything, checking each byte of the other's stream,
 * and half-close; the client writes what it saw to a file. Nothing of the 8
 * MiB the restore had to put back in the server's queues may be missing.
 * On loopback the peer acknowledges whatever reaches its receive queue at
 * once, so the 8 MiB are the part beyond the peer's window: never sent.
 *
 * tcp_unacked_8m6 is this file over ::1 (UNACKED_KIND).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef UNACKED_KIND
#define UNACKED_KIND INET_V4
#endif

#define SEED_SERVER 0x8e7e8
#define SEED_CLIENT 0x8c11e8
#define QUEUED (8 << 20)
#define SNDBUF (16 << 20) /* the kernel doubles it: room for the 8 MiB and its overhead */
#define IDLE_MS 30000
#define FILLED "client.filled"
#define RESULT "client.result"

struct client_arg {
	struct sockaddr_storage ss;
	unsigned int len;
};

/* Send until @want bytes wait unacknowledged in the send queue; 0 or -errno. */
static int fill_sendq(struct tcp_pump *p, int want)
{
	int sndbuf = SNDBUF, outq = 0;

	if (setsockopt(p->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)))
		return -errno;
	while (outq < want) {
		int ret = tcp_pump_send(p);

		if (ret < 0)
			return ret;
		if (ret == 0) /* the send buffer is full before the queue is */
			return -ENOBUFS;
		if (ioctl(p->fd, SIOCOUTQ, &outq))
			return -errno;
	}
	return 0;
}

/* Read everything, send the rest, half-close; a larger read size: no trickle here. */
static int drain(struct tcp_pump *p)
{
	p->rx_chunk = 256 * 1024;
	return tcp_pump_finish(p, IDLE_MS);
}

/* Outside the tree: fill, wait for SIGUSR1, drain; the result into RESULT. */
static int client(void *a)
{
	struct client_arg *arg = a;
	struct tcp_pump p;
	sigset_t usr1, old;
	char out[256];
	int sk, err, sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	sk = tcp_connect_to(&arg->ss, arg->len);
	if (sk < 0)
		return 1;
	tcp_pump_init(&p, sk, SEED_CLIENT, SEED_SERVER);
	err = fill_sendq(&p, QUEUED);
	if (!err)
		err = test_write_file(FILLED, "filled\n");
	if (!err)
		err = sigwait(&usr1, &sig) ? -EINTR : drain(&p);
	snprintf(out, sizeof(out), "err=%d sent=%" PRIu64 " rcvd=%" PRIu64 "\n", err, p.sent,
		 p.rcvd);
	test_msg("client: %s", out);
	return test_write_file(RESULT, out) ? 1 : 0;
}

static int check_client(const struct tcp_pump *p)
{
	char buf[256];
	uint64_t sent, rcvd;
	int err;

	if (test_wait_file(RESULT, buf, sizeof(buf), IDLE_MS) < 0) {
		fail("the client outside the tree wrote no result (%s)", RESULT);
		return 1;
	}
	if (sscanf(buf, "err=%d sent=%" SCNu64 " rcvd=%" SCNu64, &err, &sent, &rcvd) != 3) {
		fail("bad client result: %s", buf);
		return 1;
	}
	if (err) {
		fail("the client saw an error: %s (%s)", strerror(-err), buf);
		return 1;
	}
	if (sent != p->rcvd || rcvd != p->sent) {
		fail("bytes lost: client sent %" PRIu64 ", server got %" PRIu64
		     "; server sent %" PRIu64 ", client got %" PRIu64,
		     sent, p->rcvd, p->sent, rcvd);
		return 1;
	}
	test_msg("%" PRIu64 " bytes from the client, %" PRIu64 " to it, all checked\n", sent,
		 p->sent);
	return 0;
}

static void log_queues(int sk, const char *when)
{
	int outq = -1, inq = -1;

	ioctl(sk, SIOCOUTQ, &outq);
	ioctl(sk, SIOCINQ, &inq);
	test_msg("%s: %d bytes in the send queue, %d in the receive queue\n", when, outq, inq);
}

int main(int argc, char **argv)
{
	struct client_arg arg;
	struct inet_names names;
	struct tcp_pump p;
	char buf[16];
	int ls, sk, ret;
	pid_t cl;

	test_init(argc, argv);
	unlink(FILLED);
	unlink(RESULT);
	ls = tcp_listen_loopback(UNACKED_KIND, 4, &arg.ss, &arg.len);
	if (ls < 0) {
		fail("cannot listen: %s", strerror(-ls));
		return 1;
	}
	cl = test_fork_outside(client, &arg);
	sk = cl > 0 ? accept(ls, NULL, NULL) : -1;
	if (sk < 0 || inet_names_get(sk, &names)) {
		fail("no connection from the client outside the tree: %m");
		return 1;
	}
	close(ls);
	tcp_pump_init(&p, sk, SEED_SERVER, SEED_CLIENT);
	ret = fill_sendq(&p, QUEUED);
	if (ret) {
		fail("cannot queue %d bytes: %s", QUEUED, strerror(-ret));
		return 1;
	}
	if (test_wait_file(FILLED, buf, sizeof(buf), IDLE_MS) < 0) {
		fail("the client did not fill its send queue");
		return 1;
	}
	log_queues(sk, "before the dump");
	test_daemon();
	test_waitsig();

	log_queues(sk, "after SIGTERM");
	if (inet_names_check(sk, &names)) {
		fail("the connection has other addresses after the restore");
		return 1;
	}
	if (kill(cl, SIGUSR1)) {
		fail("the client %d is gone: %m", cl);
		return 1;
	}
	ret = drain(&p);
	if (ret) {
		fail("draining the queues: %s after %" PRIu64 " bytes in", strerror(-ret), p.rcvd);
		return 1;
	}
	if (check_client(&p))
		return 1;
	pass();
	return 0;
}
