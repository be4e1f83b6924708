// SPDX-License-Identifier: GPL-2.0
/*
 * A cgroup mount in a cgroup namespace, as a container has: the test makes
 * zdtm.cgroup_mount.PID (with a memory limit) and its child "inner" below
 * its own memory cgroup, enters it, unshares a cgroup namespace there, then
 * a mount namespace (pivot_root into a bind of "/" with /dev and a proc, as
 * mnt_ns), and mounts
 * the memory hierarchy (v1) and cgroup2 in it: the memory mount's root is
 * the namespace's root, its cgroup. The runner removes the cgroups after
 * the dump. After SIGTERM both mounts are there with the same root,
 * filesystem and options as seen inside, and the memory mount shows that
 * cgroup: its limit and "inner".
 */
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "cgroup-util.h"

#define LIMIT "134217728"

static char work[4096];
static char base[CG_PATH], inner[CG_PATH * 2];

/* The mountinfo fields after the mount id, parent and device of the mount at @dir. */
static int mount_line(const char *dir, char *buf, size_t size)
{
	char text[16384], want[4200], *line, *save = NULL;

	snprintf(want, sizeof(want), " %s/%s ", work, dir);
	if (test_read_file("/proc/self/mountinfo", text, sizeof(text)) <= 0)
		return neg_errno();
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, want), *f = line;
		int i;

		if (!p)
			continue;
		for (i = 0; i < 3 && f; i++) {
			f = strchr(f, ' ');
			if (f)
				f++;
		}
		if (!f)
			return -EBADMSG;
		/* root, mount point, options; the optional fields (peer groups) left out */
		snprintf(buf, size, "%.*s", (int)strcspn(f, " "), f);
		snprintf(buf + strlen(buf), size - strlen(buf), " %s", strstr(f, " - "));
		return 0;
	}
	return -ENOENT; /* no such mount */
}

static int setup(void)
{
	char own[CG_PATH - 64], newroot[4200], dev[4300];
	struct cg_fs fs;

	if (cg_path_of(0, "memory", own, sizeof(own)) || cg_fs_open(&fs, "memory")) {
		fail("no memory hierarchy: %m");
		return neg_errno();
	}
	snprintf(base, sizeof(base), "%s/zdtm.cgroup_mount.%d", strcmp(own, "/") ? own : "",
		 getpid());
	snprintf(inner, sizeof(inner), "%s/inner", base);
	if (cg_make(&fs, base) || cg_make(&fs, inner) ||
	    cg_write(&fs, base, "memory.limit_in_bytes", LIMIT) ||
	    cg_write(&fs, base, "cgroup.procs", "0")) {
		fail("cannot make or enter memory:%s: %m", base);
		return neg_errno();
	}
	cg_fs_close(&fs);
	if (unshare(CLONE_NEWCGROUP) || unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fail("cannot unshare cgroup and mount namespaces: %m");
		return neg_errno();
	}
	snprintf(newroot, sizeof(newroot), "%s/newroot", work);
	snprintf(dev, sizeof(dev), "%s/dev", newroot);
	if (mkdir(newroot, 0755) || mount("/", newroot, NULL, MS_BIND, NULL) ||
	    mount("/dev", dev, NULL, MS_BIND, NULL) || chdir(newroot) ||
	    syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) || chdir(work) ||
	    mount("proc", "/proc", "proc", 0, NULL)) {
		fail("cannot pivot_root into a bind mount of /: %m");
		return neg_errno();
	}
	if (mkdir("cgmem", 0755) || mkdir("cg2", 0755) ||
	    mount("cgroup", "cgmem", "cgroup", 0, "memory") ||
	    mount("cgroup2", "cg2", "cgroup2", 0, NULL)) {
		fail("cannot mount the cgroup file systems: %m");
		return neg_errno();
	}
	return 0;
}

static int check_cgroup(const char *when)
{
	char buf[64];

	if (test_read_file("cgmem/memory.limit_in_bytes", buf, sizeof(buf)) <= 0 ||
	    strncmp(buf, LIMIT "\n", sizeof(LIMIT))) {
		fail("%s: the memory mount's root has limit '%s', not " LIMIT, when, buf);
		return -EINVAL;
	}
	if (access("cgmem/inner/cgroup.procs", F_OK) || access("cg2/cgroup.procs", F_OK)) {
		fail("%s: the memory mount shows no inner, or cgroup2 is not mounted: %m", when);
		return neg_errno();
	}
	if (cg_path_of(0, "memory", buf, sizeof(buf)) || strcmp(buf, "/")) {
		fail("%s: in memory:%s inside the cgroup namespace, not /", when, buf);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char mem_before[1024], v2_before[1024], now[1024];

	test_init(argc, argv);
	if (!getcwd(work, sizeof(work)) || setup() || check_cgroup("before the dump"))
		return 1;
	if (mount_line("cgmem", mem_before, sizeof(mem_before)) ||
	    mount_line("cg2", v2_before, sizeof(v2_before))) {
		fail("the cgroup mounts are not in mountinfo");
		return 1;
	}
	test_msg("memory: %s\ncgroup2: %s\n", mem_before, v2_before);

	test_daemon();
	test_waitsig();

	if (check_cgroup("after the restore"))
		return 1;
	if (mount_line("cgmem", now, sizeof(now)) || strcmp(now, mem_before)) {
		fail("the memory mount reads '%s', not '%s'", now, mem_before);
		return 1;
	}
	if (mount_line("cg2", now, sizeof(now)) || strcmp(now, v2_before)) {
		fail("the cgroup2 mount reads '%s', not '%s'", now, v2_before);
		return 1;
	}
	pass();
	return 0;
}
