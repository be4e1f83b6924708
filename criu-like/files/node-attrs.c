// SPDX-License-Identifier: GPL-2.0
/*
 * Times and extended attributes of the nodes the restore makes again: see
 * node-attrs.h. The kernel allows user.* attributes on regular files and
 * directories only, so a socket file, FIFO or device node can hold trusted.*
 * ones alone (set by root): both are saved, whatever the node.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "log.h"
#include "node-attrs.h"
#include "util.h"

#define NODE_XATTRS_MAX (1u << 20) /* the whole blob: more is refused */

static bool xattr_saved(const char *name)
{
	return !strncmp(name, "user.", 5) || !strncmp(name, "trusted.", 8);
}

static ssize_t list_of(const char *path, bool follow, char *buf, size_t size)
{
	return follow ? listxattr(path, buf, size) : llistxattr(path, buf, size);
}

static ssize_t value_of(const char *path, bool follow, const char *name, void *buf, size_t size)
{
	return follow ? getxattr(path, name, buf, size) : lgetxattr(path, name, buf, size);
}

/* One name and its value appended to @b (@cap bytes, *@len used). */
static int blob_add(const char *path, bool follow, const char *name, uint8_t *b, size_t cap,
		    size_t *len)
{
	size_t nl = strlen(name) + 1;
	ssize_t v;
	uint32_t vl;

	if (*len + nl + 4 > cap)
		return -E2BIG;
	v = value_of(path, follow, name, b + *len + nl + 4, cap - *len - nl - 4);
	if (v < 0)
		return errno == ERANGE ? -E2BIG : neg_errno();
	memcpy(b + *len, name, nl);
	vl = (uint32_t)v;
	b[*len + nl] = (uint8_t)vl;
	b[*len + nl + 1] = (uint8_t)(vl >> 8);
	b[*len + nl + 2] = (uint8_t)(vl >> 16);
	b[*len + nl + 3] = (uint8_t)(vl >> 24);
	*len += nl + 4 + (size_t)v;
	return 0;
}

/* The saved attributes among @names (@n bytes of NUL-terminated names) into @b. */
static int fill_blob(const char *path, bool follow, const char *names, size_t n, uint8_t *b,
		     size_t *len)
{
	size_t off;
	int err;

	for (off = 0; off < n; off += strlen(names + off) + 1) {
		if (!xattr_saved(names + off))
			continue;
		err = blob_add(path, follow, names + off, b, NODE_XATTRS_MAX, len);
		if (err == -ENODATA)
			continue; /* removed meanwhile */
		if (err)
			return err;
	}
	return 0;
}

/* The buffers are freed by hand, not with a cleanup attribute cppcheck cannot follow. */
int node_xattrs_dump(const char *path, bool follow, ProtobufCBinaryData *ret)
{
	char *names;
	uint8_t *b;
	size_t len = 0;
	ssize_t n;
	int err;

	ret->data = NULL;
	ret->len = 0;
	n = list_of(path, follow, NULL, 0);
	if (n <= 0)
		return n < 0 && errno != ENOTSUP ? neg_errno() : 0;
	names = malloc((size_t)n + 1);
	b = malloc(NODE_XATTRS_MAX);
	err = names && b ? 0 : -ENOMEM;
	if (!err) {
		n = list_of(path, follow, names, (size_t)n);
		if (n < 0)
			err = errno == ERANGE ? -EAGAIN : neg_errno();
	}
	if (!err) {
		names[n] = '\0';
		err = fill_blob(path, follow, names, (size_t)n, b, &len);
	}
	free(names);
	if (err || !len) {
		free(b);
		return err;
	}
	ret->data = b;
	ret->len = len;
	return 0;
}

static int set_one(int fd, const char *path, bool follow, const char *name, const uint8_t *v,
		   size_t vl)
{
	int r;

	if (!path)
		r = fsetxattr(fd, name, v, vl, 0);
	else if (follow)
		r = setxattr(path, name, v, vl, 0);
	else
		r = lsetxattr(path, name, v, vl, 0);
	return r ? neg_errno() : 0;
}

static int set_xattrs(int fd, const char *path, bool follow, const ProtobufCBinaryData *x,
		      const char *what)
{
	size_t off = 0;

	while (x && off < x->len) {
		const char *name = (const char *)x->data + off;
		const uint8_t *end = memchr(x->data + off, 0, x->len - off);
		size_t at;
		uint32_t vl;
		int err;

		if (!end || (size_t)(end - x->data) + 5 > x->len) {
			pr_err("%s: a bad extended attributes record at %zu\n", what, off);
			return -EINVAL;
		}
		at = (size_t)(end - x->data) + 1;
		vl = (uint32_t)x->data[at] | (uint32_t)x->data[at + 1] << 8 |
		     (uint32_t)x->data[at + 2] << 16 | (uint32_t)x->data[at + 3] << 24;
		if (vl > x->len - at - 4) {
			pr_err("%s: a bad extended attributes record at %zu\n", what, off);
			return -EINVAL;
		}
		err = set_one(fd, path, follow, name, x->data + at + 4, vl);
		if (err) {
			pr_errno(err, "%s: cannot set its extended attribute %s", what, name);
			return err;
		}
		off = at + 4 + vl;
	}
	return 0;
}

int node_attrs_set(int fd, const char *path, bool follow, const struct node_attrs *a,
		   const char *what)
{
	struct timespec ts[2];
	int err = set_xattrs(fd, path, follow, a->xattrs, what), r;

	if (err || !a->has_times)
		return err;
	ts[0].tv_sec = (time_t)(a->atime_ns / 1000000000ULL);
	ts[0].tv_nsec = (long)(a->atime_ns % 1000000000ULL);
	ts[1].tv_sec = (time_t)(a->mtime_ns / 1000000000ULL);
	ts[1].tv_nsec = (long)(a->mtime_ns % 1000000000ULL);
	if (path)
		r = utimensat(AT_FDCWD, path, ts, follow ? 0 : AT_SYMLINK_NOFOLLOW);
	else
		r = futimens(fd, ts);
	if (r) {
		pr_perror("%s: cannot set its times", what);
		return neg_errno();
	}
	return 0;
}

void dir_times_save(struct dir_times *t, const char *name)
{
	char *copy = strdup(name);
	struct stat st;

	t->ok = false;
	t->dir = copy ? strdup(dirname(copy)) : NULL;
	free(copy);
	if (!t->dir || stat(t->dir, &st))
		return;
	t->ts[0] = st.st_atim;
	t->ts[1] = st.st_mtim;
	t->ok = true;
}

void dir_times_put_back(struct dir_times *t)
{
	if (t->ok && utimensat(AT_FDCWD, t->dir, t->ts, 0))
		pr_warn("cannot set the times of %s again: %s\n", t->dir, strerror(errno));
	free(t->dir);
	t->dir = NULL;
}
