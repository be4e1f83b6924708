/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_UTIL_H
#define CRIU_LIKE_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define __unused __attribute__((unused))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define PAGE_SIZE 4096UL
#define PAGE_SHIFT 12
#define PAGE_MASK (~(PAGE_SIZE - 1))
#define PAGE_ALIGN(x) (((x) + PAGE_SIZE - 1) & PAGE_MASK)

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* Ownership helpers in the systemd style (STYLE.md). */
static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)

#define TAKE_PTR(p)                      \
	({                               \
		__typeof__(p) _p_ = (p); \
		(p) = NULL;              \
		_p_;                     \
	})

#define TAKE_FD(fd)              \
	({                       \
		int _fd_ = (fd); \
		(fd) = -1;       \
		_fd_;            \
	})

/* Return -errno for a failed libc call that set errno; never 0. */
static inline int neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* The value of hex digit @c, or -EINVAL. */
static inline int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -EINVAL;
}

/* Read a whole small file (/proc) into a NUL-terminated malloc'ed buffer. */
char *read_file_at(int dirfd, const char *path, size_t *ret_len);
/* Write all of @len bytes or fail with -errno. */
int write_all(int fd, const void *buf, size_t len);
/* Read exactly @len bytes; -ENODATA on a short read at end of file. */
int read_all(int fd, void *buf, size_t len);
/*
 * A TCP connection that notices a dead peer or a cut link within about
 * @secs seconds: keepalive probes every second once it is idle for one, and
 * TCP_USER_TIMEOUT, so that data or a probe unacknowledged for @secs ends
 * the connection (ETIMEDOUT) instead of the kernel's retries of ~15 minutes.
 * Best effort (a socket that is not TCP keeps its defaults).
 */
void tcp_set_liveness(int fd, unsigned int secs);
int parse_long(const char *s, long *ret);
int parse_ulong(const char *s, unsigned long *ret);

/*
 * The directories above @path that are missing, made (mode 0700), their
 * number in *@ret_n; rmdir_made_parents() removes them again, deepest first.
 * For a restore that must bind or create a name whose directory was removed.
 */
int mkdir_missing_parents(const char *path, unsigned int *ret_n);
int rmdir_made_parents(const char *path, unsigned int n); /* 0 or the first -errno */

/*
 * Processes by one kernel object of theirs (kcmp(2) type KCMP_FILES, KCMP_FS,
 * ...), kept in the order kcmp() gives and searched by bisection.
 */
struct kcmp_set {
	int type;
	pid_t *pids;
	unsigned int nr, cap;
};

/* @pid added to @s, or, when a process of @s has the same object, 0 with *@same set. */
int kcmp_set_add(struct kcmp_set *s, pid_t pid, pid_t *same);
/* kcmp(2) of one object of two processes: 0 same, 1 or 2 ordered, -errno */
int kcmp_pids(pid_t a, pid_t b, int type);

#endif
