// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX message queues: one with messages of several priorities held
 * O_RDWR, the same queue held O_RDONLY|O_NONBLOCK by a child, an empty
 * queue O_WRONLY. After the restore: the attributes, the descriptions'
 * flags, and every message in order with its priority. Built as
 * mqueue_ipcns (IPCNS defined), the test first unshares an IPC namespace of
 * its own, so the queues are the namespace's and the restore creates them
 * again in a new one.
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static const struct {
	unsigned int prio;
	const char *text;
} sent[] = { { 1, "one" }, { 5, "five-a" }, { 3, "three" }, { 5, "five-b" }, { 0, "" } };
/* what mq_receive gives: highest priority first, oldest first within one */
static const int order[] = { 1, 3, 2, 0, 4 };

static char qname[64], ename[64];

static int check_attr(mqd_t q, const char *what, long flags, long maxmsg, long msgsize, long cur)
{
	struct mq_attr a;

	if (mq_getattr(q, &a)) {
		fail("%s: mq_getattr: %m", what);
		return neg_errno();
	}
	if (a.mq_flags != flags || a.mq_maxmsg != maxmsg || a.mq_msgsize != msgsize ||
	    a.mq_curmsgs != cur) {
		fail("%s: flags %#lx maxmsg %ld msgsize %ld curmsgs %ld, expected %#lx %ld %ld %ld",
		     what, a.mq_flags, a.mq_maxmsg, a.mq_msgsize, a.mq_curmsgs, flags, maxmsg,
		     msgsize, cur);
		return -EINVAL;
	}
	return 0;
}

/* The child waits for the parent's word after the restore, then checks its description. */
static int child_main(mqd_t ro, int rfd)
{
	char c;

	if (read(rfd, &c, 1) != 1)
		return 2;
	return check_attr(ro, "child's O_RDONLY|O_NONBLOCK", O_NONBLOCK, 8, 32, 5) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct mq_attr a = { .mq_maxmsg = 8, .mq_msgsize = 32 };
	mqd_t q, ro, e;
	unsigned int i, prio;
	char buf[64];
	pid_t child;
	int status, pfd[2];

	test_init(argc, argv);
#ifdef IPCNS
	if (unshare(CLONE_NEWIPC) || test_ns_apart_from_parent("ipc") != 1) {
		fail("unshare(CLONE_NEWIPC): %m");
		return 1;
	}
#endif
	snprintf(qname, sizeof(qname), "/zdtm-mq-%d", getpid());
	snprintf(ename, sizeof(ename), "/zdtm-mq-empty-%d", getpid());
	mq_unlink(qname);
	mq_unlink(ename);
	q = mq_open(qname, O_RDWR | O_CREAT | O_EXCL, 0640, &a);
	a.mq_maxmsg = 3;
	a.mq_msgsize = 100;
	e = mq_open(ename, O_WRONLY | O_CREAT | O_EXCL, 0600, &a);
	if (q < 0 || e < 0) {
		fail("mq_open: %m");
		return 1;
	}
	for (i = 0; i < sizeof(sent) / sizeof(sent[0]); i++)
		if (mq_send(q, sent[i].text, strlen(sent[i].text), sent[i].prio)) {
			fail("mq_send: %m");
			return 1;
		}
	ro = mq_open(qname, O_RDONLY | O_NONBLOCK);
	if (ro < 0) {
		fail("mq_open O_RDONLY: %m");
		return 1;
	}
	if (pipe(pfd)) {
		fail("pipe: %m");
		return 1;
	}
	child = fork();
	if (child == 0) {
		close(pfd[1]);
		_exit(child_main(ro, pfd[0]));
	}
	close(pfd[0]);
	close(ro);
	test_daemon();
	test_waitsig();
#ifdef IPCNS
	/* restored in an IPC namespace of its own again, not its parent's */
	if (test_ns_apart_from_parent("ipc") != 1) {
		fail("the IPC namespace is its parent's after the restore");
		return 1;
	}
#endif

	if (check_attr(q, "O_RDWR", 0, 8, 32, 5) || check_attr(e, "empty O_WRONLY", 0, 3, 100, 0))
		goto out;
	if (write(pfd[1], "x", 1) != 1 || waitpid(child, &status, 0) != child ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the child's check failed (status %#x)", status);
		goto out;
	}
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		ssize_t n = mq_receive(q, buf, sizeof(buf), &prio);
		int k = order[i];

		if (n < 0 || (size_t)n != strlen(sent[k].text) || memcmp(buf, sent[k].text, n) ||
		    prio != sent[k].prio) {
			fail("message %u: got \"%.*s\" prio %u, expected \"%s\" prio %u", i,
			     n < 0 ? 0 : (int)n, buf, prio, sent[k].text, sent[k].prio);
			goto out;
		}
	}
	if (mq_send(e, "x", 1, 0)) {
		fail("the O_WRONLY queue does not take a message: %m");
		goto out;
	}
	mq_unlink(qname);
	mq_unlink(ename);
	pass();
	return 0;
out:
	mq_unlink(qname);
	mq_unlink(ename);
	return 1;
}
