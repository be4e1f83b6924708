// SPDX-License-Identifier: GPL-2.0
/*
 * cr_restore() refuses, before creating anything, an image directory it
 * cannot restore: missing, not marked complete, of another format version,
 * a pre-dump, needing CPU features this CPU lacks, a tree whose pids are in
 * use (by zombies: only after waiting for their reaper) or whose session is
 * outside it, an image the dump wrote missing, of another size or crc32c, or
 * an image it needs that the dump did not write. Each refusal is checked by
 * its return value and by the message it logs.
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
#include <unistd.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "image.h"
#include "log.h"
#include "ns.h"
#include "restore.h"
#include "util.h"

#include "stats.pb-c.h"

struct env {
	char dir[64], img[96], log[96];
	struct cr_options opts;
	InventoryEntry inv;
	DumpedPart parts[2];
	PstreeEntry pe;
	struct ns_inventory ns;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	snprintf(e->dir, sizeof(e->dir), "/tmp/test-restore-refusals.XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->img, sizeof(e->img), "%s/img", e->dir);
	snprintf(e->log, sizeof(e->log), "%s/log", e->dir);
	cr_options_init(&e->opts);
	e->opts.images_dir = e->img;
	e->opts.restore_detached = true;

	inventory_entry__init(&e->inv);
	e->inv.img_version = IMG_FORMAT_VERSION;
	e->inv.tool_version = "test";
	e->inv.kernel_release = "test";
	e->inv.completed = true;
	e->parts[0] = DUMPED_PART__PART_TASKS;
	e->parts[1] = DUMPED_PART__PART_FILES;
	e->inv.n_dumped = 2;
	e->inv.dumped = e->parts;
	/* the tree lived in criu-like's namespaces, as a dump now records */
	assert_int_equal(ns_inventory_fill(&e->inv, NULL, &e->ns), 0);

	/* a zombie needs no core image: the smallest tree that gets to the pid check */
	pstree_entry__init(&e->pe);
	e->pe.pid = e->pe.pgid = e->pe.sid = (uint32_t)getpid();
	e->pe.state = TASK_STATE__TASK_ZOMBIE;
	e->inv.root_pid = e->pe.pid;
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	char cmd[128];

	log_close();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
	assert_int_equal(system(cmd), 0);
	cr_options_fini(&e->opts);
	free(e);
	return 0;
}

static void write_images(struct env *e)
{
	_cleanup_close_ int dirfd = img_dir_open(e->img, true);
	struct cr_img *img;

	assert_true(dirfd >= 0);
	assert_int_equal(img_write_one(dirfd, CR_IMG_INVENTORY, 0, &e->inv.base), 0);
	img = img_open(dirfd, CR_IMG_PSTREE, 0, IMG_WRITE);
	assert_non_null(img);
	assert_int_equal(img_write_record(img, &e->pe.base), 0);
	assert_int_equal(img_close(img), 0);
}

/*
 * As a dump writes them: pstree.img and another image (stats-dump) listed in the
 * inventory, with @drop_pstree pstree.img written but left out of the list.
 */
static void write_listed_images(struct env *e, bool drop_pstree)
{
	_cleanup_close_ int dirfd = img_dir_open(e->img, true);
	StatsEntry se = STATS_ENTRY__INIT;
	struct img_list l = {};
	struct cr_img *img;

	assert_true(dirfd >= 0);
	assert_int_equal(img_track_writes(dirfd, &l), 0);
	img = img_open(dirfd, CR_IMG_PSTREE, 0, IMG_WRITE);
	assert_non_null(img);
	assert_int_equal(img_write_record(img, &e->pe.base), 0);
	assert_int_equal(img_close(img), 0);
	assert_int_equal(img_write_one(dirfd, CR_IMG_STATS_DUMP, 0, &se.base), 0);
	img_track_stop();
	if (drop_pstree) {
		free(l.files[0].name);
		l.files[0] = l.files[--l.n];
	}
	assert_int_equal(img_list_to_inventory(&l, &e->inv), 0);
	assert_int_equal(img_write_one(dirfd, CR_IMG_INVENTORY, 0, &e->inv.base), 0);
	img_list_inventory_free(&e->inv);
	img_list_fini(&l);
}

