// SPDX-License-Identifier: GPL-2.0
/*
 * fanotify groups. Parser: every mark line the kernel prints (inode with and
 * without a handle, mount, filesystem, mount namespace), bad lines refused,
 * and this kernel's own lines for a live group. Dump side (as root, on real
 * children, with cr_dump -R): marks asking for permission events, marks on
 * unlinked files, marks on another mount namespace, and mount marks on a
 * mount hidden by another or of another mount namespace are refused naming
 * the pid, the fd and why, and the child runs on. Restore side: a
 * group opened from a FileEntry as the controller does it shows the fdinfo
 * the marks were made with (FAN_MARK_IGNORE and the old ignored mask,
 * evictable marks, a mark with only an ignored mask, O_NONBLOCK changed after
 * init, a mount namespace mark on the restorer's namespace); bad entries are
 * refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dump.h"
#include "log.h"
#include "options.h"
#include "proc-parse.h"
#include "../../criu-like/files/files-int.h"
#include "../../criu-like/files/restore-files-int.h"
#include "util.h"

#include "lib/dumper.h"
#include "lib/victim.h"

/* The kind under test (files/fanotify.c). */
extern const struct file_kind fanotify_kind;

#ifndef FAN_REPORT_MNT
#define FAN_REPORT_MNT 0x00004000 /* Linux 6.14 */
#endif
#ifndef FAN_MARK_MNTNS
#define FAN_MARK_MNTNS 0x00000110 /* Linux 6.14 */
#endif
#ifndef FAN_MNT_ATTACH
#define FAN_MNT_ATTACH 0x01000000 /* Linux 6.14 */
#endif

static char dir[] = "/tmp/test-fanotify.XXXXXX";
static pid_t victim;
/*
 * A process outside the dumped tree holding a mount namespace of its own: the
 * victims enter it to mark its mounts and come back, so the tree itself stays
 * in criu-like's namespaces (a task in another one is refused before its fds).
 */
static pid_t keeper;

/* ---- parser ---- */

static const char all_kinds[] =
	"pos:\t0\nflags:\t02004002\nmnt_id:\t16\nino:\t2061\n"
	"fanotify flags:10 event-flags:8002\n"
	"fanotify mnt_ns:4026531841 mflags:0 mask:1000000 ignored_mask:0\n"
	"fanotify sdev:800003 mflags:40 mask:4 ignored_mask:1\n"
	"fanotify mnt_id:2a mflags:0 mask:20 ignored_mask:0\n"
	"fanotify ino:1f sdev:800003 mflags:640 mask:40000008 ignored_mask:40000020 "
	"fhandle-bytes:8 fhandle-type:1 f_handle:1f000000deadbeef\n"
	"fanotify ino:20 sdev:800003 mflags:200 mask:2 ignored_mask:0\n";

static void test_parse_all_kinds(void **state)
{
	static const unsigned char h[8] = { 0x1f, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef };
	const struct fdinfo_fanotify_mark *m;
	struct fdinfo fi;

	(void)state;
	assert_int_equal(parse_fdinfo(all_kinds, &fi), 0);
	assert_int_equal(fi.kind, FDINFO_FANOTIFY);
	assert_int_equal(fi.flags, 02004002);
	assert_int_equal(fi.fanotify.flags, FAN_UNLIMITED_QUEUE);
	assert_int_equal(fi.fanotify.event_flags, 0x8002);
	assert_int_equal(fi.n_fmarks, 5);
	m = fi.fmarks;
	assert_int_equal(m[0].kind, FANOTIFY_MARK_MNTNS);
	assert_int_equal(m[0].mnt_ns, 4026531841u); /* decimal, unlike the others */
	assert_int_equal(m[0].mask, FAN_MNT_ATTACH);
	assert_int_equal(m[1].kind, FANOTIFY_MARK_SB);
	assert_int_equal(m[1].sdev, 0x800003);
	assert_int_equal(m[1].mflags, FAN_MARK_IGNORED_SURV_MODIFY);
	assert_int_equal(m[1].ignored_mask, FAN_ACCESS);
	assert_int_equal(m[2].kind, FANOTIFY_MARK_MOUNT);
	assert_int_equal(m[2].mnt_id, 0x2a);
	assert_int_equal(m[3].kind, FANOTIFY_MARK_INODE);
	assert_int_equal(m[3].ino, 0x1f);
	assert_int_equal(m[3].mflags,
			 FAN_MARK_IGNORE | FAN_MARK_EVICTABLE | FAN_MARK_IGNORED_SURV_MODIFY);
	assert_int_equal(m[3].mask, FAN_ONDIR | FAN_CLOSE_WRITE);
	assert_int_equal(m[3].ignored_mask, FAN_ONDIR | FAN_OPEN);
	assert_int_equal(m[3].fhandle_bytes, 8);
	assert_int_equal(m[3].fhandle_type, 1);
	assert_memory_equal(m[3].fhandle, h, 8);
	assert_int_equal(m[4].kind, FANOTIFY_MARK_INODE);
	assert_int_equal(m[4].fhandle_bytes, 0); /* no handle: the part is absent */
	fdinfo_fini(&fi);
}

