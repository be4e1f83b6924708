// SPDX-License-Identifier: GPL-2.0
/*
 * Unix socketpairs of every type with data queued both ways (datagram and
 * packet boundaries included), one peeked at (SO_PEEK_OFF left as it was),
 * one shut down for writing one way, one whose peer was closed, one
 * non-blocking, one with send and receive timeouts, and a stream pair with 1 MiB queued one way (buffers raised).
 * After SIGTERM every byte, boundary and state must be as it was, and the
 * pairs must still carry data.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "zdtmtst.h"

#define BIG (1u << 20)

static unsigned char big[BIG], got[BIG];

static const char *const msgs[] = { "first", "", "a second, longer message", "3" };

static int send_msgs(int sk, int from)
{
	unsigned int i;

	for (i = from; i < 4; i++)
		if (send(sk, msgs[i], strlen(msgs[i]), 0) != (ssize_t)strlen(msgs[i]))
			return neg_errno();
	return 0;
}

/* The queued messages of a datagram or packet socket, one recv each. */
static int check_msgs(int sk, const char *name, int from)
{
	char buf[64];
	unsigned int i;

	for (i = from; i < 4; i++) {
		ssize_t n = recv(sk, buf, sizeof(buf), MSG_DONTWAIT);

		if (n != (ssize_t)strlen(msgs[i]) || memcmp(buf, msgs[i], n)) {
			fail("%s: message %u: got %zd bytes, expected \"%s\"", name, i, n, msgs[i]);
			return 1;
		}
	}
	if (recv(sk, buf, sizeof(buf), MSG_DONTWAIT) >= 0 || errno != EAGAIN) {
		fail("%s: more than the queued messages", name);
		return 1;
	}
	return 0;
}

static int round_trip(int a, int b, const char *name)
{
	char buf[8];

	if (send(a, "ping", 4, 0) != 4 || recv(b, buf, sizeof(buf), 0) != 4 ||
	    memcmp(buf, "ping", 4) || send(b, "pong", 4, 0) != 4 ||
	    recv(a, buf, sizeof(buf), 0) != 4 || memcmp(buf, "pong", 4)) {
		fail("%s: the pair no longer carries data: %m", name);
		return 1;
	}
	return 0;
}

static int read_full(int sk, unsigned char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = recv(sk, buf + off, len - off, MSG_DONTWAIT);

		if (n <= 0)
			return neg_errno();
		off += (size_t)n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int dg[2], sp[2], st[2], sh[2], cl[2], bg[2];
	int size = 4 * BIG, off = -1, peek_off = 0;
	/* Whole jiffies at HZ 100, 250 and 1000: read back exactly. */
	struct timeval rto = { 3, 500000 }, sto = { 0, 500000 }, tv;
	socklen_t olen = sizeof(off), tlen = sizeof(tv);
	char buf[64];

	test_init(argc, argv);
	datagen(big, BIG, 7);
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, dg) || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, st) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sh) || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, cl) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, bg)) {
		fail("socketpair: %m");
		return 1;
	}
	/* Messages both ways; the first two of dg[1]'s are read, one peeked at. */
	if (send_msgs(dg[0], 0) || send_msgs(dg[1], 0) || send_msgs(sp[0], 0) ||
	    send_msgs(sp[1], 0) || recv(dg[1], buf, sizeof(buf), 0) != 5 ||
	    recv(dg[1], buf, sizeof(buf), 0) != 0 ||
	    setsockopt(dg[1], SOL_SOCKET, SO_PEEK_OFF, &peek_off, sizeof(peek_off)) ||
	    recv(dg[1], buf, sizeof(buf), MSG_PEEK) <= 0) {
		fail("cannot queue the messages: %m");
		return 1;
	}
	if (send(st[0], "to st1", 6, 0) != 6 || send(st[1], "to st0!", 7, 0) != 7 ||
	    send(sh[0], "last words", 10, 0) != 10 || shutdown(sh[0], SHUT_WR) ||
	    send(cl[0], "orphan", 6, 0) != 6 || close(cl[0])) {
		fail("cannot set up the stream pairs: %m");
		return 1;
	}
	if (setsockopt(bg[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) ||
	    setsockopt(bg[1], SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) ||
	    send(bg[0], big, BIG, MSG_DONTWAIT) != BIG) {
		fail("cannot queue 1 MiB: %m");
		return 1;
	}
	if (setsockopt(sh[1], SOL_SOCKET, SO_RCVTIMEO, &rto, sizeof(rto)) ||
	    setsockopt(sh[1], SOL_SOCKET, SO_SNDTIMEO, &sto, sizeof(sto))) {
		fail("cannot set the timeouts: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (getsockopt(sh[1], SOL_SOCKET, SO_RCVTIMEO, &tv, &tlen) || tv.tv_sec != rto.tv_sec ||
	    tv.tv_usec != rto.tv_usec || getsockopt(sh[1], SOL_SOCKET, SO_SNDTIMEO, &tv, &tlen) ||
	    tv.tv_sec != sto.tv_sec || tv.tv_usec != sto.tv_usec) {
		fail("the timeouts changed");
		return 1;
	}

	if (getsockopt(dg[1], SOL_SOCKET, SO_PEEK_OFF, &off, &olen) || off != 24) {
		fail("SO_PEEK_OFF of dg1 is %d, expected 24", off);
		return 1;
	}
	off = -1;
	setsockopt(dg[1], SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off));
	if (check_msgs(dg[1], "dgram 1", 2) || check_msgs(dg[0], "dgram 0", 0) ||
	    check_msgs(sp[0], "seqpacket 0", 0) || check_msgs(sp[1], "seqpacket 1", 0) ||
	    round_trip(dg[0], dg[1], "dgram") || round_trip(sp[0], sp[1], "seqpacket"))
		return 1;
	if (!(fcntl(st[0], F_GETFL) & O_NONBLOCK) || recv(st[0], buf, 64, 0) != 7 ||
	    memcmp(buf, "to st0!", 7) || recv(st[1], buf, 64, 0) != 6 || memcmp(buf, "to st1", 6) ||
	    round_trip(st[0], st[1], "stream")) {
		fail("stream pair: lost its data or flags");
		return 1;
	}
	if (recv(sh[1], buf, 64, 0) != 10 || memcmp(buf, "last words", 10) ||
	    recv(sh[1], buf, 64, 0) != 0 || send(sh[0], "x", 1, MSG_NOSIGNAL) >= 0 ||
	    errno != EPIPE || send(sh[1], "back", 4, 0) != 4 || recv(sh[0], buf, 64, 0) != 4) {
		fail("shut down pair: not as it was: %m");
		return 1;
	}
	if (recv(cl[1], buf, 64, 0) != 6 || memcmp(buf, "orphan", 6) ||
	    recv(cl[1], buf, 64, 0) != 0) {
		fail("pair with a closed peer: not as it was: %m");
		return 1;
	}
	if (read_full(bg[1], got, BIG) || memcmp(got, big, BIG) ||
	    recv(bg[1], buf, 64, MSG_DONTWAIT) >= 0 || round_trip(bg[0], bg[1], "1 MiB pair")) {
		fail("1 MiB pair: the data differs or more came");
		return 1;
	}
	pass();
	return 0;
}
