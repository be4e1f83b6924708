// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

char *read_file_at(int dirfd, const char *path, size_t *ret_len)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t size = 4096, len = 0;

	if (fd < 0)
		return NULL;
	buf = malloc(size);
	if (!buf)
		return NULL;
	for (;;) {
		ssize_t n;

		if (len + 1 >= size) {
			char *nbuf = realloc(buf, size * 2);

			if (!nbuf)
				return NULL;
			buf = nbuf;
			size *= 2;
		}
		n = read(fd, buf + len, size - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	if (ret_len)
		*ret_len = len;
	return TAKE_PTR(buf);
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENODATA;
		p += n;
		len -= n;
	}
	return 0;
}

int parse_long(const char *s, long *ret)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_ulong(const char *s, unsigned long *ret)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*ret = v;
	return 0;
}
