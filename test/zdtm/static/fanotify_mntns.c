// SPDX-License-Identifier: GPL-2.0
/*
 * A fanotify group reporting mount events (FAN_REPORT_MNT, Linux 6.14) with a
 * mark on the test's own mount namespace (FAN_MNT_ATTACH | FAN_MNT_DETACH).
 * After restore: the same fdinfo lines, and a tmpfs mounted and unmounted on
 * a test directory is reported attached then detached, by its unique mount
 * id. Mounts of other processes in the namespace are skipped; an event of a
 * kind not asked for fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef FAN_REPORT_MNT
#define FAN_REPORT_MNT 0x00004000 /* Linux 6.14 */
#endif
#ifndef FAN_MARK_MNTNS
#define FAN_MARK_MNTNS 0x00000110 /* Linux 6.14 */
#endif
#ifndef FAN_MNT_ATTACH
#define FAN_MNT_ATTACH 0x01000000 /* Linux 6.14 */
#define FAN_MNT_DETACH 0x02000000
#endif
#ifndef FAN_EVENT_INFO_TYPE_MNT
#define FAN_EVENT_INFO_TYPE_MNT 7 /* Linux 6.14 */
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U /* Linux 6.8 */
#endif

#define DIR_NAME "fanotify_mntns.dir"
#define MNT_MASK (FAN_MNT_ATTACH | FAN_MNT_DETACH)

/* Linux 6.14 include/uapi/linux/fanotify.h */
struct info_mnt {
	struct fanotify_event_info_header hdr;
	uint64_t mnt_id;
};

/*
 * The fanotify lines of @fd's fdinfo, ';'-joined, with the mark's "mnt_ns:ID"
 * written "mnt_ns:own" when ID is the test's own mount namespace: in a
 * container (zdtm's ns modes) that namespace is a new one after the restore,
 * and the mark must be on it.
 */
static int fdinfo_marks(int fd, char *out, size_t size)
{
	char path[64], buf[4096], own[32], *p, *nl, *ns;
	struct stat st;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (test_read_file(path, buf, sizeof(buf)) < 0 || stat("/proc/self/ns/mnt", &st))
		return neg_errno();
	snprintf(own, sizeof(own), "mnt_ns:%llu ", (unsigned long long)st.st_ino);
	out[0] = '\0';
	for (p = buf; (p = strstr(p, "fanotify ")); p = nl) {
		nl = strchrnul(p, '\n');
		ns = strstr(p, own);
		if (ns && ns < nl)
			len += (size_t)snprintf(out + len, size - len, "%.*smnt_ns:own %.*s;",
						(int)(ns - p), p, (int)(nl - ns - strlen(own)),
						ns + strlen(own));
		else
			len += (size_t)snprintf(out + len, size - len, "%.*s;", (int)(nl - p), p);
		if (len >= size)
			return -ENOBUFS;
	}
	return 0;
}

/* OR the events on mount @id into *@got; 1 (failed) on an event not asked for. */
static int read_mnt_events(int fd, uint64_t id, uint64_t *got)
{
	char buf[4096] __attribute__((aligned(8)));
	struct fanotify_event_metadata *m;
	struct info_mnt *info;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (m = (void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			if (m->mask & ~(uint64_t)MNT_MASK) {
				fail("event mask %llx, asked %x", (unsigned long long)m->mask,
				     MNT_MASK);
				return 1;
			}
			info = (void *)(m + 1);
			if (m->event_len >= sizeof(*m) + sizeof(*info) &&
			    info->hdr.info_type == FAN_EVENT_INFO_TYPE_MNT && info->mnt_id == id)
				*got |= m->mask;
		}
	}
	if (errno != EAGAIN) {
		fail("reading mount events: %m");
		return 1;
	}
	return 0;
}

static int check_events(int fd)
{
	struct statx stx;
	uint64_t got = 0;

	if (read_mnt_events(fd, 0, &got))
		return 1;
	if (mount("zdtm", DIR_NAME, "tmpfs", 0, "size=64k")) {
		fail("cannot mount a tmpfs on %s: %m", DIR_NAME);
		return 1;
	}
	if (statx(AT_FDCWD, DIR_NAME, 0, STATX_MNT_ID_UNIQUE, &stx) || umount2(DIR_NAME, 0) ||
	    !(stx.stx_mask & STATX_MNT_ID_UNIQUE)) {
		fail("cannot find the tmpfs's mount id, or unmount it: %m");
		umount2(DIR_NAME, MNT_DETACH);
		return 1;
	}
	if (read_mnt_events(fd, stx.stx_mnt_id, &got))
		return 1;
	if (got != MNT_MASK) {
		fail("mount %llx: events %llx, expected attach and detach %x",
		     (unsigned long long)stx.stx_mnt_id, (unsigned long long)got, MNT_MASK);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char before[512], after[512];
	int fd;

	test_init(argc, argv);
	rmdir(DIR_NAME);
	if (mkdir(DIR_NAME, 0755)) {
		fail("mkdir %s: %m", DIR_NAME);
		return 1;
	}
	fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_MNT | FAN_NONBLOCK, O_RDONLY);
	if (fd < 0 || fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MNTNS, MNT_MASK, AT_FDCWD,
				    "/proc/self/ns/mnt")) {
		fail("cannot mark the mount namespace (FAN_REPORT_MNT needs 6.14): %m");
		return 1;
	}
	if (fdinfo_marks(fd, before, sizeof(before))) {
		fail("cannot read the fdinfo");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (fdinfo_marks(fd, after, sizeof(after)) || strcmp(before, after)) {
		fail("fdinfo was '%s', now '%s'", before, after);
		return 1;
	}
	if (check_events(fd))
		return 1;
	rmdir(DIR_NAME);
	pass();
	return 0;
}
