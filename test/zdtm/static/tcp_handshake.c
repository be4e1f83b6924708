// SPDX-License-Identifier: GPL-2.0
/*
 * What the handshake of a TCP connection agreed on must survive the restore:
 * the options in TCP_INFO (SACK, timestamps, window scaling), both window
 * scales, and the MSS in use (TCP_MAXSEG, tcpi_snd_mss), on both ends of an
 * IPv4 and an IPv6 connection over loopback, one end with a small receive
 * buffer (a smaller window scale). 1 MiB goes each way before the dump and
 * again after the restore, and the values are compared after that traffic:
 * a connection restored with the default MSS (536 bytes less options)
 * would still work, only a hundred times slower.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtmtst.h"

#define TRAFFIC (1 << 20)
#define IDLE_MS 30000

struct handshake {
	unsigned int options, snd_wscale, rcv_wscale, snd_mss;
	int maxseg;
};

static int take(int sk, struct handshake *h)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(h, 0, sizeof(*h));
	if (getsockopt(sk, SOL_TCP, TCP_INFO, &ti, &len))
		return -errno;
	h->options = ti.tcpi_options;
	h->snd_wscale = ti.tcpi_snd_wscale;
	h->rcv_wscale = ti.tcpi_rcv_wscale;
	h->snd_mss = ti.tcpi_snd_mss;
	len = sizeof(h->maxseg);
	return getsockopt(sk, SOL_TCP, TCP_MAXSEG, &h->maxseg, &len) ? -errno : 0;
}

/* TRAFFIC bytes each way between @a and @b, checked. */
static int traffic(int a, int b, uint64_t seed)
{
	struct tcp_pump pa, pb;
	int64_t last = test_now_ms();

	tcp_pump_init(&pa, a, seed, seed + 1);
	tcp_pump_init(&pb, b, seed + 1, seed);
	pa.tx_limit = pb.tx_limit = TRAFFIC;
	pa.rx_chunk = pb.rx_chunk = 64 * 1024;
	while (pa.rcvd < TRAFFIC || pb.rcvd < TRAFFIC) {
		int ra = tcp_pump_step(&pa, 1), rb = tcp_pump_step(&pb, 1);

		if (ra < 0 || rb < 0)
			return ra < 0 ? ra : rb;
		if (ra || rb)
			last = test_now_ms();
		else if (test_now_ms() - last > IDLE_MS)
			return -ETIMEDOUT;
	}
	return 0;
}

struct conn {
	const char *name;
	int sk[2]; /* the connecting end (small receive buffer), the accepted end */
	struct handshake h[2];
};

static int setup(struct conn *c, enum inet_kind kind, const char *name)
{
	struct sockaddr_storage ss;
	unsigned int len;
	int rcvbuf = 16384, ls = tcp_listen_loopback(kind, 1, &ss, &len);

	c->name = name;
	c->sk[0] = socket(ss.ss_family, SOCK_STREAM, 0);
	if (ls < 0 || c->sk[0] < 0 ||
	    setsockopt(c->sk[0], SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) ||
	    connect(c->sk[0], (struct sockaddr *)&ss, len))
		return -errno;
	c->sk[1] = accept(ls, NULL, NULL);
	close(ls);
	if (c->sk[1] < 0)
		return -errno;
	return traffic(c->sk[0], c->sk[1], 0x4a5d);
}

static int check(struct conn *c)
{
	struct handshake now;
	int ret = traffic(c->sk[0], c->sk[1], 0x4a5e);

	if (ret) {
		fail("%s: no traffic after the restore: %s", c->name, strerror(-ret));
		return 1;
	}
	for (int i = 0; i < 2; i++) {
		const struct handshake *o = &c->h[i];

		if (take(c->sk[i], &now)) {
			fail("%s: TCP_INFO: %m", c->name);
			return 1;
		}
		if (memcmp(&now, o, sizeof(now))) {
			fail("%s, %s end: options %#x, window scales %u/%u, MSS %d (snd_mss %u); "
			     "were %#x, %u/%u, %d (%u)",
			     c->name, i ? "accepted" : "connecting", now.options, now.snd_wscale,
			     now.rcv_wscale, now.maxseg, now.snd_mss, o->options, o->snd_wscale,
			     o->rcv_wscale, o->maxseg, o->snd_mss);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct conn c[2];

	test_init(argc, argv);
	if (setup(&c[0], INET_V4, "IPv4") || setup(&c[1], INET_V6, "IPv6")) {
		fail("cannot set up the connections: %m");
		return 1;
	}
	for (int i = 0; i < 2; i++)
		if (take(c[i].sk[0], &c[i].h[0]) || take(c[i].sk[1], &c[i].h[1])) {
			fail("TCP_INFO: %m");
			return 1;
		}
	test_msg("IPv4: options %#x, window scales %u/%u, MSS %d\n", c[0].h[0].options,
		 c[0].h[0].snd_wscale, c[0].h[0].rcv_wscale, c[0].h[0].maxseg);
	test_daemon();
	test_waitsig();

	if (check(&c[0]) || check(&c[1]))
		return 1;
	pass();
	return 0;
}
