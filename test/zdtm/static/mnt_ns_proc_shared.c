// SPDX-License-Identifier: GPL-2.0
/*
 * A container's /proc as LXC mounts it, shared in the container's own mount
 * namespace: the test is the init of a pid namespace of its own
 * (test_init_ns(CLONE_NEWPID)), in a mount namespace of its own whose root
 * (a bind of "/", pivot_root'ed into) is shared, with a shared tmpfs, and a
 * proc of its pid namespace on /proc, shared, with under it: /proc/sys bound
 * on itself read-only (a peer group of its own), /proc/sys/net bound on
 * itself and made a slave of /proc's group, and a file of the tmpfs bound
 * over /proc/sys/kernel/random/boot_id (a peer of the tmpfs). The restored
 * root makes those mounts itself (a proc takes the pid namespace of its
 * maker) and sets their propagation after the others'. After the restore
 * the mountinfo is the same, field by field except the mount ids, the peer
 * group numbers (compared by which mounts share them, shared: and master:
 * alike) and the anonymous devices: no mount more (no copy propagated while
 * the root made them), the same groups, the slave's master /proc's; and
 * boot_id shows the tmpfs's file.
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

static int mnt(const char *src, const char *dst, const char *type, unsigned long flags,
	       const char *data)
{
	if (mount(src, dst, type, flags, data)) {
		fail("mount %s on %s (%#lx): %m", src ? src : "-", dst, flags);
		return neg_errno();
	}
	return 0;
}

static int setup(const char *work)
{
	char root[4096 + 16], dev[4096 + 32], t[4096 + 8], boot[4096 + 32];
	int fd;

	snprintf(root, sizeof(root), "%s/root", work);
	snprintf(dev, sizeof(dev), "%s/dev", root);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fail("cannot unshare a private mount namespace: %m");
		return neg_errno();
	}
	/* the root: a bind mount of "/" alone with /dev bound in (stdin is /dev/null) */
	if ((mkdir(root, 0755) && errno != EEXIST) || mount("/", root, NULL, MS_BIND, NULL) ||
	    mount("/dev", dev, NULL, MS_BIND, NULL) || chdir(root) ||
	    syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) || chdir("/")) {
		fail("cannot pivot_root into a bind mount of /: %m");
		return -EINVAL;
	}
	snprintf(t, sizeof(t), "%s/t", work);
	snprintf(boot, sizeof(boot), "%s/boot_id", t);
	if ((mkdir(t, 0755) && errno != EEXIST) || mnt(NULL, "/", NULL, MS_SHARED, NULL) ||
	    mnt("none", t, "tmpfs", 0, "size=1m")) /* shared: its parent is */
		return neg_errno();
	fd = open(boot, O_CREAT | O_WRONLY, 0644);
	if (fd < 0 || write(fd, "id\n", 3) != 3 || close(fd)) {
		fail("%s: %m", boot);
		return neg_errno();
	}
	/* the proc and its binds made while it is private, as separate groups after */
	if (mnt("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) ||
	    mnt(NULL, "/proc", NULL, MS_PRIVATE, NULL) ||
	    mnt("/proc/sys", "/proc/sys", NULL, MS_BIND, NULL) ||
	    mnt(NULL, "/proc/sys", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) ||
	    mnt("/proc/sys/net", "/proc/sys/net", NULL, MS_BIND, NULL) ||
	    mnt(boot, "/proc/sys/kernel/random/boot_id", NULL, MS_BIND, NULL) ||
	    mnt(NULL, "/proc/sys/kernel/random/boot_id", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
		NULL) ||
	    mnt(NULL, "/proc", NULL, MS_SHARED, NULL) ||
	    mnt(NULL, "/proc/sys", NULL, MS_SHARED, NULL))
		return neg_errno();
	/* /proc/sys/net: into /proc's group, then its slave */
	fd = open("/proc/sys/net", O_PATH | O_CLOEXEC);
	{
		int from = open("/proc", O_PATH | O_CLOEXEC);

		if (fd < 0 || from < 0 ||
		    syscall(SYS_move_mount, from, "", fd, "",
			    MOVE_MOUNT_SET_GROUP | MOVE_MOUNT_F_EMPTY_PATH |
				    MOVE_MOUNT_T_EMPTY_PATH)) {
			fail("cannot put /proc/sys/net in /proc's peer group: %m");
			return neg_errno();
		}
		close(from);
		close(fd);
	}
	return mnt(NULL, "/proc/sys/net", NULL, MS_SLAVE, NULL);
}

int main(int argc, char **argv)
{
	static struct test_mountinfo before, after;
	char work[4096], id[8] = "";
	int fd;

	test_init_ns(argc, argv, CLONE_NEWPID);
	if (getpid() != 1) {
		fail("not the init of a pid namespace (pid %d)", getpid());
		return 1;
	}
	if (!getcwd(work, sizeof(work) - 64)) {
		fail("getcwd: %m");
		return 1;
	}
	if (setup(work))
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
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY);
	if (fd < 0 || read(fd, id, sizeof(id) - 1) != 3 || strcmp(id, "id\n")) {
		fail("boot_id does not show the tmpfs's file (\"%s\")", id);
		return 1;
	}
	close(fd);
	pass();
	return 0;
}
