// SPDX-License-Identifier: GPL-2.0
/*
 * The guard of a lazy restore (Documentation/lazy-pages.md, "When the
 * pages vanish"). Closing the last reference to a uffd unregisters its
 * areas, and the kernel then serves the missing pages as zeros: a tree
 * whose lazy-pages daemon died would run on with holes in its memory. So a
 * second process, forked by the daemon in a session of its own, holds a
 * copy of every uffd and a pidfd of every task. While either of the two
 * lives, the uffds stay open and a fault on a missing page waits; when the
 * daemon goes (its end of the socket closes without LAZY_GUARD_EXIT), the
 * guard kills every task it was given and their descendants; when the
 * guard goes, the daemon does the same (lazy-pages.c).
 */
#define LOG_PREFIX "lazy-guard: "

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lazy-int.h"
#include "log.h"
#include "util.h"

struct guarded {
	uint32_t id;
	pid_t pid;
	int uffd, pidfd;
};

/*
 * Every descendant of @pid: @first sent to each before its own children are
 * walked (SIGSTOP: none forks one the walk misses), @last after (SIGKILL
 * once stopped, SIGCONT children before parents); 0: none.
 */
static void signal_descendants(pid_t pid, int depth, int first, int last)
{
	char path[320];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = depth < 64 ? opendir(path) : NULL;
	while (d && (de = readdir(d))) {
		FILE *f;
		int child;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", pid, de->d_name);
		f = fopen(path, "re");
		while (f && fscanf(f, "%d", &child) == 1) {
			if (first)
				kill(child, first);
			signal_descendants(child, depth + 1, first, last);
			if (last)
				kill(child, last);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

void lazy_kill_task(pid_t pid, int pidfd)
{
	/* stopped first, so that it forks no child the walk misses */
	if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, SIGSTOP, NULL, 0))
		return; /* gone already */
	signal_descendants(pid, 0, SIGSTOP, SIGKILL);
	if (pidfd >= 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
}

bool lazy_task_traced(pid_t pid)
{
	char path[64], line[128];
	struct dirent *e;
	bool traced = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && !traced && (e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/status", pid, e->d_name);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "TracerPid:", 10)) {
				traced = strtol(line + 10, NULL, 10) != 0;
				break;
			}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return traced;
}

void lazy_stop_task(pid_t pid, int pidfd, bool stop)
{
	if (pidfd < 0)
		return;
	if (stop) {
		if (!syscall(SYS_pidfd_send_signal, pidfd, SIGSTOP, NULL, 0))
			signal_descendants(pid, 0, SIGSTOP, 0);
		return;
	}
	signal_descendants(pid, 0, 0, SIGCONT);
	syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0);
}

static int recv_msg(int sk, struct lazy_guard_msg *m, int fds[2])
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t r = recvmsg(sk, &mh, MSG_CMSG_CLOEXEC);

	fds[0] = fds[1] = -1;
	if (r != sizeof(*m))
		return r < 0 ? neg_errno() : -ECONNRESET;
	c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(fds, CMSG_DATA(c), c->cmsg_len - CMSG_LEN(0));
	return 0;
}

/* The guard's whole life; exits. */
static void __attribute__((noreturn)) guard_main(int sk)
{
	struct guarded *g = NULL;
	size_t n = 0, i;
	struct lazy_guard_msg m = { 0 };
	int fds[2], err;

	setsid();
	prctl(PR_SET_NAME, "criu-like-lzgd");
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	while (!(err = recv_msg(sk, &m, fds))) {
		if (m.type == LAZY_GUARD_EXIT)
			_exit(0);
		if (m.type == LAZY_GUARD_ADD) {
			struct guarded *ng = reallocarray(g, n + 1, sizeof(*g));

			if (!ng)
				break;
			g = ng;
			g[n++] = (struct guarded){ m.id, m.pid, fds[0], fds[1] };
			continue;
		}
		for (i = 0; i < n; i++) {
			if (g[i].id != m.id || g[i].uffd < 0)
				continue;
			/* its pages are in: keep the pidfd, the tree goes as one */
			close(g[i].uffd);
			g[i].uffd = -1;
		}
	}
	/* the daemon is gone (or this guard cannot follow it): no task may run on */
	for (i = 0; i < n; i++)
		if (g[i].pidfd >= 0)
			lazy_kill_task(g[i].pid, g[i].pidfd);
	if (n)
		fprintf(stderr,
			"criu-like lazy-pages guard: the daemon is gone, %zu lazily "
			"restored task(s) killed\n",
			n);
	_exit(n ? 1 : 0);
}

int lazy_guard_start(pid_t *ret_pid, int *ret_sk)
{
	int sp[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp))
		return neg_errno();
	pid = fork();
	if (pid < 0) {
		close(sp[0]);
		close(sp[1]);
		return neg_errno();
	}
	if (pid == 0) {
		close(sp[0]);
		guard_main(sp[1]);
	}
	close(sp[1]);
	*ret_pid = pid;
	*ret_sk = sp[0];
	return 0;
}

int lazy_guard_send(int sk, uint32_t type, uint32_t id, pid_t pid, int uffd, int pidfd)
{
	struct lazy_guard_msg m = { .type = type, .id = id, .pid = pid };
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = { 0 };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fds[2] = { uffd, pidfd }, nfds = (uffd >= 0) + (pidfd >= 0);

	if (uffd < 0 && pidfd >= 0)
		fds[0] = pidfd;
	if (nfds) {
		struct cmsghdr *c;

		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	return sendmsg(sk, &mh, MSG_NOSIGNAL) == sizeof(m) ? 0 : (neg_errno() ?: -EIO);
}
