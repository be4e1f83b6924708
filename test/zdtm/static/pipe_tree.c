// SPDX-License-Identifier: GPL-2.0
/*
 * Pipes across a tree of five processes (root; children C1, C2; C1's child
 * G1; C2's child G2), each pipe with 3000 unread bytes: G1 to the root, C1 to
 * its sibling C2, the root to its grandchild G1, G2 to its cousin G1, and C2
 * to itself. Every process holds only its own ends. After SIGTERM each writer
 * adds 100 bytes and closes its end, and each reader must read exactly the
 * 3100 bytes and then EOF within 10 s: lost data, a pipe that no longer
 * connects the two processes, or a write end restored in a third process
 * (no EOF) all fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

enum {
	ROOT,
	C1,
	C2,
	G1,
	G2,
	NPROC
};

struct link {
	int writer, reader, fd[2];
};

static struct link links[] = {
	{ G1, ROOT }, { C1, C2 }, { ROOT, G1 }, { G2, G1 }, { C2, C2 },
};

#define NLINKS (sizeof(links) / sizeof(links[0]))
#define FIRST 3000
#define MORE 100

static const int parent_of[NPROC] = { -1, ROOT, ROOT, C1, C2 };

/* Keep only the ends of process @me. */
static void keep_own_ends(int me)
{
	for (size_t i = 0; i < NLINKS; i++) {
		if (links[i].reader != me)
			close(links[i].fd[0]);
		if (links[i].writer != me)
			close(links[i].fd[1]);
	}
}

static int write_seeded(int fd, size_t len, uint64_t seed)
{
	unsigned char buf[FIRST];

	datagen(buf, len, seed);
	return write(fd, buf, len) == (ssize_t)len ? 0 : -EIO;
}

/* Read everything until EOF; 0 if it is FIRST bytes of seed then MORE of seed + 1. */
static int read_all(int fd, uint64_t seed)
{
	unsigned char buf[FIRST + MORE + 1];
	size_t got = 0;
	int64_t end = test_now_ms() + 10000;

	while (test_now_ms() < end) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, buf + got, sizeof(buf) - got);
		if (n <= 0)
			break;
		got += n;
	}
	if (got != FIRST + MORE || datachk(buf, FIRST, seed, NULL) ||
	    datachk(buf + FIRST, MORE, seed + 1, NULL)) {
		test_msg("pipe %lu: read %zu bytes until EOF or timeout, expected %d\n",
			 (unsigned long)seed, got, FIRST + MORE);
		return 1;
	}
	return 0;
}

/* The life of process @me after forking its children @kids. */
static int run(int me, const pid_t *kids, int nkids, int ready)
{
	int bad = 0;

	keep_own_ends(me);
	for (size_t i = 0; i < NLINKS; i++)
		if (links[i].writer == me && write_seeded(links[i].fd[1], FIRST, 10 * i))
			return 2;
	if (me != ROOT && write(ready, "r", 1) != 1)
		return 2;
	if (me == ROOT)
		return 0; /* the root goes on in main() */
	test_waitsig();
	for (int k = 0; k < nkids; k++)
		kill(kids[k], SIGTERM);
	for (size_t i = 0; i < NLINKS; i++)
		if (links[i].writer == me)
			bad |= write_seeded(links[i].fd[1], MORE, 10 * i + 1) |
			       close(links[i].fd[1]);
	for (size_t i = 0; i < NLINKS; i++)
		if (links[i].reader == me)
			bad |= read_all(links[i].fd[0], 10 * i);
	return (bad ? 1 : 0) | (nkids && test_reap_children(kids, nkids) ? 1 : 0);
}

/* Fork the children of @me (recursively); the new processes never return. */
static int spawn(int me, pid_t *kids, int ready)
{
	int n = 0;

	for (int c = 0; c < NPROC; c++) {
		if (parent_of[c] != me)
			continue;
		kids[n] = fork();
		if (kids[n] < 0)
			return -errno;
		if (kids[n] == 0) {
			pid_t grandkids[NPROC];
			int gn = spawn(c, grandkids, ready);

			_exit(gn < 0 ? 2 : run(c, grandkids, gn, ready));
		}
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	pid_t kids[NPROC];
	int ready[2], nkids, bad = 0;

	test_init(argc, argv);
	if (pipe(ready)) {
		fail("pipe: %m");
		return 1;
	}
	for (size_t i = 0; i < NLINKS; i++) {
		if (pipe(links[i].fd)) {
			fail("pipe: %m");
			return 1;
		}
	}
	nkids = spawn(ROOT, kids, ready[1]);
	close(ready[1]);
	if (nkids < 0 || run(ROOT, kids, nkids, -1) || test_wait_ready(ready[0], NPROC - 1)) {
		fail("the tree did not start");
		return 1;
	}
	test_daemon();
	test_waitsig();

	for (int k = 0; k < nkids; k++)
		kill(kids[k], SIGTERM);
	for (size_t i = 0; i < NLINKS; i++)
		if (links[i].writer == ROOT)
			bad |= write_seeded(links[i].fd[1], MORE, 10 * i + 1) |
			       close(links[i].fd[1]);
	for (size_t i = 0; i < NLINKS; i++)
		if (links[i].reader == ROOT)
			bad |= read_all(links[i].fd[0], 10 * i);
	if (test_reap_children(kids, nkids) || bad) {
		fail("a pipe lost data or did not end (see the messages)");
		return 1;
	}
	pass();
	return 0;
}
