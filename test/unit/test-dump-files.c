// SPDX-License-Identifier: GPL-2.0
/*
 * dump_task_files() and dump_files_finish() on real children, the kinds that
 * are dumped: seize, infect, dump, cure, release, then decode fdinfo-PID.img,
 * files.img, pipes-data.img and the ghost image and compare every field with
 * what the children set up (regular files, a directory, ghosts, a memfd,
 * character devices, pipes, a terminal with --shell-job, many descriptions of
 * one inode). The children then check their files were left as they were
 * (positions, the pipe's unread data). dump_file_by_fd() on the test's own
 * fds. Refusals and fds in flight: test-dump-refusals.c. Run as root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/userfaultfd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "crc32c.h"
#include "dump.h"
#include "image.h"
#include "infect.h"
#include "log.h"
#include "options.h"
#include "proc-parse.h"
#include "seize.h"
#include "util.h"

#include "lib/dumper.h"
#include "lib/logcap.h"
#include "lib/victim.h"

#include "files.pb-c.h"
#include "../../criu-like/files/reg.h"

#define REG_SIZE 1000
#define REG_POS 123
#define GHOST_SIZE 10000
#define GHOST_POS 77
#define MEMFD_SIZE 5000
#define PIPE_DATA (100 * 1024)
#define PIPE_SIZE (128 * 1024)
#define NR_MANY 2000 /* separate opens of one file, each dup'ed once */
#define MANY_BASE 1000 /* their fds: above REPORT_FD */

enum victim_kind {
	V_FILES,
	V_WRITE_END, /* the write end of a pipe whose read end the test holds */
	V_TTY, /* a pseudo-terminal slave; the test holds the master */
	V_MANY, /* NR_MANY descriptions of /dev/zero, each behind two fds */
};

/* What the child tells the test once it is set up. */
struct report {
	int reg, app, dir, ghost, memfd, null, urandom, p0, p1, rdup, wdup;
	int bad; /* V_WRITE_END, V_TTY: the test's fd */
	pid_t pid; /* the child */
	pid_t second; /* the grandchild (V_FILES) */
};

#define REPORT_FD 200

static pid_t victim, second;
static char dir[] = "/tmp/test-dump-files.XXXXXX";
static char imgdir[64], path_reg[64], path_app[64], path_ghost[64];

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7 + i / 251);
}

static int fill(int fd, size_t len)
{
	uint8_t buf[4096];
	size_t off, i, n;

	for (off = 0; off < len; off += n) {
		n = min(len - off, sizeof(buf));
		for (i = 0; i < n; i++)
			buf[i] = pattern(off + i);
		if (write_all(fd, buf, n))
			return -EIO;
	}
	return 0;
}

static bool is_pattern(const uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pattern(i))
			return false;
	return true;
}

static int setup_files(struct report *r)
{
	r->reg = open(path_reg, O_RDWR | O_CREAT | O_TRUNC, 0644);
	r->app = open(path_app, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC, 0600);
	r->dir = open(dir, O_RDONLY | O_DIRECTORY);
	r->ghost = open(path_ghost, O_RDWR | O_CREAT | O_TRUNC, 0640);
	r->urandom = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	r->memfd = memfd_create("test-dump-files", 0);
	if (r->reg < 0 || r->app < 0 || r->dir < 0 || r->ghost < 0 || r->urandom < 0 ||
	    r->memfd < 0)
		return -errno;
	if (fill(r->reg, REG_SIZE) || lseek(r->reg, REG_POS, SEEK_SET) != REG_POS ||
	    write_all(r->app, "abc", 3) || fill(r->ghost, GHOST_SIZE) ||
	    lseek(r->ghost, GHOST_POS, SEEK_SET) != GHOST_POS || fchmod(r->ghost, 0640) ||
	    unlink(path_ghost) || fill(r->memfd, MEMFD_SIZE))
		return -EIO;
	return 0;
}

