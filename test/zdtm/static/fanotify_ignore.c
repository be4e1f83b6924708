// SPDX-License-Identifier: GPL-2.0
/*
 * The less common fanotify state, checked after restore through fdinfo (the
 * same lines, in the same order) and through events:
 *  1 (FAN_CLASS_CONTENT without permission marks, made blocking and then set
 *    O_NONBLOCK with F_SETFL): a directory mark (open, close-nowrite, on
 *    children and the directory), an ignore mark made with FAN_MARK_IGNORE on
 *    file a (its open is ignored, not its close), an evictable mark on file b
 *    (pinned by an open fd). Opening a reports exactly close-nowrite; b open
 *    and close-nowrite.
 *  2 (FAN_REPORT_DFID_NAME): creations in the directory, reported with the
 *    name, and a mark on a with only an old-style ignored mask.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define DIR_NAME "fanotify_ignore.dir"
#define A_NAME DIR_NAME "/a"
#define B_NAME DIR_NAME "/b"
#define NEW_NAME "created-after-restore"

#define DIR_MASK (FAN_OPEN | FAN_CLOSE_NOWRITE | FAN_EVENT_ON_CHILD | FAN_ONDIR)

/* Open and close @name, then OR the events of group @fd on it into *@got. */
static int touch_and_read(int fd, const char *name, const char *abs, uint64_t *got)
{
	char buf[4096] __attribute__((aligned(8))), link[64], path[PATH_MAX];
	struct fanotify_event_metadata *m;
	ssize_t n, len;
	int f = open(name, O_RDONLY);

	if (f < 0 || close(f)) {
		fail("cannot open %s: %m", name);
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (m = (void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			if (m->fd < 0 || m->pid != getpid()) {
				fail("group 1: event mask %llx fd %d pid %d",
				     (unsigned long long)m->mask, m->fd, m->pid);
				return 1;
			}
			snprintf(link, sizeof(link), "/proc/self/fd/%d", m->fd);
			len = readlink(link, path, sizeof(path) - 1);
			close(m->fd);
			if (len < 0)
				return 1;
			path[len] = '\0';
			if (strcmp(path, abs)) {
				fail("group 1: event mask %llx on %s, expected only %s",
				     (unsigned long long)m->mask, path, abs);
				return 1;
			}
			*got |= m->mask;
		}
	}
	if (errno != EAGAIN) {
		fail("group 1: read: %m (not non-blocking?)");
		return 1;
	}
	return 0;
}

static int drain(int fd)
{
	char buf[4096] __attribute__((aligned(8)));
	struct fanotify_event_metadata *m;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (m = (void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n))
			if (m->fd >= 0)
				close(m->fd);
	if (errno != EAGAIN) {
		fail("group 1: read: %m (not non-blocking?)");
		return 1;
	}
	return 0;
}

static int check_group_1(int fd, const char *a, const char *b)
{
	uint64_t got_a = 0, got_b = 0;

	if (!(fcntl(fd, F_GETFL) & O_NONBLOCK)) {
		fail("group 1 lost O_NONBLOCK set by F_SETFL");
		return 1;
	}
	/* The restore's own opening of b (the pinning fd) may be queued: not the test's. */
	if (drain(fd))
		return 1;
	if (touch_and_read(fd, A_NAME, a, &got_a) || touch_and_read(fd, B_NAME, b, &got_b))
		return 1;
	if (got_a != FAN_CLOSE_NOWRITE || got_b != (FAN_OPEN | FAN_CLOSE_NOWRITE)) {
		fail("group 1: a reported %llx (expected close-nowrite, its open ignored), b %llx",
		     (unsigned long long)got_a, (unsigned long long)got_b);
		return 1;
	}
	return 0;
}

/* A creation in the directory reports its name. */
static int check_group_2(int fd)
{
	char buf[4096] __attribute__((aligned(8)));
	struct fanotify_event_metadata *m;
	struct fanotify_event_info_fid *fid;
	struct file_handle *fh;
	const char *name;
	ssize_t n;
	int f = open(DIR_NAME "/" NEW_NAME, O_CREAT | O_EXCL | O_WRONLY, 0644);

	if (f < 0 || close(f)) {
		fail("cannot create %s: %m", NEW_NAME);
		return 1;
	}
	n = read(fd, buf, sizeof(buf));
	m = (void *)buf;
	if (n < 0 || !FAN_EVENT_OK(m, n) || m->mask != FAN_CREATE ||
	    m->event_len < sizeof(*m) + sizeof(*fid) + sizeof(*fh)) {
		fail("group 2: no FAN_CREATE event (%zd bytes, mask %llx): %m", n,
		     n > 0 ? (unsigned long long)m->mask : 0ull);
		return 1;
	}
	fid = (void *)(m + 1);
	fh = (void *)fid->handle;
	name = (const char *)fh->f_handle + fh->handle_bytes;
	if (fid->hdr.info_type != FAN_EVENT_INFO_TYPE_DFID_NAME || strcmp(name, NEW_NAME)) {
		fail("group 2: info type %u name '%s', expected DFID_NAME '%s'", fid->hdr.info_type,
		     name, NEW_NAME);
		return 1;
	}
	n = read(fd, buf, sizeof(buf));
	if (n != -1 || errno != EAGAIN) {
		fail("group 2: more events than the creation (%zd)", n);
		return 1;
	}
	return 0;
}

static void cleanup(void)
{
	unlink(A_NAME);
	unlink(B_NAME);
	unlink(DIR_NAME "/" NEW_NAME);
	rmdir(DIR_NAME);
}

static int setup(int *g1, int *g2, int *pin)
{
	int f, fl;

	if (mkdir(DIR_NAME, 0755) || (f = open(A_NAME, O_CREAT | O_WRONLY, 0644)) < 0 || close(f) ||
	    (*pin = open(B_NAME, O_CREAT | O_RDONLY, 0644)) < 0) {
		fail("cannot create the files: %m");
		return 1;
	}
	*g1 = fanotify_init(FAN_CLASS_CONTENT, O_RDONLY);
	*g2 = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME | FAN_NONBLOCK, O_RDONLY);
	if (*g1 < 0 || *g2 < 0) {
		fail("fanotify_init: %m");
		return 1;
	}
	fl = fcntl(*g1, F_GETFL);
	if (fl < 0 || fcntl(*g1, F_SETFL, fl | O_NONBLOCK) ||
	    fanotify_mark(*g1, FAN_MARK_ADD, DIR_MASK, AT_FDCWD, DIR_NAME) ||
	    fanotify_mark(*g1, FAN_MARK_ADD | FAN_MARK_IGNORE, FAN_OPEN, AT_FDCWD, A_NAME) ||
	    fanotify_mark(*g1, FAN_MARK_ADD | FAN_MARK_EVICTABLE, FAN_CLOSE_WRITE, AT_FDCWD,
			  B_NAME) ||
	    fanotify_mark(*g2, FAN_MARK_ADD, FAN_CREATE | FAN_ONDIR, AT_FDCWD, DIR_NAME) ||
	    fanotify_mark(*g2, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK | FAN_MARK_IGNORED_SURV_MODIFY,
			  FAN_ATTRIB, AT_FDCWD, A_NAME)) {
		fail("cannot set up the marks: %m");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char before[2][1024], after[2][1024], a[PATH_MAX], b[PATH_MAX];
	int fds[2], pin, i;

	test_init(argc, argv);
	cleanup();
	if (setup(&fds[0], &fds[1], &pin) || !realpath(A_NAME, a) || !realpath(B_NAME, b))
		return 1;
	for (i = 0; i < 2; i++)
		if (test_fdinfo_lines(fds[i], "fanotify ", before[i], sizeof(before[i]))) {
			fail("cannot read the fdinfo of group %d", i + 1);
			return 1;
		}
	test_daemon();
	test_waitsig();

	for (i = 0; i < 2; i++)
		if (test_fdinfo_lines(fds[i], "fanotify ", after[i], sizeof(after[i])) ||
		    strcmp(before[i], after[i])) {
			fail("group %d: fdinfo was '%s', now '%s'", i + 1, before[i], after[i]);
			return 1;
		}
	if (check_group_1(fds[0], a, b) || check_group_2(fds[1]))
		return 1;
	close(pin);
	cleanup();
	pass();
	return 0;
}
