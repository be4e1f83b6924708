// SPDX-License-Identifier: GPL-2.0
/*
 * One open file description behind several fds (dup, dup2 to 200,
 * F_DUPFD_CLOEXEC to 100+) and behind a child process (inherited), plus a
 * second, separate open of the same file. After SIGTERM the fds must still
 * share one position (kcmp says the same file; a seek through one moves all,
 * also across the processes), the separate one keeps its own position, and
 * only the F_DUPFD_CLOEXEC fd has close-on-exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

#define FNAME "dup_shared_pos.data"

struct fds {
	int a, b, c, d, e;
};

static int same_file(pid_t p1, int fd1, pid_t p2, int fd2)
{
	long r = syscall(SYS_kcmp, p1, p2, KCMP_FILE, fd1, fd2);

	return r < 0 && errno == ENOSYS ? 1 : r == 0;
}

static int pos(int fd)
{
	return lseek(fd, 0, SEEK_CUR);
}

/* The child: wait for the parent's seek to 2000, seek to 3000 and say so. */
static int child(struct fds *f, int in, int out)
{
	char c;

	if (write(out, "r", 1) != 1)
		return 2;
	test_waitsig();
	if (read(in, &c, 1) != 1 || pos(f->a) != 2000 || pos(f->c) != 2000 || pos(f->e) != 50) {
		test_msg("child: positions %d %d %d, expected 2000 2000 50\n", pos(f->a), pos(f->c),
			 pos(f->e));
		return 1;
	}
	lseek(f->d, 3000, SEEK_SET);
	return write(out, "s", 1) == 1 ? 0 : 2;
}

static int check_parent(struct fds *f, pid_t kid)
{
	int all[] = { f->b, f->c, f->d };

	for (int i = 0; i < 3; i++)
		if (pos(all[i]) != 1000 || !same_file(getpid(), f->a, getpid(), all[i])) {
			fail("fd %d: position %d or another description than fd %d", all[i],
			     pos(all[i]), f->a);
			return 1;
		}
	if (pos(f->e) != 50 || same_file(getpid(), f->a, getpid(), f->e) == 1) {
		fail("the separate open (fd %d) is at %d or shares the description", f->e,
		     pos(f->e));
		return 1;
	}
	if (!same_file(getpid(), f->a, kid, f->b)) {
		fail("the child's fd %d is not the parent's description", f->b);
		return 1;
	}
	if (fcntl(f->a, F_GETFD) || fcntl(f->b, F_GETFD) || fcntl(f->d, F_GETFD) ||
	    fcntl(f->c, F_GETFD) != FD_CLOEXEC) {
		fail("close-on-exec flags changed");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int to_child[2], from_child[2];
	struct fds f;
	char c;
	pid_t kid;

	test_init(argc, argv);
	f.a = open(FNAME, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (f.a < 0 || ftruncate(f.a, 8192) || pipe(to_child) || pipe(from_child)) {
		fail("setup: %m");
		return 1;
	}
	f.b = dup(f.a);
	f.c = fcntl(f.a, F_DUPFD_CLOEXEC, 100);
	f.d = dup2(f.a, 200);
	f.e = open(FNAME, O_RDONLY);
	if (f.b < 0 || f.c < 100 || f.d != 200 || f.e < 0 || lseek(f.a, 1000, SEEK_SET) != 1000 ||
	    lseek(f.e, 50, SEEK_SET) != 50) {
		fail("dup: %m");
		return 1;
	}
	kid = fork();
	if (kid == 0)
		_exit(child(&f, to_child[0], from_child[1]));
	if (kid < 0 || test_wait_ready(from_child[0], 1)) {
		fail("the child did not start");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (check_parent(&f, kid))
		return 1;
	kill(kid, SIGTERM);
	lseek(f.b, 2000, SEEK_SET);
	if (write(to_child[1], "g", 1) != 1 || read(from_child[0], &c, 1) != 1 ||
	    pos(f.a) != 3000) {
		fail("the child's seek to 3000 is not seen: position %d", pos(f.a));
		return 1;
	}
	if (test_reap_children(&kid, 1)) {
		fail("the child saw other positions (see its message)");
		return 1;
	}
	pass();
	return 0;
}
