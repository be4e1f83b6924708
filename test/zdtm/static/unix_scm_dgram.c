// SPDX-License-Identifier: GPL-2.0
/*
 * Fds in flight in datagram and seqpacket sockets, and the harder cases of
 * streams: datagrams with fds (one of no bytes), a packet with 3 fds, a
 * bound datagram socket holding fds from a bound sender and from an unbound
 * one, a stream whose sender closed after sending an fd, a stream holding
 * 300 KiB before a message with an fd (longer than one peek), both ends of a
 * pair in flight (neither held by a task), and a socket in flight with an fd
 * in flight in its own queue. After SIGTERM each message must come with its
 * fds in order, and each fd must be the object it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtmtst.h"

#define MAXFD 4
#define LONG (300u << 10)

static unsigned char longbuf[LONG + 4], longgot[LONG + 4];

static int send_fds(int sk, const char *text, const int *fds, int n, const struct sockaddr_un *to,
		    socklen_t tolen)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAXFD)];
		struct cmsghdr align;
	} c = { 0 };
	struct iovec iov = { .iov_base = (void *)text, .iov_len = strlen(text) };
	struct msghdr mh = { .msg_name = (void *)to,
			     .msg_namelen = to ? tolen : 0,
			     .msg_iov = &iov,
			     .msg_iovlen = 1 };

	if (n) {
		mh.msg_control = c.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
		CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
		CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), fds, sizeof(int) * n);
	}
	return sendmsg(sk, &mh, 0) == (ssize_t)iov.iov_len ? 0 : neg_errno();
}

/* The next message of @sk: exactly @text, with @n fds into @fds. */
static int recv_fds(int sk, const char *what, const char *text, int *fds, int n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAXFD)];
		struct cmsghdr align;
	} c;
	char buf[64];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = c.buf,
			     .msg_controllen = sizeof(c.buf) };
	ssize_t r = recvmsg(sk, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	struct cmsghdr *cm = r >= 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	int got = 0;

	if (cm && cm->cmsg_type == SCM_RIGHTS) {
		got = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		memcpy(fds, CMSG_DATA(cm), sizeof(int) * (got < MAXFD ? got : MAXFD));
	}
	if (r != (ssize_t)strlen(text) || memcmp(buf, text, (size_t)r) || got != n) {
		fail("%s: got %zd bytes \"%.*s\" with %d fds, expected \"%s\" with %d: %m", what, r,
		     (int)(r > 0 ? r : 0), buf, got, text, n);
		return neg_errno();
	}
	return 0;
}

static int pipe_pair(int p[2], const char *data)
{
	return pipe(p) || write(p[1], data, strlen(data)) != (ssize_t)strlen(data) ? neg_errno()
										   : 0;
}

/* The read end @r of a pipe holds @data. */
static int pipe_has(int r, const char *data, const char *what)
{
	char buf[64];
	ssize_t n = read(r, buf, sizeof(buf));

	if (n != (ssize_t)strlen(data) || memcmp(buf, data, (size_t)n)) {
		fail("%s: the pipe does not hold \"%s\"", what, data);
		return -EINVAL;
	}
	return 0;
}

static int roundtrip(int a, int b, const char *what)
{
	char buf[8];

	if (send(a, "ping", 4, 0) != 4 || recv(b, buf, sizeof(buf), 0) != 4 ||
	    send(b, "pong", 4, 0) != 4 || recv(a, buf, sizeof(buf), 0) != 4) {
		fail("%s: the pair does not carry data: %m", what);
		return neg_errno();
	}
	return 0;
}

struct state {
	int dg[2], sp[2], rcv, snd, cl, z, lg[2];
	int p1[2], p2[2], p3[2], p4[2], p5[2];
	struct sockaddr_un rsa;
	socklen_t rlen;
};

