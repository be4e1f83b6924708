// SPDX-License-Identifier: GPL-2.0
/*
 * seize_tree()/unseize_tree() on real process trees (run as root). Every
 * victim is forked here; the test process is a child subreaper so orphans
 * come back to it and are reaped at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "freezer.h"
#include "log.h"
#include "proc-parse.h"
#include "seize.h"
#include "util.h"

#include "seize-helpers.h"

/* ---- victims ----------------------------------------------------------------- */

static void spinner(void)
{
	for (;;)
		sh->progress++;
}

static void *spin_thread(void *arg)
{
	for (;;) {
		if ((long)arg & 1)
			usleep(100);
		sh->progress++;
	}
	return NULL;
}

#define NR_THREADS 16

static void threaded(void)
{
	long i;

	for (i = 1; i < NR_THREADS; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, spin_thread, (void *)i))
			_exit(1);
	}
	spin_thread(0);
}

static void *exit_thread(void *arg __unused)
{
	return NULL;
}

static void *spawn_threads(void *arg __unused)
{
	pthread_attr_t a;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 64 << 10);
	for (;;) {
		pthread_t t;

		if (!pthread_create(&t, &a, exit_thread, NULL))
			sh->progress++;
	}
	return NULL;
}

static void thread_storm(void)
{
	pthread_t t;
	int i;

	for (i = 0; i < 3; i++)
		pthread_create(&t, NULL, spawn_threads, NULL);
	spawn_threads(NULL);
}

static void parent_of_spinners(void)
{
	int i;

	for (i = 0; i < 3; i++)
		if (fork() == 0)
			spinner();
	threaded();
}

static void count_signal(int sig)
{
	if (sig == SIGRTMIN)
		sh->rt_seen++;
	else
		sh->other_seen++;
}

/* Counts every catchable signal it receives. */
static void signal_counter(void)
{
	struct sigaction sa = { .sa_handler = count_signal, .sa_flags = SA_RESTART };
	int sig;

	for (sig = 1; sig <= SIGRTMAX; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &sa, NULL);
	sh->done = 1;
	spinner();
}

/* ---- tests ------------------------------------------------------------------- */

static void test_single(void **state __unused)
{
	pid_t pid = spawn(sleeper);
	struct pstree *t;
	struct seized_task *task;

	assert_true(wait_state(pid, "S", 2000));
	assert_int_equal(seize_tree(pid, NULL, &t), 0);
	assert_int_equal(t->nr_tasks, 1);
	task = pstree_find(t, pid);
	assert_ptr_equal(task, t->root);
	assert_int_equal(task->state, TASK_ALIVE);
	assert_int_equal(task->nr_threads, 1);
	assert_int_equal(task->threads[0].tid, pid);
	assert_true(task->threads[0].seized && task->threads[0].stopped);
	assert_int_equal(task->threads[0].stop_sig, SIGTRAP);
	assert_int_equal(task->ppid, getpid());
	assert_int_equal(state_of(pid, 0), 't');
	assert_int_equal(tracer_of(pid, 0), getpid());
	assert_null(pstree_find(t, 1));
	unseize_tree(t, UNSEIZE_RESUME);
	assert_released(pid);
	assert_true(wait_state(pid, "S", 2000));
}

static void test_threads(void **state __unused)
{
	pid_t pid = spawn(threaded);
	struct pstree *t;
	struct proc_stat st;
	unsigned int i, round;

	for (i = 0; i < 2000 && (proc_parse_stat(pid, 0, &st) || st.num_threads < NR_THREADS); i++)
		usleep(1000);
	assert_int_equal(st.num_threads, NR_THREADS);
	for (round = 0; round < 10; round++) {
		assert_int_equal(seize_tree(pid, NULL, &t), 0);
		assert_int_equal(t->root->nr_threads, NR_THREADS);
		assert_int_equal(t->root->threads[0].tid, pid);
		for (i = 0; i < NR_THREADS; i++) {
			assert_true(t->root->threads[i].stopped);
			assert_int_equal(state_of(pid, t->root->threads[i].tid), 't');
		}
		unseize_tree(t, UNSEIZE_RESUME);
		assert_released(pid);
		assert_true(wait_progress(2000));
	}
}

