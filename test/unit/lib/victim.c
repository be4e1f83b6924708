// SPDX-License-Identifier: GPL-2.0
/* Victims of the unit tests: see victim.h. */
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
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "util.h"
#include "victim.h"

void victim_block_usr1(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

void victim_wait_usr1(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
}

/* The child's side of victim_start(): never returns. */
static void __attribute__((noreturn)) victim_main(const struct victim_ops *ops, void *arg, int wfd,
						  int test_fd, void *report, size_t size)
{
	int fd = ops->report_fd;

	if (ops->check)
		victim_block_usr1();
	if (dup2(wfd, fd) < 0 || (test_fd >= 0 && dup2(test_fd, fd + 1) < 0))
		_exit(1);
	/* Only what the test sets up, nothing inherited from the test runner. */
	close_range(3, fd - 1, 0);
	close_range(test_fd >= 0 ? fd + 2 : fd + 1, ~0u, 0);
	if ((ops->new_session && setsid() < 0) || ops->setup(arg, report) ||
	    write_all(fd, report, size))
		_exit(1);
	close(fd);
	if (!ops->check)
		for (;;)
			pause();
	victim_wait_usr1();
	_exit(ops->check(arg, report));
}

pid_t victim_start(const struct victim_ops *ops, void *arg, int test_fd, void *report, size_t size)
{
	int p[2], err = 0;
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid == 0)
		victim_main(ops, arg, p[1], test_fd, report, size);
	close(p[1]);
	/* The report, then the end of file: every copy of the report fd is closed. */
	if (pid < 0)
		err = -errno;
	else if (read_all(p[0], report, size) || read(p[0], &c, 1) != 0)
		err = -EIO;
	close(p[0]);
	if (err && pid > 0)
		victim_kill(&pid);
	return err ? err : pid;
}

pid_t victim_start_sleeper(int (*setup)(void *arg, void *report), void *arg, void *report,
			   size_t size)
{
	/*
	 * The report at fd 4, so that the victim's own fds start at 3 and skip
	 * it: after the report, fd 4 is the lowest free one, where the
	 * parasite's socket goes, and no fd closed by the victim is reused.
	 */
	const struct victim_ops ops = {
		.setup = setup,
		.report_fd = 4,
		.new_session = true,
	};
	pid_t pid = victim_start(&ops, arg, -1, report, size);

	assert_true(pid > 0);
	return pid;
}

int victim_null_stdio(void)
{
	int null = open("/dev/null", O_RDWR);

	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		return -errno;
	return null;
}

int child_status(pid_t pid)
{
	int status = -1;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void victim_finish(pid_t *pid)
{
	assert_int_equal(kill(*pid, SIGUSR1), 0);
	assert_int_equal(child_status(*pid), 0);
	*pid = 0;
}

void victim_kill(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGKILL);
	waitpid(*pid, NULL, 0);
	*pid = 0;
}

int rm_rf(const char *path)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd) ? -EIO : 0;
}
