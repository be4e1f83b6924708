// SPDX-License-Identifier: GPL-2.0
/*
 * A uprobe on a function of the test's own binary, hit before the dump: the
 * kernel gave the task its [uprobes] area (the out-of-line stepping page) and
 * wrote a breakpoint into the text page of the function. With --allow-uprobes
 * the dump leaves the area out (Documentation/memory.md); after the restore
 * the function must still run and return its value, and the probe must count
 * the hit (the kernel makes the area again on that hit).
 *
 * The probe is added through a tracefs mount that is never attached anywhere
 * (fsopen/fsmount): nothing is mounted on the host, and the fd is closed
 * before the dump. The event is removed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "zdtmtst.h"

static char event[64];

__attribute__((noinline, used)) int probed(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

/* A tracefs mount of our own, attached nowhere; -1 with errno. */
static int tracefs(void)
{
	int fs, mnt;

	fs = fsopen("tracefs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return neg_errno();
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0)) {
		int err = neg_errno();

		close(fs);
		return err;
	}
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, 0);
	close(fs);
	return mnt;
}

static int write_at(int dir, const char *path, const char *text, int flags)
{
	int fd = openat(dir, path, O_WRONLY | O_CLOEXEC | flags);
	ssize_t n;

	if (fd < 0)
		return neg_errno();
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : neg_errno();
}

/* The file offset of @addr in the mapping of /proc/self/maps holding it. */
static int file_offset(const void *addr, char *path, size_t size, unsigned long *off)
{
	unsigned long a = (unsigned long)addr, start, end, pgoff;
	char line[512], name[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int ret = -1;

	if (!f)
		return neg_errno();
	while (fgets(line, sizeof(line), f)) {
		name[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %255s", &start, &end, &pgoff, name) < 3)
			continue;
		if (a < start || a >= end || name[0] != '/')
			continue;
		snprintf(path, size, "%s", name);
		*off = a - start + pgoff;
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

static bool has_uprobes_area(void)
{
	static char maps[1 << 16];

	return test_read_file("/proc/self/maps", maps, sizeof(maps)) > 0 &&
	       strstr(maps, "[uprobes]");
}

/* The hit count of our event in uprobe_profile; -1 when not found. */
static long hits(int mnt)
{
	char buf[8192], *l;
	int fd = openat(mnt, "uprobe_profile", O_RDONLY | O_CLOEXEC);
	ssize_t n;
	long v = -1;

	if (fd < 0)
		return neg_errno();
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return neg_errno();
	buf[n] = '\0';
	for (l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		char name[128];
		long h;

		if (sscanf(l, "%*s %127s %ld", name, &h) == 2 &&
		    !strcmp(name, strrchr(event, '/') + 1))
			v = h;
	}
	return v;
}

static void remove_event(int mnt)
{
	char path[128], del[96];

	snprintf(path, sizeof(path), "events/%s/enable", event + 2);
	write_at(mnt, path, "0", 0);
	snprintf(del, sizeof(del), "-:%s\n", event + 2);
	write_at(mnt, "uprobe_events", del, O_APPEND);
}

int main(int argc, char **argv)
{
	char exe[256], def[512], path[128];
	unsigned long off = 0; /* file_offset() sets it */
	long before, after;
	int mnt, r = 0, i;

	test_init(argc, argv);
	snprintf(event, sizeof(event), "p:zdtm_uprobes/up%d", getpid());
	if (file_offset((const void *)probed, exe, sizeof(exe), &off)) {
		fail("cannot find the mapping of probed()");
		return 1;
	}
	mnt = tracefs();
	if (mnt < 0) {
		fail("tracefs: %m");
		return 1;
	}
	remove_event(mnt); /* one a killed run of the same pid left */
	snprintf(def, sizeof(def), "%s %s:%#lx\n", event, exe, off);
	snprintf(path, sizeof(path), "events/%s/enable", event + 2);
	if (write_at(mnt, "uprobe_events", def, O_APPEND) || write_at(mnt, path, "1", 0)) {
		fail("cannot add the uprobe %s: %m", def);
		remove_event(mnt);
		return 1;
	}
	for (i = 0; i < 3; i++)
		r += probed(i);
	before = hits(mnt);
	if (r != 12 || before < 3 || !has_uprobes_area()) {
		fail("probe setup: sum %d, %ld hits, [uprobes] %d", r, before, has_uprobes_area());
		remove_event(mnt);
		return 1;
	}
	close(mnt); /* no tracefs fd in the dumped tree */

	test_daemon();
	test_waitsig();

	r = probed(5);
	mnt = tracefs();
	if (mnt < 0) {
		fail("tracefs after the restore: %m");
		return 1;
	}
	after = hits(mnt);
	remove_event(mnt);
	close(mnt);
	if (r != 16) {
		fail("probed(5) returned %d after the restore", r);
		return 1;
	}
	if (after != before + 1) {
		fail("the uprobe counted %ld hits after the restore, %ld before", after, before);
		return 1;
	}
	if (!has_uprobes_area()) {
		fail("no [uprobes] area after a hit in the restored task");
		return 1;
	}
	pass();
	return 0;
}
