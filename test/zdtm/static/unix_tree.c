// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets between two processes, each holding only its own ends: a
 * stream socketpair with data queued both ways; a seqpacket listener of the
 * root on an abstract name with one connection accepted (the client in the
 * child, packets queued both ways) and one still in its backlog (the client
 * in the child); a datagram server of the child on a path with a connected
 * client in the root whose datagrams wait. After SIGTERM each process checks
 * its side and the two still talk through every socket.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static int sp[2], ls, acc, ccl, cbl, dsrv, dcl;

static int expect(int sk, const char *msg, const char *what)
{
	char buf[64];
	/* A stream has no boundaries: exactly the expected length; a packet is one recv. */
	ssize_t n = sk == sp[0] || sk == sp[1] ? recv(sk, buf, strlen(msg), MSG_WAITALL)
					       : recv(sk, buf, sizeof(buf), 0);

	if (n != (ssize_t)strlen(msg) || memcmp(buf, msg, n)) {
		test_msg("%s: got %zd bytes, expected \"%s\": %m\n", what, n, msg);
		return 1;
	}
	return 0;
}

static int say(int sk, const char *msg)
{
	return send(sk, msg, strlen(msg), 0) == (ssize_t)strlen(msg) ? 0 : 1;
}

/* The child's side after SIGTERM; its exit status. */
static int child_check(void)
{
	int bad = 0;

	bad |= expect(sp[1], "root to child", "pair, child end");
	bad |= say(sp[1], "child again");
	bad |= expect(ccl, "accepted to client", "accepted connection, client");
	bad |= say(ccl, "client again");
	bad |= expect(dsrv, "dgram 1", "datagram server") |
	       expect(dsrv, "dgram 22", "datagram server");
	bad |= expect(dsrv, "dgram again", "datagram server");
	/* The connection in the backlog is accepted by the root now. */
	bad |= say(cbl, "from the backlog");
	return bad;
}

static int root_check(void)
{
	int bad = 0, s;

	bad |= expect(sp[0], "child to root", "pair, root end");
	bad |= expect(acc, "client to accepted", "accepted connection, server");
	bad |= say(dcl, "dgram again");
	s = accept(ls, NULL, NULL);
	if (s < 0) {
		test_msg("the connection in the backlog is gone: %m\n");
		return 1;
	}
	bad |= expect(sp[0], "child again", "pair, root end");
	bad |= expect(acc, "client again", "accepted connection, server");
	bad |= expect(s, "from the backlog", "backlog connection");
	return bad;
}

int main(int argc, char **argv)
{
	struct sockaddr_un la = { .sun_family = AF_UNIX }, da = { .sun_family = AF_UNIX };
	socklen_t llen, dlen;
	int ready[2], status;
	char dir[90];
	pid_t child;

	test_init(argc, argv);
	if (!getcwd(dir, sizeof(dir))) {
		fail("the working directory is too long for socket names");
		return 1;
	}
	snprintf(la.sun_path + 1, sizeof(la.sun_path) - 1, "zdtm-unix-tree-%d", getpid());
	llen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(la.sun_path + 1));
	snprintf(da.sun_path, sizeof(da.sun_path), "%s/tree-dgram.sock", dir);
	dlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(da.sun_path) + 1);
	unlink(da.sun_path);

	ls = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ccl = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	cbl = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	dsrv = socket(AF_UNIX, SOCK_DGRAM, 0);
	dcl = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (pipe(ready) || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) || ls < 0 || ccl < 0 ||
	    cbl < 0 || dsrv < 0 || dcl < 0 || bind(ls, (struct sockaddr *)&la, llen) ||
	    listen(ls, 2) || connect(ccl, (struct sockaddr *)&la, llen) ||
	    (acc = accept(ls, NULL, NULL)) < 0 || connect(cbl, (struct sockaddr *)&la, llen) ||
	    bind(dsrv, (struct sockaddr *)&da, dlen) ||
	    connect(dcl, (struct sockaddr *)&da, dlen)) {
		fail("cannot set up the sockets: %m");
		return 1;
	}
	child = fork();
	if (child < 0) {
		fail("fork: %m");
		return 1;
	}
	if (child == 0) {
		close(sp[0]);
		close(ls);
		close(acc);
		close(dcl);
		close(ready[0]);
		if (say(sp[1], "child to root") || say(ccl, "client to accepted") ||
		    write(ready[1], "r", 1) != 1)
			_exit(2);
		close(ready[1]);
		test_waitsig();
		_exit(child_check());
	}
	close(sp[1]);
	close(ccl);
	close(cbl);
	close(dsrv);
	close(ready[1]);
	if (read(ready[0], dir, 1) != 1 || say(sp[0], "root to child") ||
	    say(acc, "accepted to client") || say(dcl, "dgram 1") || say(dcl, "dgram 22")) {
		fail("cannot queue the data: %m");
		return 1;
	}
	close(ready[0]);
	test_daemon();
	test_waitsig();

	kill(child, SIGTERM);
	if (root_check()) {
		fail("the root's sockets are not as they were");
		return 1;
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the child's sockets are not as they were (status %#x)", status);
		return 1;
	}
	pass();
	return 0;
}