/* Entries of the image directory, -ENOENT when it does not exist (-errno). */
static int nr_entries(const char *dir)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -errno;
	while (readdir(d))
		n++;
	return n;
}

/* cr_restore() returns @err, logs @msg and leaves the image directory as it was. */
static void expect_refusal(struct env *e, int err, const char *msg)
{
	_cleanup_free_ char *log = NULL;
	int before = nr_entries(e->img);

	assert_int_equal(log_set_file(e->log), 0);
	log_set_level(LOG_ERROR);
	assert_int_equal(cr_restore(&e->opts), err);
	log_close();
	log = read_file_at(AT_FDCWD, e->log, NULL);
	assert_non_null(log);
	if (!strstr(log, msg))
		fail_msg("expected \"%s\" in the log:\n%s", msg, log);
	assert_int_equal(nr_entries(e->img), before);
}

/* Images written before the dump checked namespaces: the tree may have had its own. */
static void test_no_namespaces(void **state)
{
	struct env *e = *state;

	e->inv.n_namespaces = 0;
	write_images(e);
	expect_refusal(e, -EINVAL, "records no namespaces: it was written before criu-like");
}

/* A tree with a namespace of its own is not restored into criu-like's. */
static void test_own_namespace(void **state)
{
	struct env *e = *state;
	size_t i;

	for (i = 0; i < e->inv.n_namespaces; i++)
		if (!strcmp(e->inv.namespaces[i]->kind, "uts"))
			e->inv.namespaces[i]->tree_in = false;
	write_images(e);
	expect_refusal(e, -EOPNOTSUPP, "the tree had a uts namespace of its own");
}

static void test_missing_dir(void **state)
{
	struct env *e = *state;

	expect_refusal(e, -ENOENT, "cannot open image directory");
}

static void test_incomplete(void **state)
{
	struct env *e = *state;
	char msg[256];

	e->inv.completed = false;
	write_images(e);
	snprintf(msg, sizeof(msg),
		 "image directory %s is not marked complete (the dump failed or is still running)",
		 e->img);
	expect_refusal(e, -EINVAL, msg);
}

static void test_version(void **state)
{
	struct env *e = *state;

	e->inv.img_version = IMG_FORMAT_VERSION + 98;
	write_images(e);
	expect_refusal(e, -EINVAL, "has format version 99");
}

static void test_pre_dump(void **state)
{
	struct env *e = *state;

	e->parts[1] = DUMPED_PART__PART_PRE_DUMP;
	write_images(e);
	expect_refusal(e, -EINVAL, "holds a pre-dump");
}

static void test_xfeatures(void **state)
{
	struct env *e = *state;

	/* XCR0 bit 63 is reserved: no CPU enables it */
	e->inv.xfeatures_mask = 1ULL << 63;
	write_images(e);
	expect_refusal(e, -EOPNOTSUPP, "CPU state features 0x8000000000000000");
}

static void test_pid_in_use(void **state)
{
	struct env *e = *state;
	char msg[96];

	write_images(e);
	snprintf(msg, sizeof(msg), "pid %d of the tree is already in use", getpid());
	expect_refusal(e, -EEXIST, msg);
}

static pid_t zombie_child(void)
{
	pid_t pid = fork();
	siginfo_t si;

	assert_true(pid >= 0);

	if (pid == 0)
		_exit(0);
	/* a zombie from here on, until reaped */
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	return pid;
}

static void *reap_later(void *arg)
{
	usleep(300 * 1000);
	waitpid(*(pid_t *)arg, NULL, 0);
	return NULL;
}

