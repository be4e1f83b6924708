// SPDX-License-Identifier: GPL-2.0
/*
 * The files of a restore on a real image directory written here: every kind
 * of description opened once by the "controller" (this process), installed
 * by a forked "task" at its fd numbers with positions, flags, shared
 * descriptions, pipe data, an unlinked file and an O_TMPFILE one (linkable
 * again); cwd and umask; and the refusals: a file changed, gone or become a
 * FIFO since the dump, a corrupt ghost, an fd naming a missing file, a
 * terminal without --shell-job.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "crc32c.h"
#include "image.h"
#include "log.h"
#include "util.h"
#include "../../criu-like/restore/restore-int.h"

#define PID 4242
#define REG_DATA "0123456789"
#define GHOST_DATA "ghost"
#define PIPE_DATA "in the pipe"
#define PIPE_INO 777

struct env {
	char dir[64];
	char img[96], reg[96], gone[96], tmpname[96], linked[96];
	struct cr_options opts;
	struct restore_ctx ctx;
	PstreeEntry pe;
	uint32_t thread;
	/* knobs for the refusals */
	uint32_t ghost_crc_xor;
	uint32_t fd_id_extra; /* an fd naming this file id, when not 0 */
	bool tty;
};

static void write_records(int dirfd, enum cr_img_kind kind, ProtobufCMessage **msgs, size_t n)
{
	struct cr_img *img = img_open(dirfd, kind, kind == CR_IMG_FDINFO ? PID : 0, IMG_WRITE);
	size_t i;

	assert_non_null(img);
	for (i = 0; i < n; i++)
		assert_int_equal(img_write_record(img, msgs[i]), 0);
	assert_int_equal(img_close(img), 0);
}

static void write_files(struct env *e, int dirfd)
{
	RegFileEntry reg = REG_FILE_ENTRY__INIT, ghost = REG_FILE_ENTRY__INIT;
	RegFileEntry dir = REG_FILE_ENTRY__INIT, tmp = REG_FILE_ENTRY__INIT;
	PipeFileEntry rd = PIPE_FILE_ENTRY__INIT, wr = PIPE_FILE_ENTRY__INIT;
	ChrFileEntry nul = CHR_FILE_ENTRY__INIT;
	FileEntry fe[7];
	ProtobufCMessage *msgs[7];
	struct stat st;
	size_t i, n = 7;

	for (i = 0; i < ARRAY_SIZE(fe); i++) {
		file_entry__init(&fe[i]);
		fe[i].id = (uint32_t)i + 1;
		msgs[i] = &fe[i].base;
	}
	assert_int_equal(stat(e->reg, &st), 0);
	reg.path = (ProtobufCBinaryData){ strlen(e->reg), (uint8_t *)e->reg };
	reg.flags = O_RDWR;
	reg.pos = 4;
	reg.size = (uint64_t)st.st_size;
	reg.mode = st.st_mode;
	fe[0].type = FILE_TYPE__FILE_REG;
	fe[0].reg = &reg;

	ghost.path = (ProtobufCBinaryData){ strlen(e->gone), (uint8_t *)e->gone };
	ghost.flags = O_RDONLY;
	ghost.pos = 2;
	ghost.size = strlen(GHOST_DATA);
	ghost.mode = S_IFREG | 0640;
	ghost.has_unlinked = ghost.unlinked = true;
	ghost.has_ghost_crc32c = true;
	ghost.ghost_crc32c = crc32c(0, GHOST_DATA, strlen(GHOST_DATA)) ^ e->ghost_crc_xor;
	fe[1].type = FILE_TYPE__FILE_REG;
	fe[1].reg = &ghost;

	rd.pipe_ino = wr.pipe_ino = PIPE_INO;
	rd.flags = O_RDONLY;
	wr.flags = O_WRONLY | O_NONBLOCK;
	fe[2].type = fe[3].type = FILE_TYPE__FILE_PIPE;
	fe[2].pipe = &rd;
	fe[3].pipe = &wr;

	nul.rdev = makedev(1, 3);
	nul.flags = O_RDWR;
	nul.has_path = true;
	nul.path = (ProtobufCBinaryData){ 9, (uint8_t *)"/dev/null" };
	fe[4].type = e->tty ? FILE_TYPE__FILE_TTY : FILE_TYPE__FILE_CHR;
	fe[4].chr = &nul;

	assert_int_equal(stat(e->dir, &st), 0);
	dir.path = (ProtobufCBinaryData){ strlen(e->dir), (uint8_t *)e->dir };
	dir.flags = O_RDONLY | O_DIRECTORY;
	dir.size = (uint64_t)st.st_size;
	dir.mode = st.st_mode;
	fe[5].type = FILE_TYPE__FILE_DIR;
	fe[5].reg = &dir;

	/* an O_TMPFILE file: never had a name, /proc shows DIR/#INO */
	tmp.path = (ProtobufCBinaryData){ strlen(e->tmpname), (uint8_t *)e->tmpname };
	tmp.flags = O_TMPFILE | O_RDWR;
	tmp.pos = 1;
	tmp.size = strlen(GHOST_DATA);
	tmp.mode = S_IFREG | 0600;
	tmp.has_unlinked = tmp.unlinked = true;
	fe[6].type = FILE_TYPE__FILE_REG;
	fe[6].reg = &tmp;
	write_records(dirfd, CR_IMG_FILES, msgs, n);
}

