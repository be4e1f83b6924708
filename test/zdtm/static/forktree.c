// SPDX-License-Identifier: GPL-2.0
/*
 * A process tree three levels deep: the root, 2 children, 4 grandchildren.
 * Every parent keeps unread data in a pipe to each child. After SIGTERM each
 * process checks its pid, ppid, sid, its memory and the data from its parent,
 * forwards SIGTERM down and collects its children's exit statuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define FANOUT 2
#define DEPTH 3
#define PIPE_DATA 1000

struct node {
	int id; /* 1 for the root; children of N are 2N and 2N+1 */
	int level;
	pid_t pid, ppid, sid;
	int from_parent; /* read end of the pipe from the parent, -1 for the root */
	pid_t child[FANOUT];
	unsigned char mem[8192];
};

static void node_setup(struct node *n, int id, int level, int from_parent)
{
	n->id = id;
	n->level = level;
	n->pid = getpid();
	n->ppid = getppid();
	n->sid = getsid(0);
	n->from_parent = from_parent;
	datagen(n->mem, sizeof(n->mem), id);
}

/* Check what this process should have kept; 0 or 1 (reported with test_msg). */
static int node_check(const struct node *n)
{
	unsigned char got[PIPE_DATA];
	size_t off;
	ssize_t r;

	/* The root's parent is the launcher, which exits: the root is not checked for it. */
	if (getpid() != n->pid || (n->id != 1 && getppid() != n->ppid) || getsid(0) != n->sid) {
		test_msg("node %d: pid/ppid/sid %d/%d/%d, expected %d/%d/%d\n", n->id, getpid(),
			 getppid(), getsid(0), n->pid, n->ppid, n->sid);
		return 1;
	}
	if (datachk(n->mem, sizeof(n->mem), n->id, &off)) {
		test_msg("node %d: memory differs at offset %zu\n", n->id, off);
		return 1;
	}
	if (n->from_parent < 0)
		return 0;
	r = read(n->from_parent, got, sizeof(got));
	if (r != PIPE_DATA || datachk(got, PIPE_DATA, 1000 + n->id, &off)) {
		test_msg("node %d: pipe from parent gave %zd bytes, bad at %zu\n", n->id, r, off);
		return 1;
	}
	return 0;
}

static int reap_children(const struct node *n)
{
	int bad = 0;

	for (int i = 0; i < FANOUT && n->level < DEPTH; i++) {
		int status;

		kill(n->child[i], SIGTERM);
		if (waitpid(n->child[i], &status, 0) != n->child[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			test_msg("node %d: child %d ended with status 0x%x\n", n->id, n->child[i],
				 status);
			bad = 1;
		}
	}
	return bad;
}

/* Fork the subtree under @n; every new process reports on @ready. */
static int spawn_children(struct node *n, int ready)
{
	for (int i = 0; i < FANOUT && n->level < DEPTH; i++) {
		unsigned char data[PIPE_DATA];
		int p[2];
		pid_t pid;

		if (pipe(p))
			return -errno;
		pid = fork();
		if (pid < 0)
			return -errno;
		if (pid == 0) {
			struct node child;

			close(p[1]);
			/* Non-blocking: lost data must fail the check, not hang it. */
			fcntl(p[0], F_SETFL, O_NONBLOCK);
			node_setup(&child, n->id * FANOUT + i, n->level + 1, p[0]);
			if (spawn_children(&child, ready) || write(ready, "r", 1) != 1)
				_exit(2);
			test_waitsig();
			_exit(node_check(&child) | reap_children(&child));
		}
		close(p[0]);
		n->child[i] = pid;
		/* Left unread until the child checks it after SIGTERM: data in flight. */
		datagen(data, sizeof(data), 1000 + n->id * FANOUT + i);
		if (write(p[1], data, sizeof(data)) != sizeof(data))
			return -EIO; /* a pipe takes 1000 bytes at once */
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct node root;
	int ready[2], expected = 0, got = 0, bad;
	char c;

	test_init(argc, argv);
	for (int l = 1, w = FANOUT; l < DEPTH; l++, w *= FANOUT)
		expected += w;
	if (pipe(ready)) {
		fail("pipe: %m");
		return 1;
	}
	node_setup(&root, 1, 1, -1);
	if (spawn_children(&root, ready[1])) {
		fail("cannot build the tree: %m");
		return 1;
	}
	close(ready[1]);
	while (got < expected && read(ready[0], &c, 1) == 1)
		got++;
	close(ready[0]);
	if (got != expected) {
		fail("only %d of %d descendants became ready", got, expected);
		return 1;
	}
	test_daemon();
	test_waitsig();

	bad = node_check(&root) | reap_children(&root);
	if (bad) {
		fail("the tree lost state (see the messages above)");
		return 1;
	}
	pass();
	return 0;
}
