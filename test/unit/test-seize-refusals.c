// SPDX-License-Identifier: GPL-2.0
/*
 * seize_tree() refusals on real processes (run as root): targets that do not
 * exist, kernel threads, this process, its ancestors and its threads, and
 * tasks already traced by someone else. Nothing may stay seized after one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc-parse.h"
#include "seize.h"
#include "util.h"

#include "seize-helpers.h"

static void expect_refusal(pid_t pid, int err, const char *msg)
{
	struct pstree *t = NULL;

	logcap_start(-1);
	assert_int_equal(seize_tree(pid, NULL, &t), err);
	assert_in_log(logcap_stop(), msg);
	assert_null(t);
}

static void test_refusals(void **state __unused)
{
	char msg[128];
	pid_t gone = fork(), kthread = 0;
	DIR *d;
	struct dirent *de;

	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	snprintf(msg, sizeof(msg), "pid %d does not exist", gone);
	expect_refusal(gone, -ESRCH, msg);
	expect_refusal(1, -EPERM, "pid 1 (");
	expect_refusal(2, -EPERM, "pid 2 (kthreadd) is a kernel thread");
	d = opendir("/proc");
	while (d && (de = readdir(d)) && !kthread) {
		struct proc_stat st;
		pid_t p = atoi(de->d_name);

		if (p > 2 && !proc_parse_stat(p, 0, &st) && st.ppid == 2)
			kthread = p;
	}
	if (d)
		closedir(d);
	assert_true(kthread > 0);
	snprintf(msg, sizeof(msg), "pid %d (", kthread);
	expect_refusal(kthread, -EPERM, msg);
	expect_refusal(kthread, -EPERM, "is a kernel thread");
	expect_refusal(getpid(), -EDEADLK, "is this process");
	snprintf(msg, sizeof(msg), "pid %d is an ancestor of this process", getppid());
	expect_refusal(getppid(), -EDEADLK, msg);
}

static void *idle_thread(void *arg __unused)
{
	pause();
	return NULL;
}

static void test_refuse_own_thread(void **state __unused)
{
	pthread_t th;
	pid_t tid = 0;
	unsigned int i;

	assert_int_equal(pthread_create(&th, NULL, idle_thread, NULL), 0);
	for (i = 0; i < 1000 && !tid; i++) {
		_cleanup_free_ pid_t *tids = NULL;
		unsigned int nr = 0;

		if (!proc_list_threads(getpid(), &tids, &nr) && nr == 2)
			tid = tids[0] == getpid() ? tids[1] : tids[0];
		else
			usleep(1000);
	}
	assert_true(tid > 0);
	expect_refusal(tid, -EDEADLK, "is a thread of this process");
	pthread_cancel(th);
	pthread_join(th, NULL);
}

/* A sleeper with one sleeping child; the child is traced by a separate tracer process. */
static void parent_of_sleeper(void)
{
	if (fork() == 0)
		sleeper();
	sleeper();
}

static void test_refuse_traced(void **state __unused)
{
	pid_t root = spawn(parent_of_sleeper), kid = 0, tracer;
	char msg[160];
	unsigned int i;

	for (i = 0; i < 2000 && !kid; i++) {
		_cleanup_free_ pid_t *kids = NULL;
		unsigned int nr = 0;

		if (!proc_parse_children(root, root, &kids, &nr) && nr == 1)
			kid = kids[0];
		else
			usleep(1000);
	}
	assert_true(kid > 0);
	tracer = fork();
	if (tracer == 0) {
		prctl(PR_SET_NAME, "seize-tracer");
		if (ptrace(PTRACE_SEIZE, kid, NULL, NULL))
			_exit(1);
		sleeper();
	}
	victims[nr_victims++] = tracer;
	for (i = 0; i < 2000 && tracer_of(kid, 0) != tracer; i++)
		usleep(1000);
	assert_int_equal(tracer_of(kid, 0), tracer);
	/* The traced task as root, then deeper in the tree. */
	snprintf(msg, sizeof(msg), "pid %d (thread %d) is already traced by pid %d (seize-tracer)",
		 kid, kid, tracer);
	expect_refusal(kid, -EBUSY, msg);
	expect_refusal(root, -EBUSY, msg);
	/* Nothing stays seized: the root runs, untraced. */
	assert_released(root);
	assert_true(wait_state(root, "S", 2000));
	assert_int_equal(tracer_of(kid, 0), tracer);
}

/* The same with strace as the other tracer, when it is installed. */
static void test_refuse_straced(void **state __unused)
{
	pid_t pid = spawn(sleeper), strace;
	char arg[16], msg[160];
	unsigned int i;

	if (access("/usr/bin/strace", X_OK)) {
		print_message("no /usr/bin/strace: skipped\n");
		skip();
	}
	snprintf(arg, sizeof(arg), "%d", pid);
	strace = fork();
	if (strace == 0) {
		execl("/usr/bin/strace", "strace", "-q", "-o", "/dev/null", "-p", arg, NULL);
		_exit(127);
	}
	victims[nr_victims++] = strace;
	for (i = 0; i < 3000 && tracer_of(pid, 0) != strace; i++)
		usleep(1000);
	assert_int_equal(tracer_of(pid, 0), strace);
	snprintf(msg, sizeof(msg), "is already traced by pid %d (strace)", strace);
	expect_refusal(pid, -EBUSY, msg);
	/* strace detaches when interrupted; then the seize works. */
	kill(strace, SIGINT);
	assert_int_equal(waitpid(strace, NULL, 0), strace);
	assert_int_equal(tracer_of(pid, 0), 0);
	assert_true(wait_state(pid, "S", 2000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_own_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_traced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_straced, setup, teardown),
	};

	if (seize_test_init("test-seize-refusals", "ptrace"))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
