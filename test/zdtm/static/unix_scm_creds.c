// SPDX-License-Identifier: GPL-2.0
/*
 * Credentials queued in unix sockets with SO_PASSCRED on the receiver: a
 * datagram pair, a stream pair and a seqpacket pair, each holding messages
 * from the test itself, from a child that exited since (its pid is free at
 * restore time; in a container the child stays, whose pid inside is known),
 * and with another uid and gid (SCM_CREDENTIALS sent by
 * root); a seqpacket and a stream message also carry an fd. A stream reads
 * the messages of one sender with the same credentials as one run, and
 * stops where they change or after the message with an fd. After SIGTERM each message must name the same pid, uid
 * and gid, SO_PASSCRED must still be on, and a socket with SO_PASSCRED and
 * nothing queued must keep it too.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define OTHER_UID 1000
#define OTHER_GID 1001

struct msg {
	const char *text;
	int who; /* 0: the test, 1: the child, 2: the test as OTHER_UID/OTHER_GID */
	bool fd;
};

static const struct msg dgram_msgs[] = {
	{ "from the test", 0 },
	{ "as another user", 2 },
	{ "from the child", 1 },
	{ "the test again", 0 },
};

/* What a stream reader gets: runs of one sender. */
static const struct msg stream_runs[] = {
	{ "aaabbb", 0 },
	{ "ccc", 1 },
	{ "ddd", 2 },
	{ "eeefff", 0, true }, /* "fff" came with an fd: read with the run before it */
};

static const struct msg packet_msgs[] = {
	{ "packet with an fd", 1, true },
	{ "packet of the test", 0 },
};

static int send_cred(int sk, const char *text, const struct ucred *u, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c = { 0 };
	struct iovec iov = { .iov_base = (void *)text, .iov_len = strlen(text) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf };
	struct cmsghdr *cm = (struct cmsghdr *)c.buf;

	if (u) {
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_CREDENTIALS;
		cm->cmsg_len = CMSG_LEN(sizeof(*u));
		memcpy(CMSG_DATA(cm), u, sizeof(*u));
		mh.msg_controllen += CMSG_SPACE(sizeof(*u));
		cm = (struct cmsghdr *)(c.buf + mh.msg_controllen);
	}
	if (fd >= 0) {
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		mh.msg_controllen += CMSG_SPACE(sizeof(int));
	}
	if (!mh.msg_controllen)
		mh.msg_control = NULL;
	return sendmsg(sk, &mh, 0) == (ssize_t)iov.iov_len ? 0 : neg_errno();
}

/* In the child: its messages (who == 1) of each kind, then exit. */
static int child_sends(int dg, int st, int sp, int fd)
{
	if (send_cred(dg, "from the child", NULL, -1) || send_cred(st, "ccc", NULL, -1) ||
	    send_cred(sp, "packet with an fd", NULL, fd))
		return 1;
	return 0;
}

