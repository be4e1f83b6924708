/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NOTIFY_H
#define CRIU_LIKE_NOTIFY_H

/*
 * Hook points of a dump and a restore, with CRIU's action names and order
 * (Documentation/rpc.md): the engine calls cr_notify() at each one; it runs
 * the --action-script and tells the RPC client (notify_scripts). A failing
 * hook fails the operation where CRIU's does (pre-dump, post-dump,
 * pre-restore, setup-namespaces, post-setup-namespaces, post-restore); after
 * pre-resume the tree is committed, so later hooks only log a failure.
 */
#include <sys/types.h>

#include "options.h"

/* The actions, as CRIU names them in CRTOOLS_SCRIPT_ACTION and criu_notify.script. */
#define CR_ACT_PRE_DUMP "pre-dump"
#define CR_ACT_POST_DUMP "post-dump"
#define CR_ACT_PRE_RESTORE "pre-restore"
#define CR_ACT_SETUP_NS "setup-namespaces"
#define CR_ACT_POST_SETUP_NS "post-setup-namespaces"
#define CR_ACT_POST_RESTORE "post-restore"
#define CR_ACT_PRE_RESUME "pre-resume"
#define CR_ACT_POST_RESUME "post-resume"
/* around the lock of a tree's own network namespace (ns/net.c, network-lock.md) */
#define CR_ACT_NET_LOCK "network-lock"
#define CR_ACT_NET_UNLOCK "network-unlock"
/* a restore's new pty master, to the RPC client only (SCM_RIGHTS): files/pty.c */
#define CR_ACT_ORPHAN_PTS_MASTER "orphan-pts-master"
/* a page server (or a lazy-pages daemon) accepts connections */
#define CR_ACT_STATUS_READY "status-ready"

/* Another front end's hook (the RPC conversation): 0 to go on, or -errno. */
struct cr_notifier {
	int (*notify)(void *priv, const char *action, pid_t root);
	/* optional: the same with a descriptor passed along (orphan-pts-master) */
	int (*notify_fd)(void *priv, const char *action, pid_t root, int fd);
	void *priv;
};

/*
 * Hook point @action of the tree rooted at @root (0 while not known) whose
 * images are in @dirfd (-1 while not open): the notifier, then the action
 * script with CRTOOLS_SCRIPT_ACTION, CRTOOLS_IMAGE_DIR and CRTOOLS_INIT_PID
 * in its environment. 0, or -errno after logging which hook failed.
 */
int cr_notify(const struct cr_options *o, const char *action, pid_t root, int dirfd);

/*
 * Hook point @action with the descriptor @fd for the RPC client (CRIU sends
 * orphan-pts-master so; no action script runs for it). 0, -ENOTCONN when no
 * client can take a descriptor, or -errno (logged).
 */
int cr_notify_fd(const struct cr_options *o, const char *action, pid_t root, int fd);

#endif
