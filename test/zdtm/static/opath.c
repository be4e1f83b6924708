// SPDX-License-Identifier: GPL-2.0
/*
 * O_PATH descriptors: of a regular file, of a directory (used as a dirfd
 * afterwards), of a symlink itself (O_PATH | O_NOFOLLOW: fstat says it is a
 * link, readlinkat() through it with an empty path gives the target), of a
 * FIFO (never opened for data) and of a unix socket file. After SIGTERM each
 * must still be O_PATH (fcntl flags), of the same inode, and work as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR 5

static const char *names[NR] = { "opath.file", "opath.dir", "opath.link", "opath.fifo",
				 "opath.sock" };

int main(int argc, char **argv)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat before[NR], st;
	int fd[NR], sk, i;
	char buf[64];
	ssize_t n;

	test_init(argc, argv);
	sk = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", names[4]);
	unlink(names[4]);
	if (sk < 0 || bind(sk, (struct sockaddr *)&sun, sizeof(sun)) || close(sk) ||
	    mkdir(names[1], 0755) || symlink("opath.file", names[2]) || mkfifo(names[3], 0600)) {
		fail("setup: %m");
		return 1;
	}
	i = open(names[0], O_CREAT | O_WRONLY, 0640);
	if (i < 0 || write(i, "data", 4) != 4 || close(i)) {
		fail("setup: %m");
		return 1;
	}
	for (i = 0; i < NR; i++) {
		fd[i] = open(names[i], O_PATH | (i == 2 ? O_NOFOLLOW : 0));
		if (fd[i] < 0 || fstat(fd[i], &before[i])) {
			fail("open(%s, O_PATH): %m", names[i]);
			return 1;
		}
	}
	test_daemon();
	test_waitsig();

	for (i = 0; i < NR; i++) {
		int fl = fcntl(fd[i], F_GETFL);

		if (fl < 0 || !(fl & O_PATH) || fstat(fd[i], &st) ||
		    st.st_ino != before[i].st_ino || st.st_dev != before[i].st_dev ||
		    (st.st_mode & S_IFMT) != (before[i].st_mode & S_IFMT)) {
			fail("%s: flags %#x, inode %lu mode %o, expected O_PATH, %lu %o", names[i],
			     fl, (unsigned long)st.st_ino, st.st_mode,
			     (unsigned long)before[i].st_ino, before[i].st_mode);
			return 1;
		}
	}
	/* the symlink itself: its target read through the fd */
	n = readlinkat(fd[2], "", buf, sizeof(buf));
	if (n != 10 || memcmp(buf, "opath.file", 10)) {
		fail("readlinkat through the O_PATH fd of the symlink: %zd", n);
		return 1;
	}
	/* the directory as a dirfd */
	i = openat(fd[1], ".", O_RDONLY | O_DIRECTORY);
	if (i < 0 || fstatat(fd[1], "", &st, AT_EMPTY_PATH) || !S_ISDIR(st.st_mode)) {
		fail("the O_PATH directory as a dirfd: %m");
		return 1;
	}
	/* the file reopened for reading through /proc/self/fd */
	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", fd[0]);
	i = open(buf, O_RDONLY);
	if (i < 0 || read(i, buf, 4) != 4 || memcmp(buf, "data", 4)) {
		fail("the O_PATH file reopened: %m");
		return 1;
	}
	pass();
	return 0;
}
