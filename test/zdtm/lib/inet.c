// SPDX-License-Identifier: GPL-2.0
/*
 * TCP and UDP helpers of the zdtm tests: loopback addresses of each kind
 * (IPv4, IPv6, v4-mapped on a dual-stack socket), listeners on a port the
 * kernel chooses, a checksummed byte stream pumped both ways over one socket,
 * and processes started outside the dumped tree.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

/* Bytes written per step of a pump: more than a reader takes, so queues stay full. */
#define PUMP_TX_CHUNK (64 * 1024)
#define PUMP_RX_CHUNK (4 * 1024)

int inet_kind_family(enum inet_kind kind)
{
	return kind == INET_V4 ? AF_INET : AF_INET6;
}

unsigned int inet_loopback(enum inet_kind kind, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (kind == INET_V4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(*sin);
	}
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	if (kind == INET_V6) {
		sin6->sin6_addr = in6addr_loopback;
	} else {
		/* ::ffff:127.0.0.1 */
		sin6->sin6_addr.s6_addr[10] = 0xff;
		sin6->sin6_addr.s6_addr[11] = 0xff;
		sin6->sin6_addr.s6_addr[12] = 127;
		sin6->sin6_addr.s6_addr[15] = 1;
	}
	return sizeof(*sin6);
}

uint16_t inet_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

const char *inet_str(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, a, sizeof(a));
		snprintf(buf, size, "%s:%u", a, inet_port(ss));
	} else {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, a, sizeof(a));
		snprintf(buf, size, "[%s]:%u", a, inet_port(ss));
	}
	return buf;
}

int inet_socket(enum inet_kind kind, int type)
{
	int only = kind == INET_V6, sk = socket(inet_kind_family(kind), type, 0);

	if (sk < 0)
		return -errno;
	/*
	 * Whatever net.ipv6.bindv6only says: an INET_V6 socket is IPv6 only, an
	 * INET_MAPPED one dual-stack (IPv4 peers seen as ::ffff:a.b.c.d).
	 */
	if (kind != INET_V4 && setsockopt(sk, IPPROTO_IPV6, IPV6_V6ONLY, &only, sizeof(only))) {
		int ret = -errno;

		close(sk);
		return ret;
	}
	return sk;
}

int tcp_listen_loopback(enum inet_kind kind, int backlog, struct sockaddr_storage *ss,
			unsigned int *len)
{
	int sk = inet_socket(kind, SOCK_STREAM), ret;
	struct sockaddr_storage bind_to;
	socklen_t blen;

	if (sk < 0) {
		errno = -sk;
		test_msg("socket: %m\n");
		return sk;
	}
	/* INET_MAPPED listens on :: (IPv4 and IPv6), and is reached at ::ffff:127.0.0.1. */
	blen = inet_loopback(kind, 0, &bind_to);
	if (kind == INET_MAPPED)
		((struct sockaddr_in6 *)&bind_to)->sin6_addr = in6addr_any;
	*len = sizeof(*ss);
	if (bind(sk, (struct sockaddr *)&bind_to, blen) || listen(sk, backlog) ||
	    getsockname(sk, (struct sockaddr *)ss, len)) {
		ret = -errno;
		test_msg("listening socket of kind %d: %m\n", kind);
		close(sk);
		return ret;
	}
	*len = inet_loopback(kind, inet_port(ss), ss);
	return sk;
}

int tcp_connect_to(const struct sockaddr_storage *ss, unsigned int len)
{
	int sk = socket(ss->ss_family, SOCK_STREAM, 0), ret;
	char a[64];

	if (sk < 0 || connect(sk, (const struct sockaddr *)ss, len)) {
		ret = -errno;
		test_msg("connect to %s: %m\n", inet_str(ss, a, sizeof(a)));
		if (sk >= 0)
			close(sk);
		return ret;
	}
	return sk;
}

