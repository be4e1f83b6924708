// SPDX-License-Identifier: GPL-2.0
/*
 * The plan of a restore on in-memory pstree and file records: tree building
 * and its refusals (orphans, cycles, duplicate pids and tids, zombies with
 * children), sessions and process groups in the order the tasks can rebuild
 * them, --shell-job, the file index, fd tables and the service fd base.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "log.h"
#include "util.h"
#include "../../criu-like/restore/restore-int.h"

#define MAX_TASKS 16

struct fixture {
	PstreeEntry pe[MAX_TASKS];
	PstreeEntry *pes[MAX_TASKS];
	uint32_t threads[MAX_TASKS][4];
	size_t n;
	struct restore_ctx ctx;
};

static struct fixture *fx_new(void)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	return f;
}

/* A live task with @nthr threads (the leader, then pid + 100 * i). */
static PstreeEntry *fx_task(struct fixture *f, uint32_t pid, uint32_t ppid, uint32_t pgid,
			    uint32_t sid, size_t nthr)
{
	PstreeEntry *pe = &f->pe[f->n];
	size_t i;

	assert_true(f->n < MAX_TASKS && nthr <= 4);
	pstree_entry__init(pe);
	pe->pid = pid;
	pe->ppid = ppid;
	pe->pgid = pgid;
	pe->sid = sid;
	pe->state = TASK_STATE__TASK_ALIVE;
	for (i = 0; i < nthr; i++)
		f->threads[f->n][i] = i ? pid + 100 * (uint32_t)i : pid;
	pe->n_threads = nthr;
	pe->threads = f->threads[f->n];
	f->pes[f->n] = pe;
	f->n++;
	return pe;
}

static PstreeEntry *fx_zombie(struct fixture *f, uint32_t pid, uint32_t ppid, uint32_t pgid,
			      uint32_t sid)
{
	PstreeEntry *pe = fx_task(f, pid, ppid, pgid, sid, 0);

	pe->state = TASK_STATE__TASK_ZOMBIE;
	pe->has_exit_code = true;
	pe->exit_code = 42 << 8;
	return pe;
}

static int fx_build(struct fixture *f)
{
	return rst_tree_build(&f->ctx, f->pes, f->n, f->n ? f->pes[0]->pid : 0);
}

static void fx_free(struct fixture *f)
{
	rst_tree_free(&f->ctx);
	free(f);
}

/* ---- tree ----------------------------------------------------------------------------------- */

static void test_tree_ok(void **state __unused)
{
	struct fixture *f = fx_new();
	struct rst_task *t;

	fx_task(f, 10, 0, 10, 10, 3);
	fx_task(f, 11, 10, 10, 10, 1);
	fx_zombie(f, 12, 10, 10, 10);
	fx_task(f, 13, 11, 10, 10, 2);
	assert_int_equal(fx_build(f), 0);
	assert_int_equal(f->ctx.nr_tasks, 4);
	assert_int_equal(f->ctx.nr_threads, 6); /* zombies have none */
	t = rst_find_task(&f->ctx, 10);
	assert_ptr_equal(t, &f->ctx.tasks[0]);
	assert_null(t->parent);
	assert_int_equal(t->nr_children, 2);
	assert_int_equal(t->children[0]->pe->pid, 11);
	assert_int_equal(t->children[1]->pe->pid, 12);
	t = rst_find_task(&f->ctx, 13);
	assert_int_equal(t->parent->pe->pid, 11);
	assert_int_equal(rst_task_idx(&f->ctx, t), 3);
	assert_null(rst_find_task(&f->ctx, 99));
	fx_free(f);
}

static void test_tree_empty(void **state __unused)
{
	struct fixture *f = fx_new();

	assert_int_equal(fx_build(f), -EINVAL);
	fx_free(f);
}

static void test_tree_root_mismatch(void **state __unused)
{
	struct fixture *f = fx_new();

	fx_task(f, 10, 0, 10, 10, 1);
	assert_int_equal(rst_tree_build(&f->ctx, f->pes, f->n, 11), -EINVAL);
	assert_null(f->ctx.tasks);
	fx_free(f);
}