static void test_job_stopped(void **state __unused)
{
	pid_t pid = spawn(spinner);
	struct pstree *t;

	kill(pid, SIGSTOP);
	assert_true(wait_state(pid, "T", 2000));
	assert_int_equal(seize_tree(pid, NULL, &t), 0);
	assert_int_equal(t->root->state, TASK_STOPPED);
	assert_int_equal(t->root->threads[0].stop_sig, SIGSTOP);
	unseize_tree(t, UNSEIZE_RESUME);
	/* Still stopped by job control, not traced, and SIGCONT resumes it. */
	usleep(20000);
	assert_int_equal(state_of(pid, 0), 'T');
	assert_int_equal(tracer_of(pid, 0), 0);
	assert_false(wait_progress(50));
	kill(pid, SIGCONT);
	assert_true(wait_progress(2000));
}

static void test_leave_stopped(void **state __unused)
{
	pid_t pid = spawn(threaded);
	struct pstree *t;

	assert_true(wait_progress(2000));
	assert_int_equal(seize_tree(pid, NULL, &t), 0);
	unseize_tree(t, UNSEIZE_STOPPED);
	assert_true(wait_state(pid, "T", 2000));
	assert_int_equal(tracer_of(pid, 0), 0);
	kill(pid, SIGCONT);
	assert_true(wait_progress(2000));
}

static int zombie_cmd[2];

/* Forks a child that exits with 7 at once; reaps it only when told to, exiting 100 + its code. */
static void zombie_parent(void)
{
	int st = 0;
	char c;
	pid_t kid = fork();

	if (kid == 0)
		_exit(7);
	close(zombie_cmd[1]);
	if (read(zombie_cmd[0], &c, 1) != 1 || waitpid(kid, &st, 0) != kid)
		_exit(1);
	_exit(WIFEXITED(st) ? 100 + WEXITSTATUS(st) : 2);
}

static void test_zombie(void **state __unused)
{
	struct seized_task *z;
	struct pstree *t;
	pid_t pid, kid;
	int st;

	assert_int_equal(pipe(zombie_cmd), 0);
	pid = spawn(zombie_parent);
	close(zombie_cmd[0]);
	for (st = 0; st < 2000; st++) {
		_cleanup_free_ pid_t *kids = NULL;
		unsigned int nr = 0;

		if (!proc_parse_children(pid, pid, &kids, &nr) && nr == 1 &&
		    state_of(kids[0], 0) == 'Z')
			break;
		usleep(1000);
	}
	assert_int_equal(seize_tree(pid, NULL, &t), 0);
	assert_int_equal(t->nr_tasks, 2);
	assert_int_equal(t->root->nr_children, 1);
	z = t->root->children[0];
	kid = z->pid;
	assert_ptr_equal(t->tasks[1], z);
	assert_ptr_equal(z->parent, t->root);
	assert_int_equal(z->state, TASK_ZOMBIE);
	assert_int_equal(z->exit_code, 7 << 8);
	assert_false(z->threads[0].seized);
	unseize_tree(t, UNSEIZE_RESUME);
	assert_int_equal(state_of(kid, 0), 'Z');
	assert_int_equal(write(zombie_cmd[1], "x", 1), 1);
	close(zombie_cmd[1]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 107);
}