void tcp_pump_init(struct tcp_pump *p, int fd, uint64_t tx_seed, uint64_t rx_seed)
{
	memset(p, 0, sizeof(*p));
	p->fd = fd;
	p->tx_seed = tx_seed;
	p->rx_seed = rx_seed;
	p->tx_limit = UINT64_MAX;
	p->rx_chunk = PUMP_RX_CHUNK;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* How far the pump may send: an echo sends back only what it has received. */
static uint64_t tx_end(const struct tcp_pump *p)
{
	uint64_t end = p->tx_limit;

	if (p->echo && p->rcvd < end)
		end = p->rcvd;
	return end;
}

int tcp_pump_send(struct tcp_pump *p)
{
	static unsigned char buf[PUMP_TX_CHUNK];
	uint64_t left = tx_end(p) - p->sent;
	size_t n = left < sizeof(buf) ? left : sizeof(buf);
	ssize_t w;

	datagen_at(buf, n, p->tx_seed, p->sent);
	w = send(p->fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	p->sent += w;
	return w > 0;
}

static int pump_recv(struct tcp_pump *p)
{
	static unsigned char buf[256 * 1024];
	size_t n = p->rx_chunk < sizeof(buf) ? p->rx_chunk : sizeof(buf), bad;
	ssize_t r = recv(p->fd, buf, n, MSG_DONTWAIT);

	if (r < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (r == 0) {
		p->eof = true;
		return 1;
	}
	if (datachk_at(buf, r, p->rx_seed, p->rcvd, &bad)) {
		test_msg("fd %d: wrong byte at stream offset %llu\n", p->fd,
			 (unsigned long long)(p->rcvd + bad));
		return -EILSEQ;
	}
	p->rcvd += r;
	return 1;
}

int tcp_pump_step(struct tcp_pump *p, int timeout_ms)
{
	struct pollfd pfd = { .fd = p->fd, .events = p->eof ? 0 : POLLIN };
	int ret, moved = 0;

	if (p->sent < tx_end(p))
		pfd.events |= POLLOUT;
	if (!pfd.events)
		return 0;
	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return errno == EINTR ? 0 : -errno;
	if (pfd.revents & POLLOUT) {
		ret = tcp_pump_send(p);
		if (ret < 0)
			return ret;
		moved |= ret;
	}
	if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
		ret = pump_recv(p);
		if (ret < 0)
			return ret;
		moved |= ret;
	}
	return moved;
}

void tcp_pump_log(const struct tcp_pump *p, const char *why)
{
	struct tcp_info ti = { 0 };
	socklen_t len = sizeof(ti);
	int inq = -1, outq = -1;
	struct inet_names n = { 0 };
	char a[64], b[64];

	inet_names_get(p->fd, &n);
	getsockopt(p->fd, SOL_TCP, TCP_INFO, &ti, &len);
	ioctl(p->fd, SIOCINQ, &inq);
	ioctl(p->fd, SIOCOUTQ, &outq);
	test_msg(
		"fd %d (%s -> %s) %s: sent %llu, received %llu%s%s; state %u, queues in %d out %d, "
		"mss %u, cwnd %u, unacked %u, retransmits %u (backoff %u), lost %u, "
		"rcv_space %u\n",
		p->fd, inet_str(&n.local, a, sizeof(a)), inet_str(&n.peer, b, sizeof(b)), why,
		(unsigned long long)p->sent, (unsigned long long)p->rcvd, p->eof ? ", EOF in" : "",
		p->shut ? ", shut down" : "", ti.tcpi_state, inq, outq, ti.tcpi_snd_mss,
		ti.tcpi_snd_cwnd, ti.tcpi_unacked, ti.tcpi_retransmits, ti.tcpi_backoff,
		ti.tcpi_lost, ti.tcpi_rcv_space);
}

int tcp_pump_run(struct tcp_pump *p, uint64_t min_rcvd, int idle_ms)
{
	int64_t last = test_now_ms();

	while (p->rcvd < min_rcvd && !p->eof) {
		int ret = tcp_pump_step(p, 100);

		if (ret < 0)
			return ret;
		if (ret) {
			last = test_now_ms();
		} else if (test_now_ms() - last > idle_ms) {
			tcp_pump_log(p, "stalled");
			return -ETIMEDOUT;
		}
	}
	return p->rcvd >= min_rcvd ? 0 : -EPIPE;
}

int tcp_pump_finish(struct tcp_pump *p, int idle_ms)
{
	int64_t last = test_now_ms();

	/* Send what was promised (an echo: what came in), then half-close, then read to EOF. */
	p->tx_limit = p->echo ? UINT64_MAX : p->sent;
	while (!p->eof || p->sent < tx_end(p)) {
		int ret;

		if (p->eof && p->echo)
			p->tx_limit = p->rcvd;
		ret = tcp_pump_step(p, 100);
		if (ret < 0)
			return ret;
		if (ret) {
			last = test_now_ms();
		} else if (test_now_ms() - last > idle_ms) {
			tcp_pump_log(p, "stalled at the end");
			return -ETIMEDOUT;
		}
		if (!p->echo && p->sent == p->tx_limit && !p->shut) {
			if (shutdown(p->fd, SHUT_WR))
				return -errno;
			p->shut = true;
		}
	}
	if (!p->shut && shutdown(p->fd, SHUT_WR))
		return -errno;
	p->shut = true;
	return 0;
}

int test_fork_outside(int (*fn)(void *), void *arg)
{
	int p[2], status, log;
	pid_t mid, pid = -1;

	if (pipe(p))
		return -errno;
	mid = fork();
	if (mid < 0)
		return -errno;
	if (mid == 0) {
		close(p[0]);
		pid = fork();
		if (pid == 0) {
			/*
			 * No fd of the test (a listening socket held outside the tree
			 * would keep its port from the restore), only stdin/out/err.
			 */
			close_range(3, ~0U, 0);
			/*
			 * Its messages in a file of its own: the outfile belongs to the
			 * dumped tree, and a restore refuses a file that grew meanwhile.
			 */
			log = open("outside.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
			if (log < 0 || dup2(log, STDOUT_FILENO) < 0 || dup2(log, STDERR_FILENO) < 0)
				_exit(1);
			/*
			 * Its own session: the test's pid is the id of the test's session and
			 * group, which must be free again for a restore.
			 */
			setsid();
			alarm(300); /* never outlive a failed run for long */
			_exit(fn(arg));
		}
		_exit(write(p[1], &pid, sizeof(pid)) == sizeof(pid) ? 0 : 1);
	}
	close(p[1]);
	if (waitpid(mid, &status, 0) != mid || status ||
	    read(p[0], &pid, sizeof(pid)) != sizeof(pid) || pid <= 0) {
		close(p[0]);
		return -ECHILD;
	}
	close(p[0]);
	return pid;
}

long test_wait_file(const char *path, char *buf, size_t size, int timeout_ms)
{
	int64_t end = test_now_ms() + timeout_ms;
	long n;

	while ((n = test_read_file(path, buf, size)) == -ENOENT && test_now_ms() < end)
		test_sleep_ms(20);
	return n;
}

int test_write_file(const char *path, const char *text)
{
	char tmp[4096];
	size_t len = strlen(text);
	ssize_t n;
	int fd, ret;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* Written under another name and renamed: a reader sees all of it or nothing. */
	n = write(fd, text, len);
	ret = n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	return ret;
}

int inet_names_get(int sk, struct inet_names *n)
{
	socklen_t ll = sizeof(n->local), pl = sizeof(n->peer);

	memset(n, 0, sizeof(*n));
	if (getsockname(sk, (struct sockaddr *)&n->local, &ll))
		return -errno;
	/* A listening or unconnected socket has no peer: left zeroed. */
	if (getpeername(sk, (struct sockaddr *)&n->peer, &pl) && errno != ENOTCONN)
		return -errno;
	return 0;
}

int inet_names_check(int sk, const struct inet_names *n)
{
	struct inet_names now;
	char a[64], b[64], c[64], d[64];
	int ret = inet_names_get(sk, &now);

	if (ret) {
		errno = -ret;
		test_msg("fd %d: getsockname/getpeername: %m\n", sk);
		return ret;
	}
	if (memcmp(&now, n, sizeof(now))) {
		test_msg("fd %d: was %s -> %s, now %s -> %s\n", sk,
			 inet_str(&n->local, a, sizeof(a)), inet_str(&n->peer, b, sizeof(b)),
			 inet_str(&now.local, c, sizeof(c)), inet_str(&now.peer, d, sizeof(d)));
		return -EINVAL;
	}
	return 0;
}
