// SPDX-License-Identifier: GPL-2.0
/*
 * Three fanotify groups, checked after restore through fdinfo (the same
 * flags and mark lines, in the same order) and through events:
 *  A (FAN_CLASS_NOTIF, non-blocking, O_RDONLY event fds): an inode mark on a
 *    file (FAN_MODIFY | FAN_CLOSE_WRITE, ignored FAN_OPEN surviving modify)
 *    and one on its directory (FAN_OPEN | FAN_EVENT_ON_CHILD). Writing the
 *    file reports exactly modify and close-write, not its open; opening a
 *    sibling reports exactly open.
 *  B (FAN_UNLIMITED_QUEUE): a mount mark, FAN_OPEN, on the test directory's
 *    mount. Opening the file reports an open by this process; every event
 *    is an open.
 *  C (FAN_REPORT_FID, FAN_UNLIMITED_QUEUE), when the kernel and filesystem
 *    allow it: FAN_CREATE on the directory and a filesystem mark with
 *    FAN_MOVE_SELF. A file created and renamed reports the directory's and
 *    the file's handles.
 * The mount and filesystem marks see the whole machine: events of other
 * processes are read and skipped (never counted as failures, unless their
 * kind was not asked for).
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

#define DIR_NAME "fanotify.dir"
#define FILE_NAME DIR_NAME "/file"
#define SIB_NAME DIR_NAME "/sibling"
#define NEW_NAME DIR_NAME "/new"
#define MOVED_NAME DIR_NAME "/moved"

#define A_FILE_MASK (FAN_MODIFY | FAN_CLOSE_WRITE)
#define A_DIR_MASK (FAN_OPEN | FAN_EVENT_ON_CHILD)
#define C_MASK (FAN_CREATE | FAN_MOVE_SELF)

struct handle {
	struct file_handle fh;
	unsigned char buf[MAX_HANDLE_SZ];
};

/*
 * "mnt_id:ID" (hex) of the mount DIR_NAME is on written "mnt_id:dir": a
 * restore in a container of its own (the ns modes) makes its mounts again,
 * with other ids, and the mark must be on the new one.
 */
static int dir_mount(char *out)
{
	struct statx stx;
	char key[40], *at;
	const char *rep = "mnt_id:dir ";

	if (statx(AT_FDCWD, DIR_NAME, 0, STATX_MNT_ID, &stx) || !(stx.stx_mask & STATX_MNT_ID))
		return neg_errno();
	snprintf(key, sizeof(key), "mnt_id:%llx ", (unsigned long long)stx.stx_mnt_id);
	at = strstr(out, key);
	if (at) {
		memmove(at + strlen(rep), at + strlen(key), strlen(at + strlen(key)) + 1);
		memcpy(at, rep, strlen(rep));
	}
	return 0;
}

/* The "fanotify " lines of @fd's fdinfo, in the order the kernel prints them. */
static int fdinfo_marks(int fd, char *out, size_t size)
{
	int err = test_fdinfo_lines(fd, "fanotify ", out, size);

	return err ? err : dir_mount(out);
}

/* The path of an event's fd, then closed. */
static int event_path(int evfd, char *path, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", evfd);
	n = readlink(link, path, size - 1);
	close(evfd);
	if (n < 0)
		return neg_errno();
	path[n] = '\0';
	return 0;
}

/*
 * Read every queued event of fd-reporting group @fd. Events of this process
 * on @want (absolute) are ORed into *@got; any event with a bit outside
 * @allowed fails; with @only_self, an event of another process fails too.
 * Without @only_self, a read that fails (the kernel could not open some other
 * process's file for an event, which it then drops) is skipped.
 */
static int read_fd_events(int fd, const char *want, uint32_t allowed, bool only_self, uint64_t *got)
{
	char buf[8192] __attribute__((aligned(8))), path[PATH_MAX];
	struct fanotify_event_metadata *m;
	unsigned int errors = 0;
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno != EAGAIN && !only_self && ++errors < 1000)
			continue;
		if (n <= 0)
			break;
		for (m = (void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			if (m->vers != FANOTIFY_METADATA_VERSION ||
			    (m->mask & ~(uint64_t)allowed) || (only_self && m->pid != getpid())) {
				fail("event version %u mask %llx (asked %x) by pid %d", m->vers,
				     (unsigned long long)m->mask, allowed, m->pid);
				return 1;
			}
			if (m->fd < 0 || event_path(m->fd, path, sizeof(path)))
				continue; /* another process's file, gone already */
			if (m->pid == getpid() && !strcmp(path, want))
				*got |= m->mask;
		}
	}
	if (n < 0 && errno != EAGAIN) {
		fail("reading fanotify events: %m");
		return 1;
	}
	return 0;
}

