// SPDX-License-Identifier: GPL-2.0
/*
 * A half-closed TCP connection with both ends in the tree: a child sent
 * 256 KiB and shut its side down (FIN_WAIT2), the root read them to the end
 * (CLOSE_WAIT) and keeps sending its own checksummed stream, faster than the
 * child reads, so data is in flight at the dump. After SIGTERM the root's
 * end still acts half-closed: a read gives end-of-file at once, poll() says
 * POLLIN | POLLRDHUP (criu-like restores CLOSE_WAIT as an ESTABLISHED socket
 * shut down for reading, which TCP_INFO shows: Documentation/network.md).
 * It sends 1 MiB more (the child reads on after the restore), shuts its side
 * down, and the child reports what it read: every byte, in order, once.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define CHILD_BYTES (256 * 1024)
#define MORE_AFTER (1 << 20)
#define IDLE_MS 30000
#define SEED_ROOT 0x40c7
#define SEED_CHILD 0xc41d

struct report {
	uint64_t rcvd;
	int state, err; /* the child's TCP state once half-closed; -errno */
};

static int tcp_state(int sk)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	return getsockopt(sk, SOL_TCP, TCP_INFO, &ti, &len) ? -errno : ti.tcpi_state;
}

/* The child: send CHILD_BYTES, half-close, read the root's stream to its end. */
static int child(const struct sockaddr_storage *ss, unsigned int len, int report)
{
	struct report r = { 0 };
	struct tcp_pump p;
	int sk = tcp_connect_to(ss, len);

	if (sk < 0)
		return 1;
	tcp_pump_init(&p, sk, SEED_CHILD, SEED_ROOT);
	p.tx_limit = CHILD_BYTES;
	while (!r.err && !p.eof) {
		r.err = tcp_pump_step(&p, 100);
		r.err = r.err > 0 ? 0 : r.err;
		if (!r.err && p.sent == CHILD_BYTES && !p.shut) {
			r.err = shutdown(sk, SHUT_WR) ? -errno : 0;
			p.shut = true;
		}
		/* FIN_WAIT2 once the root acknowledged our FIN (at once on loopback). */
		if (p.shut && !r.state && tcp_state(sk) == TCP_FIN_WAIT2)
			r.state = TCP_FIN_WAIT2;
		test_sleep_ms(1); /* a slow reader: the root's data waits in the queues */
	}
	r.rcvd = p.rcvd;
	return write(report, &r, sizeof(r)) == sizeof(r) && !r.err ? 0 : 1;
}

/* Our end after the peer's FIN: EOF to a read, POLLRDHUP, CLOSE_WAIT or ESTABLISHED. */
static int check_half(int sk)
{
	struct pollfd p = { .fd = sk, .events = POLLIN | POLLRDHUP };
	int state = tcp_state(sk);
	char c;

	if (poll(&p, 1, 0) != 1 || (p.revents & (POLLIN | POLLRDHUP)) != (POLLIN | POLLRDHUP) ||
	    recv(sk, &c, 1, MSG_DONTWAIT) != 0 ||
	    (state != TCP_CLOSE_WAIT && state != TCP_ESTABLISHED)) {
		fail("the root's end is no longer half-closed: poll %#x, state %d: %m", p.revents,
		     state);
		return -EINVAL;
	}
	return 0;
}

static int check_child(const struct tcp_pump *p, int report, pid_t pid)
{
	struct report r;
	int status = -1;

	if (read(report, &r, sizeof(r)) != sizeof(r) || waitpid(pid, &status, 0) != pid) {
		fail("the child did not report: %m");
		return 1;
	}
	if (status || r.err || r.state != TCP_FIN_WAIT2 || r.rcvd != p->sent) {
		fail("child: status 0x%x, %s, state %d (FIN_WAIT2 is %d), read %" PRIu64
		     " of %" PRIu64 " bytes",
		     status, strerror(-r.err), r.state, TCP_FIN_WAIT2, r.rcvd, p->sent);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct tcp_pump p;
	unsigned int len;
	int ls, sk, rep[2], ret = 0;
	uint64_t at_sigterm;
	pid_t pid;

	test_init(argc, argv);
	ls = tcp_listen_loopback(INET_V4, 1, &ss, &len);
	if (ls < 0 || pipe(rep)) {
		fail("cannot set up the listener: %m");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		close(ls);
		close(rep[0]);
		_exit(child(&ss, len, rep[1]));
	}
	close(rep[1]);
	sk = pid > 0 ? accept(ls, NULL, NULL) : -1;
	if (sk < 0) {
		fail("no connection from the child: %m");
		return 1;
	}
	close(ls);
	tcp_pump_init(&p, sk, SEED_ROOT, SEED_CHILD);
	/* The child's bytes and its end, while ours flow. */
	while (!p.eof && ret >= 0)
		ret = tcp_pump_step(&p, 100);
	if (ret < 0 || p.rcvd != CHILD_BYTES || tcp_state(sk) != TCP_CLOSE_WAIT || check_half(sk)) {
		fail("the child's half did not close as expected: %d bytes, state %d, %s",
		     (int)p.rcvd, tcp_state(sk), strerror(-ret));
		return 1;
	}
	test_daemon();
	while (test_go() && ret >= 0) {
		ret = tcp_pump_step(&p, 100);
		test_sleep_ms(1);
	}
	if (ret < 0) {
		fail("the stream broke before SIGTERM: %s", strerror(-ret));
		return 1;
	}
	if (check_half(sk))
		return 1;
	/* 1 MiB more must go: the child reads on after the restore. */
	at_sigterm = p.sent;
	for (int64_t last = test_now_ms(); p.sent < at_sigterm + MORE_AFTER;) {
		ret = tcp_pump_step(&p, 100);
		if (ret < 0 || test_now_ms() - last > IDLE_MS) {
			fail("the stream stopped after the restore at %" PRIu64 " bytes: %s",
			     p.sent, ret < 0 ? strerror(-ret) : "no progress");
			return 1;
		}
		if (ret)
			last = test_now_ms();
	}
	if (shutdown(sk, SHUT_WR) || check_child(&p, rep[0], pid))
		return 1;
	pass();
	return 0;
}