static void test_tree_orphan(void **state __unused)
{
	struct fixture *f = fx_new();

	fx_task(f, 10, 0, 10, 10, 1);
	fx_task(f, 11, 77, 10, 10, 1);
	assert_int_equal(fx_build(f), -EINVAL);
	assert_null(f->ctx.tasks);
	assert_int_equal(f->ctx.nr_tasks, 0);
	fx_free(f);
}

static void test_tree_cycle(void **state __unused)
{
	struct fixture *f = fx_new();

	/* 11 and 12 are each other's parent: one of them comes before its parent */
	fx_task(f, 10, 0, 10, 10, 1);
	fx_task(f, 11, 12, 10, 10, 1);
	fx_task(f, 12, 11, 10, 10, 1);
	assert_int_equal(fx_build(f), -EINVAL);
	fx_free(f);
}

static void test_tree_self_parent(void **state __unused)
{
	struct fixture *f = fx_new();

	fx_task(f, 10, 0, 10, 10, 1);
	fx_task(f, 11, 11, 10, 10, 1);
	assert_int_equal(fx_build(f), -EINVAL);
	fx_free(f);
}

static void test_tree_duplicate_pid(void **state __unused)
{
	struct fixture *f = fx_new();

	fx_task(f, 10, 0, 10, 10, 1);
	fx_task(f, 11, 10, 10, 10, 1);
	fx_task(f, 11, 10, 10, 10, 1);
	assert_int_equal(fx_build(f), -EINVAL);
	fx_free(f);
}

static void test_tree_duplicate_tid(void **state __unused)
{
	struct fixture *f = fx_new();

	fx_task(f, 10, 0, 10, 10, 2); /* threads 10, 110 */
	fx_task(f, 110, 10, 10, 10, 1);
	assert_int_equal(fx_build(f), -EINVAL);
	fx_free(f);
}

static void test_tree_bad_threads(void **state __unused)
{
	struct fixture *f = fx_new();
	PstreeEntry *pe;

	fx_task(f, 10, 0, 10, 10, 1);
	pe = fx_task(f, 11, 10, 10, 10, 2);
	f->threads[1][0] = 211; /* the leader is not first */
	assert_int_equal(fx_build(f), -EINVAL);
	pe->n_threads = 0; /* a live task with no thread */
	assert_int_equal(fx_build(f), -EINVAL);
	fx_free(f);
}

static void test_tree_zombie_rules(void **state __unused)
{
	struct fixture *f = fx_new();
	PstreeEntry *z;

	fx_task(f, 10, 0, 10, 10, 1);
	z = fx_zombie(f, 11, 10, 10, 10);
	fx_task(f, 12, 11, 10, 10, 1); /* a zombie's child */
	assert_int_equal(fx_build(f), -EINVAL);
	f->n = 2;
	z->n_threads = 1; /* a zombie with a thread */
	f->threads[1][0] = 11;
	assert_int_equal(fx_build(f), -EINVAL);
	z->n_threads = 0;
	z->state = 9; /* unknown state */
	assert_int_equal(fx_build(f), -EINVAL);
	fx_free(f);
}

/* ---- sessions and groups -------------------------------------------------------------------- */

static int fx_sessions(struct fixture *f, bool shell_job)
{
	int err = fx_build(f);

	assert_int_equal(err, 0);
	return rst_tree_check_sessions(&f->ctx, shell_job, 500, 501);
}

static void test_sessions_ok(void **state __unused)
{
	struct fixture *f = fx_new();

	fx_task(f, 10, 0, 10, 10, 1); /* session leader */
	fx_task(f, 11, 10, 11, 10, 1); /* group leader in 10's session */
	fx_task(f, 12, 11, 11, 10, 1); /* joins 11's group */
	fx_task(f, 13, 10, 11, 10, 1); /* joins 11's group, not its parent's */
	fx_task(f, 14, 13, 14, 14, 1); /* new session */
	fx_zombie(f, 15, 14, 14, 14);
	assert_int_equal(fx_sessions(f, false), 0);
	assert_false(rst_forks_before_setsid(&f->ctx.tasks[0], &f->ctx.tasks[1]));
	fx_free(f);
}

