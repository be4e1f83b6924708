/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the cgroup tests (cgroup_member.c, cgroup_threads.c, cgroup_ns.c): each test
 * makes its cgroups below its own ones in a few v1 hierarchies, lists them
 * in cgroups.list for the runner (runner/cgroups.c removes them after a
 * dump, so the restore makes them again, and at the end). A hierarchy is
 * reached at /sys/fs/cgroup/CTRL, or, in a container whose root has no
 * /sys/fs/cgroup, mounted for a moment in the test's directory (and
 * unmounted before the dump: a cgroup mount in a container is not dumped).
 */
#ifndef ZDTM_CGROUP_UTIL_H
#define ZDTM_CGROUP_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define CG_PATH 512

struct cg_fs {
	const char *ctrl;
	char dir[CG_PATH]; /* where the hierarchy is reached */
	bool mounted;
};

/* The cgroup of thread @tid (0: the process) in @ctrl, from /proc/self/task/TID/cgroup. */
static inline int cg_path_of(pid_t tid, const char *ctrl, char *buf, size_t size)
{
	char path[64], text[4096], *line, *save = NULL;

	snprintf(path, sizeof(path), tid ? "/proc/self/task/%d/cgroup" : "/proc/self/cgroup", tid);
	if (test_read_file(path, text, sizeof(text)) <= 0)
		return -EIO;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c2 = '\0';
		if (strcmp(c1 + 1, ctrl))
			continue;
		snprintf(buf, size, "%s", c2 + 1);
		return 0;
	}
	return -ENOENT;
}

/* Thread @tid (0: the process) is in cgroup @want of @ctrl: 0, or -EINVAL after fail(). */
static inline int cg_check_member(pid_t tid, const char *ctrl, const char *want)
{
	char got[CG_PATH];

	if (cg_path_of(tid, ctrl, got, sizeof(got))) {
		fail("thread %d: no %s line in its cgroup file", tid, ctrl);
		return -EINVAL;
	}
	if (strcmp(got, want)) {
		fail("thread %d: in %s:%s, not %s", tid, ctrl, got, want);
		return -EINVAL;
	}
	return 0;
}

static inline int cg_fs_open(struct cg_fs *fs, const char *ctrl)
{
	fs->ctrl = ctrl;
	fs->mounted = false;
	snprintf(fs->dir, sizeof(fs->dir), "/sys/fs/cgroup/%s", ctrl);
	if (!access(fs->dir, F_OK) && strlen(fs->dir) < sizeof(fs->dir) - 16) {
		char procs[CG_PATH + 16];

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", fs->dir);
		if (!access(procs, W_OK))
			return 0;
	}
	snprintf(fs->dir, sizeof(fs->dir), "cgfs-%s", ctrl);
	if (mkdir(fs->dir, 0700) && errno != EEXIST)
		return -errno;
	if (mount("cgroup", fs->dir, "cgroup", 0, ctrl))
		return -errno;
	fs->mounted = true;
	return 0;
}

static inline void cg_fs_close(struct cg_fs *fs)
{
	if (fs->mounted) {
		umount2(fs->dir, MNT_DETACH);
		rmdir(fs->dir);
		fs->mounted = false;
	}
}

/* Write @value into @file of cgroup @cg (a path in the hierarchy). */
static inline int cg_write(const struct cg_fs *fs, const char *cg, const char *file,
			   const char *value)
{
	char path[8192];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s%s/%s", fs->dir, cg, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static inline int cg_read(const struct cg_fs *fs, const char *cg, const char *file, char *buf,
			  size_t size)
{
	char path[8192];
	long n;

	snprintf(path, sizeof(path), "%s%s/%s", fs->dir, cg, file);
	n = test_read_file(path, buf, size);
	if (n < 0)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* mkdir cgroup @cg, listed for the runner to remove. */
static inline int cg_make(const struct cg_fs *fs, const char *cg)
{
	char path[8192];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", fs->dir, cg);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	f = fopen("cgroups.list", "ae");
	if (!f)
		return -errno;
	fprintf(f, "%s %s\n", fs->ctrl, cg);
	fclose(f);
	return 0;
}

#endif
