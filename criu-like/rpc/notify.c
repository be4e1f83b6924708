// SPDX-License-Identifier: GPL-2.0
/*
 * The hook points of a dump or restore, told to the RPC client: a criu_resp
 * of type NOTIFY naming the action (CRIU's names), answered by a criu_req of
 * type NOTIFY with notify_success. Without notify_scripts the client hears
 * nothing, but a client that has gone fails the hook all the same: a dump
 * whose caller dropped the connection lets the tree go on (post-dump comes
 * before the tree is killed).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#define LOG_PREFIX "rpc: "
#include "log.h"
#include "notify.h"
#include "rpc-int.h"

static int client_gone(int sk)
{
	struct pollfd p = { .fd = sk, .events = POLLRDHUP };

	if (poll(&p, 1, 0) < 0)
		return -errno;
	if (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) {
		pr_err("the RPC client closed the connection\n");
		return -ECONNRESET;
	}
	return 0;
}

static int rpc_notify_fd(void *priv, const char *action, pid_t root, int fd)
{
	struct rpc_conv *c = priv;
	CriuResp resp = CRIU_RESP__INIT;
	CriuNotify cn = CRIU_NOTIFY__INIT;
	char err[256];
	CriuReq *req;
	bool ok;
	int ret;

	if (!c->notify && fd >= 0) {
		/* as CRIU: a descriptor goes only to a client that takes notifications */
		pr_err("%s: the request did not set notify_scripts: no client takes the "
		       "descriptor\n",
		       action);
		return -ENOTCONN;
	}
	if (!c->notify)
		return client_gone(c->sk);
	resp.type = CRIU_REQ_TYPE__NOTIFY;
	resp.success = true;
	resp.notify = &cn;
	cn.script = (char *)action;
	/* as CRIU: the pid goes with the two hooks that need the new tree's */
	if (!strcmp(action, CR_ACT_SETUP_NS) || !strcmp(action, CR_ACT_POST_RESTORE)) {
		cn.has_pid = true;
		cn.pid = root;
	}
	ret = rpc_send_resp_fd(c->sk, &resp, fd);
	if (ret)
		return ret;
	ret = rpc_recv_req(c->sk, &req, err, sizeof(err));
	if (ret) {
		pr_err("no answer to the notification %s: %s\n", action,
		       ret > 0 ? "the client closed the connection" : err);
		return ret > 0 ? -ECONNRESET : ret;
	}
	ok = req->type == CRIU_REQ_TYPE__NOTIFY && req->has_notify_success && req->notify_success;
	if (!ok)
		pr_err("the RPC client answered the notification %s with %s\n", action,
		       req->type == CRIU_REQ_TYPE__NOTIFY ? "a failure" : "another request");
	criu_req__free_unpacked(req, NULL);
	return ok ? 0 : -ECANCELED;
}

static int rpc_notify(void *priv, const char *action, pid_t root)
{
	return rpc_notify_fd(priv, action, root, -1);
}

void rpc_notifier_init(struct rpc_conv *c)
{
	c->notifier.notify = rpc_notify;
	c->notifier.notify_fd = rpc_notify_fd;
	c->notifier.priv = c;
}