static void test_sessions_left_behind(void **state __unused)
{
	struct fixture *f = fx_new();

	/* 11 called setsid() after forking 12, which stayed in 10's session */
	fx_task(f, 10, 0, 10, 10, 1);
	fx_task(f, 11, 10, 11, 11, 1);
	fx_task(f, 12, 11, 10, 10, 1);
	assert_int_equal(fx_sessions(f, false), 0);
	assert_true(rst_forks_before_setsid(&f->ctx.tasks[1], &f->ctx.tasks[2]));
	fx_free(f);
}

static void test_sessions_foreign_session(void **state __unused)
{
	struct fixture *f = fx_new();

	/* 12's session is neither its parent's nor the one its parent left */
	fx_task(f, 10, 0, 10, 10, 1);
	fx_task(f, 11, 10, 11, 11, 1);
	fx_task(f, 13, 10, 13, 13, 1);
	fx_task(f, 12, 11, 13, 13, 1);
	assert_int_equal(fx_sessions(f, false), -EINVAL);
	fx_free(f);
}

static void test_sessions_leader_other_group(void **state __unused)
{
	struct fixture *f = fx_new();

	fx_task(f, 10, 0, 10, 10, 1);
	fx_task(f, 11, 10, 10, 11, 1); /* leads a session, in another group: impossible */
	assert_int_equal(fx_sessions(f, false), -EINVAL);
	fx_free(f);
}

static void test_sessions_group_outside(void **state __unused)
{
	struct fixture *f = fx_new();

	fx_task(f, 10, 0, 10, 10, 1);
	fx_task(f, 11, 10, 77, 10, 1);
	assert_int_equal(fx_sessions(f, false), -EINVAL);
	fx_free(f);
}

static void test_sessions_group_not_led(void **state __unused)
{
	struct fixture *f = fx_new();

	/* 12 names 11 as its group, but 11 is in group 10 */
	fx_task(f, 10, 0, 10, 10, 1);
	fx_task(f, 11, 10, 10, 10, 1);
	fx_task(f, 12, 10, 11, 10, 1);
	assert_int_equal(fx_sessions(f, false), -EINVAL);
	fx_free(f);
}

static void test_sessions_group_other_session(void **state __unused)
{
	struct fixture *f = fx_new();

	/* setpgid() cannot cross sessions */
	fx_task(f, 10, 0, 10, 10, 1);
	fx_task(f, 11, 10, 11, 11, 1);
	fx_task(f, 12, 10, 11, 10, 1);
	assert_int_equal(fx_sessions(f, false), -EINVAL);
	fx_free(f);
}

static void test_sessions_root_outside(void **state __unused)
{
	struct fixture *f = fx_new();

	/* a job of an interactive shell: session 300, group 10 */
	fx_task(f, 10, 0, 10, 300, 1);
	fx_task(f, 11, 10, 10, 300, 1);
	assert_int_equal(fx_sessions(f, false), -EINVAL);
	fx_free(f);

	f = fx_new();
	fx_task(f, 10, 0, 10, 300, 1);
	fx_task(f, 11, 10, 10, 300, 1);
	fx_task(f, 12, 10, 12, 12, 1);
	assert_int_equal(fx_sessions(f, true), 0);
	/* the shell's session became the controller's; groups of the tree stay */
	assert_int_equal(f->pes[0]->sid, 500);
	assert_int_equal(f->pes[1]->sid, 500);
	assert_int_equal(f->pes[1]->pgid, 10);
	assert_int_equal(f->pes[2]->sid, 12);
	fx_free(f);
}

