// SPDX-License-Identifier: GPL-2.0
/*
 * A non-blocking inotify with watches on a directory (IN_CREATE, IN_DELETE)
 * and on a file in it (IN_MODIFY), and a watch descriptor skipped (a watch
 * added and removed before the last one). After SIGTERM: the same watch
 * descriptors and masks (fdinfo), a file created in the directory and a
 * write to the file are reported with the right descriptors and name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define DIR_NAME "inotify.dir"
#define FILE_NAME DIR_NAME "/file"
#define GONE_NAME DIR_NAME "/gone"
#define LAST_NAME DIR_NAME "/last"
#define NEW_NAME "created-after-restore"

#define DIR_MASK (IN_CREATE | IN_DELETE)
#define FILE_MASK (IN_MODIFY | IN_CLOSE_WRITE)
#define LAST_MASK IN_ATTRIB

/* The "inotify wd:... mask:..." lines of @fd's fdinfo, as "wd:mask," pairs in @out. */
static int fdinfo_watches(int fd, char *out, size_t size)
{
	char path[64], buf[4096], *p = buf;
	unsigned int wd, mask;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		return neg_errno();
	out[0] = '\0';
	while ((p = strstr(p, "inotify wd:"))) {
		if (sscanf(p, "inotify wd:%x", &wd) != 1 || !(p = strstr(p, " mask:")) ||
		    sscanf(p, " mask:%x", &mask) != 1)
			return -EBADMSG;
		len += (size_t)snprintf(out + len, size - len, "%x:%x,", wd, mask);
		if (len >= size)
			return -ENOBUFS;
	}
	return 0;
}

/* The next event from @fd (non-blocking, so it must be queued already), or fail. */
static int next_event(int fd, struct inotify_event *ev, size_t size)
{
	ssize_t n = read(fd, ev, size);

	if (n < (ssize_t)sizeof(*ev)) {
		fail("no inotify event queued (%zd): %m", n);
		return 1;
	}
	return 0;
}

static int check_events(int fd, int wd_dir, int wd_file)
{
	union {
		struct inotify_event ev;
		char buf[sizeof(struct inotify_event) + NAME_MAX + 1];
	} u;
	int nf;

	nf = open(DIR_NAME "/" NEW_NAME, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (nf < 0 || close(nf) || next_event(fd, &u.ev, sizeof(u)))
		return 1;
	if (u.ev.wd != wd_dir || !(u.ev.mask & IN_CREATE) || strcmp(u.ev.name, NEW_NAME)) {
		fail("creating %s reported wd %d mask %x name '%s', expected wd %d IN_CREATE",
		     NEW_NAME, u.ev.wd, u.ev.mask, u.ev.len ? u.ev.name : "", wd_dir);
		return 1;
	}
	nf = open(FILE_NAME, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (nf < 0 || write(nf, "z", 1) != 1 || next_event(fd, &u.ev, sizeof(u)))
		return 1;
	if (u.ev.wd != wd_file || !(u.ev.mask & IN_MODIFY)) {
		fail("writing the file reported wd %d mask %x, expected wd %d IN_MODIFY", u.ev.wd,
		     u.ev.mask, wd_file);
		return 1;
	}
	close(nf);
	return 0;
}

static void cleanup(void)
{
	unlink(DIR_NAME "/" NEW_NAME);
	unlink(FILE_NAME);
	unlink(GONE_NAME);
	unlink(LAST_NAME);
	rmdir(DIR_NAME);
}

int main(int argc, char **argv)
{
	char before[256], after[256], drain[4096];
	int fd, wd_dir, wd_file, wd_gone, wd_last, f;

	test_init(argc, argv);
	cleanup();
	if (mkdir(DIR_NAME, 0755) || (f = open(FILE_NAME, O_CREAT | O_WRONLY, 0644)) < 0 ||
	    close(f) || (f = open(GONE_NAME, O_CREAT | O_WRONLY, 0644)) < 0 || close(f) ||
	    (f = open(LAST_NAME, O_CREAT | O_WRONLY, 0644)) < 0 || close(f)) {
		fail("cannot create the files: %m");
		return 1;
	}
	fd = inotify_init1(IN_NONBLOCK);
	wd_dir = inotify_add_watch(fd, DIR_NAME, DIR_MASK);
	wd_file = inotify_add_watch(fd, FILE_NAME, FILE_MASK);
	wd_gone = inotify_add_watch(fd, GONE_NAME, IN_ALL_EVENTS);
	if (fd < 0 || wd_dir < 0 || wd_file < 0 || wd_gone < 0 || inotify_rm_watch(fd, wd_gone)) {
		fail("cannot set up the watches: %m");
		return 1;
	}
	wd_last = inotify_add_watch(fd, LAST_NAME, LAST_MASK);
	/* The IN_IGNORED of the removed watch: the queue is empty at the dump. */
	while (read(fd, drain, sizeof(drain)) > 0)
		;
	if (wd_last != wd_gone + 1 || fdinfo_watches(fd, before, sizeof(before))) {
		fail("unexpected watch descriptors %d %d or fdinfo: %m", wd_gone, wd_last);
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (fdinfo_watches(fd, after, sizeof(after)) || strcmp(before, after)) {
		fail("watches (wd:mask) were '%s', now '%s'", before, after);
		return 1;
	}
	if (read(fd, drain, sizeof(drain)) != -1 || errno != EAGAIN) {
		fail("events queued after restore before anything happened (or it blocks)");
		return 1;
	}
	if (check_events(fd, wd_dir, wd_file))
		return 1;
	cleanup();
	pass();
	return 0;
}
