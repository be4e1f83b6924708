/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RPC_H
#define CRIU_LIKE_RPC_H

/*
 * The RPC front end (criu-like/rpc/, Documentation/rpc.md): CRIU's protocol
 * over a SOCK_SEQPACKET unix socket, one criu_req or criu_resp per message.
 * `swrk FD` serves one conversation on an inherited socket; `service` is the
 * daemon, one forked worker per connection. Both fill a struct cr_options
 * from the request and call the engine, as the command line does.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"

#include "rpc.pb-c.h"

/* The largest request accepted: runtimes send a few hundred bytes (and a unix
 * socket's send buffer caps a message near 200 KiB anyway). */
#define RPC_MAX_MSG (64 << 10)

/* The CRIU version answered to VERSION: Debian 12's, which runc and podman accept. */
#define RPC_CRIU_MAJOR 3
#define RPC_CRIU_MINOR 17
#define RPC_CRIU_SUBLEVEL 1

/* The default address of `criu-like service`. */
#define RPC_SERVICE_ADDRESS "/run/criu-like.sock"

/* What a request asks beyond struct cr_options: the caller's descriptors, the notify. */
struct rpc_opts {
	int images_dir_fd; /* the caller's fd; -1: the images_dir path */
	int work_dir_fd; /* the caller's fd; -1: the image directory */
	bool notify; /* notify_scripts: every hook point goes to the client */
	int ps_fd; /* ps.fd: a connection to or from the page server (swrk: our fd), or -1 */
	int status_fd; /* the caller's fd written once a page server listens, or -1 */
};

/*
 * Fill @o and @ro from @req's options for a request of @type: every field
 * present is either given its CRIU meaning or refused, with "criu_opts.NAME:
 * why" in @err; unknown field numbers are refused too. Strings of @o point
 * into @req. 0, -EINVAL (a value out of range) or -EOPNOTSUPP (a feature
 * criu-like lacks). Pure: opens nothing.
 */
int rpc_opts_translate(const CriuOpts *req, CriuReqType type, struct cr_options *o,
		       struct rpc_opts *ro, char *err, size_t size);

/*
 * Decode one message of @len bytes as a criu_req: 0 and *@ret, or -EMSGSIZE
 * (over RPC_MAX_MSG) or -EBADMSG (not a criu_req) with the reason in @err.
 */
int rpc_decode_req(const uint8_t *buf, size_t len, CriuReq **ret, char *err, size_t size);

/*
 * Receive one message from @sk and decode it: 0 and *@ret; 1 when the peer
 * closed the conversation; -errno with the reason in @err otherwise (an
 * oversized message is consumed whole, the next one starts clean).
 */
int rpc_recv_req(int sk, CriuReq **ret, char *err, size_t size);

/* Send @resp as one message (never SIGPIPE). 0 or -errno. */
int rpc_send_resp(int sk, const CriuResp *resp);
/* The same with @fd (>= 0) passed along as SCM_RIGHTS. */
int rpc_send_resp_fd(int sk, const CriuResp *resp, int fd);

/*
 * One conversation on @sk: requests until one without keep_open is answered
 * or the peer closes. @service: the daemon's worker (a peer that is not root
 * is refused). 0, or -errno when the conversation itself broke.
 */
int rpc_serve(int sk, bool service);

/* `criu-like swrk FD`: 0 or -errno. */
int rpc_swrk(const struct cr_options *o, const char *fd);
/* `criu-like service`: runs until SIGTERM or SIGINT; 0 or -errno. */
int rpc_service(const struct cr_options *o);

#endif
