// SPDX-License-Identifier: GPL-2.0
/* The dump steps the unit tests run on their victims: see dumper.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "dump.h"
#include "infect.h"
#include "log.h"
#include "options.h"
#include "seize.h"
#include "util.h"

#include "dumper.h"
#include "logcap.h"

#define MAX_TASKS 4

static int infect_task(struct dump_task *dt)
{
	pid_t tids[16];
	unsigned int i;

	if (dt->t->nr_threads > ARRAY_SIZE(tids))
		return -E2BIG;
	for (i = 0; i < dt->t->nr_threads; i++)
		tids[i] = dt->t->threads[i].tid;
	return parasite_infect(dt->t->pid, tids, dt->t->nr_threads, &dt->ctl);
}

int dump_tree_files(pid_t pid, int imgfd, const struct cr_options *opts)
{
	struct dump_task dts[MAX_TASKS] = { 0 };
	struct dump_ctx ctx = { .opts = opts, .dirfd = imgfd, .prev_dirfd = -1 };
	struct pstree *t = NULL;
	unsigned int i;
	int err;

	err = seize_tree(pid, NULL, &t);
	if (err)
		return err;
	ctx.tree = t;
	ctx.tasks = dts;
	ctx.nr_tasks = t->nr_tasks;
	assert_true(t->nr_tasks <= MAX_TASKS);
	for (i = 0; i < t->nr_tasks; i++)
		dts[i].t = t->tasks[i];
	for (i = 0; !err && i < t->nr_tasks; i++)
		err = infect_task(&dts[i]);
	for (i = 0; !err && i < t->nr_tasks; i++)
		err = dump_task_files(&ctx, &dts[i]);
	if (!err)
		err = dump_files_finish(&ctx);
	for (i = 0; i < t->nr_tasks; i++)
		if (dts[i].ctl && parasite_cure(dts[i].ctl) && !err)
			err = -EIO;
	unseize_tree(t, UNSEIZE_RESUME);
	file_table_free(ctx.files);
	return err;
}

void cr_dump_refused(pid_t pid, const char *imgdir, const char *expect)
{
	struct cr_options o;
	const char *log;
	int err, status;

	assert_true(mkdir(imgdir, 0700) == 0 || errno == EEXIST);
	cr_options_init(&o);
	o.tree = pid;
	o.images_dir = imgdir;
	o.leave_running = true;
	logcap_start(LOG_DEBUG);
	err = cr_dump(&o);
	log = logcap_stop();
	cr_options_fini(&o);
	assert_true(log[0] != '\0');
	if (err != -EOPNOTSUPP || !strstr(log, expect))
		fail_msg("expected -EOPNOTSUPP and \"%s\" in the log, got %d:\n%s", expect, err,
			 log);
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
}

void read_records(int imgfd, enum cr_img_kind kind, uint32_t id, ProtobufCMessage ***r, size_t *n)
{
	struct cr_img *img = img_open(imgfd, kind, id, IMG_READ);

	assert_non_null(img);
	assert_int_equal(img_read_all(img, r, n), 0);
	assert_int_equal(img_close(img), 0);
}

const FileEntry *find_file(ProtobufCMessage **files, size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (((FileEntry *)files[i])->id == id)
			return (FileEntry *)files[i];
	fail_msg("no FileEntry %u in files.img", id);
	return NULL;
}

const FdEntry *find_fd(ProtobufCMessage **fdi, size_t n, int fd)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (((FdEntry *)fdi[i])->fd == (uint32_t)fd)
			return (FdEntry *)fdi[i];
	fail_msg("no fd %d in the fdinfo image", fd);
	return NULL;
}
