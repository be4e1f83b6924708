// SPDX-License-Identifier: GPL-2.0
/*
 * 64 TCP connections between the root and a child over loopback, half IPv4
 * and half IPv6, every one carrying its own checksummed streams both ways
 * with data in flight at the dump: the network lock and the restore must
 * handle them all at once (one lock transaction, ports shared with one
 * listener per family). After SIGTERM the root needs 64 KiB more on every
 * connection, then all half-close and the child reports its counts per
 * connection: every byte of every stream arrived, in order, once.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR_CONNS 64
#define MORE_AFTER (64 * 1024)
#define IDLE_MS 30000

struct counts {
	uint64_t sent, rcvd;
};

static struct tcp_pump pumps[NR_CONNS];

/* One round over all pumps: <0 the first error, else how many moved. */
static int step_all(void)
{
	int moved = 0;

	for (int i = 0; i < NR_CONNS; i++) {
		int ret = tcp_pump_step(&pumps[i], 0);

		if (ret < 0) {
			test_msg("connection %d: %s\n", i, strerror(-ret));
			return ret;
		}
		moved += ret;
	}
	return moved;
}

/* Stop sending on @p and shut its write side down. */
static int half_close(struct tcp_pump *p)
{
	p->tx_limit = p->sent;
	p->shut = true;
	return shutdown(p->fd, SHUT_WR) ? -errno : 0;
}

/*
 * The end of all streams, round-robin (one at a time would wait on a peer
 * still busy with the others): the root half-closes every connection first;
 * the child half-closes each as its end-of-file comes. Both read to the end.
 */
static int finish_all(bool first)
{
	int64_t last = test_now_ms();
	int done = 0;

	for (int i = 0; first && i < NR_CONNS; i++)
		if (half_close(&pumps[i]))
			return -errno;
	while (done < NR_CONNS) {
		int ret = step_all();

		if (ret < 0)
			return ret;
		done = 0;
		for (int i = 0; i < NR_CONNS; i++) {
			if (pumps[i].eof && !pumps[i].shut && half_close(&pumps[i]))
				return -errno;
			done += pumps[i].eof && pumps[i].shut;
		}
		if (ret) {
			last = test_now_ms();
		} else if (test_now_ms() - last > IDLE_MS) {
			for (int i = 0; i < NR_CONNS; i++)
				if (!pumps[i].eof || !pumps[i].shut)
					tcp_pump_log(&pumps[i], "stalled at the end");
			return -ETIMEDOUT;
		}
		test_sleep_ms(1); /* a steady trickle, not a busy loop */
	}
	return 0;
}

static int client(const struct sockaddr_storage *ss, const unsigned int *len, int report)
{
	struct counts c[NR_CONNS];

	for (int i = 0; i < NR_CONNS; i++) {
		int sk = tcp_connect_to(&ss[i % 2], len[i % 2]);

		if (sk < 0)
			return 1;
		tcp_pump_init(&pumps[i], sk, 0xc000 + i, 0x5000 + i);
	}
	/* Until the root half-closes the connections. */
	if (finish_all(false))
		return 1;
	for (int i = 0; i < NR_CONNS; i++) {
		c[i].sent = pumps[i].sent;
		c[i].rcvd = pumps[i].rcvd;
	}
	return write(report, c, sizeof(c)) == sizeof(c) ? 0 : 1;
}

/* Every connection must have got @more bytes past @base. */
static int run_until(const uint64_t *base, uint64_t more)
{
	int64_t last = test_now_ms();

	for (;;) {
		int done = 0, ret = step_all();

		if (ret < 0)
			return ret;
		for (int i = 0; i < NR_CONNS; i++)
			done += pumps[i].rcvd >= base[i] + more;
		if (done == NR_CONNS)
			return 0;
		if (ret) {
			last = test_now_ms();
		} else if (test_now_ms() - last > IDLE_MS) {
			for (int i = 0; i < NR_CONNS; i++)
				if (pumps[i].rcvd < base[i] + more)
					tcp_pump_log(&pumps[i], "stalled");
			return -ETIMEDOUT;
		}
		test_sleep_ms(1);
	}
}

static int check_counts(int report, pid_t child)
{
	struct counts c[NR_CONNS];
	int status = -1;

	if (read(report, c, sizeof(c)) != sizeof(c) || waitpid(child, &status, 0) != child ||
	    status) {
		fail("the child failed (status 0x%x)", status);
		return 1;
	}
	for (int i = 0; i < NR_CONNS; i++) {
		if (c[i].sent != pumps[i].rcvd || c[i].rcvd != pumps[i].sent) {
			fail("connection %d: child sent %" PRIu64 ", root got %" PRIu64
			     "; root sent %" PRIu64 ", child got %" PRIu64,
			     i, c[i].sent, pumps[i].rcvd, pumps[i].sent, c[i].rcvd);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss[2];
	uint64_t base[NR_CONNS] = { 0 };
	unsigned int len[2];
	int ls[2], rep[2], ret;
	pid_t child;

	test_init(argc, argv);
	ls[0] = tcp_listen_loopback(INET_V4, NR_CONNS, &ss[0], &len[0]);
	ls[1] = tcp_listen_loopback(INET_V6, NR_CONNS, &ss[1], &len[1]);
	if (ls[0] < 0 || ls[1] < 0 || pipe(rep)) {
		fail("cannot set up the listeners: %m");
		return 1;
	}
	child = fork();
	if (child == 0) {
		close(ls[0]);
		close(ls[1]);
		close(rep[0]);
		_exit(client(ss, len, rep[1]));
	}
	close(rep[1]);
	for (int i = 0; i < NR_CONNS; i++) {
		int sk = child > 0 ? accept(ls[i % 2], NULL, NULL) : -1;

		if (sk < 0) {
			fail("connection %d was not made: %m", i);
			return 1;
		}
		tcp_pump_init(&pumps[i], sk, 0x5000 + i, 0xc000 + i);
	}
	if (run_until(base, MORE_AFTER)) {
		fail("the streams do not flow before the dump");
		return 1;
	}
	test_daemon();
	while (test_go()) {
		if (step_all() < 0) {
			fail("a stream broke before SIGTERM");
			return 1;
		}
		test_sleep_ms(1);
	}
	for (int i = 0; i < NR_CONNS; i++)
		base[i] = pumps[i].rcvd;
	ret = run_until(base, MORE_AFTER);
	if (!ret)
		ret = finish_all(true);
	if (ret) {
		fail("the streams stopped after the restore: %s", strerror(-ret));
		return 1;
	}
	if (check_counts(rep[0], child))
		return 1;
	pass();
	return 0;
}
