// SPDX-License-Identifier: GPL-2.0
/*
 * A network namespace of the test's own (the container's in the runner's ns
 * modes, a new one otherwise) and its state as commands print it: what the
 * net_* and tun_tap tests share.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "zdtmtst.h"

static struct stat netns_host; /* the namespace the test was born in */

int test_netns_own(void)
{
	/* in the runner's container: its network namespace (a tree has one only) */
	if (stat("/proc/self/ns/net", &netns_host) ||
	    (!test_in_container() && unshare(CLONE_NEWNET))) {
		fail("unshare(CLONE_NEWNET): %m");
		return -errno;
	}
	return 0;
}

int test_netns_kept(void)
{
	struct stat self, host = netns_host;

	/* in the container: its init's still (the first one's inode may be given again) */
	if (stat("/proc/self/ns/net", &self) ||
	    (test_in_container() ? stat("/proc/1/ns/net", &host) || self.st_ino != host.st_ino
				 : self.st_ino == host.st_ino)) {
		fail("the test is not in a network namespace of its own after the restore");
		return -EINVAL;
	}
	return 0;
}

int test_sh_output(const char *cmd, char *buf, size_t size)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	if (!p)
		return -errno;
	n = fread(buf, 1, size - 1, p);
	buf[n] = 0;
	return pclose(p) == 0 || n ? 0 : -EIO;
}

int test_same_text(const char *what, const char *before, const char *after)
{
	size_t i = 0, from;

	if (!strcmp(before, after))
		return 0;
	while (before[i] == after[i])
		i++;
	from = i > 200 ? i - 200 : 0;
	fail("%s changed at byte %zu:\n--- before\n...%.300s\n--- after\n...%.300s", what, i,
	     before + from, after + from);
	return -EINVAL;
}

int test_netns_unchanged(const char *describe)
{
	static char before[262144], after[262144]; /* net_sysctl: every sysctl of every link */
	int err = test_sh_output(describe, before, sizeof(before));

	if (err) {
		fail("cannot describe the namespace");
		return err;
	}
	test_daemon();
	test_waitsig();
	err = test_netns_kept();
	if (err)
		return err;
	err = test_sh_output(describe, after, sizeof(after));
	if (err) {
		fail("cannot describe the namespace after the restore");
		return err;
	}
	return test_same_text("the namespace", before, after);
}
