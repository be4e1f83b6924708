// SPDX-License-Identifier: GPL-2.0
/*
 * Framing: one protobuf message per SOCK_SEQPACKET message, as CRIU's
 * service sends and reads them. The size is peeked first, so a message over
 * RPC_MAX_MSG is dropped whole without allocating for it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define LOG_PREFIX "rpc: "
#include "log.h"
#include "rpc.h"
#include "util.h"

int rpc_decode_req(const uint8_t *buf, size_t len, CriuReq **ret, char *err, size_t size)
{
	CriuReq *req;

	if (len > RPC_MAX_MSG) {
		snprintf(err, size, "message of %zu bytes is over the limit of %d", len,
			 RPC_MAX_MSG);
		return -EMSGSIZE;
	}
	req = criu_req__unpack(NULL, len, buf);
	if (!req) {
		snprintf(err, size, "malformed or truncated message (%zu bytes): not a criu_req",
			 len);
		return -EBADMSG;
	}
	*ret = req;
	return 0;
}

int rpc_recv_req(int sk, CriuReq **ret, char *err, size_t size)
{
	_cleanup_free_ uint8_t *buf = NULL;
	uint8_t byte;
	ssize_t len, n;

	do
		/* MSG_TRUNC: the real length of the next message, nothing consumed */
		len = recv(sk, &byte, 1, MSG_PEEK | MSG_TRUNC);
	while (len < 0 && errno == EINTR);
	if (len < 0) {
		snprintf(err, size, "cannot read a request: %m");
		return neg_errno();
	}
	if (len == 0)
		return 1; /* the peer closed the conversation */
	if (len > RPC_MAX_MSG) {
		/* consumed whole: a datagram's tail is dropped with it */
		if (recv(sk, &byte, 1, MSG_TRUNC) < 0) {
			snprintf(err, size, "cannot read a request: %m");
			return neg_errno();
		}
		return rpc_decode_req(NULL, (size_t)len, ret, err, size);
	}
	buf = malloc((size_t)len);
	if (!buf) {
		snprintf(err, size, "out of memory for a message of %zd bytes", len);
		return -ENOMEM;
	}
	n = recv(sk, buf, (size_t)len, 0);
	if (n != len) {
		snprintf(err, size, "short read of a %zd-byte request: %zd", len, n);
		return n < 0 ? neg_errno() : -EIO;
	}
	return rpc_decode_req(buf, (size_t)len, ret, err, size);
}

int rpc_send_resp(int sk, const CriuResp *resp)
{
	return rpc_send_resp_fd(sk, resp, -1);
}

int rpc_send_resp_fd(int sk, const CriuResp *resp, int fd)
{
	size_t len = criu_resp__get_packed_size(resp);
	_cleanup_free_ uint8_t *buf = malloc(len ? len : 1);
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	criu_resp__pack(resp, buf);
	iov.iov_base = buf;
	iov.iov_len = len;
	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	do
		n = sendmsg(sk, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return neg_errno();
	return n == (ssize_t)len ? 0 : -EIO;
}
