// SPDX-License-Identifier: GPL-2.0
/*
 * Processes of the runner: it is a child subreaper, so every process it
 * starts, and every orphan of those, ends up as its child; it reaps at once
 * (PID 1 here reaps orphans only after seconds, and a restore would then find
 * the pid taken) and kills them all at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"

volatile sig_atomic_t zdtm_interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	zdtm_interrupted = 1;
}

int reaper_setup(void)
{
	struct sigaction sa = { .sa_handler = on_interrupt };
	sigset_t chld;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		pr_perror("PR_SET_CHILD_SUBREAPER");
		return neg_errno();
	}
	/* SIGCHLD stays blocked: wait_pid() sleeps in sigtimedwait() on it. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	return 0;
}

void reaper_reset(struct reaper *r)
{
	free(r->v);
	r->v = NULL;
	r->n = r->cap = 0;
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void remember(struct reaper *r, pid_t pid, int status)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct reaped *v = realloc(r->v, cap * sizeof(*v));

		/* Without memory the status is lost; wait_pid() then sees ECHILD. */
		if (!v)
			return;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n].pid = pid;
	r->v[r->n].status = status;
	r->n++;
}

int reap_ready(struct reaper *r)
{
	int status, count = 0;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
		remember(r, pid, status);
		count++;
	}
	return count;
}

static bool take_reaped(struct reaper *r, pid_t pid, int *ret_status)
{
	/* Newest first: pids are reused across tests and modes. */
	for (size_t i = r->n; i-- > 0;) {
		if (r->v[i].pid != pid)
			continue;
		if (ret_status)
			*ret_status = r->v[i].status;
		r->v[i] = r->v[--r->n];
		return true;
	}
	return false;
}

static int sleep_until(int64_t deadline_ms)
{
	struct timespec ts = { 0, 50 * 1000000 };
	sigset_t chld;
	int64_t left = deadline_ms - now_ms();

	if (zdtm_interrupted)
		return -EINTR;
	if (left <= 0)
		return -ETIMEDOUT;
	if (left < 50)
		ts.tv_nsec = left * 1000000;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigtimedwait(&chld, NULL, &ts);
	return 0;
}

int wait_pid(struct reaper *r, pid_t pid, int64_t deadline_ms, int *ret_status)
{
	for (;;) {
		int ret;

		reap_ready(r);
		if (take_reaped(r, pid, ret_status))
			return 0;
		if (kill(pid, 0) && errno == ESRCH)
			return -ECHILD;
		ret = sleep_until(deadline_ms);
		if (ret)
			return ret;
	}
}

int wait_gone(struct reaper *r, pid_t pid, int64_t deadline_ms)
{
	for (;;) {
		int ret;

		reap_ready(r);
		if (kill(pid, 0) && errno == ESRCH)
			return 0;
		ret = sleep_until(deadline_ms);
		if (ret)
			return ret;
	}
}