static int setup_pipe(struct report *r)
{
	int p[2];

	if (pipe(p) || fcntl(p[1], F_SETPIPE_SZ, PIPE_SIZE) < 0)
		return -errno;
	r->p0 = p[0];
	r->p1 = p[1];
	r->rdup = dup(p[0]);
	r->wdup = fcntl(p[1], F_DUPFD_CLOEXEC, 0);
	if (r->rdup < 0 || r->wdup < 0 || fill(p[1], PIPE_DATA))
		return -EIO;
	return 0;
}

/* Read back the pipe's data: all of it must still be there, and nothing more. */
static int check_pipe(const struct report *r)
{
	static uint8_t buf[PIPE_DATA];
	int left = -1;

	/* Non-blocking: missing data fails the check instead of hanging it. */
	if (fcntl(r->p0, F_SETFL, O_NONBLOCK) || read_all(r->p0, buf, sizeof(buf)) ||
	    !is_pattern(buf, sizeof(buf)))
		return 2;
	if (ioctl(r->p0, FIONREAD, &left) || left != 0)
		return 3;
	if (lseek(r->reg, 0, SEEK_CUR) != REG_POS || lseek(r->ghost, 0, SEEK_CUR) != GHOST_POS)
		return 4;
	return 0;
}

/* V_FILES: every supported kind, and a grandchild sharing all the descriptions. */
static int victim_files(struct report *r)
{
	if (setup_files(r) || setup_pipe(r))
		return -EIO;
	r->second = fork();
	if (r->second == 0) {
		close(REPORT_FD); /* the same fd table as its parent's after the report */
		for (;;)
			pause();
	}
	return r->second < 0 ? -errno : 0;
}

/* V_MANY: NR_MANY opens of /dev/zero, each at MANY_BASE + i and MANY_BASE + NR_MANY + i. */
static int victim_many(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	rl.rlim_cur = rl.rlim_max;
	if (rl.rlim_max < MANY_BASE + 2 * NR_MANY || setrlimit(RLIMIT_NOFILE, &rl))
		return -EMFILE;
	for (int i = 0; i < NR_MANY; i++) {
		int fd = open("/dev/zero", O_RDONLY);

		if (fd < 0 || dup2(fd, MANY_BASE + i) < 0 ||
		    dup2(fd, MANY_BASE + NR_MANY + i) < 0 || close(fd))
			return -EBADF;
	}
	return 0;
}

/* In the child: the victim_kind *@arg set up, described in the struct report @report. */
static int victim_setup(void *arg, void *report)
{
	enum victim_kind kind = *(enum victim_kind *)arg;
	struct report *r = report;

	memset(r, 0xff, sizeof(*r));
	r->pid = getpid();
	/* stdin, stdout and stderr share one description of /dev/null */
	r->null = victim_null_stdio();
	if (r->null < 0)
		return r->null;
	/* The test's fd, if any, moved down among the others */
	if (kind == V_WRITE_END || kind == V_TTY)
		r->bad = dup(REPORT_FD + 1);
	close(REPORT_FD + 1);
	switch (kind) {
	case V_FILES:
		return victim_files(r);
	case V_WRITE_END:
		return fill(r->bad, PIPE_DATA);
	case V_TTY:
		return 0;
	case V_MANY:
		return victim_many();
	}
	return -EINVAL;
}

/* After SIGUSR1: exit 0 when the child's state is intact. */
static int victim_check(void *arg, const void *report)
{
	return *(enum victim_kind *)arg == V_FILES ? check_pipe(report) : 0;
}

static const struct victim_ops victim_ops = {
	.setup = victim_setup,
	.check = victim_check,
	.report_fd = REPORT_FD,
};

/* Start a child of @kind; @extra (or -1) is an fd of the test the child gets as r->bad. */
static int start_victim_with(enum victim_kind kind, int extra, struct report *r)
{
	victim = victim_start(&victim_ops, &kind, extra, r, sizeof(*r));
	second = victim > 0 ? r->second : 0;
	return victim < 0 ? victim : 0;
}