static void test_sessions_shell_group(void **state __unused)
{
	struct fixture *f = fx_new();

	/* run without job control: the shell's group 300 and session 300 */
	fx_task(f, 10, 0, 300, 300, 1);
	fx_task(f, 11, 10, 300, 300, 1);
	fx_task(f, 12, 10, 12, 300, 1);
	assert_int_equal(fx_sessions(f, true), 0);
	assert_int_equal(f->pes[0]->pgid, 501);
	assert_int_equal(f->pes[1]->pgid, 501);
	assert_int_equal(f->pes[2]->pgid, 12);
	fx_free(f);
}

/* ---- files: index, fd tables, service fd base ---------------------------------------------- */

static FileEntry *file_new(uint32_t id, FileType type)
{
	FileEntry *fe = calloc(1, sizeof(*fe));
	static RegFileEntry reg = REG_FILE_ENTRY__INIT, dir = REG_FILE_ENTRY__INIT;
	static PipeFileEntry pipe = PIPE_FILE_ENTRY__INIT;

	assert_non_null(fe);
	file_entry__init(fe);
	fe->id = id;
	fe->type = type;
	reg.mode = S_IFREG | 0644;
	dir.mode = S_IFDIR | 0755;
	if (type == FILE_TYPE__FILE_REG)
		fe->reg = &reg;
	else if (type == FILE_TYPE__FILE_DIR)
		fe->reg = &dir;
	else if (type == FILE_TYPE__FILE_PIPE)
		fe->pipe = &pipe;
	return fe;
}

static void files_free(FileEntry **fes, size_t n)
{
	while (n)
		free(fes[--n]);
}

static void test_file_index(void **state __unused)
{
	FileEntry *fes[4] = { file_new(7, FILE_TYPE__FILE_REG), file_new(3, FILE_TYPE__FILE_PIPE),
			      file_new(5, FILE_TYPE__FILE_DIR), file_new(1, FILE_TYPE__FILE_PIPE) };
	struct rst_file_index idx;

	assert_int_equal(rst_file_index_build(&idx, fes, 4), 0);
	assert_ptr_equal(rst_file_index_find(&idx, 7), fes[0]);
	assert_ptr_equal(rst_file_index_find(&idx, 1), fes[3]);
	assert_int_equal(rst_file_index_pos(&idx, 5), 2);
	assert_null(rst_file_index_find(&idx, 4));
	assert_null(rst_file_index_find(&idx, 8));
	assert_null(rst_file_index_find(&idx, 0));
	rst_file_index_free(&idx);

	fes[2]->id = 3; /* duplicate id */
	assert_int_equal(rst_file_index_build(&idx, fes, 4), -EINVAL);
	assert_null(idx.by_id);
	fes[2]->id = 5;
	fes[2]->type =
		FILE_TYPE__FILE_REG; /* a directory's mode for a regular file: a FIFO would block */
	assert_int_equal(rst_file_index_build(&idx, fes, 4), -EINVAL);
	fes[2]->type = FILE_TYPE__FILE_DIR;
	fes[2]->reg = NULL; /* a directory without its RegFileEntry */
	assert_int_equal(rst_file_index_build(&idx, fes, 4), -EINVAL);
	fes[2]->type = 42; /* unknown type */
	assert_int_equal(rst_file_index_build(&idx, fes, 4), -EINVAL);
	assert_int_equal(rst_file_index_build(&idx, fes, 0), 0);
	assert_null(rst_file_index_find(&idx, 7));
	rst_file_index_free(&idx);
	files_free(fes, 4);
}

static FdEntry *fd_new(uint32_t fd, uint32_t id)
{
	FdEntry *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	fd_entry__init(e);
	e->fd = fd;
	e->id = id;
	return e;
}

