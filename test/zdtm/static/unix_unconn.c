// SPDX-License-Identifier: GPL-2.0
/*
 * Unix stream and seqpacket sockets never connected: what socket() gives
 * before its connect() (a program asking nscd, caught there), one of them
 * bound to an abstract name, and one left so by a connect() that failed.
 * After SIGTERM: each is still of its type, unconnected (getpeername() says
 * ENOTCONN), the bound one has its name, the first keeps the SO_PEEK_OFF
 * set before (for the connection it will have), and each can connect to a
 * listener made then.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtmtst.h"

static socklen_t abstract_name(struct sockaddr_un *sa, const char *s)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "%s-%d", s, getpid());
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa->sun_path + 1));
}

/* @sk: of @type, unconnected, named @name (NULL: unnamed), able to connect. */
static int check(int sk, int type, const char *name, const char *what)
{
	struct sockaddr_un sa, got;
	socklen_t len = sizeof(got), want = 0;
	int t = 0, l;

	if (name)
		want = abstract_name(&sa, name);
	if (getsockopt(sk, SOL_SOCKET, SO_TYPE, &t, &(socklen_t){ sizeof(t) }) || t != type) {
		fail("%s: type %d, not %d (%m)", what, t, type);
		return -EINVAL;
	}
	if (!getpeername(sk, (struct sockaddr *)&got, &len) || errno != ENOTCONN) {
		fail("%s: connected, or getpeername() failed otherwise: %m", what);
		return -EINVAL;
	}
	len = sizeof(got);
	if (getsockname(sk, (struct sockaddr *)&got, &len) ||
	    (name ? len != want || memcmp(&got, &sa, len)
		  : len != offsetof(struct sockaddr_un, sun_path))) {
		fail("%s: its name changed (%m)", what);
		return -EINVAL;
	}
	l = socket(AF_UNIX, type, 0);
	len = abstract_name(&sa, "unconn-listener");
	if (l < 0 || bind(l, (struct sockaddr *)&sa, len) || listen(l, 4) ||
	    connect(sk, (struct sockaddr *)&sa, len)) {
		fail("%s: cannot connect it now: %m", what);
		return -EINVAL;
	}
	close(l);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa;
	int st, sp, bound, failed, peek = -1;
	socklen_t len;

	/* in the test's namespaces: after test_init() */
	test_init(argc, argv);
	st = socket(AF_UNIX, SOCK_STREAM, 0);
	sp = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	bound = socket(AF_UNIX, SOCK_STREAM, 0);
	failed = socket(AF_UNIX, SOCK_STREAM, 0);
	len = abstract_name(&sa, "unconn-bound");
	if (st < 0 || sp < 0 || bound < 0 || failed < 0 ||
	    bind(bound, (struct sockaddr *)&sa, len)) {
		fail("cannot make the sockets: %m");
		return 1;
	}
	if (setsockopt(st, SOL_SOCKET, SO_PEEK_OFF, &(int){ 7 }, sizeof(int))) {
		fail("SO_PEEK_OFF: %m");
		return 1;
	}
	len = abstract_name(&sa, "unconn-nobody");
	if (!connect(failed, (struct sockaddr *)&sa, len) || errno != ECONNREFUSED) {
		fail("a connect to no listener did not fail with ECONNREFUSED: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();
	if (getsockopt(st, SOL_SOCKET, SO_PEEK_OFF, &peek, &(socklen_t){ sizeof(peek) }) ||
	    peek != 7) {
		fail("stream: SO_PEEK_OFF %d, not 7 (%m)", peek);
		return 1;
	}
	if (check(st, SOCK_STREAM, NULL, "stream") ||
	    check(sp, SOCK_SEQPACKET, NULL, "seqpacket") ||
	    check(bound, SOCK_STREAM, "unconn-bound", "bound stream") ||
	    check(failed, SOCK_STREAM, NULL, "stream whose connect failed"))
		return 1;
	pass();
	return 0;
}