static void test_parse_bad(void **state)
{
	static const char *const bad[] = {
		/* a mark before the header */
		"pos:\t0\nflags:\t02\nfanotify mnt_id:1 mflags:0 mask:1 ignored_mask:0\n",
		/* mnt_ns is decimal */
		"pos:\t0\nflags:\t02\nfanotify flags:0 event-flags:0\n"
		"fanotify mnt_ns:4a mflags:0 mask:1 ignored_mask:0\n",
		"pos:\t0\nflags:\t02\nfanotify flags:0 event-flags:0\n"
		"fanotify mnt_ns:99999999999 mflags:0 mask:1 ignored_mask:0\n",
		/* a mount mark has no handle part */
		"pos:\t0\nflags:\t02\nfanotify flags:0 event-flags:0\n"
		"fanotify mnt_id:1 mflags:0 mask:1 ignored_mask:0 fhandle-bytes:0\n",
		"pos:\t0\nflags:\t02\nfanotify flags:0 event-flags:0\n"
		"fanotify sdev:1 mflags:0 mask:1\n",
		"pos:\t0\nflags:\t02\nfanotify flags:0 event-flags:0\n"
		"fanotify ino:1 sdev:1 mflags:0 mask:1 ignored_mask:0 fhandle-bytes:4 "
		"fhandle-type:1 f_handle:0102\n",
		"pos:\t0\nflags:\t02\nfanotify flags:0 event-flags:0\n"
		"fanotify ino:1 sdev:1 mflags:0 mask:100000000 ignored_mask:0\n",
	};
	struct fdinfo fi;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (parse_fdinfo(bad[i], &fi) != -EINVAL)
			fail_msg("accepted bad fdinfo %zu: %s", i, bad[i]);
}

static int mnt_id_of(const char *path)
{
	struct fdinfo fi;
	int fd = open(path, O_PATH | O_CLOEXEC), id;

	assert_true(fd >= 0);
	assert_int_equal(proc_parse_fdinfo(getpid(), fd, &fi), 0);
	id = fi.mnt_id;
	fdinfo_fini(&fi);
	close(fd);
	return id;
}

