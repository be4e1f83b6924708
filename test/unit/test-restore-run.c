// SPDX-License-Identifier: GPL-2.0
/*
 * cr_restore() on a real tree dumped here by cr_dump(): bash as a session
 * leader with a SIGTERM trap (exit 7) waiting for its child, in a directory
 * of its own.
 * Detached: returns once the tree runs, pidfile, same pids, cwd. Attached:
 * SIGTERM sent to the controller reaches the root, whose exit status is the
 * result; a root killed by SIGKILL gives 128 + 9. A failure inside a task
 * (its cwd removed after the dump) kills every task created, and every pid
 * is free again when cr_restore() returns. Run as root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dump.h"
#include "log.h"
#include "restore.h"
#include "util.h"

#define TERM_STATUS 7

struct env {
	char dir[64], img[96], cwd[96], pidfile[96], log[96];
	pid_t root, child;
	struct cr_options opts;
};

/*
 * bash (another binary than this test, as dumped programs are), waiting for
 * its child: its SIGTERM trap makes it exit 7.
 */
static void victim(const char *cwd)
{
	static const char script[] = "trap 'exit 7' TERM; sleep 1000 & wait";
	int nul = open("/dev/null", O_RDWR);

	if (setsid() < 0 || chdir(cwd) || nul < 0)
		_exit(1);
	dup2(nul, 0);
	dup2(nul, 1);
	dup2(nul, 2);
	close_range(3, ~0U, 0);
	execl("/bin/bash", "bash", "-c", script, (char *)NULL);
	_exit(1);
}

static void on_term(int sig)
{
	(void)sig;
	_exit(TERM_STATUS);
}

/*
 * This test binary itself, forked without exec, and a child of its own: the
 * restored exe is the file the restoring task already runs (the restorer
 * must not ask for a new exe link then, the kernel refuses it with EBUSY).
 */
static void self_victim(const char *cwd)
{
	int nul = open("/dev/null", O_RDWR);

	if (setsid() < 0 || chdir(cwd) || nul < 0)
		_exit(1);
	dup2(nul, 0);
	dup2(nul, 1);
	dup2(nul, 2);
	close_range(3, ~0U, 0);
	signal(SIGTERM, on_term);
	if (fork() == 0)
		for (;;)
			pause();
	for (;;)
		pause();
}

static bool use_self_victim;

/* 'S', waiting: read from /proc/PID/stat. */
static bool sleeping(pid_t pid)
{
	_cleanup_free_ char *stat = NULL;
	char path[64], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	stat = read_file_at(AT_FDCWD, path, NULL);
	p = stat ? strrchr(stat, ')') : NULL;
	return p && p[1] == ' ' && p[2] == 'S';
}

/* The root's only child, once both sleep. */
static pid_t wait_ready(pid_t root)
{
	char path[80];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", root, root);
	for (i = 0; i < 500; i++) {
		_cleanup_free_ char *kids = read_file_at(AT_FDCWD, path, NULL);
		long child = kids ? strtol(kids, NULL, 10) : 0;

		if (child > 0 && sleeping(root) && sleeping((pid_t)child))
			return (pid_t)child;
		usleep(10000);
	}
	fail_msg("the victim did not start");
	return -ETIMEDOUT;
}

