// SPDX-License-Identifier: GPL-2.0
/*
 * One conversation with criu-like: a SOCK_SEQPACKET socket (connected to the
 * daemon, handed over by the caller, or one end of a socketpair whose other
 * end a freshly started `criu-like swrk FD` holds), one packed criu_req or
 * criu_resp per message (Documentation/rpc.md, "The wire"), the
 * notifications of a request answered by the callback on the way.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib-int.h"

static int orphan_pts_master_fd = -1;

int criu_get_orphan_pts_master_fd(void)
{
	return orphan_pts_master_fd;
}

static int connect_service(criu_opts *opts)
{
	const char *path = opts->service_address ?: LIB_DEFAULT_ADDRESS;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int sk, err;

	if (strlen(path) >= sizeof(addr.sun_path))
		return lib_fail(opts, -ECONNREFUSED, "the service address %s is too long", path);
	strcpy(addr.sun_path, path);
	sk = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sk < 0)
		return lib_fail(opts, -ECONNREFUSED, "cannot create a socket: %m");
	if (connect(sk, (struct sockaddr *)&addr, sizeof(addr))) {
		err = errno;
		close(sk);
		errno = err;
		return lib_fail(opts, -ECONNREFUSED,
				"cannot connect to criu-like service at %s: %m", path);
	}
	return sk;
}

/*
 * The child of start_swrk(): exec `BIN swrk FD`, or write errno to the pipe.
 * Only async-signal-safe calls: the caller may have threads.
 */
static void __attribute__((noreturn))
exec_swrk(const char *bin, int sk, const char *fd, int errpipe)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t mask;
	int err;

	/* The caller may block or ignore SIGCHLD: criu-like needs it to restore. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_UNBLOCK, &mask, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	if (fcntl(sk, F_SETFD, 0) == 0)
		execlp(bin, bin, "swrk", fd, (char *)NULL);
	err = errno;
	if (write(errpipe, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

static int start_swrk(struct lib_conv *c)
{
	/* set only in CRIU_COMM_BIN mode: criu_local_restore_child() forces the default */
	const char *bin = c->opts->service_binary ?: LIB_DEFAULT_BINARY;
	int sks[2], p[2], err = 0;
	char fd[16];
	ssize_t n;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sks))
		return lib_fail(c->opts, -ECONNREFUSED, "cannot create a socketpair: %m");
	snprintf(fd, sizeof(fd), "%d", sks[1]);
	if (pipe2(p, O_CLOEXEC)) {
		err = errno;
		goto close_sks;
	}
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(p[0]);
		close(p[1]);
		goto close_sks;
	}
	if (pid == 0) {
		close(sks[0]);
		close(p[0]);
		exec_swrk(bin, sks[1], fd, p[1]);
	}
	close(sks[1]);
	close(p[1]);
	/* EOF: the exec went through (the pipe was close-on-exec) */
	do
		n = read(p[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n > 0) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		close(sks[0]);
		errno = err;
		return lib_fail(c->opts, -ECONNREFUSED, "cannot run %s swrk: %m", bin);
	}
	c->swrk_pid = pid;
	return sks[0];

close_sks:
	close(sks[0]);
	close(sks[1]);
	errno = err;
	return lib_fail(c->opts, -ECONNREFUSED, "cannot start %s swrk: %m", bin);
}

int lib_conv_start(struct lib_conv *c, criu_opts *opts, bool force_swrk)
{
	int sk;

	c->opts = opts;
	c->sk = -1;
	c->swrk_pid = 0;
	opts->errmsg[0] = '\0';
	if (force_swrk || opts->comm == CRIU_COMM_BIN)
		sk = start_swrk(c);
	else if (opts->comm == CRIU_COMM_SK)
		sk = connect_service(opts);
	else if (opts->service_fd < 0)
		sk = lib_fail(opts, -ECONNREFUSED, "no service fd was set");
	else
		sk = opts->service_fd;
	if (sk < 0)
		return sk;
	c->sk = sk;
	return 0;
}

