/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RPC_INT_H
#define CRIU_LIKE_RPC_INT_H

/* Inside criu-like/rpc/ only: one conversation's state. */
#include <stdbool.h>
#include <sys/types.h>

#include "notify.h"
#include "rpc.h"

struct rpc_conv {
	int sk;
	bool service; /* the daemon's worker: root peers only */
	pid_t peer_pid; /* SO_PEERCRED */
	uid_t peer_uid;
	bool notify; /* this request's notify_scripts */
	struct cr_notifier notifier; /* notify.c */
};

/* notify.c: set c->notifier up (what the engine's hook points call). */
void rpc_notifier_init(struct rpc_conv *c);

#endif