/* 33 sleepers with 2 sleeping children each, then fork short-lived children forever. */
static void forking_root(void)
{
	int i, j;

	for (i = 0; i < 33; i++) {
		if (fork() == 0) {
			for (j = 0; j < 2; j++)
				if (fork() == 0)
					sleeper();
			sleeper();
		}
	}
	for (i = 0;; i++) {
		pid_t kid = fork();

		if (kid == 0) {
			if (i & 1)
				usleep(i % 500);
			_exit(0);
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		sh->progress++;
	}
}

static unsigned int index_of(const struct pstree *t, const struct seized_task *task)
{
	unsigned int i;

	for (i = 0; i < t->nr_tasks && t->tasks[i] != task; i++)
		;
	return i;
}

static void test_forking_tree(void **state __unused)
{
	pid_t pid = spawn(forking_root), pids[512];
	unsigned int round, i, n, zombies;

	/* Once it forks short-lived children, its 1 + 33 + 66 long-lived tasks exist. */
	for (i = 0; i < 3000 && sh->progress < 100; i++)
		usleep(1000);
	assert_true(sh->progress >= 100);
	for (round = 0; round < 10; round++) {
		struct pstree *t;

		assert_int_equal(seize_tree(pid, NULL, &t), 0);
		assert_true(t->nr_tasks >= 100);
		for (i = n = zombies = 0; i < t->nr_tasks && n < ARRAY_SIZE(pids); i++) {
			struct seized_task *task = t->tasks[i];

			/* Parents before children, links matching the pids. */
			assert_true(!task->parent || index_of(t, task->parent) < i);
			assert_true(!task->parent || pstree_find(t, task->ppid) == task->parent);
			if (task->state == TASK_ZOMBIE)
				zombies++;
			else
				assert_int_equal(state_of(task->pid, 0), 't');
			pids[n++] = task->pid;
		}
		unseize_tree(t, UNSEIZE_RESUME);
		print_message("round %u: %u tasks, %u zombies\n", round, n, zombies);
		for (i = 0; i < n; i++)
			assert_released(pids[i]);
		assert_true(wait_progress(2000));
		/* The root reaps its short-lived children at once: no zombie stays behind. */
		usleep(200000);
		for (i = 0; i < n; i++) {
			struct proc_stat st;

			if (!proc_parse_stat(pids[i], 0, &st) && st.state == 'Z' && st.ppid == pid)
				fail_msg("pid %d still a zombie of %d", pids[i], pid);
		}
	}
}

/* The leader calls pthread_exit(): it shows as a zombie while its threads run. */
static void dead_leader(void)
{
	pthread_t t;

	pthread_create(&t, NULL, spin_thread, (void *)0);
	pthread_create(&t, NULL, spin_thread, (void *)1);
	pthread_exit(NULL);
}

static void test_dead_leader(void **state __unused)
{
	pid_t pid = spawn(dead_leader);
	struct pstree *t;
	unsigned int i;

	assert_true(wait_state(pid, "Z", 2000));
	assert_true(wait_progress(2000));
	assert_int_equal(seize_tree(pid, NULL, &t), 0);
	assert_int_equal(t->root->state, TASK_ALIVE);
	assert_int_equal(t->root->nr_threads, 3);
	assert_int_equal(t->root->threads[0].tid, pid);
	assert_false(t->root->threads[0].seized);
	for (i = 1; i < 3; i++)
		assert_true(t->root->threads[i].stopped);
	unseize_tree(t, UNSEIZE_RESUME);
	assert_released(pid);
	assert_true(wait_progress(2000));
}

/* Job-control stops and continues arriving during the seize: no stop is lost or invented. */
static void test_stop_cont_storm(void **state __unused)
{
	pid_t pid = spawn(threaded), sender;
	unsigned int round;

	assert_true(wait_progress(2000));
	sender = fork();
	if (sender == 0) {
		while (!sh->done) {
			kill(pid, SIGSTOP);
			usleep(50);
			kill(pid, SIGCONT);
			usleep(50);
		}
		_exit(0);
	}
	for (round = 0; round < 200; round++) {
		struct pstree *t;
		unsigned int i;

		assert_int_equal(seize_tree(pid, NULL, &t), 0);
		for (i = 0; i < t->root->nr_threads; i++)
			assert_true(t->root->threads[i].stopped);
		unseize_tree(t, UNSEIZE_RESUME);
	}
	sh->done = 1;
	assert_int_equal(waitpid(sender, NULL, 0), sender);
	/* The last signal sent was SIGCONT: the victim runs, untraced. */
	assert_true(wait_progress(2000));
	assert_released(pid);
}

/*
 * A dumper killed at a random moment, seizing or holding the tree: the kernel
 * detaches its tracees; running tasks run on, job-control stopped ones stay stopped.
 */
static void test_dumper_killed(void **state __unused)
{
	pid_t runner = spawn(parent_of_spinners), stopped = spawn(sleeper);
	unsigned int trial;

	kill(stopped, SIGSTOP);
	assert_true(wait_state(stopped, "T", 2000));
	assert_true(wait_progress(2000));
	for (trial = 0; trial < 100; trial++) {
		pid_t dumper = fork();

		if (dumper == 0) {
			log_set_level(LOG_MSG);
			for (;;) {
				struct pstree *a, *b;

				if (seize_tree(runner, NULL, &a) || seize_tree(stopped, NULL, &b))
					_exit(1);
				unseize_tree(b, UNSEIZE_RESUME);
				unseize_tree(a, UNSEIZE_RESUME);
			}
		}
		usleep(random() % 20000);
		kill(dumper, SIGKILL);
		assert_int_equal(waitpid(dumper, NULL, 0), dumper);
		assert_released(runner);
		assert_int_equal(tracer_of(stopped, 0), 0);
		/* Woken by the kernel's detach, it runs for a moment on its way back to T. */
		assert_true(wait_state(stopped, "T", 1000));
		usleep(5000);
		assert_int_equal(state_of(stopped, 0), 'T');
		assert_true(wait_progress(2000));
	}
}

static void test_thread_storm(void **state __unused)
{
	pid_t pid = spawn(thread_storm);
	unsigned int round;

	assert_true(wait_progress(2000));
	for (round = 0; round < 20; round++) {
		struct pstree *t;
		unsigned int i;

		assert_int_equal(seize_tree(pid, NULL, &t), 0);
		/* Threads that exited during the seize are not listed. */
		assert_int_equal(t->root->threads[0].tid, pid);
		for (i = 0; i < t->root->nr_threads; i++)
			assert_true(t->root->threads[i].seized && t->root->threads[i].stopped);
		unseize_tree(t, UNSEIZE_RESUME);
		assert_released(pid);
		assert_true(wait_progress(2000));
	}
}

/* The victim counts every signal: none may come from us, none sent by others may be lost. */
static void test_no_signal_side_effects(void **state __unused)
{
	pid_t pid = spawn(signal_counter), sender;
	unsigned int round;

	while (!sh->done)
		usleep(1000);
	sh->done = 0;
	for (round = 0; round < 50; round++) {
		struct pstree *t;

		assert_int_equal(seize_tree(pid, NULL, &t), 0);
		unseize_tree(t, UNSEIZE_RESUME);
	}
	usleep(50000);
	assert_int_equal(sh->other_seen, 0);
	assert_int_equal(sh->rt_seen, 0);

	/* Queued real-time signals during at least 200 seizes and 1000 signals. */
	sender = fork();
	if (sender == 0) {
		union sigval v = { 0 };

		while (!sh->done) {
			if (!sigqueue(pid, SIGRTMIN, v))
				sh->sent++;
			usleep(20);
		}
		_exit(0);
	}
	while (!sh->sent)
		usleep(100);
	for (round = 0; round < 200 || sh->sent < 1000; round++) {
		struct pstree *t;

		assert_int_equal(seize_tree(pid, NULL, &t), 0);
		unseize_tree(t, UNSEIZE_RESUME);
	}
	sh->done = 1;
	assert_int_equal(waitpid(sender, NULL, 0), sender);
	for (round = 0; round < 2000 && sh->rt_seen != sh->sent; round++)
		usleep(1000);
	print_message("sent %ld SIGRTMIN, received %ld\n", sh->sent, sh->rt_seen);
	assert_true(sh->sent > 0);
	assert_int_equal(sh->rt_seen, sh->sent);
	assert_int_equal(sh->other_seen, 0);
	assert_released(pid);
}

/* How long the child of vforker() sleeps before it exits (set before the spawn). */
static long vfork_child_ms = 2000;

/* The vfork() parent cannot stop until its child exits, vfork_child_ms later. */
static void vforker(void)
{
	if (vfork() == 0) {
		struct timespec ts = { vfork_child_ms / 1000, vfork_child_ms % 1000 * 1000000 };

		syscall(SYS_nanosleep, &ts, NULL);
		_exit(0);
	}
	sleeper();
}

static void test_timeout(void **state __unused)
{
	struct seize_opts o = { .timeout = 1 };
	struct pstree *t = NULL;
	long start;
	pid_t pid;

	vfork_child_ms = 2000;
	pid = spawn(vforker);
	usleep(100000);
	logcap_start(-1);
	start = now_ms();
	assert_int_equal(seize_tree(pid, &o, &t), -ETIMEDOUT);
	assert_true(now_ms() - start >= 1000);
	assert_in_log(logcap_stop(), "took more than 1 s");
	assert_null(t);
	assert_released(pid);
	assert_true(wait_state(pid, "S", 2000));
}

/*
 * The seize sweep takes a generation at a time: the child of a parent in
 * vfork() is not seized before the parent stops, which it does once the
 * child has exited. Seizing the child first stopped it for good, and the
 * parent with it, until the timeout.
 */
static void test_vfork_parent(void **state __unused)
{
	struct seize_opts o = { .timeout = 5 };
	struct pstree *t = NULL;
	long start;
	pid_t pid;

	vfork_child_ms = 300; /* the parent stops once its child exited */
	pid = spawn(vforker);
	usleep(100000);
	start = now_ms();
	assert_int_equal(seize_tree(pid, &o, &t), 0);
	assert_true(now_ms() - start < 4000);
	assert_int_equal(t->root->pid, pid);
	unseize_tree(t, UNSEIZE_RESUME);
	assert_released(pid);
}

static void test_kill(void **state __unused)
{
	pid_t pid = spawn(parent_of_spinners), pids[8];
	struct pstree *t;
	struct proc_stat st;
	unsigned int i, n;
	long start;

	for (i = 0; i < 2000 && (proc_parse_stat(pid, 0, &st) || st.num_threads < NR_THREADS); i++)
		usleep(1000);
	usleep(50000);
	assert_int_equal(seize_tree(pid, NULL, &t), 0);
	assert_int_equal(t->nr_tasks, 4);
	assert_int_equal(t->root->nr_threads, NR_THREADS);
	for (n = 0; n < t->nr_tasks; n++)
		pids[n] = t->tasks[n]->pid;
	start = now_ms();
	unseize_tree(t, UNSEIZE_KILL);
	/* Threads are collected before their leader, else each leader waits 5 s. */
	assert_true(now_ms() - start < 4000);
	reap_all();
	for (i = 0; i < n; i++)
		assert_int_equal(kill(pids[i], 0), -1);
}

/* The init of a pid namespace of its own, with NR_THREADS threads. */
static void pidns_parent(void)
{
	pid_t child;

	if (unshare(CLONE_NEWPID))
		_exit(77);
	child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		threaded();
	}
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
	_exit(0);
}

