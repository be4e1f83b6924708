// SPDX-License-Identifier: GPL-2.0
/*
 * --ext-unix-sk: a bound datagram socket of the test connected to an echo
 * server outside the dumped tree (a process orphaned on purpose, so it is
 * no longer a descendant). After SIGTERM the socket must still be connected
 * to the server and bound to its name: the server answers to that name.
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

static socklen_t path_name(struct sockaddr_un *sa, const char *dir, const char *file)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", dir, file);
	unlink(sa->sun_path);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(sa->sun_path) + 1);
}

/* The echo server, outside the tree: answers "echo:MSG" to the sender until "bye". */
static void server(const struct sockaddr_un *sa, socklen_t len, int ready)
{
	int sk = socket(AF_UNIX, SOCK_DGRAM, 0);
	char buf[64], out[80];

	alarm(120); /* never outlive a failed test for long */
	/* Its own session: the test's pid, its session id, must be free for the restore. */
	if (setsid() < 0 || sk < 0 || bind(sk, (const struct sockaddr *)sa, len) ||
	    write(ready, "r", 1) != 1)
		_exit(1);
	close(ready);
	for (;;) {
		struct sockaddr_un from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(sk, buf, sizeof(buf) - 1, 0, (struct sockaddr *)&from, &flen);

		if (n < 0)
			_exit(1);
		buf[n] = '\0';
		if (!strcmp(buf, "bye"))
			_exit(0);
		n = snprintf(out, sizeof(out), "echo:%s", buf);
		sendto(sk, out, (size_t)n, 0, (struct sockaddr *)&from, flen);
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
		return -1;
	n = recv(sk, buf, sizeof(buf), 0);
	return n == (ssize_t)strlen(want) && !memcmp(buf, want, n) ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_un srv, cli;
	socklen_t slen, clen;
	int ready[2], sk;
	char dir[90], c;
	pid_t child;

	test_init(argc, argv);
	if (!getcwd(dir, sizeof(dir))) {
		fail("the working directory is too long for socket names");
		return 1;
	}
	slen = path_name(&srv, dir, "ext-server.sock");
	clen = path_name(&cli, dir, "ext-client.sock");
	if (pipe(ready)) {
		fail("pipe: %m");
		return 1;
	}
	child = fork();
	if (child == 0) {
		/* The server's parent exits at once: the server leaves the tree. */
		close(ready[0]);
		if (fork() == 0)
			server(&srv, slen, ready[1]);
		_exit(0);
	}
	close(ready[1]);
	if (child < 0 || waitpid(child, NULL, 0) != child || read(ready[0], &c, 1) != 1) {
		fail("the echo server did not start: %m");
		return 1;
	}
	close(ready[0]);
	sk = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (sk < 0 || bind(sk, (struct sockaddr *)&cli, clen) ||
	    connect(sk, (struct sockaddr *)&srv, slen) || echo(sk, "hello")) {
		fail("cannot talk to the echo server: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (echo(sk, "again")) {
		fail("the socket no longer talks to the server outside the tree: %m");
		send(sk, "bye", 3, 0);
		return 1;
	}
	send(sk, "bye", 3, 0);
	pass();
	return 0;
}