static void write_fdinfo(struct env *e, int dirfd)
{
	/* fd -> file id; fd 3 and 9 share one description */
	static const uint32_t map[][3] = { { 0, 5, 0 }, { 1, 5, 0 },  { 3, 1, 1 },
					   { 4, 2, 0 }, { 5, 3, 0 },  { 7, 4, 1 },
					   { 9, 1, 0 }, { 10, 6, 0 }, { 11, 7, 0 } };
	FdEntry fds[ARRAY_SIZE(map) + 1];
	ProtobufCMessage *msgs[ARRAY_SIZE(map) + 1];
	size_t i, n = ARRAY_SIZE(map);

	for (i = 0; i < n; i++) {
		fd_entry__init(&fds[i]);
		fds[i].fd = map[i][0];
		fds[i].id = map[i][1];
		fds[i].cloexec = map[i][2];
		msgs[i] = &fds[i].base;
	}
	if (e->fd_id_extra) {
		fd_entry__init(&fds[n]);
		fds[n].fd = 12;
		fds[n].id = e->fd_id_extra;
		msgs[n] = &fds[n].base;
		n++;
	}
	write_records(dirfd, CR_IMG_FDINFO, msgs, n);
}

static void write_images(struct env *e)
{
	_cleanup_close_ int dirfd = img_dir_open(e->img, true);
	PipeDataEntry pd = PIPE_DATA_ENTRY__INIT;
	FsEntry fs = FS_ENTRY__INIT;
	ProtobufCMessage *msg = &pd.base;
	struct cr_img *img;
	uint32_t id;

	assert_true(dirfd >= 0);
	write_files(e, dirfd);
	write_fdinfo(e, dirfd);
	pd.pipe_ino = PIPE_INO;
	pd.data = (ProtobufCBinaryData){ strlen(PIPE_DATA), (uint8_t *)PIPE_DATA };
	pd.has_pipe_size = true;
	pd.pipe_size = 1 << 17;
	write_records(dirfd, CR_IMG_PIPES_DATA, &msg, 1);
	fs.cwd = (ProtobufCBinaryData){ strlen(e->dir), (uint8_t *)e->dir };
	fs.root = (ProtobufCBinaryData){ 1, (uint8_t *)"/" };
	fs.umask = 027;
	assert_int_equal(img_write_one(dirfd, CR_IMG_FS, PID, &fs.base), 0);
	for (id = 2; id <= 7; id += 5) {
		img = img_open(dirfd, CR_IMG_GHOST, id, IMG_WRITE);
		assert_non_null(img);
		assert_int_equal(img_write_raw(img, GHOST_DATA, strlen(GHOST_DATA)), 0);
		assert_int_equal(img_close(img), 0);
	}
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	static const DumpedPart parts[] = { DUMPED_PART__PART_TASKS, DUMPED_PART__PART_FILES };
	static InventoryEntry inv = INVENTORY_ENTRY__INIT;
	int fd;

	assert_non_null(e);
	snprintf(e->dir, sizeof(e->dir), "/tmp/test-restore-files.XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->img, sizeof(e->img), "%s/img", e->dir);
	snprintf(e->reg, sizeof(e->reg), "%s/reg", e->dir);
	snprintf(e->gone, sizeof(e->gone), "%s/gone", e->dir);
	snprintf(e->tmpname, sizeof(e->tmpname), "%s/#12345", e->dir);
	snprintf(e->linked, sizeof(e->linked), "%s/linked", e->dir);
	fd = open(e->reg, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, REG_DATA, strlen(REG_DATA)), (ssize_t)strlen(REG_DATA));
	close(fd);

	cr_options_init(&e->opts);
	e->ctx.opts = &e->opts;
	e->ctx.dirfd = -1;
	e->ctx.proc_fd = e->ctx.ctl_pidfd =
		-1; /* none: the tree shares criu-like's pid namespace */
	inv.n_dumped = ARRAY_SIZE(parts);
	inv.dumped = (DumpedPart *)parts;
	e->ctx.inv = &inv;
	pstree_entry__init(&e->pe);
	e->pe.pid = e->pe.pgid = e->pe.sid = PID;
	e->pe.state = TASK_STATE__TASK_ALIVE;
	e->thread = PID;
	e->pe.n_threads = 1;
	e->pe.threads = &e->thread;
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	char cmd[128];

	rst_files_fini(&e->ctx);
	rst_tree_free(&e->ctx);
	if (e->ctx.dirfd >= 0)
		close(e->ctx.dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
	assert_int_equal(system(cmd), 0);
	cr_options_fini(&e->opts);
	free(e);
	return 0;
}

/* Images, tree, files read and the base set: what cr_restore() does before opening. */
static int plan(struct env *e)
{
	PstreeEntry *pes[1] = { &e->pe };
	int err;

	write_images(e);
	e->ctx.dirfd = img_dir_open(e->img, false);
	assert_true(e->ctx.dirfd >= 0);
	assert_int_equal(rst_tree_build(&e->ctx, pes, 1, PID), 0);
	err = rst_files_read(&e->ctx);
	if (err)
		return err;
	e->ctx.service_fd_base = rst_service_fd_base(&e->ctx);
	assert_int_equal(e->ctx.service_fd_base, 12);
	return 0;
}

/* ---- the task side: each check its own exit code ------------------------------------------- */

static int fd_pos(int fd)
{
	return (int)lseek(fd, 0, SEEK_CUR);
}

static int check_task_fds(const struct env *e)
{
	char buf[64], link[128], want[128];
	struct stat st;
	ssize_t n;

	if (!(fcntl(3, F_GETFD) & FD_CLOEXEC) || (fcntl(9, F_GETFD) & FD_CLOEXEC))
		return 10;
	if (fd_pos(3) != 4 || (fcntl(3, F_GETFL) & O_ACCMODE) != O_RDWR)
		return 11;
	if (read(3, buf, 2) != 2 || fd_pos(9) != 6) /* one description behind 3 and 9 */
		return 12;
	n = read(4, buf, sizeof(buf));
	if (n != 3 || memcmp(buf, "ost", 3) || fstat(4, &st) || st.st_nlink != 0 ||
	    (st.st_mode & 07777) != 0640)
		return 13;
	n = readlink("/proc/self/fd/4", link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	snprintf(want, sizeof(want), "%s (deleted)", e->gone);
	if (strcmp(link, want))
		return 14;
	n = read(5, buf, sizeof(buf));
	if (n != (ssize_t)strlen(PIPE_DATA) || memcmp(buf, PIPE_DATA, (size_t)n))
		return 15;
	if (!(fcntl(7, F_GETFL) & O_NONBLOCK) || (fcntl(5, F_GETFL) & O_NONBLOCK) ||
	    fcntl(7, F_GETPIPE_SZ) < (1 << 17))
		return 16;
	if (fcntl(2, F_GETFD) != -1 || fcntl(6, F_GETFD) != -1 || fcntl(8, F_GETFD) != -1)
		return 17;
	if (fstat(0, &st) || !S_ISCHR(st.st_mode) || fstat(10, &st) || !S_ISDIR(st.st_mode))
		return 18;
	/* the O_TMPFILE file: its data at its position, and linkable still */
	if (fd_pos(11) != 1 || read(11, buf, 4) != 4 || memcmp(buf, "host", 4))
		return 19;
	if (linkat(11, "", AT_FDCWD, e->linked, AT_EMPTY_PATH) || stat(e->linked, &st) ||
	    st.st_size != (off_t)strlen(GHOST_DATA) || (st.st_mode & 07777) != 0600)
		return 20;
	return 0;
}

static int task(struct env *e)
{
	char cwd[128];
	int err = rst_files_install(&e->ctx, &e->ctx.tasks[0]);

	if (err)
		return 1;
	if (rst_fs_restore(&e->ctx, &e->ctx.tasks[0]))
		return 2;
	if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, e->dir) || umask(0) != 027)
		return 3;
	return check_task_fds(e);
}