/*
 * A killed pid-namespace init's last thread waits in the kernel until the
 * other pids of its namespace are freed, by us, its tracer: the threads are
 * reaped together, not each after the one before (5 s per thread that way).
 */
static void test_kill_pidns_init(void **state __unused)
{
	pid_t mid = spawn(pidns_parent), init = 0;
	struct proc_stat st;
	struct pstree *t;
	unsigned int i;
	char path[64], buf[32];
	long start;
	int fd, st_mid = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", mid, mid);
	for (i = 0; i < 2000 && !init; i++) {
		fd = open(path, O_RDONLY);
		if (fd >= 0) {
			ssize_t n = read(fd, buf, sizeof(buf) - 1);

			buf[n > 0 ? n : 0] = '\0';
			init = atoi(buf);
			close(fd);
		}
		if (!init) {
			if (waitpid(mid, &st_mid, WNOHANG) == mid && WIFEXITED(st_mid) &&
			    WEXITSTATUS(st_mid) == 77)
				skip(); /* no CLONE_NEWPID here */
			usleep(1000);
		}
	}
	assert_true(init > 0);
	for (i = 0; i < 2000 && (proc_parse_stat(init, 0, &st) || st.num_threads < NR_THREADS); i++)
		usleep(1000);
	assert_int_equal(seize_tree(init, NULL, &t), 0);
	assert_int_equal(t->root->nr_threads, NR_THREADS);
	start = now_ms();
	unseize_tree(t, UNSEIZE_KILL);
	assert_true(now_ms() - start < 4000);
	/* its parent reaps it and exits */
	assert_int_equal(waitpid(mid, &st_mid, 0), mid);
	assert_int_equal(kill(init, 0), -1);
}