static int start_victim(enum victim_kind kind, struct report *r)
{
	return start_victim_with(kind, -1, r);
}

static int teardown(void **state)
{
	(void)state;
	victim_kill(&second);
	victim_kill(&victim);
	return rm_rf(dir);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(strcpy(dir, "/tmp/test-dump-files.XXXXXX")));
	/* Images in a subdirectory: the directory fd dumped must not change under the test. */
	snprintf(imgdir, sizeof(imgdir), "%s/img", dir);
	assert_int_equal(mkdir(imgdir, 0700), 0);
	snprintf(path_reg, sizeof(path_reg), "%s/data.txt", dir);
	snprintf(path_app, sizeof(path_app), "%s/append.txt", dir);
	snprintf(path_ghost, sizeof(path_ghost), "%s/ghost.txt", dir);
	return 0;
}

/* ---- decoding ---- */

struct images {
	ProtobufCMessage **files, **fdi[2], **pipes;
	size_t n_files, n_fdi[2], n_pipes;
};

static const FdEntry *fd_entry(const struct images *im, int task, int fd)
{
	return find_fd(im->fdi[task], im->n_fdi[task], fd);
}

static const FileEntry *file_of(const struct images *im, int task, int fd)
{
	return find_file(im->files, im->n_files, fd_entry(im, task, fd)->id);
}

static void check_reg(const FileEntry *fe, const char *path, int fd_in_victim, uint64_t pos)
{
	const RegFileEntry *r = fe->reg;
	struct fdinfo fi = { 0 };
	struct stat st;

	assert_non_null(r);
	assert_int_equal(r->path.len, strlen(path));
	assert_memory_equal(r->path.data, path, r->path.len);
	assert_int_equal(r->pos, pos);
	assert_int_equal(proc_parse_fdinfo(victim, fd_in_victim, &fi), 0);
	assert_int_equal(r->flags, fi.flags & ~(unsigned int)O_CLOEXEC);
	assert_true(r->has_mnt_id);
	assert_int_equal(r->mnt_id, fi.mnt_id);
	fdinfo_fini(&fi);
	if (!r->unlinked) {
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(r->dev, st.st_dev);
		assert_int_equal(r->ino, st.st_ino);
		assert_int_equal(r->mode, st.st_mode);
		assert_int_equal(r->size, st.st_size);
	}
}

static void check_ghost(int imgfd, const FileEntry *fe, size_t size, mode_t mode)
{
	static uint8_t buf[GHOST_SIZE];
	struct cr_img *img;

	assert_true(size <= sizeof(buf));
	assert_int_equal(fe->type, FILE_TYPE__FILE_REG);
	assert_true(fe->reg->has_unlinked && fe->reg->unlinked);
	assert_int_equal(fe->reg->size, size);
	assert_int_equal(fe->reg->mode, mode);
	img = img_open(imgfd, CR_IMG_GHOST, fe->id, IMG_READ);
	assert_non_null(img);
	assert_int_equal(img_raw_size(img), size);
	assert_int_equal(img_read_raw(img, 0, buf, size), 0);
	assert_int_equal(img_close(img), 0);
	assert_true(is_pattern(buf, size));
	assert_true(fe->reg->has_ghost_crc32c);
	assert_int_equal(fe->reg->ghost_crc32c, crc32c(0, buf, size));
}

static void check_chr(const FileEntry *fe, unsigned int minor_nr, const char *path)
{
	assert_int_equal(fe->type, FILE_TYPE__FILE_CHR);
	assert_non_null(fe->chr);
	assert_int_equal(fe->chr->rdev, makedev(1, minor_nr));
	assert_true(fe->chr->has_path);
	assert_memory_equal(fe->chr->path.data, path, strlen(path));
}