/* A pid held by a zombie is waited for: once reaped, the restore goes on (to the next refusal). */
static void test_zombie_pid_waited(void **state)
{
	struct env *e = *state;
	pid_t z = zombie_child();
	pthread_t th;

	e->pe.pid = e->pe.pgid = e->pe.sid = e->inv.root_pid = (uint32_t)z;
	write_images(e);
	assert_int_equal(pthread_create(&th, NULL, reap_later, &z), 0);
	expect_refusal(e, -ENOENT, "files.img: open");
	pthread_join(th, NULL);
}

static void test_zombie_pid_timeout(void **state)
{
	struct env *e = *state;
	_cleanup_free_ char *comm = read_file_at(AT_FDCWD, "/proc/self/comm", NULL);
	pid_t z = zombie_child();
	char msg[128];

	/* the zombie is a fork of this process: its name is ours (valgrind's, under valgrind) */
	assert_non_null(comm);
	comm[strcspn(comm, "\n")] = '\0';
	e->opts.timeout = 1;
	e->pe.pid = e->pe.pgid = e->pe.sid = e->inv.root_pid = (uint32_t)z;
	write_images(e);
	snprintf(msg, sizeof(msg), "pid %d of the tree is already in use (by %s, a zombie)", z,
		 comm);
	expect_refusal(e, -EEXIST, msg);
	waitpid(z, NULL, 0);
}

static void test_session_outside(void **state)
{
	struct env *e = *state;

	e->pe.sid = 1;
	write_images(e);
	expect_refusal(e, -EINVAL, "outside the dumped tree (restore it with --shell-job");
}

static void test_task_count(void **state)
{
	struct env *e = *state;

	e->inv.has_nr_tasks = true;
	e->inv.nr_tasks = 2;
	write_images(e);
	expect_refusal(e, -EINVAL, "pstree.img holds 1 tasks, inventory.img says 2");
}

static void test_root_mismatch(void **state)
{
	struct env *e = *state;

	e->inv.root_pid = e->pe.pid + 1;
	write_images(e);
	expect_refusal(e, -EINVAL, "the inventory's root is");
}

/* An image the dump wrote is gone: refused before anything else is looked at. */
static void test_image_missing(void **state)
{
	struct env *e = *state;
	char path[160];

	write_listed_images(e, false);
	snprintf(path, sizeof(path), "%s/stats-dump", e->img);
	assert_int_equal(unlink(path), 0);
	/* the pid is in use, refused later: the image comes first */
	expect_refusal(e, -ENOENT, "image stats-dump is missing");
}

static void test_image_truncated(void **state)
{
	struct env *e = *state;
	struct stat st;
	char path[160];

	write_listed_images(e, false);
	snprintf(path, sizeof(path), "%s/pstree.img", e->img);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size - 16), 0);
	expect_refusal(e, -ENODATA, "image pstree.img is");
	expect_refusal(e, -ENODATA, "bytes, the dump wrote");
}

/* pstree.img is there and sound, but this dump did not write it. */
static void test_image_not_listed(void **state)
{
	struct env *e = *state;

	write_listed_images(e, true);
	expect_refusal(e, -ENOENT,
		       "image pstree.img is needed, but the dump did not write it (it is not in "
		       "the inventory's list of images)");
}

/* Files the dump did not write change nothing: the next refusal is the pid in use. */
static void test_image_extra_files(void **state)
{
	struct env *e = *state;
	char path[160], msg[96];
	FILE *f;

	write_listed_images(e, false);
	snprintf(path, sizeof(path), "%s/restore.log", e->img);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("an older restore's log\n", f);
	fclose(f);
	snprintf(msg, sizeof(msg), "pid %d of the tree is already in use", getpid());
	expect_refusal(e, -EEXIST, msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_missing_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_incomplete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pre_dump, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xfeatures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pid_in_use, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zombie_pid_waited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zombie_pid_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_outside, setup, teardown),
		cmocka_unit_test_setup_teardown(test_task_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_namespaces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_namespace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image_not_listed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image_extra_files, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
