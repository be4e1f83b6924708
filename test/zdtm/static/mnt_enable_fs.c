// SPDX-License-Identifier: GPL-2.0
/*
 * --enable-fs (LXC gives hugetlbfs and tracefs): in a mount namespace of the
 * test's own (pivot_root into a bind of "/", a proc), a hugetlbfs with
 * options and a tracefs, each with its whole root mounted. The dump is given --enable-fs
 * hugetlbfs,tracefs (the .desc): without it both are refused. After the
 * restore the mountinfo is the same (the types, the options, mode=750 of the
 * hugetlbfs), and they are new, working filesystems: a file can be created
 * in the hugetlbfs, the tracefs shows its trace files.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

static int setup(const char *work, const char *hp, const char *tr)
{
	char root[4096 + 16], dev[4096 + 32];

	snprintf(root, sizeof(root), "%s/root", work);
	snprintf(dev, sizeof(dev), "%s/dev", root);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fail("cannot unshare a private mount namespace: %m");
		return neg_errno();
	}
	if ((mkdir(root, 0755) && errno != EEXIST) || mount("/", root, NULL, MS_BIND, NULL) ||
	    mount("/dev", dev, NULL, MS_BIND, NULL) || chdir(root) ||
	    syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) || chdir("/")) {
		fail("cannot pivot_root into a bind mount of /: %m");
		return -EINVAL;
	}
	if ((mkdir(hp, 0755) && errno != EEXIST) || (mkdir(tr, 0755) && errno != EEXIST)) {
		fail("mkdir: %m");
		return -EINVAL;
	}
	if (mount("none", hp, "hugetlbfs", MS_NOSUID | MS_NODEV, "mode=0750")) {
		fail("mount hugetlbfs on %s: %m", hp);
		return neg_errno();
	}
	if (mount("tracefs", tr, "tracefs", MS_NOEXEC, NULL)) {
		fail("mount tracefs on %s: %m", tr);
		return neg_errno();
	}
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		fail("mount proc: %m");
		return neg_errno();
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct test_mountinfo before, after;
	char work[4096], hp[4096 + 8], tr[4096 + 8], p[8192 + 16];
	struct stat st;
	int fd;

	test_init(argc, argv);
	if (!getcwd(work, sizeof(work) - 64)) {
		fail("getcwd: %m");
		return 1;
	}
	snprintf(hp, sizeof(hp), "%s/hp", work);
	snprintf(tr, sizeof(tr), "%s/tr", work);
	if (setup(work, hp, tr))
		return 1;
	if (test_mountinfo_read(&before)) {
		fail("cannot read mountinfo");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (test_mountinfo_read(&after)) {
		fail("cannot read mountinfo after the restore");
		return 1;
	}
	if (test_mountinfo_same(&before, &after))
		return 1;
	if (stat(hp, &st) || (st.st_mode & 07777) != 0750) {
		fail("the hugetlbfs root %s has mode %o, not 750", hp, st.st_mode & 07777);
		return 1;
	}
	snprintf(p, sizeof(p), "%s/f", hp);
	fd = open(p, O_CREAT | O_RDWR, 0600);
	if (fd < 0) {
		fail("cannot create a file in the restored hugetlbfs: %m");
		return 1;
	}
	close(fd);
	unlink(p);
	snprintf(p, sizeof(p), "%s/trace", tr);
	if (access(p, F_OK)) {
		fail("the restored tracefs has no %s: %m", p);
		return 1;
	}
	pass();
	return 0;
}