static void check_pipes(const struct images *im, const struct report *r)
{
	const FileEntry *rd = file_of(im, 0, r->p0), *wr = file_of(im, 0, r->p1);
	const PipeDataEntry *pd;

	assert_int_equal(rd->type, FILE_TYPE__FILE_PIPE);
	assert_int_equal(wr->type, FILE_TYPE__FILE_PIPE);
	assert_int_not_equal(rd->id, wr->id);
	assert_int_equal(rd->pipe->flags & O_ACCMODE, O_RDONLY);
	assert_int_equal(wr->pipe->flags & O_ACCMODE, O_WRONLY);
	assert_int_equal(rd->pipe->pipe_ino, wr->pipe->pipe_ino);
	/* dup'ed fds share the description: one entry, in this task and the grandchild */
	assert_int_equal(fd_entry(im, 0, r->rdup)->id, rd->id);
	assert_int_equal(fd_entry(im, 0, r->wdup)->id, wr->id);
	assert_int_equal(fd_entry(im, 1, r->p0)->id, rd->id);
	assert_int_equal(fd_entry(im, 1, r->wdup)->id, wr->id);
	assert_int_equal(im->n_pipes, 1);
	pd = (PipeDataEntry *)im->pipes[0];
	assert_int_equal(pd->pipe_ino, rd->pipe->pipe_ino);
	assert_true(pd->has_pipe_size);
	assert_int_equal(pd->pipe_size, PIPE_SIZE);
	assert_int_equal(pd->data.len, PIPE_DATA);
	assert_true(is_pattern(pd->data.data, pd->data.len));
}

static void check_fd_tables(const struct images *im, const struct report *r)
{
	size_t i;

	/* 0-2, 11 fds set up; the parasite's socket is not part of it */
	assert_int_equal(im->n_fdi[0], 14);
	assert_int_equal(im->n_fdi[1], 14);
	for (i = 0; i < im->n_fdi[0]; i++) {
		const FdEntry *a = (FdEntry *)im->fdi[0][i], *b = (FdEntry *)im->fdi[1][i];

		assert_int_equal(a->fd, b->fd);
		assert_int_equal(a->id, b->id);
		assert_int_equal(a->cloexec, b->cloexec);
		assert_int_equal(a->cloexec,
				 a->fd == (uint32_t)r->urandom || a->fd == (uint32_t)r->wdup);
	}
	assert_int_equal(fd_entry(im, 0, 0)->id, fd_entry(im, 0, r->null)->id);
	assert_int_equal(fd_entry(im, 0, 2)->id, fd_entry(im, 0, r->null)->id);
	/* every description once: null, 4 files, urandom, memfd, two pipe ends */
	assert_int_equal(im->n_files, 9);
	for (i = 0; i < im->n_files; i++)
		assert_int_equal(((FileEntry *)im->files[i])->id, i + 1);
}

static void free_images(struct images *im)
{
	img_free_records(im->files, im->n_files);
	img_free_records(im->fdi[0], im->n_fdi[0]);
	img_free_records(im->fdi[1], im->n_fdi[1]);
	img_free_records(im->pipes, im->n_pipes);
}

