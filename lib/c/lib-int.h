/* SPDX-License-Identifier: GPL-2.0 */
/* What the files of libcriu-like share: the options object, the conversation. */
#ifndef __CRIU_LIKE_LIB_INT_H__
#define __CRIU_LIKE_LIB_INT_H__

#include <sys/types.h>

#include "criu.h"

/* swrk mode: the binary run when none was given, found in PATH */
#define LIB_DEFAULT_BINARY "criu-like"
/* service mode: criu-like's default daemon address (criu-like/include/rpc.h) */
#define LIB_DEFAULT_ADDRESS "/run/criu-like.sock"

struct criu_opts {
	CriuOpts *rpc; /* the request's options, sent as they are */
	int (*notify)(char *action, criu_notify_arg_t na);
	enum criu_service_comm comm;
	char *service_address; /* CRIU_COMM_SK */
	char *service_binary; /* CRIU_COMM_BIN */
	int service_fd; /* CRIU_COMM_FD */
	char errmsg[256]; /* why the last request failed, "" after a success */
};

extern criu_opts *lib_global_opts;

/* Sets opts->errmsg; returns err (a negative errno) for the caller to pass on. */
int lib_fail(criu_opts *opts, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * A conversation: connect as the options say (starting swrk in CRIU_COMM_BIN
 * mode), requests and their answers, then lib_conv_end(), which closes the
 * socket and waits for swrk.
 */
struct lib_conv {
	criu_opts *opts;
	int sk;
	pid_t swrk_pid; /* 0: not in swrk mode */
};

int lib_conv_start(struct lib_conv *c, criu_opts *opts, bool force_swrk);
void lib_conv_end(struct lib_conv *c);
/*
 * Send req and receive its answer, serving notifications on the way: 0 and
 * *resp (to free with criu_resp__free_unpacked()), or one of the negative
 * codes of criu.h (a failing callback's return value included).
 */
int lib_conv_call(struct lib_conv *c, CriuReq *req, CriuResp **resp);

#endif
