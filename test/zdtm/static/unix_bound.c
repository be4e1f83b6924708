// SPDX-License-Identifier: GPL-2.0
/*
 * Bound unix sockets: a stream listener on a path with one connection
 * accepted (data queued both ways) from a client bound to its own path; a
 * seqpacket listener on an abstract name with one accepted connection; a
 * datagram server on a path with a connected client whose datagrams wait
 * in the server's queue, then one from a bound socket; an unconnected
 * datagram socket on an abstract name holding a datagram from an unbound
 * sender; a bound socket whose file was unlinked; two connections accepted from a listener closed since, sharing
 * its name. After SIGTERM: names, peers, queued data and boundaries are
 * the same, and the listeners still accept new connections.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtmtst.h"

struct name {
	struct sockaddr_un sa;
	socklen_t len;
};

static void path_name(struct name *n, const char *dir, const char *file)
{
	memset(n, 0, sizeof(*n));
	n->sa.sun_family = AF_UNIX;
	snprintf(n->sa.sun_path, sizeof(n->sa.sun_path), "%s/%s", dir, file);
	n->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(n->sa.sun_path) + 1);
}

static void abstract_name(struct name *n, const char *s)
{
	memset(n, 0, sizeof(*n));
	n->sa.sun_family = AF_UNIX;
	snprintf(n->sa.sun_path + 1, sizeof(n->sa.sun_path) - 1, "%s-%d", s, getpid());
	n->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			     strlen(n->sa.sun_path + 1));
}

static int bound_sock(int type, const struct name *n)
{
	int sk = socket(AF_UNIX, type, 0);

	if (sk < 0)
		return neg_errno();
	unlink(n->sa.sun_path);
	if (bind(sk, (const struct sockaddr *)&n->sa, n->len)) {
		int err = neg_errno();

		close(sk);
		return err;
	}
	return sk;
}

/* getsockname (or getpeername) of @sk is @n. */
static int same_name(int sk, const struct name *n, bool peer, const char *what)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int r = peer ? getpeername(sk, (struct sockaddr *)&sa, &len)
		     : getsockname(sk, (struct sockaddr *)&sa, &len);

	if (r || len != n->len || memcmp(&sa, &n->sa, len)) {
		fail("%s: the %s name changed (%m)", what, peer ? "peer" : "socket");
		return 1;
	}
	return 0;
}

static int expect(int sk, const char *msg, const char *what)
{
	char buf[64];
	ssize_t n = recv(sk, buf, sizeof(buf), MSG_DONTWAIT);

	if (n != (ssize_t)strlen(msg) || memcmp(buf, msg, n)) {
		fail("%s: got %zd bytes, expected \"%s\": %m", what, n, msg);
		return 1;
	}
	return 0;
}

/* The next datagram of @sk is @msg, sent by the socket bound to @from. */
static int expect_from(int sk, const char *msg, const struct name *from, const char *what)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	char buf[64];
	ssize_t n = recvfrom(sk, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&sa, &len);

	if (n != (ssize_t)strlen(msg) || memcmp(buf, msg, n) || len != from->len ||
	    memcmp(&sa, &from->sa, len)) {
		fail("%s: \"%s\" lost, or not from its bound sender: %m", what, msg);
		return 1;
	}
	return 0;
}

/* A new client of the listener @n accepted by @lsk, and a round trip. */
static int still_listens(int lsk, int type, const struct name *n, const char *what)
{
	int c = socket(AF_UNIX, type, 0), s;

	if (c < 0 || connect(c, (const struct sockaddr *)&n->sa, n->len)) {
		fail("%s: cannot connect a new client: %m", what);
		return 1;
	}
	s = accept(lsk, NULL, NULL);
	if (s < 0 || send(c, "new", 3, 0) != 3 || expect(s, "new", what)) {
		fail("%s: the new client was not accepted: %m", what);
		return 1;
	}
	close(s);
	close(c);
	return 0;
}