/* This kernel's lines for a live group, newest mark first. */
static void test_parse_live(void **state)
{
	struct fdinfo fi;
	struct stat st;
	char file[64];
	int fd, f;

	(void)state;
	snprintf(file, sizeof(file), "%s/f", dir);
	f = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(f >= 0);
	close(f);
	assert_int_equal(stat(file, &st), 0);
	fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_NONBLOCK, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_EVICTABLE, FAN_MODIFY, AT_FDCWD,
				       file),
			 0);
	assert_int_equal(fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_IGNORE_SURV,
				       FAN_OPEN | FAN_ONDIR, AT_FDCWD, dir),
			 0);
	assert_int_equal(fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN, AT_FDCWD, dir),
			 0);
	assert_int_equal(fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_ATTRIB, AT_FDCWD,
				       dir),
			 0);
	assert_int_equal(proc_parse_fdinfo(getpid(), fd, &fi), 0);
	assert_int_equal(fi.kind, FDINFO_FANOTIFY);
	assert_int_equal(fi.fanotify.flags, FAN_REPORT_FID | FAN_NONBLOCK);
	assert_int_equal(fi.n_fmarks, 4);
	assert_int_equal(fi.fmarks[0].kind, FANOTIFY_MARK_SB);
	assert_int_equal(fi.fmarks[0].sdev, major(st.st_dev) << 20 | minor(st.st_dev));
	assert_int_equal(fi.fmarks[0].mask, FAN_ATTRIB);
	assert_int_equal(fi.fmarks[1].kind, FANOTIFY_MARK_MOUNT);
	assert_int_equal(fi.fmarks[1].mnt_id, mnt_id_of(dir));
	assert_int_equal(fi.fmarks[2].kind, FANOTIFY_MARK_INODE);
	assert_int_equal(fi.fmarks[2].mflags, FAN_MARK_IGNORE_SURV);
	assert_int_equal(fi.fmarks[2].mask, 0);
	assert_int_equal(fi.fmarks[2].ignored_mask, FAN_OPEN | FAN_ONDIR);
	assert_int_equal(fi.fmarks[3].kind, FANOTIFY_MARK_INODE);
	assert_int_equal(fi.fmarks[3].ino, st.st_ino);
	assert_int_equal(fi.fmarks[3].mflags, FAN_MARK_EVICTABLE);
	assert_int_equal(fi.fmarks[3].mask, FAN_MODIFY);
	assert_true(fi.fmarks[3].fhandle_bytes > 0);
	fdinfo_fini(&fi);
	close(fd);
}

/* ---- dump side ---- */

enum victim_kind {
	V_PERM, /* a FAN_CLASS_CONTENT group with a FAN_OPEN_PERM mark */
	V_UNLINKED, /* an inode mark on a file unlinked since, still open */
	V_MNTNS, /* a FAN_REPORT_MNT group marking another mount namespace */
	V_HIDDEN, /* a mount mark on a tmpfs another tmpfs was mounted over */
	V_OTHER_NS, /* a mount mark on a bind mount in another mount namespace (the keeper's) */
};

/* The keeper: a mount namespace of its own, private mounts, then it waits to be killed. */
static void start_keeper(void)
{
	int p[2];
	char c = 0;

	assert_int_equal(pipe(p), 0);
	keeper = fork();
	assert_true(keeper >= 0);
	if (!keeper) {
		close(p[0]);
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			_exit(1);
		if (write(p[1], "k", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
}

/* Enter the mount namespace of @pid. 0 or -errno. */
static int enter_mntns(pid_t pid)
{
	char path[64];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNS))
		err = -errno;
	if (fd >= 0)
		close(fd);
	return err;
}

/*
 * A mount on @path, marked: a tmpfs hidden by another one (@hide), in the
 * task's own namespace (criu-like's: teardown() unmounts both); or, in the
 * keeper's mount namespace, @path bound on itself (the same inode as the
 * dumper's @path, on another mount), the task coming back to the namespace
 * of its parent (the test's).
 */
static int mark_private_mount(const char *path, bool hide)
{
	int fd, err;

	if (mkdir(path, 0700) || (!hide && enter_mntns(keeper)))
		return -errno;
	if (hide ? mount("t", path, "tmpfs", 0, "size=64k")
		 : mount(path, path, NULL, MS_BIND, NULL))
		return -errno;
	fd = fanotify_init(FAN_CLASS_NOTIF, O_RDONLY);
	if (fd < 0 || fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN, AT_FDCWD, path))
		return -errno;
	if (hide && mount("t", path, "tmpfs", 0, "size=64k"))
		return -errno;
	err = hide ? 0 : enter_mntns(getppid());
	return err ? err : fd;
}

