// SPDX-License-Identifier: GPL-2.0
/*
 * Children whose inherited fds changed after the fork: the dump takes the
 * link and stat of an fd that is the same open file as its parent's of that
 * number from the parent's (files/fd-seen.c), and must still read each
 * child's own close-on-exec bit, and see a number that now holds another
 * file. The root holds two files at 40 (no close-on-exec) and 41
 * (close-on-exec) and /dev/null at 42. Child 0 keeps them, child 1 flips
 * both close-on-exec bits, child 2 has a third file dup2()ed onto 40, child
 * 3 /dev/zero opened at 42. After SIGTERM every process checks, for each of
 * the three numbers, the inode and F_GETFD it had before the dump.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR_CHILDREN 4
#define NR_FDS 3

static const int fds[NR_FDS] = { 40, 41, 42 };

struct fd_state {
	ino_t ino[NR_FDS];
	dev_t dev[NR_FDS];
	int fdflags[NR_FDS];
};

static int record(struct fd_state *s)
{
	for (int i = 0; i < NR_FDS; i++) {
		struct stat st;

		if (fstat(fds[i], &st))
			return -errno;
		s->ino[i] = st.st_ino;
		s->dev[i] = st.st_dev;
		s->fdflags[i] = fcntl(fds[i], F_GETFD);
		if (s->fdflags[i] < 0)
			return -errno;
	}
	return 0;
}

/* 0 when every fd is as recorded in @want, else 1 (told with test_msg). */
static int check(const char *who, const struct fd_state *want)
{
	struct fd_state got;

	if (record(&got)) {
		test_msg("%s: cannot read its fds: %m\n", who);
		return 1;
	}
	for (int i = 0; i < NR_FDS; i++)
		if (got.ino[i] != want->ino[i] || got.dev[i] != want->dev[i] ||
		    got.fdflags[i] != want->fdflags[i]) {
			test_msg("%s: fd %d: inode %lu flags %d, expected inode %lu flags %d\n",
				 who, fds[i], (unsigned long)got.ino[i], got.fdflags[i],
				 (unsigned long)want->ino[i], want->fdflags[i]);
			return 1;
		}
	return 0;
}

/* Child @i's change to what it inherited. */
static int change(int i)
{
	int fd;

	switch (i) {
	case 1:
		if (fcntl(40, F_SETFD, FD_CLOEXEC) || fcntl(41, F_SETFD, 0))
			return -errno;
		return 0;
	case 2:
		fd = open("fd_inherit_flags.c2", O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 40) != 40)
			return -errno;
		close(fd);
		return 0;
	case 3:
		close(42);
		fd = open("/dev/zero", O_RDONLY);
		if (fd < 0 || (fd != 42 && dup2(fd, 42) != 42))
			return -errno;
		if (fd != 42)
			close(fd);
		return 0;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int ready[2], a, b, null;
	pid_t pids[NR_CHILDREN];
	struct fd_state root;
	int bad;

	test_init(argc, argv);
	null = open("/dev/null", O_RDWR);
	a = open("fd_inherit_flags.a", O_RDWR | O_CREAT | O_TRUNC, 0644);
	b = open("fd_inherit_flags.b", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (pipe(ready) || null < 0 || a < 0 || b < 0 || dup2(a, 40) != 40 ||
	    dup3(b, 41, O_CLOEXEC) != 41 || dup2(null, 42) != 42) {
		fail("cannot set the fds up: %m");
		return 1;
	}
	close(a);
	close(b);
	close(null);
	for (int i = 0; i < NR_CHILDREN; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			fail("fork: %m");
			return 1;
		}
		if (pids[i] == 0) {
			struct fd_state mine;
			char who[16];

			close(ready[0]);
			if (change(i) || record(&mine) || write(ready[1], "r", 1) != 1)
				_exit(2);
			close(ready[1]);
			test_waitsig();
			snprintf(who, sizeof(who), "child %d", i);
			_exit(check(who, &mine));
		}
	}
	close(ready[1]);
	if (test_wait_ready(ready[0], NR_CHILDREN) || record(&root)) {
		fail("the children did not become ready: %m");
		return 1;
	}
	close(ready[0]);
	test_daemon();
	test_waitsig();

	bad = check("root", &root);
	bad |= test_reap_children(pids, NR_CHILDREN) != 0;
	if (bad) {
		fail("an fd changed (see the messages above)");
		return 1;
	}
	pass();
	return 0;
}