/* Make a cgroup under @base holding @pid, or return false when this kernel has none there. */
static bool cgroup_with(const char *base, pid_t pid, char *path, size_t len)
{
	char procs[512], buf[32];
	int fd, n;

	snprintf(path, len, "%s/criu-like-seize-%d", base, getpid());
	if (access(base, W_OK) || (mkdir(path, 0755) && errno != EEXIST))
		return false;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	fd = open(procs, O_WRONLY);
	assert_true(fd >= 0);
	n = snprintf(buf, sizeof(buf), "%d", pid);
	assert_int_equal(write(fd, buf, n), n);
	close(fd);
	return true;
}

/* A tree of 4 in a cgroup, one child stopped by job control: seized frozen, released as found. */
static void freezer_case(const char *base, const char *state_file, const char *thawed,
			 const char *frozen)
{
	struct seize_opts o = { .freeze_cgroup = NULL };
	pid_t pid = spawn(parent_of_spinners), kid = 0;
	_cleanup_free_ char *text = NULL;
	struct pstree *t = NULL;
	char file[PATH_MAX];
	struct timespec dl;
	unsigned int i;
	bool v2;

	if (!cgroup_with(base, pid, cg_dir, sizeof(cg_dir))) {
		print_message("no writable cgroup at %s: skipped\n", base);
		cg_dir[0] = '\0';
		skip();
	}
	for (i = 0; i < 2000 && !kid; i++) {
		_cleanup_free_ pid_t *kids = NULL;
		unsigned int nr = 0;

		if (!proc_parse_children(pid, pid, &kids, &nr) && nr == 3)
			kid = kids[0];
		else
			usleep(1000);
	}
	assert_true(kid > 0);
	kill(kid, SIGSTOP);
	assert_true(wait_state(kid, "T", 2000));
	o.freeze_cgroup = cg_dir;
	assert_int_equal(seize_tree(pid, &o, &t), 0);
	assert_int_equal(t->nr_tasks, 4);
	assert_null(t->freezer);
	for (i = 0; i < t->nr_tasks; i++) {
		assert_int_equal(state_of(t->tasks[i]->pid, 0), 't');
		assert_int_equal(t->tasks[i]->state,
				 t->tasks[i]->pid == kid ? TASK_STOPPED : TASK_ALIVE);
	}
	snprintf(file, sizeof(file), "%s/%s", cg_dir, state_file);
	text = read_file_at(AT_FDCWD, file, NULL);
	assert_non_null(text);
	assert_non_null(strstr(text, thawed));
	unseize_tree(t, UNSEIZE_RESUME);
	assert_released(pid);
	assert_true(wait_progress(2000));
	assert_true(wait_state(kid, "T", 2000));
	assert_int_equal(tracer_of(kid, 0), 0);

	/*
	 * A cgroup frozen by someone else (a paused container) is taken as it is:
	 * seized, thawed for the walk, frozen again at release.
	 */
	assert_int_equal(freezer_detect(cg_dir, &v2), 0);
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += 5;
	assert_int_equal(freezer_freeze(cg_dir, v2, &dl), 0);
	assert_int_equal(seize_tree(pid, &o, &t), 0);
	assert_int_equal(t->nr_tasks, 4);
	assert_null(t->freezer);
	assert_string_equal(t->refreeze, cg_dir);
	free(text);
	text = read_file_at(AT_FDCWD, file, NULL);
	assert_non_null(strstr(text, thawed));
	unseize_tree(t, UNSEIZE_RESUME);
	free(text);
	text = read_file_at(AT_FDCWD, file, NULL);
	assert_non_null(strstr(text, frozen)); /* the kernel says so once every task is */
	assert_int_equal(tracer_of(pid, 0), 0);
	assert_int_equal(tracer_of(kid, 0), 0);
	assert_int_equal(freezer_thaw(cg_dir, v2), 0);
	assert_released(pid);
	assert_true(wait_progress(2000));
	assert_true(wait_state(kid, "T", 2000));

	/* Frozen again, then killed: the tree dies, the cgroup is left thawed. */
	assert_int_equal(freezer_freeze(cg_dir, v2, &dl), 0);
	assert_int_equal(seize_tree(pid, &o, &t), 0);
	unseize_tree(t, UNSEIZE_KILL);
	free(text);
	text = read_file_at(AT_FDCWD, file, NULL);
	assert_non_null(strstr(text, thawed));
	reap_all();
	assert_int_equal(kill(pid, 0), -1);
}

static void test_freezer_v2(void **state __unused)
{
	freezer_case("/sys/fs/cgroup/unified", "cgroup.events", "frozen 0", "frozen 1");
}

static void test_freezer_v1(void **state __unused)
{
	freezer_case("/sys/fs/cgroup/freezer", "freezer.state", "THAWED", "FROZEN");
}

static void test_freezer_bad_path(void **state __unused)
{
	struct seize_opts o = { .freeze_cgroup = "/nonexistent-cgroup" };
	pid_t pid = spawn(sleeper);
	struct pstree *t = NULL;

	logcap_start(-1);
	assert_int_equal(seize_tree(pid, &o, &t), -ENOENT);
	assert_in_log(logcap_stop(), "/nonexistent-cgroup has neither");
	assert_released(pid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_single, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_stopped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leave_stopped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zombie, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forking_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_storm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_leader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_cont_storm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dumper_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_signal_side_effects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vfork_parent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_pidns_init, setup, teardown),
		cmocka_unit_test_setup_teardown(test_freezer_v2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_freezer_v1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_freezer_bad_path, setup, teardown),
	};

	if (seize_test_init("test-seize", "ptrace, cgroups"))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