static int bound_dgram(struct sockaddr_un *sa, socklen_t *len, const char *name)
{
	int sk = socket(AF_UNIX, SOCK_DGRAM, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* abstract, unique per test process */
	snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "zdtm-scm-%s-%d", name, getpid());
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa->sun_path + 1));
	if (sk >= 0 && bind(sk, (struct sockaddr *)sa, *len))
		return neg_errno();
	return sk;
}

static int setup(struct state *s)
{
	struct sockaddr_un ssa;
	socklen_t slen;
	int cl[2], y[2], z[2], fds[3], anon;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, s->dg) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, s->sp) || pipe_pair(s->p1, "one") ||
	    pipe_pair(s->p2, "two") || pipe_pair(s->p3, "three") || pipe_pair(s->p4, "four") ||
	    pipe_pair(s->p5, "five"))
		return neg_errno();
	/* datagrams: one fd, then a datagram of no bytes with two */
	fds[0] = s->p2[0];
	fds[1] = s->p3[0];
	if (send_fds(s->dg[0], "dgram", &s->p1[0], 1, NULL, 0) ||
	    send_fds(s->dg[0], "", fds, 2, NULL, 0) ||
	    send_fds(s->dg[0], "plain", NULL, 0, NULL, 0))
		return neg_errno();
	/* a packet with 3 fds, the third a dup of the first */
	fds[0] = s->p4[0];
	fds[1] = s->p5[0];
	fds[2] = s->p4[0];
	if (send_fds(s->sp[1], "three fds", fds, 3, NULL, 0) ||
	    send_fds(s->sp[1], "no fds", NULL, 0, NULL, 0))
		return neg_errno();
	/* a bound receiver: from a bound sender, then from an unbound one */
	s->rcv = bound_dgram(&s->rsa, &s->rlen, "rcv");
	s->snd = bound_dgram(&ssa, &slen, "snd");
	anon = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (s->rcv < 0 || s->snd < 0 || anon < 0 ||
	    send_fds(s->snd, "from snd", &s->p1[1], 1, &s->rsa, s->rlen) ||
	    send_fds(anon, "from anon", &s->p2[1], 1, &s->rsa, s->rlen) || close(anon))
		return neg_errno();
	/* a stream whose sender is gone */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, cl) ||
	    send_fds(cl[1], "bye", &s->p3[1], 1, NULL, 0) || close(cl[1]))
		return neg_errno();
	s->cl = cl[0];
	/* both ends of y in flight in z[0]'s queue; z[0] itself in flight in s->dg[1]'s */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, y) || socketpair(AF_UNIX, SOCK_STREAM, 0, z) ||
	    send_fds(z[1], "both ends", y, 2, NULL, 0) || send(y[0], "in y", 4, 0) != 4 ||
	    send_fds(s->dg[1], "z0", &z[0], 1, NULL, 0))
		return neg_errno();
	close(y[0]);
	close(y[1]);
	close(z[0]);
	s->z = z[1];
	/* 300 KiB, then 4 bytes with an fd */
	datagen(longbuf, LONG, 11);
	memcpy(longbuf + LONG, "tail", 4);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s->lg) ||
	    setsockopt(s->lg[1], SOL_SOCKET, SO_SNDBUF, &(int){ 4 * LONG }, sizeof(int)) ||
	    send(s->lg[1], longbuf, LONG, MSG_DONTWAIT) != LONG ||
	    send_fds(s->lg[1], "tail", &s->p5[1], 1, NULL, 0))
		return neg_errno();
	/* only the queues hold the read ends now */
	close(s->p1[0]);
	close(s->p2[0]);
	close(s->p3[0]);
	close(s->p5[0]);
	return 0;
}