static void test_dump_files(void **state)
{
	struct cr_options opts = { 0 };
	struct images im = { 0 };
	struct report r;
	const FileEntry *fe;
	char path[64];
	struct stat st;
	int imgfd;

	(void)state;
	assert_int_equal(start_victim(V_FILES, &r), 0);
	imgfd = img_dir_open(imgdir, false);
	assert_true(imgfd >= 0);
	assert_int_equal(dump_tree_files(victim, imgfd, &opts), 0);

	read_records(imgfd, CR_IMG_FILES, 0, &im.files, &im.n_files);
	read_records(imgfd, CR_IMG_FDINFO, (uint32_t)victim, &im.fdi[0], &im.n_fdi[0]);
	read_records(imgfd, CR_IMG_FDINFO, (uint32_t)second, &im.fdi[1], &im.n_fdi[1]);
	read_records(imgfd, CR_IMG_PIPES_DATA, 0, &im.pipes, &im.n_pipes);
	check_fd_tables(&im, &r);

	fe = file_of(&im, 0, r.reg);
	assert_int_equal(fe->type, FILE_TYPE__FILE_REG);
	check_reg(fe, path_reg, r.reg, REG_POS);
	assert_int_equal(fe->reg->flags & O_ACCMODE, O_RDWR);
	fe = file_of(&im, 0, r.app);
	check_reg(fe, path_app, r.app, 3);
	assert_true(fe->reg->flags & O_APPEND);
	fe = file_of(&im, 0, r.dir);
	assert_int_equal(fe->type, FILE_TYPE__FILE_DIR);
	check_reg(fe, dir, r.dir, 0);
	fe = file_of(&im, 0, r.ghost);
	check_reg(fe, path_ghost, r.ghost, GHOST_POS);
	check_ghost(imgfd, fe, GHOST_SIZE, S_IFREG | 0640);
	/* A memfd is an unlinked regular file */
	fe = file_of(&im, 0, r.memfd);
	check_reg(fe, "/memfd:test-dump-files", r.memfd, MEMFD_SIZE);
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", victim, r.memfd);
	assert_int_equal(stat(path, &st), 0);
	check_ghost(imgfd, fe, MEMFD_SIZE, st.st_mode);
	check_chr(file_of(&im, 0, r.null), 3, "/dev/null");
	check_chr(file_of(&im, 0, r.urandom), 9, "/dev/urandom");
	check_pipes(&im, &r);
	free_images(&im);
	close(imgfd);

	/* The child finds its pipe data, all of it, and its positions unchanged. */
	victim_finish(&victim);
}

/*
 * Only the write end in the tree, the read end in the test: the data is read
 * through a read end opened from /proc, and the test still reads all of it.
 */
static void test_pipe_write_end_only(void **state)
{
	static uint8_t buf[PIPE_DATA];
	struct cr_options opts = { 0 };
	ProtobufCMessage **files, **pipes;
	size_t n_files, n_pipes;
	const PipeDataEntry *pd;
	const FileEntry *fe;
	struct report r;
	int p[2], imgfd, left = -1;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_true(fcntl(p[1], F_SETPIPE_SZ, PIPE_SIZE) >= PIPE_SIZE);
	assert_int_equal(start_victim_with(V_WRITE_END, p[1], &r), 0);
	close(p[1]);
	imgfd = img_dir_open(imgdir, false);
	assert_true(imgfd >= 0);
	assert_int_equal(dump_tree_files(victim, imgfd, &opts), 0);
	read_records(imgfd, CR_IMG_FILES, 0, &files, &n_files);
	read_records(imgfd, CR_IMG_PIPES_DATA, 0, &pipes, &n_pipes);
	assert_int_equal(n_files, 2); /* /dev/null and the write end */
	fe = (FileEntry *)files[1];
	assert_int_equal(fe->type, FILE_TYPE__FILE_PIPE);
	assert_int_equal(fe->pipe->flags & O_ACCMODE, O_WRONLY);
	assert_int_equal(n_pipes, 1);
	pd = (PipeDataEntry *)pipes[0];
	assert_int_equal(pd->pipe_ino, fe->pipe->pipe_ino);
	assert_int_equal(pd->pipe_size, PIPE_SIZE);
	assert_int_equal(pd->data.len, PIPE_DATA);
	assert_true(is_pattern(pd->data.data, pd->data.len));
	img_free_records(files, n_files);
	img_free_records(pipes, n_pipes);
	close(imgfd);
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(read_all(p[0], buf, sizeof(buf)), 0);
	assert_true(is_pattern(buf, sizeof(buf)));
	assert_int_equal(ioctl(p[0], FIONREAD, &left), 0);
	assert_int_equal(left, 0);
	close(p[0]);
	victim_finish(&victim);
}

