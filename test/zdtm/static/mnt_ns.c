// SPDX-License-Identifier: GPL-2.0
/*
 * The test's root in a mount namespace of its own, entered by pivot_root
 * into a bind mount of "/" (as a container's) with /dev bound in, and: a bind mount of a
 * directory and one of a file, a read-only bind mount, a nosuid,nodev,noexec
 * one, a shared mount and a slave of it, an unbindable one, a proc, an empty
 * tmpfs with options, and an overmount (a tmpfs on a tmpfs). After the
 * restore its mountinfo is the same, field by field except the mount ids,
 * the peer group numbers (compared by which mounts share them) and the
 * devices of the filesystems created again; the file bind mount shows its
 * file, the read-only one refuses a write, a mount under the shared mount
 * appears under its slave, and a child shares the namespace.
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
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static char work[4096];

static int mkpath(const char *name, bool dir)
{
	char p[8192];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", work, name);
	if (dir)
		return mkdir(p, 0755) && errno != EEXIST ? neg_errno() : 0;
	fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		return neg_errno();
	if (!strcmp(name, "file_src") && write(fd, "hello\n", 6) != 6)
		return neg_errno();
	return close(fd);
}

static int do_mount(const char *src, const char *dst, const char *type, unsigned long flags,
		    const char *data)
{
	char s[8192], d[8192];

	snprintf(s, sizeof(s), "%s/%s", work, src ? src : "");
	snprintf(d, sizeof(d), "%s/%s", work, dst);
	if (mount(src ? s : type, d, type, flags, data)) {
		fail("mount %s on %s: %m", src ? s : type, d);
		return neg_errno();
	}
	return 0;
}

static int setup(const char *newroot)
{
	static const char *const dirs[] = { "src", "dst", "ro",	 "nx",	"sh",
					    "sl",  "ub",  "tmp", "over" };
	char dev[4096 + 32];
	size_t i;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fail("cannot unshare a private mount namespace: %m");
		return neg_errno();
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mkpath(dirs[i], true)) {
			fail("mkdir %s/%s: %m", work, dirs[i]);
			return neg_errno();
		}
	if (mkpath("file_src", false) || mkpath("file_dst", false) || mkpath("src/a", false)) {
		fail("files in %s: %m", work);
		return neg_errno();
	}
	/* the new root: a bind mount of "/" alone, as a container's root is a mount */
	snprintf(dev, sizeof(dev), "%s/dev", newroot);
	/* with its /dev (devtmpfs: stdin is /dev/null) */
	if (mkdir(newroot, 0755) || mount("/", newroot, NULL, MS_BIND, NULL) ||
	    mount("/dev", dev, NULL, MS_BIND, NULL) || chdir(newroot) ||
	    syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) || chdir("/")) {
		fail("cannot pivot_root into a bind mount of /: %m");
		return neg_errno();
	}
	if (do_mount("src", "dst", NULL, MS_BIND, NULL) ||
	    do_mount("file_src", "file_dst", NULL, MS_BIND, NULL) ||
	    do_mount("src", "ro", NULL, MS_BIND, NULL) ||
	    do_mount(NULL, "ro", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) ||
	    do_mount("src", "nx", NULL, MS_BIND, NULL) ||
	    do_mount(NULL, "nx", NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		     NULL) ||
	    do_mount(NULL, "tmp", "tmpfs", MS_NOSUID, "size=1m,mode=750,uid=1,gid=2") ||
	    do_mount(NULL, "sh", "tmpfs", 0, "size=1m") ||
	    do_mount(NULL, "sh", NULL, MS_SHARED, NULL) ||
	    do_mount("sh", "sl", NULL, MS_BIND, NULL) ||
	    do_mount(NULL, "sl", NULL, MS_SLAVE, NULL) ||
	    do_mount("src", "ub", NULL, MS_BIND, NULL) ||
	    do_mount(NULL, "ub", NULL, MS_UNBINDABLE, NULL) ||
	    do_mount(NULL, "over", "tmpfs", 0, "size=2m") ||
	    do_mount(NULL, "over", "tmpfs", MS_NOEXEC, "size=3m"))
		return neg_errno();
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		fail("mount proc: %m");
		return neg_errno();
	}
	return 0;
}

static int check_contents(void)
{
	char p[8192], buf[16] = "";
	int fd, n;

	snprintf(p, sizeof(p), "%s/file_dst", work);
	fd = open(p, O_RDONLY);
	n = fd < 0 ? -1 : (int)read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n != 6 || strcmp(buf, "hello\n")) {
		fail("the file bind mount %s does not show its file (\"%s\")", p, buf);
		return -EINVAL;
	}
	snprintf(p, sizeof(p), "%s/ro/b", work);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0 || errno != EROFS) {
		fail("%s: a file created on the read-only bind mount (%m)", p);
		return -EINVAL;
	}
	snprintf(p, sizeof(p), "%s/dst/a", work);
	if (access(p, F_OK)) {
		fail("the bind mount %s/dst does not show src/a: %m", work);
		return neg_errno();
	}
	/* propagation: a mount under the shared one appears under its slave */
	snprintf(p, sizeof(p), "%s/sh/x", work);
	if (mkdir(p, 0755) || mount("none", p, "tmpfs", 0, "size=1m")) {
		fail("mount on %s: %m", p);
		return neg_errno();
	}
	snprintf(p, sizeof(p), "%s/sl/x", work);
	{
		struct stat a, b;
		char q[8192];

		snprintf(q, sizeof(q), "%s/sh/x", work);
		if (stat(p, &a) || stat(q, &b) || a.st_dev != b.st_dev) {
			fail("a mount under %s/sh does not propagate to %s/sl", work, work);
			return -EINVAL;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct test_mountinfo before, after;
	char newroot[4096 + 16];
	int pfd[2], status;
	pid_t child;
	char c;

	test_init(argc, argv);
	if (!getcwd(work, sizeof(work) - 64)) {
		fail("getcwd: %m");
		return 1;
	}
	snprintf(newroot, sizeof(newroot), "%s/root", work);
	strcat(work, "/m");
	if (mkdir(work, 0755) && errno != EEXIST) {
		fail("mkdir %s: %m", work);
		return 1;
	}
	if (setup(newroot))
		return 1;
	if (test_mountinfo_read(&before)) {
		fail("cannot read mountinfo");
		return 1;
	}
	if (pipe(pfd)) {
		fail("pipe: %m");
		return 1;
	}
	child = fork();
	if (child == 0) {
		char path[64];
		struct stat a, b;

		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1)
			_exit(2);
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", getppid());
		_exit(stat(path, &a) || stat("/proc/self/ns/mnt", &b) || a.st_ino != b.st_ino);
	}
	close(pfd[0]);
	test_daemon();
	test_waitsig();

	if (test_mountinfo_read(&after)) {
		fail("cannot read mountinfo after the restore");
		return 1;
	}
	if (test_mountinfo_same(&before, &after))
		return 1;
	if (check_contents())
		return 1;
	if (write(pfd[1], "x", 1) != 1 || waitpid(child, &status, 0) != child ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the child is not in the root's mount namespace (status %#x)", status);
		return 1;
	}
	pass();
	return 0;
}