static int run_child(int dg, int st, int sp, int fd, pid_t *ret)
{
	int status, sync[2];
	char c;
	pid_t pid;

	if (pipe(sync))
		return neg_errno();
	pid = fork();
	if (pid < 0)
		return neg_errno();
	if (pid == 0) {
		int err = child_sends(dg, st, sp, fd);

		/*
		 * In a container the child stays: the pid inside of a sender that
		 * exited cannot be known from outside, and criu-like refuses it
		 */
		if (err || !test_in_container())
			_exit(err);
		if (write(sync[1], "s", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(sync[1]);
	if (test_in_container()
		    ? read(sync[0], &c, 1) != 1
		    : waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return neg_errno();
	close(sync[0]);
	*ret = pid;
	return 0;
}

static int send_as_test(int sk, const char *text, int who)
{
	struct ucred u = { getpid(), OTHER_UID, OTHER_GID };

	return send_cred(sk, text, who == 2 ? &u : NULL, -1);
}

/* Each message of @m in order, from @sk, with the credentials it names. */
static int check(int sk, const char *kind, const struct msg *m, unsigned int n, pid_t child)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		union {
			char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * 4)];
			struct cmsghdr align;
		} c;
		char buf[64];
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = c.buf,
				     .msg_controllen = sizeof(c.buf) };
		struct ucred want = { m[i].who == 1 ? child : getpid(), 0, 0 }, got = { 0 };
		ssize_t r = recvmsg(sk, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		size_t len = strlen(m[i].text);
		int fd = -1;
		struct cmsghdr *cm;

		if (m[i].who == 2) {
			want.uid = OTHER_UID;
			want.gid = OTHER_GID;
		}
		for (cm = CMSG_FIRSTHDR(&mh); r >= 0 && cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_type == SCM_CREDENTIALS)
				memcpy(&got, CMSG_DATA(cm), sizeof(got));
			if (cm->cmsg_type == SCM_RIGHTS)
				memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
		}
		if (r != (ssize_t)len || memcmp(buf, m[i].text, len)) {
			fail("%s: message %u: got %zd bytes \"%.*s\", expected \"%s\"", kind, i, r,
			     (int)(r > 0 ? r : 0), buf, m[i].text);
			return -EINVAL;
		}
		if (got.pid != want.pid || got.uid != want.uid || got.gid != want.gid) {
			fail("%s: message %u: from %d/%u/%u, expected %d/%u/%u", kind, i, got.pid,
			     got.uid, got.gid, want.pid, want.uid, want.gid);
			return -EINVAL;
		}
		if ((fd >= 0) != m[i].fd || (fd >= 0 && write(fd, "x", 1) != 1)) {
			fail("%s: message %u: fd %d, expected %s", kind, i, fd,
			     m[i].fd ? "a pipe's write end" : "none");
			return -EINVAL;
		}
	}
	return 0;
}

static bool passcred(int sk)
{
	int v = 0;
	socklen_t len = sizeof(v);

	return !getsockopt(sk, SOL_SOCKET, SO_PASSCRED, &v, &len) && v;
}

int main(int argc, char **argv)
{
	int dg[2], st[2], sp[2], idle[2], p[2], one = 1;
	pid_t child = 0;
	char c, buf[8];

	test_init(argc, argv);
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, dg) || socketpair(AF_UNIX, SOCK_STREAM, 0, st) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, idle) || pipe(p) ||
	    setsockopt(dg[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) ||
	    setsockopt(st[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) ||
	    setsockopt(sp[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) ||
	    setsockopt(idle[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one))) {
		fail("cannot set up the sockets: %m");
		return 1;
	}
	if (send_as_test(dg[0], "from the test", 0) || send_as_test(dg[0], "as another user", 2) ||
	    send_as_test(st[0], "aaa", 0) || send_as_test(st[0], "bbb", 0) ||
	    run_child(dg[0], st[0], sp[0], p[1], &child) ||
	    send_as_test(dg[0], "the test again", 0) || send_as_test(st[0], "ddd", 2) ||
	    send_as_test(st[0], "eee", 0) || send_cred(st[0], "fff", NULL, p[1]) ||
	    send_as_test(sp[0], "packet of the test", 0)) {
		fail("cannot queue the messages: %m");
		return 1;
	}
	close(p[1]);
	test_daemon();
	test_waitsig();

	if (!passcred(dg[1]) || !passcred(st[1]) || !passcred(sp[1]) || !passcred(idle[0]) ||
	    passcred(dg[0])) {
		fail("SO_PASSCRED is not as it was");
		return 1;
	}
	if (check(dg[1], "dgram", dgram_msgs, 4, child) ||
	    check(st[1], "stream", stream_runs, 4, child) ||
	    check(sp[1], "seqpacket", packet_msgs, 2, child))
		return 1;
	if (read(p[0], buf, sizeof(buf)) != 2 || memcmp(buf, "xx", 2)) {
		fail("the pipe in flight is not the pipe");
		return 1;
	}
	if (recv(dg[1], &c, 1, MSG_DONTWAIT) >= 0 || recv(st[1], &c, 1, MSG_DONTWAIT) >= 0 ||
	    recv(sp[1], &c, 1, MSG_DONTWAIT) >= 0) {
		fail("more than the queued messages");
		return 1;
	}
	pass();
	return 0;
}