/* A terminal is refused without --shell-job, and is a FILE_TTY with it. */
static void test_tty(void **state)
{
	struct cr_options opts = { 0 };
	ProtobufCMessage **files;
	char expect[160];
	const FileEntry *fe;
	struct report r;
	struct stat st;
	const char *log;
	int m, s, imgfd;
	size_t n_files;

	(void)state;
	m = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(m >= 0);
	assert_int_equal(grantpt(m), 0);
	assert_int_equal(unlockpt(m), 0);
	s = open(ptsname(m), O_RDWR | O_NOCTTY);
	assert_true(s >= 0);
	assert_int_equal(fstat(s, &st), 0);
	assert_int_equal(start_victim_with(V_TTY, s, &r), 0);
	close(s);
	imgfd = img_dir_open(imgdir, false);
	assert_true(imgfd >= 0);

	logcap_start(-1);
	assert_int_equal(dump_tree_files(victim, imgfd, &opts), -EOPNOTSUPP);
	log = logcap_stop();
	snprintf(expect, sizeof(expect),
		 "pid %d fd %d: %s (terminal %u:%u) is dumped only with "
		 "--shell-job",
		 r.pid, r.bad, ptsname(m), major(st.st_rdev), minor(st.st_rdev));
	assert_in_log(log, expect);

	opts.shell_job = true;
	assert_int_equal(dump_tree_files(victim, imgfd, &opts), 0);
	read_records(imgfd, CR_IMG_FILES, 0, &files, &n_files);
	assert_int_equal(n_files, 2);
	fe = (FileEntry *)files[1];
	assert_int_equal(fe->type, FILE_TYPE__FILE_TTY);
	assert_int_equal(fe->chr->rdev, st.st_rdev);
	assert_int_equal(fe->chr->path.len, strlen(ptsname(m)));
	assert_memory_equal(fe->chr->path.data, ptsname(m), fe->chr->path.len);
	assert_int_equal(fe->chr->flags & O_ACCMODE, O_RDWR);
	img_free_records(files, n_files);
	close(imgfd);
	close(m);
	victim_finish(&victim);
}

