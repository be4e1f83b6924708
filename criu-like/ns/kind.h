/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_KIND_H
#define CRIU_LIKE_NS_KIND_H

/*
 * One kind of namespace that a tree may have of its own (a container's) and
 * that criu-like dumps and restores: its file holds both halves (uts.c),
 * its row is in ns.c's table. Documentation/namespaces.md, "Adding a kind".
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "image-desc.h"
#include "ns.h"

struct ns_type {
	enum ns_kind kind;
	unsigned long clone_flag; /* CLONE_NEWUTS...: the restored root is created in a new one */
	/*
	 * With a user namespace of the tree's own, load() makes the namespace in it
	 * (ns_user_make()) and enter() puts the controller there: no clone flag.
	 */
	bool user_enters;
	/* Dump, in the dumper: read the namespace of the frozen task @pid, write image @id. */
	int (*dump)(pid_t pid, int dirfd, uint32_t id);
	/* Restore, in the controller before the root exists: read image @id into *@priv. */
	int (*load)(int dirfd, uint32_t id, void **priv);
	/*
	 * In the controller, right before the root's clone3(), for a namespace that
	 * must be set up before anyone enters it (time offsets): the root is born in
	 * the namespace the controller's children go to. after_clone() puts the
	 * controller back, whether the clone worked or not.
	 */
	int (*before_clone)(const void *priv);
	void (*after_clone)(const void *priv);
	/*
	 * In the restored root, inside its new namespace, before it forks anything;
	 * @dirfd: the image directory now (the controller moved it since load()).
	 */
	int (*restore)(const void *priv, int dirfd);
	/* In the controller once every task waits at the barrier (@root: its pid), optional. */
	int (*late)(const void *priv, int dirfd, pid_t root);
	void (*fini)(void *priv);
	/*
	 * Optional, a namespace the caller owns (--external KIND[INO]:KEY): at dump,
	 * in the dumper, instead of dump() (nothing is read or written); at restore,
	 * instead of load(): join @fd (the caller's, kept open by the caller).
	 */
	int (*dump_external)(pid_t pid);
	int (*join)(int fd, void **priv);
	/*
	 * In the controller, optional: enter the namespace made by load() before the
	 * tree's files are opened (their paths are the container's), leave it once the
	 * root is forked (it inherits it: then clone_flag is 0).
	 */
	int (*enter)(void *priv);
	void (*leave)(void *priv);
};

extern const struct ns_type uts_ns_type;
extern const struct ns_type time_ns_type;
extern const struct ns_type ipc_ns_type;
extern const struct ns_type mnt_ns_type;
extern const struct ns_type pid_ns_type;
extern const struct ns_type net_ns_type;
extern const struct ns_type user_ns_type;

/*
 * Run @fn in a child of the dumper that joined @pid's namespace of kind @k
 * (setns), with a buffer of @size bytes shared with the caller: its content
 * is copied to @buf when @fn returns 0. The result of @fn, or -errno of the
 * fork or the setns (logged).
 */
int ns_call_in(pid_t pid, enum ns_kind k, int (*fn)(void *buf, size_t size), void *buf,
	       size_t size);

#endif
