// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroups a test made (test/zdtm/static/cgroup_*.c): it lists them in
 * cgroups.list in its directory, one "CONTROLLERS PATH" line each ("-" for
 * cgroup2), parents first. cgroups_drop() removes them, deepest first, when
 * nothing is in them: after a dump killed the tree, so that the restore
 * must make them again with their properties (the default mode, soft, sets
 * the properties of the cgroups it makes only), and when the test is over.
 */
#include <errno.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/* Where the runner reaches hierarchy @ctrls ("memory", "-" for cgroup2), or "". */
static void mount_of(const char *ctrls, char *buf, size_t size)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m;

	buf[0] = '\0';
	while (f && (m = getmntent(f))) {
		bool v2 = !strcmp(m->mnt_type, "cgroup2");

		if (!strcmp(ctrls, "-") ? v2
					: !strcmp(m->mnt_type, "cgroup") && hasmntopt(m, ctrls)) {
			snprintf(buf, size, "%s", m->mnt_dir);
			break;
		}
	}
	if (f)
		endmntent(f);
}

int cgroups_drop(const char *dir)
{
	char path[PATH_MAX + 16], line[PATH_MAX], *lines[64];
	int n = 0, removed = 0, tries;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroups.list", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (n < 64 && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		lines[n] = strdup(line);
		if (lines[n])
			n++;
	}
	fclose(f);
	while (n-- > 0) {
		char *sp = strchr(lines[n], ' '), mnt[PATH_MAX], host[PATH_MAX * 2 + 2];

		if (sp) {
			*sp = '\0';
			mount_of(lines[n], mnt, sizeof(mnt));
			snprintf(host, sizeof(host), "%s%s", mnt, sp + 1);
			/* killed tasks leave their cgroups once reaped */
			for (tries = 0; mnt[0] && rmdir(host) && errno == EBUSY && tries < 100;
			     tries++)
				usleep(10000);
			if (mnt[0] && access(host, F_OK))
				removed++;
		}
		free(lines[n]);
	}
	return removed;
}
