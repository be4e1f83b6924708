// SPDX-License-Identifier: GPL-2.0
/*
 * Mount namespaces, the restore (mnt-build.c): the ptys a bind mount of the
 * tree names (runc's /dev/console: a bind of pts/N of the container's
 * devpts, N its terminal). The fresh devpts has none: the builder makes pty
 * N there by opening its ptmx until that index comes, binds it, and the
 * controller takes its master (ns_devpts_pty_take()) so that it lives on,
 * for the restore of the terminal (files/chr.c).
 */
#define LOG_PREFIX "ns: mnt: "

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "log.h"
#include "mnt.h"
#include "ns.h"
#include "util.h"

#define DEVPTS_PREMADE_MAX 8
#define DEVPTS_INDEX_MAX 64
static struct {
	unsigned int index;
	int fd;
} premade[DEVPTS_PREMADE_MAX];
static size_t n_premade;

int mnt_devpts_make_pty(int dfd, const char *name, const MntEntry *e)
{
	int extra[DEVPTS_INDEX_MAX], n = 0, err = 0, unlock = 0;
	unsigned long want;
	unsigned int got;
	char *end;

	errno = 0;
	want = strtoul(name, &end, 10);
	if (!*name || *end || errno || !faccessat(dfd, name, F_OK, 0) || errno != ENOENT)
		return 0;
	if (want >= DEVPTS_INDEX_MAX || n_premade == DEVPTS_PREMADE_MAX) {
		pr_err("mount %s: a bind of pty %lu, which cannot be made again here\n",
		       e->mountpoint, want);
		return -EOPNOTSUPP;
	}
	for (;;) {
		int fd = openat(dfd, "ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);

		if (fd < 0 || ioctl(fd, TIOCGPTN, &got)) {
			err = neg_errno();
			pr_perror("mount %s: cannot make pty %lu again", e->mountpoint, want);
			if (fd >= 0)
				close(fd);
			break;
		}
		if (got == want) {
			ioctl(fd, TIOCSPTLCK, &unlock);
			premade[n_premade].index = got;
			premade[n_premade++].fd = fd;
			pr_info("mount %s: pty %u made again for it\n", e->mountpoint, got);
			break;
		}
		if (got > want || n == DEVPTS_INDEX_MAX) {
			close(fd);
			pr_err("mount %s: pty %lu is taken in the new devpts\n", e->mountpoint,
			       want);
			err = -EBUSY;
			break;
		}
		extra[n++] = fd;
	}
	while (n)
		close(extra[--n]);
	return err;
}

int ns_devpts_pty_take(unsigned int index)
{
	size_t i;
	int fd;

	for (i = 0; i < n_premade; i++) {
		if (premade[i].index != index)
			continue;
		fd = premade[i].fd;
		premade[i] = premade[--n_premade];
		return fd;
	}
	return -ENOENT;
}

/* In the controller: the builder @b's masters, its fds told through @rd, taken as ours. */
int mnt_devpts_take_from(pid_t b, int rd)
{
	int pidfd, n = 0, i, err = 0;

	if (read(rd, &n, sizeof(n)) != sizeof(n) || n < 0 || n > DEVPTS_PREMADE_MAX)
		return -ECHILD;
	if (!n)
		return 0;
	pidfd = (int)syscall(__NR_pidfd_open, b, 0);
	if (pidfd < 0)
		return neg_errno();
	for (i = 0; i < n && !err; i++) {
		int pair[2], fd;

		if (read(rd, pair, sizeof(pair)) != sizeof(pair)) {
			err = -ECHILD;
			break;
		}
		fd = (int)syscall(__NR_pidfd_getfd, pidfd, pair[1], 0);
		if (fd < 0) {
			err = neg_errno();
			pr_perror("cannot take the master of pty %d from the mount builder",
				  pair[0]);
			break;
		}
		premade[n_premade].index = (unsigned int)pair[0];
		premade[n_premade++].fd = fd;
	}
	close(pidfd);
	return err;
}

/* In the builder: the ptys made for bind mounts to @wr, their count, then index and fd of each. */
int mnt_devpts_send(int wr)
{
	int k = (int)n_premade;
	size_t i;

	if (write(wr, &k, sizeof(k)) != sizeof(k))
		return -EIO;
	for (i = 0; i < n_premade; i++) {
		int pair[2] = { (int)premade[i].index, premade[i].fd };

		if (write(wr, pair, sizeof(pair)) != sizeof(pair))
			return -EIO;
	}
	return 0;
}
