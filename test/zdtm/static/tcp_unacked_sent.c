// SPDX-License-Identifier: GPL-2.0
/*
 * Data sent and never acknowledged in the send queue at the dump, not only
 * data waiting behind a closed window: the client, outside the tree, drops
 * every packet that reaches its socket (a socket filter returning 0, so its
 * kernel acknowledges nothing), while the server of the tree writes 8 MiB.
 * What left the server in its first window stays in its queue, sent and
 * unacknowledged (SIOCOUTQ minus SIOCOUTQNSD), retransmitted in vain. After
 * the restore the server wakes the client (SIGUSR1), which removes its
 * filter and reads everything: the restored socket must send the sent part
 * again and then the rest, every byte in order.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/sockios.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#define QUEUED (8 << 20)
#define SNDBUF (16 << 20)
#define SEED 0x5e47
#define IDLE_MS 30000
#define FILTERED "client.filtered"
#define RESULT "client.result"

#ifndef SIOCOUTQNSD /* Linux 2.6.38; in linux/sockios.h */
#define SIOCOUTQNSD 0x894B
#endif

struct client_arg {
	struct sockaddr_storage ss;
	unsigned int len;
};

/* Outside the tree: drop everything until SIGUSR1, then read to the end. */
static int client(void *a)
{
	struct sock_filter drop[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
	struct sock_fprog prog = { .len = 1, .filter = drop };
	struct client_arg *arg = a;
	struct tcp_pump p;
	sigset_t usr1;
	char out[128];
	int sk, err, sig, zero = 0;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	sk = tcp_connect_to(&arg->ss, arg->len);
	if (sk < 0)
		return 1;
	tcp_pump_init(&p, sk, 0, SEED);
	p.tx_limit = 0;
	p.rx_chunk = 256 * 1024;
	err = setsockopt(sk, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ? -errno : 0;
	if (!err)
		err = test_write_file(FILTERED, "filtered\n");
	if (!err)
		err = sigwait(&usr1, &sig) ? -EINTR : 0;
	/* The value is not used, but the kernel wants an int (EINVAL otherwise). */
	if (!err && setsockopt(sk, SOL_SOCKET, SO_DETACH_FILTER, &zero, sizeof(zero)))
		err = -errno;
	if (!err)
		err = tcp_pump_finish(&p, IDLE_MS);
	snprintf(out, sizeof(out), "err=%d rcvd=%" PRIu64 "\n", err, p.rcvd);
	test_msg("client: %s", out);
	return test_write_file(RESULT, out) ? 1 : 0;
}

/* Bytes of the send queue: in all, and sent but not acknowledged. */
static int queues(int sk, int *outq, int *sent)
{
	int nsd;

	if (ioctl(sk, SIOCOUTQ, outq) || ioctl(sk, SIOCOUTQNSD, &nsd))
		return -errno;
	*sent = *outq - nsd;
	return 0;
}

static int fill(struct tcp_pump *p)
{
	int sndbuf = SNDBUF, outq = 0, sent = 0;

	if (setsockopt(p->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)))
		return -errno;
	p->tx_limit = QUEUED;
	while (p->sent < QUEUED) {
		int ret = tcp_pump_send(p);

		if (ret <= 0)
			return ret ? ret : -ENOBUFS;
	}
	/* The first window leaves at once; give the kernel a moment to send it. */
	for (int i = 0; i < 100 && !sent; i++) {
		test_sleep_ms(10);
		if (queues(p->fd, &outq, &sent))
			return -errno;
	}
	test_msg("%d bytes in the send queue, %d of them sent and not acknowledged\n", outq, sent);
	return sent > 0 ? 0 : -ENODATA;
}

int main(int argc, char **argv)
{
	struct client_arg arg;
	struct tcp_pump p;
	uint64_t rcvd;
	char buf[128];
	int ls, sk, err, outq, sent;
	pid_t cl;

	test_init(argc, argv);
	unlink(FILTERED);
	unlink(RESULT);
	ls = tcp_listen_loopback(INET_V4, 1, &arg.ss, &arg.len);
	cl = ls < 0 ? -1 : test_fork_outside(client, &arg);
	sk = cl > 0 ? accept(ls, NULL, NULL) : -1;
	if (sk < 0 || test_wait_file(FILTERED, buf, sizeof(buf), IDLE_MS) < 0) {
		fail("no filtered connection from the client outside the tree: %m");
		return 1;
	}
	close(ls);
	tcp_pump_init(&p, sk, SEED, 0);
	err = fill(&p);
	if (err) {
		fail("no data sent and unacknowledged in the send queue: %s", strerror(-err));
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (!queues(sk, &outq, &sent))
		test_msg("after the restore: %d bytes queued, %d sent\n", outq, sent);
	if (kill(cl, SIGUSR1) || shutdown(sk, SHUT_WR)) {
		fail("cannot wake the client or end the stream: %m");
		return 1;
	}
	if (test_wait_file(RESULT, buf, sizeof(buf), 2 * IDLE_MS) < 0 ||
	    sscanf(buf, "err=%d rcvd=%" SCNu64, &err, &rcvd) != 2 || err || rcvd != QUEUED) {
		fail("the client did not get the %d bytes: %s", QUEUED, strtok(buf, "\n"));
		return 1;
	}
	pass();
	return 0;
}