void lib_conv_end(struct lib_conv *c)
{
	int err = errno;

	/* as libcriu: the caller's service fd serves one request */
	if (c->sk >= 0)
		close(c->sk);
	c->sk = -1;
	/* swrk ends once the conversation is closed */
	if (c->swrk_pid > 0)
		while (waitpid(c->swrk_pid, NULL, 0) < 0 && errno == EINTR)
			;
	c->swrk_pid = 0;
	errno = err;
}

static int send_req(struct lib_conv *c, CriuReq *req)
{
	size_t len = criu_req__get_packed_size(req);
	uint8_t *buf = malloc(len ?: 1);
	ssize_t n;

	if (!buf)
		return lib_fail(c->opts, -ENOMEM, "cannot allocate %zu bytes", len);
	criu_req__pack(req, buf);
	do
		n = send(c->sk, buf, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	free(buf);
	if (n < 0)
		return lib_fail(c->opts, -ECOMM, "cannot send the request to criu-like: %m");
	return 0;
}

/* An fd that came with the message (orphan-pts-master): kept for the caller. */
static void take_fd(struct msghdr *mh)
{
	struct cmsghdr *cm = CMSG_FIRSTHDR(mh);

	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len >= CMSG_LEN(sizeof(int)))
		memcpy(&orphan_pts_master_fd, CMSG_DATA(cm), sizeof(int));
}

static int recv_resp(struct lib_conv *c, CriuResp **resp)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	uint8_t *buf;
	ssize_t len;

	do
		len = recv(c->sk, NULL, 0, MSG_PEEK | MSG_TRUNC);
	while (len < 0 && errno == EINTR);
	if (len < 0)
		return lib_fail(c->opts, -ECOMM, "cannot receive criu-like's answer: %m");
	if (len == 0) {
		errno = ECONNRESET;
		return lib_fail(c->opts, -ECOMM,
				"criu-like closed the connection without an answer");
	}
	buf = malloc(len);
	if (!buf)
		return lib_fail(c->opts, -ENOMEM, "cannot allocate %zd bytes", len);
	iov.iov_base = buf;
	iov.iov_len = len;
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	do
		len = recvmsg(c->sk, &mh, MSG_CMSG_CLOEXEC);
	while (len < 0 && errno == EINTR);
	if (len < 0) {
		free(buf);
		return lib_fail(c->opts, -ECOMM, "cannot receive criu-like's answer: %m");
	}
	take_fd(&mh);
	*resp = criu_resp__unpack(NULL, len, buf);
	free(buf);
	if (!*resp) {
		errno = EBADMSG;
		return lib_fail(c->opts, -ECOMM, "criu-like's answer (%zd bytes) is no criu_resp",
				len);
	}
	return 0;
}

/* Tells the callback of a notification, then criu-like whether it went well. */
static int notify(struct lib_conv *c, CriuNotify *n)
{
	CriuReq ack = CRIU_REQ__INIT;
	int ret = 0, err;

	if (c->opts->notify && n)
		ret = c->opts->notify(n->script ?: "", n);
	ack.type = CRIU_REQ_TYPE__NOTIFY;
	ack.has_notify_success = true;
	ack.notify_success = ret == 0;
	err = send_req(c, &ack);
	if (ret)
		return lib_fail(c->opts, ret, "the notify callback failed %s (%d)",
				n && n->script ? n->script : "?", ret);
	return err;
}

int lib_conv_call(struct lib_conv *c, CriuReq *req, CriuResp **resp)
{
	CriuResp *r = NULL;
	int ret;

	*resp = NULL;
	ret = send_req(c, req);
	if (ret)
		return ret;
	for (;;) {
		ret = recv_resp(c, &r);
		if (ret)
			return ret;
		if (r->type != CRIU_REQ_TYPE__NOTIFY)
			break;
		ret = notify(c, r->notify);
		criu_resp__free_unpacked(r, NULL);
		if (ret)
			return ret;
	}
	if (r->type != req->type && !(r->type == CRIU_REQ_TYPE__EMPTY && !r->success)) {
		ret = lib_fail(c->opts, -EBADMSG, "an answer of type %d to a request of type %d",
			       (int)r->type, (int)req->type);
		criu_resp__free_unpacked(r, NULL);
		return ret;
	}
	*resp = r;
	return 0;
}