int main(int argc, char **argv)
{
	struct name lst, cli, seq, dsrv, dab, gone, cls;
	int ls, c, a, sl, sc, sa, ds, dc, ab, tmp, gs, cl, k[2], ka[2];
	char dir[90];
	struct stat st;

	test_init(argc, argv);
	if (!getcwd(dir, sizeof(dir))) {
		fail("the working directory is too long for socket names");
		return 1;
	}
	path_name(&lst, dir, "listener.sock");
	path_name(&cli, dir, "client.sock");
	path_name(&dsrv, dir, "dgram.sock");
	path_name(&gone, dir, "gone.sock");
	path_name(&cls, dir, "closed.sock");
	abstract_name(&seq, "zdtm-unix-bound-seq");
	abstract_name(&dab, "zdtm-unix-bound-dgram");

	ls = bound_sock(SOCK_STREAM, &lst);
	c = bound_sock(SOCK_STREAM, &cli);
	sl = bound_sock(SOCK_SEQPACKET, &seq);
	sc = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ds = bound_sock(SOCK_DGRAM, &dsrv);
	dc = socket(AF_UNIX, SOCK_DGRAM, 0);
	ab = bound_sock(SOCK_DGRAM, &dab);
	tmp = socket(AF_UNIX, SOCK_DGRAM, 0);
	gs = bound_sock(SOCK_DGRAM, &gone);
	if (ls < 0 || c < 0 || sl < 0 || sc < 0 || ds < 0 || dc < 0 || ab < 0 || tmp < 0 ||
	    gs < 0 || listen(ls, 4) || listen(sl, 4) ||
	    connect(c, (struct sockaddr *)&lst.sa, lst.len) ||
	    connect(sc, (struct sockaddr *)&seq.sa, seq.len) ||
	    connect(dc, (struct sockaddr *)&dsrv.sa, dsrv.len) || unlink(gone.sa.sun_path)) {
		fail("cannot set up the sockets: %m");
		return 1;
	}
	a = accept(ls, NULL, NULL);
	sa = accept(sl, NULL, NULL);
	if (a < 0 || sa < 0 || send(c, "to server", 9, 0) != 9 || send(a, "to client", 9, 0) != 9 ||
	    send(sc, "pkt1", 4, 0) != 4 || send(sc, "pkt22", 5, 0) != 5 ||
	    send(dc, "dgram one", 9, 0) != 9 || send(dc, "two", 3, 0) != 3 ||
	    sendto(tmp, "anonymous", 9, 0, (struct sockaddr *)&dab.sa, dab.len) != 9 ||
	    sendto(ab, "from ab", 7, 0, (struct sockaddr *)&dsrv.sa, dsrv.len) != 7) {
		fail("cannot queue data: %m");
		return 1;
	}
	close(tmp);
	/* Two connections accepted, then the listener closed: both keep its name. */
	cl = bound_sock(SOCK_STREAM, &cls);
	k[0] = socket(AF_UNIX, SOCK_STREAM, 0);
	k[1] = socket(AF_UNIX, SOCK_STREAM, 0);
	if (cl < 0 || k[0] < 0 || k[1] < 0 || listen(cl, 2) ||
	    connect(k[0], (struct sockaddr *)&cls.sa, cls.len) ||
	    connect(k[1], (struct sockaddr *)&cls.sa, cls.len) ||
	    (ka[0] = accept(cl, NULL, NULL)) < 0 || (ka[1] = accept(cl, NULL, NULL)) < 0 ||
	    close(cl) || send(k[0], "k0", 2, 0) != 2 || send(ka[1], "ka1", 3, 0) != 3) {
		fail("cannot set up the closed listener's connections: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (same_name(ls, &lst, false, "listener") || same_name(c, &cli, false, "client") ||
	    same_name(c, &lst, true, "client") || same_name(a, &lst, false, "accepted") ||
	    same_name(a, &cli, true, "accepted") || same_name(sl, &seq, false, "seq listener") ||
	    same_name(sa, &seq, false, "seq accepted") || same_name(sc, &seq, true, "seq client") ||
	    same_name(ds, &dsrv, false, "dgram server") ||
	    same_name(dc, &dsrv, true, "dgram client") ||
	    same_name(ab, &dab, false, "abstract dgram") || same_name(gs, &gone, false, "unlinked"))
		return 1;
	if (expect(a, "to server", "accepted") || expect(c, "to client", "client") ||
	    expect(sa, "pkt1", "seq accepted") || expect(sa, "pkt22", "seq accepted") ||
	    expect(ds, "dgram one", "dgram server") || expect(ds, "two", "dgram server") ||
	    expect_from(ds, "from ab", &dab, "dgram server") ||
	    expect(ab, "anonymous", "abstract dgram"))
		return 1;
	if (same_name(ka[0], &cls, false, "accepted 0") ||
	    same_name(ka[1], &cls, false, "accepted 1") ||
	    same_name(k[0], &cls, true, "client 0") || expect(ka[0], "k0", "accepted 0") ||
	    expect(k[1], "ka1", "client 1") || send(k[1], "k1", 2, 0) != 2 ||
	    expect(ka[1], "k1", "accepted 1"))
		return 1;
	if (stat(gone.sa.sun_path, &st) == 0 || errno != ENOENT) {
		fail("the unlinked socket file is back");
		return 1;
	}
	if (send(c, "more", 4, 0) != 4 || expect(a, "more", "accepted") ||
	    send(dc, "more", 4, 0) != 4 || expect(ds, "more", "dgram server") ||
	    still_listens(ls, SOCK_STREAM, &lst, "listener") ||
	    still_listens(sl, SOCK_SEQPACKET, &seq, "seq listener"))
		return 1;
	pass();
	return 0;
}
