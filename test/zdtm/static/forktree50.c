// SPDX-License-Identifier: GPL-2.0
/*
 * A tree of 50 processes: node i has children 3i+1..3i+3 (four levels below
 * the root). Each keeps 64 KiB of its own data. After SIGTERM each must have
 * its pid and parent and its data, and must forward SIGTERM to its children and collect their
 * exit statuses; the root reports the whole tree.
 */
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NPROCS 50
#define FANOUT 3
#define DATA (64 * 1024)

struct node {
	int idx;
	pid_t pid, ppid;
	pid_t kids[FANOUT];
	int nkids;
	unsigned char data[DATA];
};

static int spawn(struct node *n, int ready);

static int node_life(struct node *n, int ready)
{
	int bad = 0;

	if (write(ready, "r", 1) != 1)
		return 2;
	test_waitsig();
	for (int k = 0; k < n->nkids; k++)
		kill(n->kids[k], SIGTERM);
	if (getpid() != n->pid || getppid() != n->ppid ||
	    datachk(n->data, DATA, 5000 + n->idx, NULL)) {
		test_msg("node %d: pid %d ppid %d (expected %d %d) or data bad\n", n->idx, getpid(),
			 getppid(), n->pid, n->ppid);
		bad = 1;
	}
	if (n->nkids && test_reap_children(n->kids, n->nkids))
		bad = 1;
	return bad;
}

static int spawn(struct node *n, int ready)
{
	n->nkids = 0;
	for (int c = FANOUT * n->idx + 1; c <= FANOUT * n->idx + FANOUT && c < NPROCS; c++) {
		pid_t pid = fork();

		if (pid < 0)
			return -errno;
		if (pid == 0) {
			static struct node me;

			me.idx = c;
			me.pid = getpid();
			me.ppid = getppid();
			datagen(me.data, DATA, 5000 + c);
			_exit(spawn(&me, ready) ? 2 : node_life(&me, ready));
		}
		n->kids[n->nkids++] = pid;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct node root;
	int ready[2];

	test_init(argc, argv);
	if (pipe(ready)) {
		fail("pipe: %m");
		return 1;
	}
	root.pid = getpid();
	datagen(root.data, DATA, 5000);
	if (spawn(&root, ready[1])) {
		fail("fork: %m");
		return 1;
	}
	close(ready[1]);
	if (test_wait_ready(ready[0], NPROCS - 1)) {
		fail("the tree of %d did not start", NPROCS);
		return 1;
	}
	test_daemon();
	test_waitsig();

	for (int k = 0; k < root.nkids; k++)
		kill(root.kids[k], SIGTERM);
	if (datachk(root.data, DATA, 5000, NULL) || getpid() != root.pid) {
		fail("the root lost its data or pid");
		return 1;
	}
	if (test_reap_children(root.kids, root.nkids)) {
		fail("some process of the tree failed (see the messages)");
		return 1;
	}
	pass();
	return 0;
}
