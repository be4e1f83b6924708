// SPDX-License-Identifier: GPL-2.0
/*
 * --ext-unix-sk: a bound datagram socket of the test connected to an echo
 * server outside the dumped tree (a process orphaned on purpose, so it is
 * no longer a descendant), and a stream socket connected to the same
 * server's listening socket. After SIGTERM the datagram socket must still be
 * connected to the server and bound to its name (the server answers to that
 * name), and the stream socket connected to the server again (a new
 * connection, which the server accepts).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define MAX_CONNS 8

static socklen_t path_name(struct sockaddr_un *sa, const char *dir, const char *file)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", dir, file);
	unlink(sa->sun_path);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(sa->sun_path) + 1);
}

/* One request on @sk (a datagram to answer to its sender, or a stream): 1 on "bye". */
static int serve_one(int sk, bool dgram)
{
	struct sockaddr_un from;
	socklen_t flen = sizeof(from);
	char buf[64], out[80];
	ssize_t n = recvfrom(sk, buf, sizeof(buf) - 1, 0, (struct sockaddr *)&from, &flen);

	if (n <= 0) /* a stream closed (or reset: its old peer was killed with the tree) */
		return dgram ? neg_errno() : 2;
	buf[n] = '\0';
	if (!strcmp(buf, "bye"))
		return 1;
	n = snprintf(out, sizeof(out), "echo:%s", buf);
	if (dgram)
		sendto(sk, out, (size_t)n, 0, (struct sockaddr *)&from, flen);
	else
		send(sk, out, (size_t)n, MSG_NOSIGNAL);
	return 0;
}

/* The echo server, outside the tree: datagrams on @dsa, stream connections on @lsa. */
static void server(const struct sockaddr_un *dsa, socklen_t dlen, const struct sockaddr_un *lsa,
		   socklen_t llen, int ready)
{
	struct pollfd p[2 + MAX_CONNS];
	unsigned int n = 2, i;

	alarm(120); /* never outlive a failed test for long */
	p[0].fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	p[1].fd = socket(AF_UNIX, SOCK_STREAM, 0);
	/* Its own session: the test's pid, its session id, must be free for the restore. */
	if (setsid() < 0 || p[0].fd < 0 || p[1].fd < 0 ||
	    bind(p[0].fd, (const struct sockaddr *)dsa, dlen) ||
	    bind(p[1].fd, (const struct sockaddr *)lsa, llen) || listen(p[1].fd, 4) ||
	    write(ready, "r", 1) != 1)
		_exit(1);
	close(ready);
	for (;;) {
		for (i = 0; i < n; i++)
			p[i].events = POLLIN;
		if (poll(p, n, -1) < 0)
			_exit(1);
		if (p[1].revents && n < 2 + MAX_CONNS) {
			p[n].fd = accept(p[1].fd, NULL, NULL);
			p[n].revents = 0;
			n += p[n].fd >= 0;
		}
		for (i = 0; i < n; i++) {
			int r;

			if (i == 1 || !p[i].revents)
				continue;
			r = serve_one(p[i].fd, i == 0);
			if (r == 1 || r < 0)
				_exit(r < 0);
			if (r == 2) { /* the old connection of the dumped tree */
				close(p[i].fd);
				p[i--] = p[--n];
			}
		}
	}
}

/* Send @msg and wait up to 5 s for its echo. */
static int echo(int sk, const char *msg)
{
	char buf[80], want[80];
	struct pollfd p = { sk, POLLIN, 0 };
	ssize_t n;

	snprintf(want, sizeof(want), "echo:%s", msg);
	if (send(sk, msg, strlen(msg), 0) != (ssize_t)strlen(msg) || poll(&p, 1, 5000) != 1)
		return neg_errno();
	n = recv(sk, buf, sizeof(buf), 0);
	return n == (ssize_t)strlen(want) && !memcmp(buf, want, n) ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	struct sockaddr_un srv, cli, lst;
	socklen_t slen, clen, llen;
	int ready[2], sk, st;
	char dir[90], c;
	pid_t child;

	test_init(argc, argv);
	if (!getcwd(dir, sizeof(dir))) {
		fail("the working directory is too long for socket names");
		return 1;
	}
	slen = path_name(&srv, dir, "ext-server.sock");
	clen = path_name(&cli, dir, "ext-client.sock");
	llen = path_name(&lst, dir, "ext-listener.sock");
	if (pipe(ready)) {
		fail("pipe: %m");
		return 1;
	}
	child = fork();
	if (child == 0) {
		/* The server's parent exits at once: the server leaves the tree. */
		close(ready[0]);
		if (fork() == 0)
			server(&srv, slen, &lst, llen, ready[1]);
		_exit(0);
	}
	close(ready[1]);
	if (child < 0 || waitpid(child, NULL, 0) != child || read(ready[0], &c, 1) != 1) {
		fail("the echo server did not start: %m");
		return 1;
	}
	close(ready[0]);
	sk = socket(AF_UNIX, SOCK_DGRAM, 0);
	st = socket(AF_UNIX, SOCK_STREAM, 0);
	if (sk < 0 || st < 0 || bind(sk, (struct sockaddr *)&cli, clen) ||
	    connect(sk, (struct sockaddr *)&srv, slen) || echo(sk, "hello") ||
	    connect(st, (struct sockaddr *)&lst, llen) || echo(st, "stream")) {
		fail("cannot talk to the echo server: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (echo(sk, "again") || echo(st, "stream again")) {
		fail("the sockets no longer talk to the server outside the tree: %m");
		send(sk, "bye", 3, 0);
		return 1;
	}
	send(sk, "bye", 3, 0);
	pass();
	return 0;
}
