// SPDX-License-Identifier: GPL-2.0
/*
 * Open file description locks (F_OFD_SETLK, 3.15), dumped with --file-locks:
 * a write lock on [0, 4096) and a read lock from 8192 to the end of ofd.a,
 * taken through an fd that was then closed (the lock stays with the
 * description, kept by a dup). After SIGTERM another description cannot take
 * what conflicts, not even in the same process, nor can another process
 * take a POSIX lock there; F_OFD_GETLK reports the lock with pid -1.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static int setlk(int fd, int cmd, short type, off_t start, off_t len, struct flock *ret)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	int r = fcntl(fd, cmd, &fl);

	if (ret)
		*ret = fl;
	return r ? -errno : 0;
}

/* With a new description of ofd.a: 0 when the locks are as set up. */
static int probe(void)
{
	int fd = open("ofd.a", O_RDWR);
	struct flock fl;

	if (fd < 0)
		return 10;
	if (setlk(fd, F_OFD_GETLK, F_WRLCK, 10, 1, &fl) || fl.l_type != F_WRLCK || fl.l_pid != -1 ||
	    fl.l_start != 0 || fl.l_len != 4096)
		return 11;
	if (setlk(fd, F_OFD_SETLK, F_WRLCK, 100, 100, NULL) != -EAGAIN)
		return 12;
	if (setlk(fd, F_OFD_SETLK, F_WRLCK, 4096, 4096, NULL))
		return 13; /* the gap */
	if (setlk(fd, F_OFD_SETLK, F_RDLCK, 9000, 100, NULL))
		return 14; /* read locks share */
	if (setlk(fd, F_OFD_SETLK, F_WRLCK, 1 << 20, 1, NULL) != -EAGAIN)
		return 15;
	close(fd);
	return 0;
}

/* In another process: the probe, and a POSIX lock where the OFD lock is. */
static int run_probe(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int fd = open("ofd.a", O_RDWR), r = probe();

		if (!r && (fd < 0 || setlk(fd, F_SETLK, F_WRLCK, 0, 1, NULL) != -EAGAIN))
			r = 16;
		_exit(r);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return neg_errno();
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	int a, keep, r;

	test_init(argc, argv);
	a = open("ofd.a", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (a < 0 || setlk(a, F_OFD_SETLK, F_WRLCK, 0, 4096, NULL) ||
	    setlk(a, F_OFD_SETLK, F_RDLCK, 8192, 0, NULL)) {
		fail("cannot set up the locks: %m");
		return 1;
	}
	keep = dup(a);
	if (keep < 0 || close(a)) {
		fail("dup: %m");
		return 1;
	}
	r = run_probe();
	if (r) {
		fail("the locks are not as set up before the dump (probe %d)", r);
		return 1;
	}
	test_daemon();
	test_waitsig();

	r = run_probe();
	if (r) {
		fail("the locks did not survive (probe %d: see probe())", r);
		return 1;
	}
	/* OFD locks of different descriptions conflict within one process too. */
	r = probe();
	if (r) {
		fail("in the restored process itself, probe %d", r);
		return 1;
	}
	unlink("ofd.a");
	pass();
	return 0;
}