/* The 300 KiB and the tail of @sk, read in 64 KiB pieces: the fd comes with the last one. */
static int check_long(int sk, int p5)
{
	size_t off = 0;
	int fd = -1, nfds = 0;

	while (off < LONG + 4) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * MAXFD)];
			struct cmsghdr align;
		} c;
		size_t want = LONG + 4 - off < 65536 ? LONG + 4 - off : 65536;
		struct iovec iov = { .iov_base = longgot + off, .iov_len = want };
		struct msghdr mh = { .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = c.buf,
				     .msg_controllen = sizeof(c.buf) };
		ssize_t r = recvmsg(sk, &mh, MSG_DONTWAIT);

		if (r <= 0) {
			fail("long stream: %zu bytes only: %m", off);
			return neg_errno();
		}
		off += (size_t)r;
		if (CMSG_FIRSTHDR(&mh)) {
			nfds++;
			memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(int));
			if (off != LONG + 4) {
				fail("long stream: the fd came after %zu bytes, before the end",
				     off);
				return -EINVAL;
			}
		}
	}
	if (memcmp(longgot, longbuf, LONG + 4) || nfds != 1 || write(fd, "5b", 2) != 2 ||
	    pipe_has(p5, "5b", "long stream")) {
		fail("long stream: the data or its fd differ");
		return -EINVAL;
	}
	return 0;
}

static int check(struct state *s)
{
	int f[MAXFD], r1, r23[2], w1, w2, w3, zf, yf[2];
	char buf[8];

	if (recv_fds(s->dg[1], "dgram 1", "dgram", &r1, 1) || pipe_has(r1, "one", "dgram 1") ||
	    recv_fds(s->dg[1], "dgram 2", "", r23, 2) || pipe_has(r23[0], "two", "dgram 2") ||
	    pipe_has(r23[1], "three", "dgram 2") || recv_fds(s->dg[1], "dgram 3", "plain", f, 0))
		return neg_errno();
	if (recv_fds(s->sp[0], "packet 1", "three fds", f, 3) || pipe_has(f[0], "four", "packet") ||
	    pipe_has(f[1], "five", "packet") || check_long(s->lg[0], f[1]) ||
	    write(s->p4[1], "4b", 2) != 2 || pipe_has(f[2], "4b", "packet, the dup") ||
	    recv_fds(s->sp[0], "packet 2", "no fds", f, 0))
		return neg_errno();
	/* the write ends came with the bound datagrams and the closed stream */
	if (recv_fds(s->rcv, "bound 1", "from snd", &w1, 1) ||
	    recv_fds(s->rcv, "bound 2", "from anon", &w2, 1) ||
	    recv_fds(s->cl, "closed peer", "bye", &w3, 1) || recv(s->cl, buf, 1, MSG_DONTWAIT) != 0)
		return neg_errno();
	if (write(w1, "w1", 2) != 2 || pipe_has(r1, "w1", "bound 1") || write(w2, "w2", 2) != 2 ||
	    pipe_has(r23[0], "w2", "bound 2") || write(w3, "w3", 2) != 2 ||
	    pipe_has(r23[1], "w3", "closed peer"))
		return neg_errno();
	if (recv_fds(s->dg[0], "z0", "z0", &zf, 1) ||
	    recv_fds(zf, "both ends of y", "both ends", yf, 2) ||
	    recv(yf[1], buf, sizeof(buf), MSG_DONTWAIT) != 4 || memcmp(buf, "in y", 4) ||
	    roundtrip(yf[0], yf[1], "y") || roundtrip(zf, s->z, "z"))
		return neg_errno();
	return 0;
}

int main(int argc, char **argv)
{
	struct state s;
	char c;

	test_init(argc, argv);
	if (setup(&s)) {
		fail("cannot set up the fds in flight: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (check(&s))
		return 1;
	if (recv(s.dg[1], &c, 1, MSG_DONTWAIT) >= 0 || recv(s.sp[0], &c, 1, MSG_DONTWAIT) >= 0 ||
	    recv(s.rcv, &c, 1, MSG_DONTWAIT) >= 0 || recv(s.dg[0], &c, 1, MSG_DONTWAIT) >= 0) {
		fail("more than the queued messages");
		return 1;
	}
	pass();
	return 0;
}