static int victim_setup(void *arg, void *report)
{
	enum victim_kind kind = *(enum victim_kind *)arg;
	int *ret_fd = report;
	char path[64];
	int fd, f;

	snprintf(path, sizeof(path), "%s/marked", dir);
	f = open(path, O_CREAT | O_RDWR, 0600);
	if (f < 0)
		return -errno;
	if (kind == V_HIDDEN || kind == V_OTHER_NS) {
		snprintf(path, sizeof(path), "%s/mnt", dir);
		fd = mark_private_mount(path, kind == V_HIDDEN);
		if (fd < 0)
			return fd;
	} else if (kind == V_MNTNS) {
		/* marks the keeper's mount namespace, not its own */
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", keeper);
		fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_MNT, O_RDONLY);
		if (fd < 0 || fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MNTNS, FAN_MNT_ATTACH,
					    AT_FDCWD, path))
			return -errno;
	} else {
		fd = fanotify_init(kind == V_PERM ? FAN_CLASS_CONTENT : FAN_CLASS_NOTIF, O_RDONLY);
		if (fd < 0 ||
		    fanotify_mark(fd, FAN_MARK_ADD, kind == V_PERM ? FAN_OPEN_PERM : FAN_MODIFY,
				  AT_FDCWD, path))
			return -errno;
		if (kind == V_UNLINKED && unlink(path))
			return -errno;
	}
	*ret_fd = fd;
	return 0;
}

/* A child set up as @kind, which then sleeps; its fd of interest in *@ret_fd. */
static void start_victim(enum victim_kind kind, int *ret_fd)
{
	if (kind == V_MNTNS || kind == V_OTHER_NS)
		start_keeper();
	victim = victim_start_sleeper(victim_setup, &kind, ret_fd, sizeof(*ret_fd));
}

/* cr_dump -R of the victim must fail with -EOPNOTSUPP and log @expect; the victim lives on. */
static void dump_refused(const char *expect)
{
	char imgdir[64];

	snprintf(imgdir, sizeof(imgdir), "%s/img", dir);
	cr_dump_refused(victim, imgdir, expect);
}

static void test_perm_refused(void **state)
{
	char expect[128];
	int fd;

	(void)state;
	start_victim(V_PERM, &fd);
	snprintf(expect, sizeof(expect),
		 "pid %d fd %d: fanotify mark asks for permission events (mask 0x10000)", victim,
		 fd);
	dump_refused(expect);
}

static void test_unlinked_refused(void **state)
{
	char expect[128];
	int fd;

	(void)state;
	start_victim(V_UNLINKED, &fd);
	snprintf(expect, sizeof(expect), "pid %d fd %d: fanotify inode mark (inode ", victim, fd);
	dump_refused(expect);
	dump_refused("no path leads to the marked file");
}

static void test_mntns_refused(void **state)
{
	char expect[128];
	int fd;

	(void)state;
	start_victim(V_MNTNS, &fd);
	snprintf(expect, sizeof(expect), "pid %d fd %d: fanotify mark on mount namespace ", victim,
		 fd);
	dump_refused(expect);
	dump_refused("not the task's own");
}

static void test_hidden_mount_refused(void **state)
{
	char expect[128];
	int fd;

	(void)state;
	start_victim(V_HIDDEN, &fd);
	snprintf(expect, sizeof(expect), "pid %d fd %d: fanotify mount mark on mount ", victim, fd);
	dump_refused(expect);
	dump_refused("another mount hides it");
}

/* A mount of another mount namespace: not one the task's own mountinfo shows. */
static void test_other_ns_mount_refused(void **state)
{
	char expect[128];
	int fd;

	(void)state;
	start_victim(V_OTHER_NS, &fd);
	snprintf(expect, sizeof(expect), "pid %d fd %d: fanotify mount mark on mount ", victim, fd);
	dump_refused(expect);
	dump_refused("it is not in the task's mount table");
}

/* ---- restore side ---- */

struct one_file {
	struct restore_ctx ctx;
	struct rst_files files;
	FileEntry *by_id[1];
};

static struct one_file of;

static int open_one(FileEntry *fe)
{
	memset(&of, 0, sizeof(of));
	of.ctx.proc_fd = -1; /* no /proc of criu-like's own: the mount namespace mark uses /proc */
	of.by_id[0] = fe;
	of.files.idx.by_id = of.by_id;
	of.files.idx.n = 1;
	of.ctx.files = &of.files;
	return fanotify_kind.open(&of.ctx, 0);
}