static void test_install(void **state)
{
	struct env *e = *state;
	struct stat a, b;
	int status, fd;
	pid_t pid;

	assert_int_equal(plan(e), 0);
	assert_int_equal(rst_files_open(&e->ctx), 0);
	/* the ghost is unlinked again, under its own name */
	assert_int_equal(access(e->gone, F_OK), -1);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(task(e));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	/* for the restorer: file mappings and the exe link */
	assert_string_equal(rst_file_path(&e->ctx, 1), e->reg);
	assert_null(rst_file_path(&e->ctx, 99));
	fd = rst_file_open(&e->ctx, 2, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(a.st_nlink, 0);
	close(fd);
	fd = rst_file_open(&e->ctx, 1, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(e->reg, &b), 0);
	assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	close(fd);
	/* a device mapping (/dev/zero, here /dev/null) */
	fd = rst_file_open(&e->ctx, 5, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &a), 0);
	assert_true(S_ISCHR(a.st_mode) && a.st_rdev == makedev(1, 3));
	close(fd);
	assert_int_equal(rst_file_open(&e->ctx, 3, O_RDONLY), -EINVAL);
	assert_int_equal(rst_file_open(&e->ctx, 99, O_RDONLY), -ENOENT);
}

static void test_file_changed(void **state)
{
	struct env *e = *state;
	int fd;

	assert_int_equal(plan(e), 0);
	fd = open(e->reg, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	assert_int_equal(rst_files_open(&e->ctx), -ESTALE);
}

static void test_file_gone(void **state)
{
	struct env *e = *state;

	assert_int_equal(plan(e), 0);
	assert_int_equal(unlink(e->reg), 0);
	assert_int_equal(rst_files_open(&e->ctx), -ENOENT);
}

/* A FIFO at the path since the dump: refused at once, not waited on for a writer. */
static void test_fifo_instead(void **state)
{
	struct env *e = *state;

	assert_int_equal(plan(e), 0);
	assert_int_equal(unlink(e->reg), 0);
	assert_int_equal(mkfifo(e->reg, 0644), 0);
	alarm(10);
	assert_int_equal(rst_files_open(&e->ctx), -ESTALE);
	alarm(0);
}

static void test_ghost_corrupt(void **state)
{
	struct env *e = *state;

	e->ghost_crc_xor = 1;
	assert_int_equal(plan(e), 0);
	assert_int_equal(rst_files_open(&e->ctx), -EBADMSG);
	/* nothing left behind where the file was rebuilt */
	assert_int_equal(access(e->gone, F_OK), -1);
}

static void test_fd_missing_file(void **state)
{
	struct env *e = *state;

	e->fd_id_extra = 42;
	assert_int_equal(plan(e), -EINVAL);
}

static void test_tty_needs_shell_job(void **state)
{
	struct env *e = *state;

	e->tty = true;
	assert_int_equal(plan(e), 0);
	assert_int_equal(rst_files_open(&e->ctx), -EINVAL);
}

static void test_no_files_part(void **state)
{
	struct env *e = *state;
	InventoryEntry inv = INVENTORY_ENTRY__INIT;
	const InventoryEntry *saved = e->ctx.inv;

	e->ctx.inv = &inv;
	assert_int_equal(plan(e), -EINVAL);
	e->ctx.inv = (InventoryEntry *)saved;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_install, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_instead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ghost_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fd_missing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tty_needs_shell_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_files_part, setup, teardown),
	};

	log_set_level(getenv("V") ? LOG_DEBUG : LOG_MSG);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
