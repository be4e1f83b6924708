// SPDX-License-Identifier: GPL-2.0
/*
 * Network locks left behind. A dump with --tcp-established drops the packets
 * of the tree's connections until the restored tree runs (a dump with -R:
 * until it ends); after that no lock of it may remain. The names of the
 * locks carry the pid of the criu-like that made them
 * (Documentation/network-lock.md): criu_like_<pid>_<start>,
 * criu_like_kept_<pid>_<time>, CRLK_<pid>_<start>, CRLK_K<pid>_<time>.
 * `criu-like net-lock list` prints one lock a line: kind, name, verdict.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "runner.h"

/* The pid in a lock's name, 0 when the word is not a lock name. */
static pid_t lock_pid(const char *w, size_t len)
{
	static const char *const prefixes[] = { "criu_like_kept_", "criu_like_", "CRLK_K",
						"CRLK_" };

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
		size_t pl = strlen(prefixes[i]);
		char *end;
		long pid;

		if (len <= pl || strncmp(w, prefixes[i], pl))
			continue;
		pid = strtol(w + pl, &end, 10);
		if (end > w + pl && *end == '_' && pid > 0 && pid <= INT_MAX)
			return pid;
	}
	return 0;
}

int netlock_leaks(struct reaper *r, const char *criu, const char *dir, const pid_t *pids, int n,
		  int64_t deadline, char *why, size_t size)
{
	char out[PATH_MAX + 16];
	char *argv[] = { (char *)criu, "net-lock", "list", NULL };
	_cleanup_free_ char *text = NULL;
	int status, ret;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/net-lock-list.out", dir);
	pid = spawn(argv, NULL, out);
	if (pid < 0)
		return pid;
	ret = wait_pid(r, pid, deadline, &status);
	if (ret)
		return ret;
	text = slurp(out);
	if (!text || !WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, size, "criu-like net-lock list failed (status 0x%x), see %s", status,
			 out);
		return -EIO;
	}
	for (const char *w = text; *w;) {
		size_t len = strcspn(w, " \t\n");
		pid_t owner = lock_pid(w, len);

		for (int i = 0; owner && i < n; i++) {
			if (pids[i] != owner)
				continue;
			snprintf(why, size, "network lock %.*s of criu-like pid %d is still there",
				 (int)len, w, owner);
			return -EEXIST;
		}
		w += len;
		w += strspn(w, " \t\n");
	}
	return 0;
}
