// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
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

void tcp_set_liveness(int fd, unsigned int secs)
{
	int one = 1, idle = 1, cnt = (int)secs, ms = (int)secs * 1000;

	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
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

/*
 * The directories of @path missing here, created for a name that was
 * unlinked after bind() (its directory may have gone with it), their number
 * in *@ret_n: rmdir_made_parents() takes them away again after the bind.
 */
int mkdir_missing_parents(const char *path, unsigned int *ret_n)
{
	char buf[PATH_MAX], *cut[32];
	unsigned int n = 0;

	*ret_n = 0;
	snprintf(buf, sizeof(buf), "%s", path);
	/*
	 * Up from the name to the deepest directory that exists, cutting at
	 * each '/' (a relative path's first component has the cwd above it).
	 */
	for (;;) {
		char *slash = strrchr(buf, '/');

		if (slash == buf || n == ARRAY_SIZE(cut))
			return n == ARRAY_SIZE(cut) ? -ENAMETOOLONG : 0;
		if (!slash)
			break; /* buf: the first component, missing */
		*slash = '\0';
		cut[n++] = slash;
		if (!access(buf, F_OK)) {
			*cut[--n] = '/';
			break;
		}
	}
	/* then down again, making each missing one */
	while (n-- > 0) {
		if (mkdir(buf, 0700))
			return neg_errno();
		(*ret_n)++;
		*cut[n] = '/';
	}
	return 0;
}

int rmdir_made_parents(const char *path, unsigned int n)
{
	char buf[PATH_MAX];
	int err = 0;

	snprintf(buf, sizeof(buf), "%s", path);
	for (unsigned int i = 0; i < n; i++) {
		char *slash = strrchr(buf, '/');

		if (!slash)
			break;
		*slash = '\0';
		if (rmdir(buf) && !err)
			err = neg_errno();
	}
	return err;
}

int kcmp_pids(pid_t a, pid_t b, int type)
{
	long r = syscall(SYS_kcmp, a, b, type, 0, 0);

	return r < 0 ? neg_errno() : (int)r;
}

int kcmp_set_add(struct kcmp_set *s, pid_t pid, pid_t *same)
{
	unsigned int lo = 0, hi = s->nr;

	*same = 0;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		int r = kcmp_pids(pid, s->pids[mid], s->type);

		if (r < 0)
			return r;
		if (r == 0) {
			*same = s->pids[mid];
			return 0;
		}
		if (r == 1)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (s->nr == s->cap) {
		unsigned int cap = s->cap ? s->cap * 2 : 16;
		pid_t *p = realloc(s->pids, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->pids = p;
		s->cap = cap;
	}
	memmove(s->pids + lo + 1, s->pids + lo, (s->nr - lo) * sizeof(pid_t));
	s->pids[lo] = pid;
	s->nr++;
	return 0;
}
