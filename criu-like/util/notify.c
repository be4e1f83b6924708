// SPDX-License-Identifier: GPL-2.0
/*
 * The hook points of a dump and a restore: the RPC client's notifier, then
 * --action-script, run as CRIU runs its action scripts (the path executed
 * directly, criu-like's stdio, the action and the tree in its environment).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_PREFIX "notify: "
#include "log.h"
#include "notify.h"
#include "util.h"

/* In the child: CRIU's environment, every signal unblocked (a restore blocks some), exec. */
static void exec_script(const char *path, const char *action, pid_t root, const char *dir)
{
	char pid[16];
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	snprintf(pid, sizeof(pid), "%d", root);
	if (setenv("CRTOOLS_SCRIPT_ACTION", action, 1) ||
	    (dir && setenv("CRTOOLS_IMAGE_DIR", dir, 1)) ||
	    (root > 0 && setenv("CRTOOLS_INIT_PID", pid, 1)))
		_exit(127);
	execl(path, path, (char *)NULL);
	pr_perror("cannot run action script %s", path);
	_exit(127);
}

static int run_script(const char *path, const char *action, pid_t root, const char *dir)
{
	int status;
	pid_t pid;

	pr_info("running %s for %s\n", path, action);
	pid = fork();
	if (pid < 0)
		return neg_errno();
	if (pid == 0)
		exec_script(path, action, root, dir);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return neg_errno();
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	if (WIFEXITED(status))
		pr_err("action script %s failed at %s: exit status %d\n", path, action,
		       WEXITSTATUS(status));
	else
		pr_err("action script %s failed at %s: killed by signal %d\n", path, action,
		       WTERMSIG(status));
	return -ECANCELED;
}

int cr_notify(const struct cr_options *o, const char *action, pid_t root, int dirfd)
{
	char dir[PATH_MAX];
	int err = 0;

	pr_debug("hook %s (tree %d)\n", action, root);
	if (o->notifier) {
		err = o->notifier->notify(o->notifier->priv, action, root);
		if (err)
			pr_errno(err, "the RPC client failed the hook %s", action);
	}
	if (err || !o->action_script)
		return err;
	/* CRIU: /proc/PID/fd/N of its own image directory fd, once it is open */
	if (dirfd >= 0)
		snprintf(dir, sizeof(dir), "/proc/%d/fd/%d", getpid(), dirfd);
	else if (!realpath(o->images_dir, dir))
		snprintf(dir, sizeof(dir), "%s", o->images_dir);
	return run_script(o->action_script, action, root, dir);
}

int cr_notify_fd(const struct cr_options *o, const char *action, pid_t root, int fd)
{
	int err;

	pr_debug("hook %s (tree %d, fd %d)\n", action, root, fd);
	if (!o->notifier || !o->notifier->notify_fd) {
		pr_err("hook %s: no RPC client to send the descriptor to\n", action);
		return -ENOTCONN;
	}
	err = o->notifier->notify_fd(o->notifier->priv, action, root, fd);
	if (err)
		pr_errno(err, "the RPC client failed the hook %s", action);
	return err;
}
