// SPDX-License-Identifier: GPL-2.0
/*
 * LSM labels (AppArmor profiles, SELinux contexts). criu-like dumps none and
 * sets none: a restored task keeps the label it is created with, criu-like's
 * own. So a dump checks that every task has that label (none, where no LSM
 * gives labels), and a restore asked for a profile (--lsm-profile TYPE:NAME,
 * LXC's --external apparmor:NAME) checks that it is what the tree gets.
 * Anything else is refused by name. Documentation/runtimes.md, "LXC".
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOG_PREFIX "lsm: "
#include "log.h"
#include "lsm.h"
#include "options.h"
#include "util.h"

/*
 * The first line of @path into @buf; "" when the file is not there or gives
 * nothing (EINVAL), and then *@there (when given) is cleared.
 */
static int read_label(const char *path, char *buf, size_t size, bool *there)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0) {
		if (there)
			*there = false;
		return errno == ENOENT ? 0 : neg_errno();
	}
	n = read(fd, buf, size - 1);
	if (n < 0) {
		if (there)
			*there = false;
		return errno == EINVAL ? 0 : neg_errno();
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * The label files that give something here: which LSMs are built in and
 * active is the kernel's, the same for every task, so what criu-like's own
 * files showed is what a task's show. Read from @pid's only those (all when
 * @files is NULL, and then *@ret_files, when given, says which gave one).
 */
struct lsm_files {
	bool apparmor, current;
};

static int lsm_label_files(const char *pid, char *buf, size_t size, const struct lsm_files *files,
			   struct lsm_files *ret_files)
{
	struct lsm_files f = { true, true };
	char path[64];
	int err = 0;

	buf[0] = '\0';
	/* AppArmor's own file first: with stacking, attr/current is the major LSM's */
	if (!files || files->apparmor) {
		snprintf(path, sizeof(path), "/proc/%s/attr/apparmor/current", pid);
		err = read_label(path, buf, size, &f.apparmor);
	}
	if (!err && !buf[0] && (!files || files->current)) {
		snprintf(path, sizeof(path), "/proc/%s/attr/current", pid);
		err = read_label(path, buf, size, &f.current);
	}
	if (!err && ret_files)
		*ret_files = f;
	return err;
}

int lsm_label(const char *pid, char *buf, size_t size)
{
	return lsm_label_files(pid, buf, size, NULL, NULL);
}

bool lsm_apparmor_active(void)
{
	char buf[8] = "";
	int fd = open("/sys/module/apparmor/parameters/enabled", O_RDONLY | O_CLOEXEC);
	bool on = false;

	if (fd >= 0) {
		on = read(fd, buf, sizeof(buf) - 1) > 0 && buf[0] == 'Y';
		close(fd);
	}
	return on || !access("/proc/self/attr/apparmor/current", F_OK);
}

bool lsm_selinux_active(void)
{
	return !access("/sys/fs/selinux/enforce", F_OK);
}

int lsm_dump_check(pid_t pid)
{
	/* criu-like's own label does not change while it runs: read once, not per task */
	static char own[256];
	static bool own_read;
	static struct lsm_files own_files;
	/* the workers of a parallel dump check their tasks side by side */
	static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;
	char pbuf[16], its[256];
	int err = 0;

	snprintf(pbuf, sizeof(pbuf), "%d", pid);
	pthread_mutex_lock(&own_lock);
	if (!own_read) {
		err = lsm_label_files("self", own, sizeof(own), NULL, &own_files);
		own_read = !err;
	}
	pthread_mutex_unlock(&own_lock);
	/* a kernel without the files (no LSM that gives labels): no task has one either */
	if (!err)
		err = lsm_label_files(pbuf, its, sizeof(its), &own_files, NULL);
	if (err) {
		pr_errno(err, "pid %d: cannot read its LSM label", pid);
		return err;
	}
	if (!strcmp(own, its))
		return 0;
	pr_err("pid %d: its LSM label is '%s', criu-like's '%s': a restored task gets "
	       "criu-like's, and LSM labels are not dumped yet\n",
	       pid, its, own);
	return -EOPNOTSUPP;
}

int lsm_profile_check(const char *arg, const char *what)
{
	const char *colon = strchr(arg, ':'), *name = colon ? colon + 1 : "";
	size_t tlen = colon ? (size_t)(colon - arg) : strlen(arg), nlen;
	char own[256];
	bool aa = tlen == 8 && !strncmp(arg, "apparmor", 8);
	int err;

	if (!aa && !(tlen == 7 && !strncmp(arg, "selinux", 7))) {
		pr_err("%s %s: not apparmor:NAME or selinux:CONTEXT\n", what, arg);
		return -EINVAL;
	}
	if (aa && !lsm_apparmor_active()) {
		/* every task is unconfined where AppArmor is off: that is what is asked */
		if (!strcmp(name, "unconfined")) {
			pr_info("%s %s: AppArmor is not active here: the tree runs unconfined\n",
				what, arg);
			return 0;
		}
		pr_err("%s %s: AppArmor is not active here: the tree cannot run under profile "
		       "%s\n",
		       what, arg, name);
		return -EOPNOTSUPP;
	}
	if (!aa && !lsm_selinux_active()) {
		pr_err("%s %s: SELinux is not active here: the tree cannot run in context %s\n",
		       what, arg, name);
		return -EOPNOTSUPP;
	}
	err = lsm_label("self", own, sizeof(own));
	if (err) {
		pr_errno(err, "cannot read criu-like's own LSM label");
		return err;
	}
	/* AppArmor shows "PROFILE (MODE)" */
	nlen = strlen(name);
	if (!strncmp(own, name, nlen) && (!own[nlen] || !strncmp(own + nlen, " (", 2)))
		return 0;
	pr_err("%s %s: the tree gets criu-like's own label '%s'; setting another is not "
	       "supported yet\n",
	       what, arg, own);
	return -EOPNOTSUPP;
}

bool lsm_external(const char *arg)
{
	return !strncmp(arg, "apparmor:", 9) || !strncmp(arg, "selinux:", 8);
}

int lsm_restore_check(const struct cr_options *o)
{
	int i, err = o->lsm_profile ? lsm_profile_check(o->lsm_profile, "--lsm-profile") : 0;

	for (i = 0; !err && i < o->n_external; i++)
		if (lsm_external(o->external[i]))
			err = lsm_profile_check(o->external[i], "--external");
	return err;
}