/* Reap everything that ended (we are the subreaper of the dumped tree's orphans). */
static void reap_all(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static bool gone(pid_t pid)
{
	reap_all();
	return kill(pid, 0) && errno == ESRCH;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	pid_t pid;

	assert_non_null(e);
	snprintf(e->dir, sizeof(e->dir), "/tmp/test-restore-run.XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->img, sizeof(e->img), "%s/img", e->dir);
	snprintf(e->cwd, sizeof(e->cwd), "%s/cwd", e->dir);
	snprintf(e->pidfile, sizeof(e->pidfile), "%s/pid", e->dir);
	snprintf(e->log, sizeof(e->log), "%s/log", e->dir);
	assert_int_equal(mkdir(e->cwd, 0755), 0);
	assert_int_equal(mkdir(e->img, 0755), 0);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0 && use_self_victim)
		self_victim(e->cwd);
	if (pid == 0)
		victim(e->cwd);
	e->root = pid;
	e->child = wait_ready(pid);

	cr_options_init(&e->opts);
	e->opts.tree = e->root;
	e->opts.images_dir = e->img;
	log_set_level(LOG_ERROR);
	assert_int_equal(cr_dump(&e->opts), 0);
	/* the dumped tree is killed: its pids are free once reaped */
	waitpid(e->root, NULL, 0);
	while (!gone(e->child))
		usleep(1000);
	e->opts.pidfile = e->pidfile;
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	char cmd[128];

	kill(e->root, SIGKILL);
	kill(e->child, SIGKILL);
	while (!gone(e->root) || !gone(e->child))
		usleep(1000);
	log_close();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
	assert_int_equal(system(cmd), 0);
	cr_options_fini(&e->opts);
	free(e);
	return 0;
}

static pid_t read_pidfile(const char *path)
{
	_cleanup_free_ char *s = read_file_at(AT_FDCWD, path, NULL);

	return s ? (pid_t)strtol(s, NULL, 10) : -1;
}

static void test_detached(void **state)
{
	struct env *e = *state;
	char path[64], cwd[128];
	int status;
	ssize_t n;

	e->opts.restore_detached = true;
	assert_int_equal(cr_restore(&e->opts), 0);
	assert_int_equal(read_pidfile(e->pidfile), e->root);
	assert_int_equal(kill(e->root, 0), 0);
	assert_int_equal(kill(e->child, 0), 0);
	assert_int_equal(getsid(e->root), e->root);
	assert_int_equal(getpgid(e->child), e->root);
	snprintf(path, sizeof(path), "/proc/%d/cwd", e->child);
	n = readlink(path, cwd, sizeof(cwd) - 1);
	assert_true(n > 0);
	cwd[n] = '\0';
	assert_string_equal(cwd, e->cwd);

	/* it runs its own code again: the restored trap answers SIGTERM */
	assert_int_equal(kill(e->root, SIGTERM), 0);
	assert_int_equal(waitpid(e->root, &status, 0), e->root);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), TERM_STATUS);
}

struct sender {
	const char *pidfile;
	pid_t target; /* 0: the controller (this process) */
	int sig;
};

/* Once the restore has written the pidfile, send the signal. */
static void *send_later(void *arg)
{
	const struct sender *s = arg;
	int i;

	for (i = 0; i < 1000 && access(s->pidfile, F_OK); i++)
		usleep(5000);
	kill(s->target ? s->target : getpid(), s->sig);
	return NULL;
}

/* cr_restore() without -d while a thread sends @sig to @target: its result. */
static int restore_attached(struct env *e, pid_t target, int sig)
{
	struct sender s = { e->pidfile, target, sig };
	sigset_t set, old;
	pthread_t th;
	int ret;

	/* the sender must not take the controller's SIGTERM itself */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	assert_int_equal(pthread_create(&th, NULL, send_later, &s), 0);
	ret = cr_restore(&e->opts);
	pthread_join(th, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

static void test_forward_sigterm(void **state)
{
	struct env *e = *state;

	assert_int_equal(restore_attached(e, 0, SIGTERM), TERM_STATUS);
	assert_true(gone(e->root));
}

static void test_killed_root(void **state)
{
	struct env *e = *state;

	assert_int_equal(restore_attached(e, e->root, SIGKILL), 128 + SIGKILL);
	assert_true(gone(e->root));
}

static void test_failure_kills_all(void **state)
{
	struct env *e = *state;
	_cleanup_free_ char *log = NULL;

	assert_int_equal(rmdir(e->cwd), 0);
	e->opts.restore_detached = true;
	assert_int_equal(log_set_file(e->log), 0);
	assert_int_equal(cr_restore(&e->opts), -ENOENT);
	log_close();
	/* every pid free at once, nothing left for init to reap */
	assert_true(kill(e->root, 0) && errno == ESRCH);
	assert_true(kill(e->child, 0) && errno == ESRCH);
	assert_int_equal(access(e->pidfile, F_OK), -1);
	log = read_file_at(AT_FDCWD, e->log, NULL);
	assert_non_null(log);
	assert_non_null(strstr(log, "cannot enter its working directory"));
	assert_non_null(strstr(log, "killed the 2 tasks restored so far"));
}

static int setup_self(void **state)
{
	use_self_victim = true;
	return setup(state);
}

static void test_same_exe(void **state)
{
	struct env *e = *state;
	int status;

	use_self_victim = false;
	e->opts.restore_detached = true;
	assert_int_equal(cr_restore(&e->opts), 0);
	assert_int_equal(read_pidfile(e->pidfile), e->root);
	/* its own handler, in its restored memory, answers */
	assert_int_equal(kill(e->root, SIGTERM), 0);
	assert_int_equal(waitpid(e->root, &status, 0), e->root);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), TERM_STATUS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_detached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forward_sigterm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_kills_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_exe, setup_self, teardown),
	};

	if (geteuid()) {
		printf("test-restore-run: skipped, needs root\n");
		return 0;
	}
	/* the dumped trees' orphans come back here, to be reaped at once */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
