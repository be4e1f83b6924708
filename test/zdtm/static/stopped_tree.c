// SPDX-License-Identifier: GPL-2.0
/*
 * Stopped processes in a tree: child A (its own process group, so the group
 * is not orphaned and SIGTSTP stops it) stopped by SIGTSTP while its child A1
 * keeps running, and a two-thread child B stopped by SIGSTOP. After SIGTERM
 * A and every thread of B must be stopped, A1 running (sleeping); SIGCONT
 * resumes both, and each then
 * finishes its work (A reaps A1, B joins its thread) and exits 0.
 */
#include <errno.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static char state_of(const char *path)
{
	char buf[1024], *p;

	if (test_read_file(path, buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')))
		return '?';
	return p[2];
}

/* The state of every thread of @pid is @want; the number of threads or -EINVAL. */
static int threads_in(pid_t pid, char want)
{
	char path[300];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, de->d_name);
		if (state_of(path) != want) {
			n = -EINVAL;
			break;
		}
		n++;
	}
	closedir(d);
	return n;
}

static volatile int b_stop;

static void *b_thread(void *arg)
{
	(void)arg;
	while (!b_stop)
		test_sleep_ms(5);
	return NULL;
}

static int proc_b(void)
{
	pthread_t th;

	if (pthread_create(&th, NULL, b_thread, NULL))
		return 2;
	raise(SIGSTOP);
	b_stop = 1;
	pthread_join(th, NULL);
	return 0;
}

static int proc_a(int ready)
{
	pid_t a1;
	int status;

	setpgid(0, 0);
	a1 = fork();
	if (a1 == 0) {
		if (write(ready, "1", 1) != 1)
			_exit(2);
		test_waitsig();
		_exit(getppid() == getpgrp() ? 0 : 1);
	}
	raise(SIGTSTP);
	if (waitpid(a1, &status, 0) != a1 || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return 0;
}

static int stopped_by(pid_t pid, int sig)
{
	int status;

	return waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status) &&
	       WSTOPSIG(status) == sig;
}

int main(int argc, char **argv)
{
	char path[64], a1_pid_text[16];
	int ready[2], status;
	pid_t a, b, a1;

	test_init(argc, argv);
	if (pipe(ready)) {
		fail("pipe: %m");
		return 1;
	}
	a = fork();
	if (a == 0)
		_exit(proc_a(ready[1]));
	b = fork();
	if (b == 0)
		_exit(proc_b());
	if (a < 0 || b < 0 || test_wait_ready(ready[0], 1) || !stopped_by(a, SIGTSTP) ||
	    !stopped_by(b, SIGSTOP) || threads_in(b, 'T') != 2) {
		fail("the children did not stop as planned");
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", a, a);
	if (test_read_file(path, a1_pid_text, sizeof(a1_pid_text)) <= 0 ||
	    sscanf(a1_pid_text, "%d", &a1) != 1) {
		fail("cannot find A's child");
		return 1;
	}
	test_daemon();
	test_waitsig();

	/* A1 sleeps 5 ms at a time: under load it may be seen running (R) between two sleeps. */
	if (threads_in(a, 'T') != 1 || threads_in(b, 'T') != 2 ||
	    (threads_in(a1, 'S') != 1 && threads_in(a1, 'R') != 1)) {
		fail("states: A %d B %d threads stopped, A1 %d sleeping %d running; expected 1 2 1",
		     threads_in(a, 'T'), threads_in(b, 'T'), threads_in(a1, 'S'),
		     threads_in(a1, 'R'));
		return 1;
	}
	kill(a1, SIGTERM);
	kill(a, SIGCONT);
	kill(b, SIGCONT);
	if (waitpid(a, &status, 0) != a || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("A ended with status 0x%x after SIGCONT (A1 failing its check gives 0x100)",
		     status);
		return 1;
	}
	if (waitpid(b, &status, 0) != b || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("B ended with status 0x%x after SIGCONT", status);
		return 1;
	}
	pass();
	return 0;
}