static void test_fd_plan(void **state __unused)
{
	FileEntry *fes[2] = { file_new(1, FILE_TYPE__FILE_REG), file_new(2, FILE_TYPE__FILE_PIPE) };
	FdEntry *fds[4] = { fd_new(9, 1), fd_new(0, 2), fd_new(2, 1), fd_new(1, 2) };
	struct rst_task_files tf = { .nr_fds = 4, .fds = fds };
	struct rst_file_index idx;
	size_t i;

	assert_int_equal(rst_file_index_build(&idx, fes, 2), 0);
	assert_int_equal(rst_fd_plan_check(&tf, &idx, 10), 0);
	assert_int_equal(tf.fds[0]->fd, 0);
	assert_int_equal(tf.fds[1]->fd, 1);
	assert_int_equal(tf.fds[2]->fd, 2);
	assert_int_equal(tf.fds[3]->fd, 9);

	tf.fds[3]->fd = 2; /* a number used twice */
	assert_int_equal(rst_fd_plan_check(&tf, &idx, 10), -EINVAL);
	tf.fds[3]->fd = 9;
	tf.fds[3]->id = 3; /* not in files.img */
	assert_int_equal(rst_fd_plan_check(&tf, &idx, 10), -EINVAL);
	tf.fds[3]->id = 1;
	tf.fds[3]->fd = 0x80000000u; /* not an fd number */
	assert_int_equal(rst_fd_plan_check(&tf, &idx, 10), -EINVAL);

	rst_file_index_free(&idx);
	for (i = 0; i < 4; i++)
		free(fds[i]);
	files_free(fes, 2);
}

static void test_service_fd_base(void **state __unused)
{
	struct fixture *f = fx_new();
	FdEntry *a[2] = { fd_new(0, 1), fd_new(17, 1) }, *b[1] = { fd_new(40, 1) };
	struct rst_task_files ta = { .nr_fds = 2, .fds = a }, tb = { .nr_fds = 1, .fds = b };
	struct rst_task_files none = { 0 };

	fx_task(f, 10, 0, 10, 10, 1);
	fx_task(f, 11, 10, 10, 10, 1);
	fx_zombie(f, 12, 10, 10, 10);
	assert_int_equal(fx_build(f), 0);
	/* no fds anywhere: still above stdio */
	assert_int_equal(rst_service_fd_base(&f->ctx), 3);
	f->ctx.tasks[0].files = &none;
	assert_int_equal(rst_service_fd_base(&f->ctx), 3);
	f->ctx.tasks[0].files = &ta;
	assert_int_equal(rst_service_fd_base(&f->ctx), 18);
	f->ctx.tasks[1].files = &tb;
	assert_int_equal(rst_service_fd_base(&f->ctx), 41);
	f->ctx.tasks[0].files = NULL;
	f->ctx.tasks[1].files = NULL;
	free(a[0]);
	free(a[1]);
	free(b[0]);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_ok),
		cmocka_unit_test(test_tree_empty),
		cmocka_unit_test(test_tree_root_mismatch),
		cmocka_unit_test(test_tree_orphan),
		cmocka_unit_test(test_tree_cycle),
		cmocka_unit_test(test_tree_self_parent),
		cmocka_unit_test(test_tree_duplicate_pid),
		cmocka_unit_test(test_tree_duplicate_tid),
		cmocka_unit_test(test_tree_bad_threads),
		cmocka_unit_test(test_tree_zombie_rules),
		cmocka_unit_test(test_sessions_ok),
		cmocka_unit_test(test_sessions_left_behind),
		cmocka_unit_test(test_sessions_foreign_session),
		cmocka_unit_test(test_sessions_leader_other_group),
		cmocka_unit_test(test_sessions_group_outside),
		cmocka_unit_test(test_sessions_group_not_led),
		cmocka_unit_test(test_sessions_group_other_session),
		cmocka_unit_test(test_sessions_root_outside),
		cmocka_unit_test(test_sessions_shell_group),
		cmocka_unit_test(test_file_index),
		cmocka_unit_test(test_fd_plan),
		cmocka_unit_test(test_service_fd_base),
	};

	log_set_level(getenv("V") ? LOG_DEBUG : LOG_MSG);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
