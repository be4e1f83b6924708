/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_TMPFS_INT_H
#define CRIU_LIKE_NS_TMPFS_INT_H

/* What the two halves of the tmpfs library share (tmpfs.c: dump, tmpfs-restore.c). */
#include <limits.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/xattr.h>

#define TMPFS_BUF (1u << 20)
/* Beyond this, a file's record would near the image layer's limit on a record (64 MiB). */
#define TMPFS_MAX_EXTENTS (1u << 20)
#define TMPFS_XATTR_MAX 65536 /* XATTR_SIZE_MAX */

/* ---- extended attributes, for both halves ------------------------------------------------- */

/*
 * An inode whose xattrs are read or written: through its own fd (regular
 * files, directories), or by its name in a directory, through /proc (FIFOs,
 * device nodes, sockets and symbolic links cannot be opened for that).
 */
struct xnode {
	int fd;
	int dfd;
	const char *name;
	char proc[64 + NAME_MAX];
};

static inline void xnode_init(struct xnode *x, int fd, int dfd, const char *name)
{
	x->fd = fd;
	x->dfd = dfd;
	x->name = name;
	if (fd < 0)
		snprintf(x->proc, sizeof(x->proc), "/proc/self/fd/%d/%s", dfd, name);
}

static inline ssize_t xlist(const struct xnode *x, char *buf, size_t size)
{
	return x->fd >= 0 ? flistxattr(x->fd, buf, size) : llistxattr(x->proc, buf, size);
}

static inline ssize_t xget(const struct xnode *x, const char *name, void *buf, size_t size)
{
	return x->fd >= 0 ? fgetxattr(x->fd, name, buf, size) : lgetxattr(x->proc, name, buf, size);
}

static inline int xset(const struct xnode *x, const char *name, const void *val, size_t len)
{
	return x->fd >= 0 ? fsetxattr(x->fd, name, val, len, XATTR_CREATE)
			  : lsetxattr(x->proc, name, val, len, XATTR_CREATE);
}

#endif
