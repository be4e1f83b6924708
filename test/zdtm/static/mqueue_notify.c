// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX message queue notifications (mq_notify): the test registers
 * SIGEV_SIGNAL (a real-time signal, blocked, with a pointer value) on an
 * empty queue; a child registers SIGEV_NONE on a second queue and
 * SIGEV_SIGNAL with another signal and value on a third. After the restore
 * each queue still shows its registration (the queue file's NOTIFY,
 * SIGNO and NOTIFY_PID), registering again fails with EBUSY, and a message
 * sent into each empty queue delivers the signal with its value to the
 * process that registered (si_code SI_MESGQ), once: the registration is
 * then gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

#define VALUE1 ((void *)(uintptr_t)0x5eed1234abcdull)
#define VALUE2 ((void *)(uintptr_t)0x77)

static char n1[64], n2[64], n3[64];

/* The registration the queue file shows: 0, or -1 after fail(). */
static int check_reg(mqd_t q, const char *what, int notify, int signo, pid_t pid)
{
	char buf[160], exp[64];
	const char *p;
	ssize_t n = pread(q, buf, sizeof(buf) - 1, 0);
	int got_n = -1, got_s = -1, got_p = -1;

	if (n < 0) {
		fail("%s: reading the queue file: %m", what);
		return neg_errno();
	}
	buf[n] = '\0';
	p = strstr(buf, "NOTIFY:");
	if (p)
		sscanf(p, "NOTIFY:%d SIGNO:%d NOTIFY_PID:%d", &got_n, &got_s, &got_p);
	snprintf(exp, sizeof(exp), "%d %d %d", notify, signo, pid);
	if (got_n != notify || got_s != signo || got_p != pid) {
		fail("%s: the queue file says \"%s\", expected NOTIFY SIGNO NOTIFY_PID %s", what,
		     buf, exp);
		return -EINVAL;
	}
	return 0;
}

static int busy(mqd_t q, const char *what)
{
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };

	if (mq_notify(q, &sev) == 0 || errno != EBUSY) {
		fail("%s: registering again did not fail with EBUSY: %m", what);
		return -EINVAL;
	}
	return 0;
}

/* Send into the empty queue @q: @signo with @value must come, once. */
static int fires(mqd_t q, const char *what, int signo, void *value)
{
	struct timespec ts = { 10, 0 };
	siginfo_t si;
	sigset_t set;
	char buf[64];

	sigemptyset(&set);
	sigaddset(&set, signo);
	if (mq_send(q, "m", 1, 0)) {
		fail("%s: mq_send: %m", what);
		return neg_errno();
	}
	if (sigtimedwait(&set, &si, &ts) != signo) {
		fail("%s: no signal %d after a message: %m", what, signo);
		return neg_errno();
	}
	if (si.si_code != SI_MESGQ || si.si_value.sival_ptr != value) {
		fail("%s: signal %d with code %d value %p, expected SI_MESGQ and %p", what, signo,
		     si.si_code, si.si_value.sival_ptr, value);
		return -EINVAL;
	}
	if (mq_receive(q, buf, sizeof(buf), NULL) != 1 || mq_send(q, "m", 1, 0) ||
	    mq_receive(q, buf, sizeof(buf), NULL) != 1) {
		fail("%s: the queue does not work: %m", what);
		return neg_errno();
	}
	ts.tv_sec = 0;
	if (sigtimedwait(&set, &si, &ts) >= 0) {
		fail("%s: the registration fired twice", what);
		return -EINVAL;
	}
	return 0;
}

static int child_main(int rfd, int wfd)
{
	struct sigevent none = { .sigev_notify = SIGEV_NONE };
	struct sigevent sig = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	mqd_t q2, q3;
	sigset_t set;
	char c;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	q2 = mq_open(n2, O_RDWR);
	q3 = mq_open(n3, O_RDWR | O_NONBLOCK);
	sig.sigev_value.sival_ptr = VALUE2;
	if (q2 < 0 || q3 < 0 || mq_notify(q2, &none) || mq_notify(q3, &sig)) {
		fail("child: mq_open/mq_notify: %m");
		return 1;
	}
	if (write(wfd, "r", 1) != 1 || read(rfd, &c, 1) != 1)
		return 2;
	if (check_reg(q2, "child's SIGEV_NONE", SIGEV_NONE, 0, getpid()) ||
	    check_reg(q3, "child's SIGEV_SIGNAL", SIGEV_SIGNAL, SIGUSR1, getpid()) ||
	    busy(q2, "child's SIGEV_NONE") || busy(q3, "child's SIGEV_SIGNAL") ||
	    fires(q3, "child's SIGEV_SIGNAL", SIGUSR1, VALUE2))
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct mq_attr a = { .mq_maxmsg = 4, .mq_msgsize = 16 };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL };
	int status, signo = SIGRTMIN + 3, to_child[2], from_child[2];
	mqd_t q1, q2, q3;
	sigset_t set;
	pid_t child;
	char c;

	test_init(argc, argv);
	snprintf(n1, sizeof(n1), "/zdtm-mqn1-%d", getpid());
	snprintf(n2, sizeof(n2), "/zdtm-mqn2-%d", getpid());
	snprintf(n3, sizeof(n3), "/zdtm-mqn3-%d", getpid());
	mq_unlink(n1);
	mq_unlink(n2);
	mq_unlink(n3);
	q1 = mq_open(n1, O_RDWR | O_CREAT | O_EXCL | O_NONBLOCK, 0600, &a);
	q2 = mq_open(n2, O_RDWR | O_CREAT | O_EXCL, 0600, &a);
	q3 = mq_open(n3, O_RDWR | O_CREAT | O_EXCL, 0600, &a);
	if (q1 < 0 || q2 < 0 || q3 < 0) {
		fail("mq_open: %m");
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, signo);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sev.sigev_signo = signo;
	sev.sigev_value.sival_ptr = VALUE1;
	if (mq_notify(q1, &sev)) {
		fail("mq_notify: %m");
		return 1;
	}
	if (pipe(to_child) || pipe(from_child)) {
		fail("pipe: %m");
		return 1;
	}
	child = fork();
	if (child == 0) {
		close(to_child[1]);
		close(from_child[0]);
		_exit(child_main(to_child[0], from_child[1]));
	}
	close(to_child[0]);
	close(from_child[1]);
	if (read(from_child[0], &c, 1) != 1) {
		fail("the child did not register");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (check_reg(q1, "SIGEV_SIGNAL", SIGEV_SIGNAL, signo, getpid()) ||
	    check_reg(q2, "child's SIGEV_NONE, from the parent", SIGEV_NONE, 0, child) ||
	    busy(q1, "SIGEV_SIGNAL") || busy(q2, "child's SIGEV_NONE, from the parent") ||
	    fires(q1, "SIGEV_SIGNAL", signo, VALUE1))
		goto out;
	if (write(to_child[1], "x", 1) != 1 || waitpid(child, &status, 0) != child ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the child's check failed (status %#x)", status);
		goto out;
	}
	mq_unlink(n1);
	mq_unlink(n2);
	mq_unlink(n3);
	pass();
	return 0;
out:
	kill(child, SIGKILL);
	mq_unlink(n1);
	mq_unlink(n2);
	mq_unlink(n3);
	return 1;
}