static int check_group_a(int fd, const char *file, const char *sib)
{
	uint64_t got = 0;
	int f;

	if (read_fd_events(fd, "", 0xffffffff, true, &got))
		return 1;
	f = open(FILE_NAME, O_WRONLY | O_APPEND);
	if (f < 0 || write(f, "x", 1) != 1 || close(f)) {
		fail("cannot write %s: %m", FILE_NAME);
		return 1;
	}
	if (read_fd_events(fd, file, A_FILE_MASK, true, &got))
		return 1;
	if (got != A_FILE_MASK) {
		fail("group A: writing the file reported %llx, expected %x (no FAN_OPEN: ignored)",
		     (unsigned long long)got, A_FILE_MASK);
		return 1;
	}
	got = 0;
	f = open(SIB_NAME, O_RDONLY);
	if (f < 0 || close(f) || read_fd_events(fd, sib, FAN_OPEN, true, &got))
		return 1;
	if (got != FAN_OPEN) {
		fail("group A: opening the sibling reported %llx, expected FAN_OPEN",
		     (unsigned long long)got);
		return 1;
	}
	return 0;
}

static int check_group_b(int fd, const char *file)
{
	uint64_t got = 0;
	int f;

	if (read_fd_events(fd, "", FAN_OPEN, false, &got))
		return 1;
	f = open(FILE_NAME, O_RDONLY);
	if (f < 0 || close(f) || read_fd_events(fd, file, FAN_OPEN, false, &got))
		return 1;
	if (got != FAN_OPEN) {
		fail("group B: opening the file on the marked mount reported %llx",
		     (unsigned long long)got);
		return 1;
	}
	return 0;
}

static int get_handle(const char *path, struct handle *h)
{
	int mnt;

	h->fh.handle_bytes = MAX_HANDLE_SZ;
	return name_to_handle_at(AT_FDCWD, path, &h->fh, &mnt, 0);
}

/* The fid of FID event @m, or NULL. */
static const struct file_handle *event_fid(const struct fanotify_event_metadata *m)
{
	const struct fanotify_event_info_fid *fid = (const void *)(m + 1);

	if (m->event_len < sizeof(*m) + sizeof(*fid) + sizeof(struct file_handle) ||
	    fid->hdr.info_type != FAN_EVENT_INFO_TYPE_FID)
		return NULL;
	return (const void *)fid->handle;
}

static bool same_handle(const struct file_handle *a, const struct handle *b)
{
	return a->handle_type == b->fh.handle_type && a->handle_bytes == b->fh.handle_bytes &&
	       !memcmp(a->f_handle, b->fh.f_handle, a->handle_bytes);
}

/* ORs the events on objects @h[0] and @h[1] into @got[]; a bit outside C_MASK fails. */
static int read_fid_events(int fd, const struct handle *h, uint64_t *got)
{
	char buf[8192] __attribute__((aligned(8)));
	const struct fanotify_event_metadata *m;
	const struct file_handle *fh;
	ssize_t n;
	int i;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (m = (void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			if (m->mask & ~(uint64_t)C_MASK) {
				fail("group C: event mask %llx by pid %d",
				     (unsigned long long)m->mask, m->pid);
				return 1;
			}
			fh = event_fid(m);
			for (i = 0; fh && i < 2; i++)
				if (same_handle(fh, &h[i]))
					got[i] |= m->mask;
		}
	}
	if (errno != EAGAIN) {
		fail("reading fanotify FID events: %m");
		return 1;
	}
	return 0;
}

