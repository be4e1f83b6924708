// SPDX-License-Identifier: GPL-2.0
/*
 * time_for_children: the test unshares a time namespace (its own clocks
 * stay the host's) with offsets and forks a child in it; a second child
 * unshares one with other offsets and forks nothing. After the restore the
 * test is still in its time namespace and its children's is another one,
 * with the offsets: the first child is in it, and a child forked now by the
 * test is born in it (same namespace, its offsets, its clock); a child forked
 * now by the second child is born in that one's, with its offsets.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define MONO1 200000
#define BOOT1 300000
#define MONO2 5000000
#define BOOT2 7000000

static int make_ns(long mono, long boot)
{
	char buf[64];
	int fd, len;

	if (unshare(CLONE_NEWTIME))
		return neg_errno();
	len = snprintf(buf, sizeof(buf), "%d %ld 0\n%d %ld 0\n", CLOCK_MONOTONIC, mono,
		       CLOCK_BOOTTIME, boot);
	fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, len) != len)
		return neg_errno();
	close(fd);
	return 0;
}

static void link_of(const char *path, char *buf, size_t size)
{
	ssize_t n = readlink(path, buf, size - 1);

	buf[n > 0 ? n : 0] = '\0';
}

/* In a process: in the namespace @ns (a link text), offsets @mono/@boot, its clock past them. */
static int check_here(const char *who, const char *ns, long mono, long boot)
{
	char t[64], tfc[64];
	long long m = -1, b = -1;
	struct timespec now;

	link_of("/proc/self/ns/time", t, sizeof(t));
	link_of("/proc/self/ns/time_for_children", tfc, sizeof(tfc));
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((ns && strcmp(t, ns)) || strcmp(t, tfc) || test_timens_offsets(&m, &b) || m != mono ||
	    b != boot || now.tv_sec < mono) {
		fail("%s: time %s (expected %s) for children %s, offsets %lld %lld (expected %ld "
		     "%ld), monotonic %lld",
		     who, t, ns ? ns : "-", tfc, m, b, mono, boot, (long long)now.tv_sec);
		return -EINVAL;
	}
	return 0;
}

/* A child forked now by the caller: its checks, its status. */
static int child_checks(const char *who, const char *ns, long mono, long boot)
{
	int status;
	pid_t c = fork();

	if (c == 0)
		_exit(check_here(who, ns, mono, boot) ? 1 : 0);
	if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("%s failed", who);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char own[64], tfc[64], now_own[64], now_tfc[64], c[8];
	int p1[2], p2[2], status;
	long long m = -1, b = -1;
	pid_t in_ns, unshared;

	test_init(argc, argv);
	link_of("/proc/self/ns/time", own, sizeof(own));
	if (pipe(p1) || pipe(p2)) {
		fail("pipe: %m");
		return 1;
	}
	/* the second child: a namespace for its children, none forked yet */
	unshared = fork();
	if (unshared == 0) {
		if (make_ns(MONO2, BOOT2))
			_exit(3);
		if (read(p2[0], c, 1) != 1)
			_exit(2);
		_exit(child_checks("the second child's child", NULL, MONO2, BOOT2) ? 1 : 0);
	}
	if (make_ns(MONO1, BOOT1)) {
		fail("unshare(CLONE_NEWTIME) and its offsets: %m");
		return 1;
	}
	link_of("/proc/self/ns/time_for_children", tfc, sizeof(tfc));
	in_ns = fork();
	if (in_ns == 0) {
		if (read(p1[0], c, 1) != 1)
			_exit(2);
		_exit(check_here("the child in the namespace", NULL, MONO1, BOOT1) ? 1 : 0);
	}
	/* the second child has its namespace once its time_for_children is not its time */
	for (;;) {
		char path[64], a[64], bb[64];

		snprintf(path, sizeof(path), "/proc/%d/ns/time", unshared);
		link_of(path, a, sizeof(a));
		snprintf(path, sizeof(path), "/proc/%d/ns/time_for_children", unshared);
		link_of(path, bb, sizeof(bb));
		if (a[0] && bb[0] && strcmp(a, bb))
			break;
		if (waitpid(unshared, &status, WNOHANG) == unshared) {
			fail("the second child could not unshare (%#x)", status);
			return 1;
		}
		usleep(1000);
	}
	test_daemon();
	test_waitsig();

	link_of("/proc/self/ns/time", now_own, sizeof(now_own));
	link_of("/proc/self/ns/time_for_children", now_tfc, sizeof(now_tfc));
	if (!strcmp(now_own, now_tfc) || test_timens_offsets(&m, &b) || m != MONO1 || b != BOOT1) {
		fail("after the restore: time %s for children %s (the same?), offsets %lld %lld, "
		     "expected %d %d",
		     now_own, now_tfc, m, b, MONO1, BOOT1);
		goto out;
	}
	if (child_checks("a child forked after the restore", now_tfc, MONO1, BOOT1))
		goto out;
	if (write(p1[1], "x", 1) != 1 || waitpid(in_ns, &status, 0) != in_ns ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the child in the namespace: %#x", status);
		goto out;
	}
	if (write(p2[1], "x", 1) != 1 || waitpid(unshared, &status, 0) != unshared ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the second child: %#x", status);
		goto out;
	}
	pass();
	return 0;
out:
	kill(in_ns, SIGKILL);
	kill(unshared, SIGKILL);
	return 1;
}
