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

#define MAX_LINES 64

/*
 * mountinfo with the ids, the group numbers and the anonymous devices made
 * comparable: the parent as its line number, shared:N/master:N renumbered in
 * order of appearance, "0:N" devices as "0:*".
 */
static int normalize(char out[MAX_LINES][1024], int *nr)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[1024], *ids[MAX_LINES] = { 0 };
	int groups[MAX_LINES], ng = 0, n = 0, i;

	if (!f)
		return -1;
	while (n < MAX_LINES && fgets(line, sizeof(line), f)) {
		char id[32], parent[32], dev[32], rest[900], *tok, *save = NULL, *o = out[n];
		int p = -1;

		if (sscanf(line, "%31s %31s %31s %899[^\n]", id, parent, dev, rest) != 4) {
			fclose(f);
			return -1;
		}
		ids[n] = strdup(id);
		for (i = 0; i < n; i++)
			if (!strcmp(ids[i], parent))
				p = i;
		o += sprintf(o, "parent=%d dev=%s", p, !strncmp(dev, "0:", 2) ? "0:*" : dev);
		for (tok = strtok_r(rest, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			int g;

			if (sscanf(tok, "shared:%d", &g) == 1 ||
			    sscanf(tok, "master:%d", &g) == 1) {
				for (i = 0; i < ng && groups[i] != g; i++)
					;
				if (i == ng)
					groups[ng++] = g;
				o += sprintf(o, " %.7s%d", tok, i);
			} else {
				o += sprintf(o, " %s", tok);
			}
		}
		n++;
	}
	fclose(f);
	for (i = 0; i < n; i++)
		free(ids[i]);
	*nr = n;
	return 0;
}

static int setup(const char *work, const char *hp, const char *tr)
{
	char root[4096 + 16], dev[4096 + 32];

	snprintf(root, sizeof(root), "%s/root", work);
	snprintf(dev, sizeof(dev), "%s/dev", root);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fail("cannot unshare a private mount namespace: %m");
		return -1;
	}
	if ((mkdir(root, 0755) && errno != EEXIST) || mount("/", root, NULL, MS_BIND, NULL) ||
	    mount("/dev", dev, NULL, MS_BIND, NULL) || chdir(root) ||
	    syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) || chdir("/")) {
		fail("cannot pivot_root into a bind mount of /: %m");
		return -1;
	}
	if ((mkdir(hp, 0755) && errno != EEXIST) || (mkdir(tr, 0755) && errno != EEXIST)) {
		fail("mkdir: %m");
		return -1;
	}
	if (mount("none", hp, "hugetlbfs", MS_NOSUID | MS_NODEV, "mode=0750")) {
		fail("mount hugetlbfs on %s: %m", hp);
		return -1;
	}
	if (mount("tracefs", tr, "tracefs", MS_NOEXEC, NULL)) {
		fail("mount tracefs on %s: %m", tr);
		return -1;
	}
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		fail("mount proc: %m");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char before[MAX_LINES][1024], after[MAX_LINES][1024];
	char work[4096], hp[4096 + 8], tr[4096 + 8], p[8192 + 16];
	struct stat st;
	int nb, na, i, fd;

	test_init(argc, argv);
	if (!getcwd(work, sizeof(work) - 64)) {
		fail("getcwd: %m");
		return 1;
	}
	snprintf(hp, sizeof(hp), "%s/hp", work);
	snprintf(tr, sizeof(tr), "%s/tr", work);
	if (setup(work, hp, tr))
		return 1;
	if (normalize(before, &nb)) {
		fail("cannot read mountinfo");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (normalize(after, &na)) {
		fail("cannot read mountinfo after the restore");
		return 1;
	}
	for (i = 0; i < nb || i < na; i++) {
		if (i < nb && i < na && !strcmp(before[i], after[i]))
			continue;
		fail("mountinfo line %d: before \"%s\", after \"%s\"", i, i < nb ? before[i] : "-",
		     i < na ? after[i] : "-");
		return 1;
	}
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
