// SPDX-License-Identifier: GPL-2.0
/*
 * A listening unix stream socket with connections waiting in its backlog,
 * never accepted: three from clients of the test (one of them bound to its
 * own name, one non-blocking), then one whose client was closed. After
 * SIGTERM they are accepted in the same order, each paired with its own
 * client, the closed one reading end-of-file, and nothing more is waiting.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR_CLIENTS 3

static socklen_t path_name(struct sockaddr_un *sa, const char *dir, const char *file)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", dir, file);
	unlink(sa->sun_path);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(sa->sun_path) + 1);
}

/* Accept the next connection and check it is @client's, both ways. */
static int check_pair(int ls, int client, unsigned int i)
{
	char buf[16], want[16];
	int s = accept(ls, NULL, NULL);

	snprintf(want, sizeof(want), "client %u", i);
	if (s < 0) {
		fail("connection %u was not in the backlog: %m", i);
		return 1;
	}
	if (send(client, want, strlen(want), 0) != (ssize_t)strlen(want) ||
	    recv(s, buf, sizeof(buf), 0) != (ssize_t)strlen(want) ||
	    memcmp(buf, want, strlen(want)) || send(s, "ok", 2, 0) != 2 ||
	    recv(client, buf, sizeof(buf), 0) != 2) {
		fail("connection %u is not paired with its client: %m", i);
		return 1;
	}
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un lsa, csa;
	socklen_t llen, clen;
	int ls, cl[NR_CLIENTS], gone, s, flags;
	char dir[90], buf[8];
	unsigned int i;

	test_init(argc, argv);
	if (!getcwd(dir, sizeof(dir))) {
		fail("the working directory is too long for socket names");
		return 1;
	}
	llen = path_name(&lsa, dir, "backlog.sock");
	clen = path_name(&csa, dir, "backlog-client.sock");
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&lsa, llen) || listen(ls, 8)) {
		fail("cannot listen: %m");
		return 1;
	}
	for (i = 0; i < NR_CLIENTS; i++) {
		cl[i] = socket(AF_UNIX, SOCK_STREAM | (i == 2 ? SOCK_NONBLOCK : 0), 0);
		if (cl[i] < 0 || (i == 1 && bind(cl[i], (struct sockaddr *)&csa, clen)) ||
		    connect(cl[i], (struct sockaddr *)&lsa, llen)) {
			fail("cannot connect client %u: %m", i);
			return 1;
		}
	}
	gone = socket(AF_UNIX, SOCK_STREAM, 0);
	if (gone < 0 || connect(gone, (struct sockaddr *)&lsa, llen) || close(gone)) {
		fail("cannot connect the closed client: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	flags = fcntl(cl[2], F_GETFL);
	if (flags < 0 || !(flags & O_NONBLOCK) || (fcntl(cl[0], F_GETFL) & O_NONBLOCK)) {
		fail("the clients' flags changed");
		return 1;
	}
	fcntl(cl[2], F_SETFL, flags & ~O_NONBLOCK);
	for (i = 0; i < NR_CLIENTS; i++)
		if (check_pair(ls, cl[i], i))
			return 1;
	s = accept(ls, NULL, NULL);
	if (s < 0 || recv(s, buf, sizeof(buf), 0) != 0) {
		fail("the connection of the closed client: %m");
		return 1;
	}
	close(s);
	fcntl(ls, F_SETFL, O_NONBLOCK);
	if (accept(ls, NULL, NULL) >= 0 || errno != EAGAIN) {
		fail("more connections waited than were made: %m");
		return 1;
	}
	pass();
	return 0;
}