/* Many descriptions on one inode: each found again for its dup, none mixed up. */
static void test_many_descriptions(void **state)
{
	struct cr_options opts = { 0 };
	ProtobufCMessage **files, **fdi;
	size_t n_files, n_fdi, i;
	struct report r;
	struct timespec t0, t1;
	int imgfd;

	(void)state;
	assert_int_equal(start_victim(V_MANY, &r), 0);
	imgfd = img_dir_open(imgdir, false);
	assert_true(imgfd >= 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(dump_tree_files(victim, imgfd, &opts), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_message("%d descriptions behind %d fds: %ld ms\n", NR_MANY, 2 * NR_MANY,
		      (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	read_records(imgfd, CR_IMG_FILES, 0, &files, &n_files);
	read_records(imgfd, CR_IMG_FDINFO, (uint32_t)r.pid, &fdi, &n_fdi);
	assert_int_equal(n_files, 1 + NR_MANY);
	assert_int_equal(n_fdi, 4 + 2 * NR_MANY);
	for (i = 0; i < NR_MANY; i++) {
		const FdEntry *a = (FdEntry *)fdi[4 + i], *b = (FdEntry *)fdi[4 + NR_MANY + i];

		assert_int_equal(a->fd, MANY_BASE + i);
		assert_int_equal(b->fd, MANY_BASE + NR_MANY + i);
		assert_int_equal(a->id, 2 + i); /* fds 0-3 are /dev/null, id 1 */
		assert_int_equal(b->id, a->id);
	}
	img_free_records(files, n_files);
	img_free_records(fdi, n_fdi);
	close(imgfd);
	victim_finish(&victim);
}

/* dump_file_by_fd() on fds of the test itself, as mm-img.c calls it for mappings. */
static void test_dump_file_by_fd(void **state)
{
	struct dump_ctx ctx = { .dirfd = -1 };
	ProtobufCMessage **files;
	char renamed[80];
	uint32_t id1 = 0, id2 = 0, id3 = 0, id4 = 0;
	const FileEntry *fe;
	int a, b, g, z, imgfd;
	size_t n;

	(void)state;
	imgfd = img_dir_open(imgdir, false);
	assert_true(imgfd >= 0);
	ctx.dirfd = imgfd;
	a = open(path_reg, O_RDWR | O_CREAT, 0644);
	g = open(path_ghost, O_RDWR | O_CREAT, 0600);
	assert_true(a >= 0 && g >= 0);
	assert_int_equal(fill(a, REG_SIZE), 0);
	assert_int_equal(fill(g, GHOST_SIZE), 0);
	assert_int_equal(unlink(path_ghost), 0);
	assert_int_equal(dump_file_by_fd(&ctx, getpid(), a, path_reg, O_RDONLY, &id1), 0);
	/* the same inode again, another fd: the same entry */
	assert_int_equal(dump_file_by_fd(&ctx, getpid(), g, path_ghost, O_RDONLY, &id2), 0);
	/* the ghost stays open: a task's mapping holds its inode for the whole dump */
	b = open(path_reg, O_RDONLY);
	assert_int_equal(dump_file_by_fd(&ctx, getpid(), b, path_reg, O_RDONLY, &id3), 0);
	assert_int_equal(id3, id1);
	assert_int_not_equal(id2, id1);
	/* renamed since: its path leads nowhere, refused */
	snprintf(renamed, sizeof(renamed), "%s.renamed", path_app);
	close(b);
	b = open(path_app, O_RDWR | O_CREAT, 0600);
	assert_int_equal(rename(path_app, renamed), 0);
	assert_int_equal(dump_file_by_fd(&ctx, getpid(), b, path_app, O_RDONLY, &id4), -EOPNOTSUPP);
	assert_int_equal(id4, 0);
	/* a private map of /dev/zero: a character device entry */
	z = open("/dev/zero", O_RDWR);
	assert_int_equal(dump_file_by_fd(&ctx, getpid(), z, "/dev/zero", O_RDWR, &id4), 0);
	close(z);
	assert_int_equal(dump_files_finish(&ctx), 0);
	file_table_free(ctx.files);

	read_records(imgfd, CR_IMG_FILES, 0, &files, &n);
	assert_int_equal(n, 3);
	check_chr((FileEntry *)files[id4 - 1], 5, "/dev/zero");
	fe = (FileEntry *)files[id1 - 1];
	assert_int_equal(fe->id, id1);
	assert_int_equal(fe->reg->size, REG_SIZE);
	assert_false(fe->reg->unlinked);
	assert_true(fe->reg->has_mnt_id);
	fe = (FileEntry *)files[id2 - 1];
	assert_memory_equal(fe->reg->path.data, path_ghost, strlen(path_ghost));
	check_ghost(imgfd, fe, GHOST_SIZE, S_IFREG | 0600);
	img_free_records(files, n);
	unlink(renamed);
	close(a);
	close(b);
	close(g);
	close(imgfd);
}

/* --link-remap's hidden names: link_remap.ID, then link_remap.ID.K when taken. */
static void test_link_remap_name(void **state)
{
	char buf[32];

	(void)state;
	assert_int_equal(link_remap_name(7, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "link_remap.7");
	assert_int_equal(link_remap_name(7, 3, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "link_remap.7.3");
	assert_int_equal(link_remap_name(4000000000u, 99, buf, 16), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dump_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipe_write_end_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_descriptions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dump_file_by_fd, setup, teardown),
		cmocka_unit_test(test_link_remap_name),
	};

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	alarm(300); /* a hung child or dump fails the run instead of blocking it */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
