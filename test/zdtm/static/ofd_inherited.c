// SPDX-License-Identifier: GPL-2.0
/*
 * Locks held only through a child's inherited description: the root takes
 * an OFD write lock on one file and an exclusive flock() on another, forks
 * a child, and closes its own fds: the child's copies of the descriptions
 * alone hold the locks. After the restore a new description of each file
 * (the root's) conflicts with them (F_OFD_GETLK reports the lock, flock()
 * would block); once the child exits both are free.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define OFD_FILE "ofd_inherited.ofd"
#define FLOCK_FILE "ofd_inherited.flock"

static int ofd_conflict(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 10, .l_len = 5 };
	int fd = open(OFD_FILE, O_RDWR), r;

	if (fd < 0 || fcntl(fd, F_OFD_GETLK, &fl)) {
		fail("F_OFD_GETLK: %m");
		return neg_errno();
	}
	r = fl.l_type == F_WRLCK && fl.l_start == 0 && fl.l_len == 100 && fl.l_pid == -1;
	if (fl.l_type != F_UNLCK && !r) {
		fail("F_OFD_GETLK: type %d %ld+%ld pid %d, not a write lock 0+100", fl.l_type,
		     (long)fl.l_start, (long)fl.l_len, fl.l_pid);
		r = -1;
	}
	close(fd);
	return r;
}

static int flock_conflict(void)
{
	int fd = open(FLOCK_FILE, O_RDWR), r;

	if (fd < 0) {
		fail("open: %m");
		return neg_errno();
	}
	r = flock(fd, LOCK_EX | LOCK_NB);
	if (r && errno != EWOULDBLOCK) {
		fail("flock: %m");
		r = -1;
	} else {
		r = r != 0;
	}
	close(fd);
	return r;
}

int main(int argc, char **argv)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100 };
	int ofd, fl_fd, ready[2];
	pid_t kid;

	test_init(argc, argv);
	ofd = open(OFD_FILE, O_RDWR | O_CREAT | O_TRUNC, 0644);
	fl_fd = open(FLOCK_FILE, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (ofd < 0 || fl_fd < 0 || fcntl(ofd, F_OFD_SETLK, &fl) || flock(fl_fd, LOCK_EX) ||
	    pipe(ready)) {
		fail("setup: %m");
		return 1;
	}
	kid = fork();
	if (kid < 0) {
		fail("fork: %m");
		return 1;
	}
	if (kid == 0) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_BLOCK, &set, NULL);
		if (write(ready[1], "R", 1) != 1)
			_exit(1);
		sigwait(&set, &sig);
		_exit(0);
	}
	/* the child's copies hold the locks from now on */
	close(ofd);
	close(fl_fd);
	if (test_wait_ready(ready[0], 1))
		return 1;
	if (ofd_conflict() != 1 || flock_conflict() != 1) {
		fail("the locks are not held through the child before the dump");
		return 1;
	}
	test_daemon();
	test_waitsig();
	if (ofd_conflict() != 1) {
		fail("the OFD lock held through the child is gone after the restore");
		return 1;
	}
	if (flock_conflict() != 1) {
		fail("the flock() held through the child is gone after the restore");
		return 1;
	}
	if (test_reap_children(&kid, 1))
		return 1;
	if (ofd_conflict() != 0 || flock_conflict() != 0) {
		fail("the locks outlive the child that held them");
		return 1;
	}
	pass();
	return 0;
}