static void set_mark(FanotifyMarkEntry *m, uint32_t type, uint32_t mflags, uint32_t mask,
		     uint32_t ignored, char *path)
{
	fanotify_mark_entry__init(m);
	m->type = type;
	m->mflags = mflags;
	m->mask = mask;
	m->ignored_mask = ignored;
	m->path.data = (uint8_t *)path;
	m->path.len = strlen(path);
}

/* The "fanotify " lines of @fd without the inode, device, mount and handle fields. */
static void fdinfo_masks(int fd, char *out, size_t size)
{
	char path[64], *p, *q, *nl, *end;
	_cleanup_free_ char *text = NULL;
	size_t len = 0, n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	assert_non_null(f);
	text = calloc(1, 8192);
	assert_non_null(text);
	n = fread(text, 1, 8191, f);
	fclose(f);
	assert_true(n > 0);
	out[0] = '\0';
	for (p = text; (p = strstr(p, "fanotify ")); p = nl) {
		nl = strchrnul(p, '\n');
		q = strstr(p, "mflags:");
		if (!q || q > nl)
			q = p;
		end = strstr(q, " fhandle-bytes:");
		if (end && end < nl)
			nl = end;
		len += (size_t)snprintf(out + len, size - len, "%.*s;", (int)(nl - q), q);
		assert_true(len < size);
	}
}

static void test_open_group(void **state)
{
	FileEntry fe = FILE_ENTRY__INIT;
	FanotifyFileEntry e = FANOTIFY_FILE_ENTRY__INIT;
	FanotifyMarkEntry m[4], *mp[4] = { &m[0], &m[1], &m[2], &m[3] };
	char file[64], lines[1024];
	int fd, f;

	(void)state;
	snprintf(file, sizeof(file), "%s/f", dir);
	f = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(f >= 0);
	close(f);
	fe.id = 9;
	fe.type = FILE_TYPE__FILE_FANOTIFY;
	fe.fanotify = &e;
	e.flags = O_RDONLY | O_NONBLOCK; /* set by F_SETFL after an init without FAN_NONBLOCK */
	e.init_flags = FAN_CLASS_CONTENT | FAN_UNLIMITED_MARKS;
	e.event_flags = O_RDWR | O_LARGEFILE;
	e.n_marks = 4;
	e.marks = mp;
	/* oldest first */
	set_mark(&m[0], FAN_MARK_INODE, FAN_MARK_EVICTABLE, FAN_CLOSE_WRITE, 0, file);
	set_mark(&m[1], FAN_MARK_INODE, FAN_MARK_IGNORE_SURV, FAN_OPEN | FAN_EVENT_ON_CHILD,
		 FAN_ACCESS | FAN_ONDIR, dir);
	set_mark(&m[2], FAN_MARK_MOUNT, FAN_MARK_IGNORED_SURV_MODIFY, 0, FAN_MODIFY, dir);
	set_mark(&m[3], FAN_MARK_FILESYSTEM, 0, FAN_OPEN, 0, dir);
	fd = open_one(&fe);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	assert_int_equal(fcntl(fd, F_GETFD), FD_CLOEXEC);
	fdinfo_masks(fd, lines, sizeof(lines));
	assert_string_equal(lines, "fanotify flags:24 event-flags:8002;"
				   "mflags:0 mask:20 ignored_mask:0;"
				   "mflags:40 mask:0 ignored_mask:2;"
				   "mflags:440 mask:8000020 ignored_mask:40000001;"
				   "mflags:200 mask:8 ignored_mask:0;");
	close(fd);
	/* a mark type the tool never writes, unknown mark flags, a missing path */
	m[3].type = FAN_MARK_MNTNS;
	assert_int_equal(open_one(&fe), -EINVAL);
	m[3].type = FAN_MARK_FILESYSTEM;
	m[3].mflags = 0x1000;
	assert_int_equal(open_one(&fe), -EINVAL);
	m[3].mflags = 0;
	unlink(file);
	assert_int_equal(open_one(&fe), -ENOENT);
	fe.fanotify = NULL;
	assert_int_equal(open_one(&fe), -EINVAL);
}

