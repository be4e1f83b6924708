/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_NODE_ATTRS_H
#define CRIU_LIKE_FILES_NODE_ATTRS_H

/*
 * The times and extended attributes of a file system node that the restore
 * makes again (a unix socket's file, a removed FIFO or device node, a pty
 * slave), and the times of the directory it makes an entry in
 * (Documentation/files.md, "Nodes made again").
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include <protobuf-c/protobuf-c.h>

static inline uint64_t node_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ULL + (uint64_t)t->tv_nsec;
}

/*
 * The user.* and trusted.* extended attributes of @path (its last component
 * followed when @follow) into *@ret, malloc'ed (len 0, data NULL: none), as
 * a run of: the name, NUL-terminated; the value's length, 4 bytes, little
 * endian; the value. security.* and system.* are the kernel's and the LSM's.
 */
int node_xattrs_dump(const char *path, bool follow, ProtobufCBinaryData *ret);

/* What node_attrs_set() puts on a node: times when has_times, then the xattrs blob. */
struct node_attrs {
	bool has_times;
	uint64_t atime_ns, mtime_ns;
	const ProtobufCBinaryData *xattrs; /* NULL or empty: none */
};

/*
 * @a on the node: through @fd when @path is NULL, else @path (its last
 * component followed when @follow). The xattrs first, the times last: every
 * change before moves the ctime, a set of xattrs may move the mtime on some
 * file systems. @what names the node in errors.
 */
int node_attrs_set(int fd, const char *path, bool follow, const struct node_attrs *a,
		   const char *what);

/*
 * The times of the directory @name is made (and maybe removed) in, read
 * before and set again after: a name made or removed changes its mtime.
 */
struct dir_times {
	char *dir;
	struct timespec ts[2];
	bool ok;
};

void dir_times_save(struct dir_times *t, const char *name);
void dir_times_put_back(struct dir_times *t);

#endif
