// SPDX-License-Identifier: GPL-2.0
/*
 * TCP sockets shared between processes, as pre-forking servers share them: a
 * listening socket inherited by 3 worker children, each blocked in accept(),
 * and both ends of a connection inherited by a fourth child. After the
 * restore every one is still one open file description across the processes
 * (kcmp KCMP_FILE), the workers take 6 new connections and answer each
 * (then 3 more that tell them to exit), and what the fourth child and the
 * root write to the shared client end arrives once, in order, at the other.
 */
#include <errno.h>
#include <signal.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR_WORKERS 3
#define NR_REQUESTS 6
#define LINE 32

static int same_file(pid_t a, pid_t b, int fd)
{
	return syscall(SYS_kcmp, a, b, KCMP_FILE, fd, fd) == 0;
}

/* Read exactly LINE bytes; 0 or -1. */
static int read_line(int sk, char *buf)
{
	return recv(sk, buf, LINE, MSG_WAITALL) == LINE ? 0 : neg_errno();
}

/* A worker: accept, answer "worker N: REQ", until a request says "quit". */
static int worker(int ls, int n)
{
	char req[LINE], ans[LINE];

	for (;;) {
		int sk = accept(ls, NULL, NULL);

		if (sk < 0 || read_line(sk, req))
			return 1;
		snprintf(ans, sizeof(ans), "worker %d: %.20s", n, req);
		if (send(sk, ans, LINE, 0) != LINE)
			return 1;
		close(sk);
		if (!strncmp(req, "quit", 4))
			return 0;
	}
}

/* A request to the workers; its answer must come from one of them. */
static int request(const struct sockaddr_storage *ss, unsigned int len, const char *what)
{
	char req[LINE] = "", ans[LINE];
	int sk = tcp_connect_to(ss, len), ret = -1;

	snprintf(req, sizeof(req), "%s", what);
	if (sk >= 0 && send(sk, req, LINE, 0) == LINE && !read_line(sk, ans) &&
	    !strncmp(ans, "worker ", 7) && strstr(ans, what))
		ret = 0;
	if (sk >= 0)
		close(sk);
	return ret;
}

/* The fourth child: writes its line on the shared client end, then waits. */
static int writer(int cl)
{
	char line[LINE] = "from the child";

	if (send(cl, line, LINE, 0) != LINE)
		return 1;
	test_waitsig(); /* until the root's SIGTERM: it holds the ends meanwhile */
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss, ss2;
	pid_t pids[NR_WORKERS + 1];
	unsigned int len, len2;
	char line[LINE], req[16];
	int ls, ls2, cl, sv, i;

	test_init(argc, argv);
	ls = tcp_listen_loopback(INET_V4, 16, &ss, &len);
	ls2 = tcp_listen_loopback(INET_V4, 1, &ss2, &len2);
	cl = ls2 < 0 ? -1 : tcp_connect_to(&ss2, len2);
	sv = cl < 0 ? -1 : accept(ls2, NULL, NULL);
	if (ls < 0 || sv < 0) {
		fail("cannot set up the sockets: %m");
		return 1;
	}
	close(ls2);
	for (i = 0; i <= NR_WORKERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(i < NR_WORKERS ? worker(ls, i) : writer(cl));
		if (pids[i] < 0) {
			fail("fork: %m");
			return 1;
		}
	}
	/* The child's line first, so that the order on the stream is known. */
	if (read_line(sv, line) || strcmp(line, "from the child")) {
		fail("the child's line did not come");
		return 1;
	}
	test_daemon();
	test_waitsig();

	for (i = 0; i < NR_WORKERS; i++)
		if (!same_file(getpid(), pids[i], ls)) {
			fail("worker %d no longer shares the listening socket", i);
			return 1;
		}
	if (!same_file(getpid(), pids[NR_WORKERS], cl) ||
	    !same_file(getpid(), pids[NR_WORKERS], sv)) {
		fail("the child no longer shares the connection's ends");
		return 1;
	}
	for (i = 0; i < NR_REQUESTS + NR_WORKERS; i++) {
		snprintf(req, sizeof(req), i < NR_REQUESTS ? "request %d" : "quit %d", i);
		if (request(&ss, len, req)) {
			fail("%s got no answer from a worker", req);
			return 1;
		}
	}
	snprintf(line, sizeof(line), "from the root");
	kill(pids[NR_WORKERS], SIGTERM);
	if (send(cl, line, LINE, 0) != LINE || read_line(sv, line) ||
	    strcmp(line, "from the root") || test_reap_children(pids + NR_WORKERS, 1)) {
		fail("the shared connection does not carry the root's line: %m");
		return 1;
	}
	for (i = 0; i < NR_WORKERS; i++) {
		int status = -1;

		if (waitpid(pids[i], &status, 0) != pids[i] || status) {
			fail("worker %d ended with status 0x%x", i, status);
			return 1;
		}
	}
	pass();
	return 0;
}
