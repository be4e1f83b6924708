// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup freezer, both versions. v1: write FROZEN to freezer.state and poll
 * until it reads FROZEN (it says FREEZING while some task has not reached the
 * refrigerator yet; writing FROZEN again retries tasks that were busy, as CRIU
 * does). v2 (Linux 5.2+): write 1 to cgroup.freeze and wait for "frozen 1" in
 * cgroup.events.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_PREFIX "freezer: "
#include "freezer.h"
#include "log.h"
#include "util.h"

static int cg_path(char *buf, size_t len, const char *dir, const char *file)
{
	int n = snprintf(buf, len, "%s/%s", dir, file);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int cg_write(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	int err = cg_path(path, sizeof(path), dir, file);

	if (err)
		return err;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return neg_errno();
	return write_all(fd, val, strlen(val));
}

static char *cg_read(const char *dir, const char *file)
{
	char path[PATH_MAX];
	int err = cg_path(path, sizeof(path), dir, file);

	if (err) {
		errno = -err;
		return NULL;
	}
	return read_file_at(AT_FDCWD, path, NULL);
}

int freezer_detect(const char *path, bool *v2)
{
	char p[PATH_MAX];

	if (!cg_path(p, sizeof(p), path, "cgroup.freeze") && !access(p, W_OK)) {
		*v2 = true;
		return 0;
	}
	if (!cg_path(p, sizeof(p), path, "freezer.state") && !access(p, W_OK)) {
		*v2 = false;
		return 0;
	}
	return -ENOENT;
}

int freezer_is_frozen(const char *path, bool v2, bool *frozen)
{
	_cleanup_free_ char *text = cg_read(path, v2 ? "cgroup.events" : "freezer.state");

	if (!text)
		return neg_errno();
	if (v2) {
		const char *f = strstr(text, "frozen ");

		if (!f || (f != text && f[-1] != '\n'))
			return -EINVAL;
		*frozen = f[7] == '1';
	} else {
		*frozen = !strncmp(text, "FROZEN", 6);
	}
	return 0;
}

static bool past(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

int freezer_freeze(const char *path, bool v2, const struct timespec *deadline)
{
	const char *file = v2 ? "cgroup.freeze" : "freezer.state";
	const char *val = v2 ? "1" : "FROZEN";
	unsigned int i;

	for (i = 0;; i++) {
		bool frozen = false;
		int err;

		/* v1 may stay FREEZING when a task was busy: write again every 100 ms. */
		if (i == 0 || (!v2 && i % 100 == 0)) {
			err = cg_write(path, file, val);
			if (err) {
				pr_errno(err, "cannot write %s to %s/%s", val, path, file);
				return err;
			}
		}
		err = freezer_is_frozen(path, v2, &frozen);
		if (err) {
			pr_errno(err, "cannot read the freezer state of %s", path);
			return err;
		}
		if (frozen)
			return 0;
		if (past(deadline)) {
			pr_err("cgroup %s did not freeze in time\n", path);
			return -ETIMEDOUT;
		}
		usleep(1000);
	}
}

int freezer_request(const char *path, bool v2)
{
	int err = cg_write(path, v2 ? "cgroup.freeze" : "freezer.state", v2 ? "1" : "FROZEN");

	if (err)
		pr_errno(err, "cannot freeze cgroup %s", path);
	return err;
}

int freezer_thaw(const char *path, bool v2)
{
	int err = cg_write(path, v2 ? "cgroup.freeze" : "freezer.state", v2 ? "0" : "THAWED");

	if (err)
		pr_errno(err, "cannot thaw cgroup %s", path);
	return err;
}

int freezer_take(const char *path, bool *v2, const struct timespec *deadline, bool *was_frozen)
{
	bool frozen;
	int err = freezer_detect(path, v2);

	if (err) {
		pr_err("%s has neither cgroup.freeze (v2) nor freezer.state (v1)\n", path);
		return err;
	}
	err = freezer_is_frozen(path, *v2, &frozen);
	if (err) {
		pr_errno(err, "cannot read the freezer state of %s", path);
		return err;
	}
	*was_frozen = frozen;
	if (frozen) {
		/* Paused by its owner (containerd pauses a task to checkpoint it). */
		pr_info("cgroup %s is already frozen: frozen again at release\n", path);
		return 0;
	}
	err = freezer_freeze(path, *v2, deadline);
	if (err)
		freezer_thaw(path, *v2);
	return err;
}