/* The directory reports the creation, the file its move (the filesystem mark). */
static int check_group_c(int fd)
{
	struct handle h[2];
	uint64_t got[2] = { 0, 0 };
	int f;

	if (get_handle(DIR_NAME, &h[0]) || read_fid_events(fd, h, got)) {
		fail("group C: cannot drain the queue: %m");
		return 1;
	}
	got[0] = 0;
	f = open(NEW_NAME, O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (f < 0 || close(f) || get_handle(NEW_NAME, &h[1]) || rename(NEW_NAME, MOVED_NAME)) {
		fail("cannot create and rename %s: %m", NEW_NAME);
		return 1;
	}
	if (read_fid_events(fd, h, got))
		return 1;
	if (got[0] != FAN_CREATE || got[1] != FAN_MOVE_SELF) {
		fail("group C: directory events %llx (expected FAN_CREATE), file events %llx "
		     "(expected FAN_MOVE_SELF)",
		     (unsigned long long)got[0], (unsigned long long)got[1]);
		return 1;
	}
	return 0;
}

static void cleanup(void)
{
	unlink(FILE_NAME);
	unlink(SIB_NAME);
	unlink(NEW_NAME);
	unlink(MOVED_NAME);
	rmdir(DIR_NAME);
}

/* Group C, or -errno when this kernel or filesystem cannot report FIDs here (logged). */
static int setup_group_c(void)
{
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_UNLIMITED_QUEUE |
				       FAN_NONBLOCK,
			       O_RDONLY);

	if (fd < 0) {
		test_msg("no FAN_REPORT_FID group (%m): group C skipped\n");
		return neg_errno();
	}
	if (fanotify_mark(fd, FAN_MARK_ADD, FAN_CREATE, AT_FDCWD, DIR_NAME) ||
	    fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_MOVE_SELF, AT_FDCWD,
			  DIR_NAME)) {
		int err = neg_errno();

		test_msg("FAN_REPORT_FID marks refused here (%m): group C skipped\n");
		close(fd);
		return err;
	}
	return fd;
}

static int setup(int *a, int *b, int *c)
{
	int f;

	if (mkdir(DIR_NAME, 0755) || (f = open(FILE_NAME, O_CREAT | O_WRONLY, 0644)) < 0 ||
	    close(f) || (f = open(SIB_NAME, O_CREAT | O_WRONLY, 0644)) < 0 || close(f)) {
		fail("cannot create the files: %m");
		return 1;
	}
	*a = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK, O_RDONLY | O_LARGEFILE);
	*b = fanotify_init(FAN_CLASS_NOTIF | FAN_UNLIMITED_QUEUE | FAN_NONBLOCK, O_RDONLY);
	if (*a < 0 || *b < 0 || fanotify_mark(*a, FAN_MARK_ADD, A_FILE_MASK, AT_FDCWD, FILE_NAME) ||
	    fanotify_mark(*a, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK | FAN_MARK_IGNORED_SURV_MODIFY,
			  FAN_OPEN, AT_FDCWD, FILE_NAME) ||
	    fanotify_mark(*a, FAN_MARK_ADD, A_DIR_MASK, AT_FDCWD, DIR_NAME) ||
	    fanotify_mark(*b, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN, AT_FDCWD, DIR_NAME)) {
		fail("cannot set up fanotify groups A and B: %m");
		return 1;
	}
	*c = setup_group_c();
	return 0;
}

int main(int argc, char **argv)
{
	char before[3][1024], after[3][1024], file[PATH_MAX], sib[PATH_MAX];
	int fds[3], i;

	test_init(argc, argv);
	cleanup();
	if (setup(&fds[0], &fds[1], &fds[2]) || !realpath(FILE_NAME, file) ||
	    !realpath(SIB_NAME, sib))
		return 1;
	for (i = 0; i < 3; i++)
		if (fds[i] >= 0 && fdinfo_marks(fds[i], before[i], sizeof(before[i]))) {
			fail("cannot read the fdinfo of group %c", 'A' + i);
			return 1;
		}
	test_daemon();
	test_waitsig();

	for (i = 0; i < 3; i++) {
		if (fds[i] < 0)
			continue;
		if (fdinfo_marks(fds[i], after[i], sizeof(after[i])) ||
		    strcmp(before[i], after[i])) {
			fail("group %c: fdinfo was '%s', now '%s'", 'A' + i, before[i], after[i]);
			return 1;
		}
	}
	if (check_group_a(fds[0], file, sib) || check_group_b(fds[1], file) ||
	    (fds[2] >= 0 && check_group_c(fds[2])))
		return 1;
	cleanup();
	pass();
	return 0;
}