char proc_state(pid_t pid)
{
	char path[64], *p;
	_cleanup_free_ char *stat = NULL;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	stat = slurp(path);
	if (!stat)
		return 0;
	/* comm may hold spaces and parentheses: the state follows the last ')'. */
	p = strrchr(stat, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

char *slurp(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t size = 4096, len = 0;

	if (fd < 0)
		return NULL;
	buf = malloc(size);
	if (!buf)
		return NULL;
	for (;;) {
		ssize_t n;

		if (len + 1 == size) {
			char *nb = realloc(buf, size * 2);

			if (!nb)
				return NULL;
			buf = nb;
			size *= 2;
		}
		n = read(fd, buf + len, size - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return NULL;
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	return TAKE_PTR(buf);
}

pid_t spawn(char *const argv[], const char *cwd, const char *out)
{
	sigset_t none;
	pid_t pid = fork();

	if (pid < 0)
		return neg_errno();
	if (pid > 0)
		return pid;

	/* The child: default signal state, then exec. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (cwd && chdir(cwd)) {
		fprintf(stderr, "chdir %s: %m\n", cwd);
		_exit(127);
	}
	if (out) {
		int fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0644);
		int nul = open("/dev/null", O_RDONLY);

		if (fd < 0 || nul < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || dup2(nul, 0) < 0)
			_exit(127);
		/* not a third fd of the log in the test (a file outside an overlay root) */
		if (fd > 2)
			close(fd);
		if (nul > 2)
			close(nul);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "exec %s: %m\n", argv[0]);
	_exit(127);
}

static int nspid_line(pid_t pid, pid_t *v, unsigned int max)
{
	_cleanup_free_ char *s = NULL;
	char path[64], *l;
	unsigned int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	s = slurp(path);
	l = s ? strstr(s, "\nNSpid:") : NULL;
	if (!l)
		return 0;
	for (l += 7; *l && *l != '\n' && n < max;) {
		char *end;
		long x = strtol(l, &end, 10);

		if (end == l)
			break;
		v[n++] = (pid_t)x;
		l = end;
	}
	return (int)n;
}

pid_t ns_pid_at(pid_t pid, unsigned int level)
{
	pid_t v[32];
	int n = nspid_line(pid, v, 32);

	return (int)level < n ? v[level] : -1;
}

unsigned int ns_levels(pid_t pid)
{
	pid_t v[32];

	return (unsigned int)nspid_line(pid, v, 32);
}

pid_t ns_find(pid_t root, unsigned int level, pid_t vpid)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	int err;

	if (ns_pid_at(root, level) == vpid)
		return root;
	err = descendants(root, &pids, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		if (ns_pid_at(pids[i], level) == vpid)
			return pids[i];
	return -ESRCH;
}

pid_t read_ppid(pid_t pid)
{
	char path[64], *stat, *p;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	stat = slurp(path);
	if (!stat)
		return 0;
	/* comm may hold spaces and parentheses: the state follows the last ')'. */
	p = strrchr(stat, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		ppid = 0;
	free(stat);
	return ppid;
}

int descendants(pid_t root, pid_t **ret, size_t *ret_n)
{
	_cleanup_closedir_ DIR *d = opendir("/proc");
	_cleanup_free_ pid_t *pid = NULL, *ppid = NULL;
	size_t n = 0, cap = 0, found = 0;
	struct dirent *de;

	if (!d)
		return neg_errno();
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			pid_t *a = realloc(pid, cap * sizeof(*a));
			pid_t *b = a ? realloc(ppid, cap * sizeof(*b)) : NULL;

			if (a)
				pid = a;
			if (!a || !b)
				return -ENOMEM;
			ppid = b;
		}
		pid[n] = atoi(de->d_name);
		ppid[n] = read_ppid(pid[n]);
		n++;
	}
	/* Move descendants to the front: the output grows as parents are found. */
	pid_t *out = malloc((n + 1) * sizeof(*out));

	if (!out)
		return -ENOMEM;
	for (bool more = true; more;) {
		more = false;
		for (size_t i = 0; i < n; i++) {
			bool parent_in = ppid[i] == root;

			for (size_t j = 0; !parent_in && j < found; j++)
				parent_in = ppid[i] == out[j];
			if (!parent_in || pid[i] == 0)
				continue;
			out[found++] = pid[i];
			pid[i] = 0; /* taken */
			more = true;
		}
	}
	*ret = out;
	*ret_n = found;
	return 0;
}

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigtimedwait(&chld, NULL, &ts);
}

void kill_all(struct reaper *r)
{
	for (int round = 0; round < 250; round++) {
		_cleanup_free_ pid_t *pids = NULL;
		size_t n = 0;

		reap_ready(r);
		if (descendants(getpid(), &pids, &n))
			n = 0;
		if (!n) {
			/* Nothing left in /proc; collect the last zombies, if any. */
			while (waitpid(-1, NULL, WNOHANG | __WALL) > 0)
				;
			return;
		}
		for (size_t i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		nap_ms(20);
	}
	pr_warn("some descendants survived SIGKILL for 5 seconds\n");
}