/*
 * A group reporting the parent's fid shows FAN_EVENT_ON_CHILD in the mask of
 * a file's mark (the kernel adds it); with FAN_REPORT_TARGET_FID the kernel
 * refuses it from the caller on a non-directory, so the restore leaves it out.
 */
static void test_open_target_fid(void **state)
{
	FileEntry fe = FILE_ENTRY__INIT;
	FanotifyFileEntry e = FANOTIFY_FILE_ENTRY__INIT;
	FanotifyMarkEntry m, *mp[1] = { &m };
	char file[64], lines[256];
	int fd, f;

	(void)state;
	snprintf(file, sizeof(file), "%s/f", dir);
	f = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(f >= 0);
	close(f);
	fe.id = 11;
	fe.type = FILE_TYPE__FILE_FANOTIFY;
	fe.fanotify = &e;
	e.flags = O_RDONLY;
	e.init_flags = FAN_REPORT_DFID_NAME_TARGET;
	e.event_flags = O_RDONLY | O_LARGEFILE;
	e.n_marks = 1;
	e.marks = mp;
	set_mark(&m, FAN_MARK_INODE, 0, FAN_MODIFY | FAN_EVENT_ON_CHILD, 0, file);
	fd = open_one(&fe);
	assert_true(fd >= 0);
	fdinfo_masks(fd, lines, sizeof(lines));
	close(fd);
	assert_string_equal(lines, "fanotify flags:1e00 event-flags:8000;"
				   "mflags:0 mask:8000002 ignored_mask:0;");
}

/* A mount namespace mark comes back on the restoring process's own namespace. */
static void test_open_mntns(void **state)
{
	FileEntry fe = FILE_ENTRY__INIT;
	FanotifyFileEntry e = FANOTIFY_FILE_ENTRY__INIT;
	FanotifyMarkEntry m, *mp[1] = { &m };
	char lines[256], none[1] = "";
	struct fdinfo fi;
	struct stat st;
	int fd;

	(void)state;
	assert_int_equal(stat("/proc/self/ns/mnt", &st), 0);
	fe.id = 10;
	fe.type = FILE_TYPE__FILE_FANOTIFY;
	fe.fanotify = &e;
	e.flags = O_RDONLY;
	e.init_flags = FAN_REPORT_MNT;
	e.event_flags = O_RDONLY | O_LARGEFILE;
	e.n_marks = 1;
	e.marks = mp;
	set_mark(&m, FAN_MARK_MNTNS, 0, FAN_MNT_ATTACH, 0, none);
	fd = open_one(&fe);
	assert_true(fd >= 0);
	fdinfo_masks(fd, lines, sizeof(lines));
	assert_int_equal(proc_parse_fdinfo(getpid(), fd, &fi), 0);
	close(fd);
	assert_string_equal(lines, "fanotify flags:4000 event-flags:8000;"
				   "mflags:0 mask:1000000 ignored_mask:0;");
	assert_int_equal(fi.n_fmarks, 1);
	assert_int_equal(fi.fmarks[0].kind, FANOTIFY_MARK_MNTNS);
	assert_int_equal(fi.fmarks[0].mnt_ns, st.st_ino);
	fdinfo_fini(&fi);
	/* a mount namespace mark never has a path */
	set_mark(&m, FAN_MARK_MNTNS, 0, FAN_MNT_ATTACH, 0, dir);
	assert_int_equal(open_one(&fe), -EINVAL);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(strcpy(dir, "/tmp/test-fanotify.XXXXXX")));
	return 0;
}

static int teardown(void **state)
{
	char cmd[96];

	(void)state;
	victim_kill(&victim);
	victim_kill(&keeper);
	/* test_hidden_mount_refused's two tmpfs, in criu-like's own namespace */
	snprintf(cmd, sizeof(cmd), "%s/mnt", dir);
	while (!umount2(cmd, MNT_DETACH))
		;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -EIO : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_all_kinds),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test_setup_teardown(test_parse_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_mntns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_target_fid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_perm_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlinked_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mntns_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hidden_mount_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_ns_mount_refused, setup, teardown),
	};

	if (geteuid()) {
		printf("test-fanotify: skipped, fanotify groups need root\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
