// SPDX-License-Identifier: GPL-2.0
/*
 * `criu-like swrk FD` and `criu-like service`. The daemon listens on a unix
 * SOCK_SEQPACKET socket (--address, or the one systemd passes through
 * LISTEN_FDS) and forks a fresh worker for each connection: a request that
 * crashes or hangs its worker cannot take the daemon down, and no state of
 * one request reaches the next.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_PREFIX "service: "
#include "log.h"
#include "migrate.h"
#include "rpc.h"
#include "util.h"

#define SD_LISTEN_FDS_START 3

static int check_seqpacket(int fd, bool listening)
{
	int type = 0, acc = 0;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_SEQPACKET)
		return -ENOTSOCK;
	len = sizeof(acc);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) || !acc != !listening)
		return -EINVAL;
	return 0;
}

int rpc_swrk(const struct cr_options *o __unused, const char *arg)
{
	long fd;
	int ret;

	if (parse_long(arg, &fd) || fd < 0 || fd > 0x7fffffff) {
		pr_err("swrk: '%s' is not a file descriptor\n", arg);
		return -EINVAL;
	}
	if (check_seqpacket((int)fd, false)) {
		pr_err("swrk: fd %ld is not a connected SOCK_SEQPACKET socket\n", fd);
		return -ENOTSOCK;
	}
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	ret = rpc_serve((int)fd, false);
	close((int)fd);
	return ret;
}

/* systemd's socket activation: fd 3 when LISTEN_PID is ours; -ENOENT when not activated. */
static int activated_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	long p, n;

	if (!pid || !fds || parse_long(pid, &p) || p != getpid())
		return -ENOENT;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (parse_long(fds, &n) || n != 1) {
		pr_err("LISTEN_FDS=%s: expected exactly one socket\n", fds);
		return -EINVAL;
	}
	if (check_seqpacket(SD_LISTEN_FDS_START, true)) {
		pr_err("the socket systemd passed is not a listening SOCK_SEQPACKET socket\n");
		return -EINVAL;
	}
	fcntl(SD_LISTEN_FDS_START, F_SETFD, FD_CLOEXEC);
	return SD_LISTEN_FDS_START;
}

/* Bind @path, replacing a stale socket file but never a live daemon's. */
static int bind_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1, probe = -1;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		pr_err("--address %s: longer than a unix socket path may be\n", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || probe < 0)
		return neg_errno();
	if (!connect(probe, (struct sockaddr *)&sa, sizeof(sa))) {
		pr_err("another service already listens on %s\n", path);
		return -EADDRINUSE;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) {
		pr_perror("cannot listen on %s", path);
		return neg_errno();
	}
	/* anyone may connect: a peer that is not root gets a refusal that says so */
	if (chmod(path, 0666)) {
		pr_perror("cannot chmod %s", path);
		return neg_errno();
	}
	return TAKE_FD(fd);
}

static int write_pid(const char *path, pid_t pid)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", pid);

	if (fd < 0 || write_all(fd, buf, (size_t)n)) {
		pr_perror("cannot write the pid into %s", path);
		return -EIO;
	}
	return 0;
}

static volatile sig_atomic_t stopping;

static void on_stop(int sig __unused)
{
	stopping = 1;
}

/* Workers are reaped as they end; what they restored was reparented when they exited. */
static void on_child(int sig __unused)
{
	int saved = errno;

	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = saved;
}

static void service_signals(bool worker)
{
	struct sigaction stop = { .sa_handler = worker ? SIG_DFL : on_stop };
	/*
	 * A worker's SIGCHLD as the command line has it: SA_NOCLDSTOP kept
	 * there also kept the kernel from telling a restore's controller of its
	 * tracees' ptrace stops (do_notify_parent_cldstop()), so that each one it
	 * waited for at the resume cost its 10 ms timeout: 20-80 ms of a
	 * migration's pause.
	 */
	struct sigaction chld = { .sa_handler = worker ? SIG_DFL : on_child,
				  .sa_flags = worker ? 0 : SA_RESTART | SA_NOCLDSTOP };

	/* no SA_RESTART for SIGTERM: the wait returns EINTR and the loop ends */
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGCHLD, &chld, NULL);
}

static void serve_one(const struct cr_options *o, int lfd, int mfd, int conn, bool migration,
		      const sigset_t *mask)
{
	pid_t pid = fork();

	if (pid < 0) {
		pr_perror("cannot fork a worker");
		return;
	}
	if (pid == 0) {
		close(lfd);
		if (mfd >= 0)
			close(mfd);
		service_signals(true);
		sigprocmask(SIG_SETMASK, mask, NULL);
		if (migration)
			_exit(mig_serve(o, conn) ? 1 : 0);
		_exit(rpc_serve(conn, true) ? 1 : 0);
	}
	pr_info("worker %d serves %s\n", pid, migration ? "a migration" : "a connection");
}

/*
 * SIGTERM and SIGINT are blocked except inside ppoll(), so one that comes
 * between the check of `stopping` and the wait still ends the wait.
 */
static void accept_loop(const struct cr_options *o, int lfd, int mfd)
{
	struct pollfd p[2] = { { .fd = lfd, .events = POLLIN }, { .fd = mfd, .events = POLLIN } };
	sigset_t stop, old;
	int conn, i;

	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, &old);
	fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
	if (mfd >= 0)
		fcntl(mfd, F_SETFL, fcntl(mfd, F_GETFL) | O_NONBLOCK);
	while (!stopping) {
		if (ppoll(p, mfd >= 0 ? 2 : 1, NULL, &old) < 0) {
			if (errno != EINTR)
				pr_perror("poll");
			continue;
		}
		for (i = 0; i < (mfd >= 0 ? 2 : 1); i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			conn = accept4(p[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (conn < 0) {
				if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
					pr_perror("accept");
				continue;
			}
			/* a worker's socket blocks, whatever the listener's flags */
			fcntl(conn, F_SETFL, fcntl(conn, F_GETFL) & ~O_NONBLOCK);
			serve_one(o, lfd, mfd, conn, i == 1, &old);
			close(conn);
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* --daemon: the parent writes the child's pid and returns once the socket listens. */
static int daemonize(const char *pidfile)
{
	int null;
	pid_t pid = fork();

	if (pid < 0)
		return neg_errno();
	if (pid > 0)
		_exit(pidfile && write_pid(pidfile, pid) ? 1 : 0);
	setsid();
	if (chdir("/"))
		return neg_errno();
	null = open("/dev/null", O_RDWR);
	if (null < 0)
		return neg_errno();
	dup2(null, STDIN_FILENO);
	dup2(null, STDOUT_FILENO);
	if (log_get_fd() != STDERR_FILENO)
		dup2(null, STDERR_FILENO);
	if (null > STDERR_FILENO)
		close(null);
	return 0;
}

int rpc_service(const struct cr_options *o)
{
	const char *path = o->address ? o->address : RPC_SERVICE_ADDRESS;
	bool bound = false;
	int lfd, mfd = -1, err;

	lfd = activated_socket();
	if (lfd == -ENOENT) {
		lfd = bind_socket(path);
		bound = true;
	}
	if (lfd < 0)
		return lfd;
	if (o->listen) {
		mfd = mig_listen(o);
		if (mfd < 0) {
			close(lfd);
			if (bound)
				unlink(path);
			return mfd;
		}
	}
	pr_info("listening on %s\n", bound ? path : "the socket systemd passed");
	err = o->restore_detached ? daemonize(o->pidfile)
				  : (o->pidfile ? write_pid(o->pidfile, getpid()) : 0);
	if (err) {
		close(lfd);
		if (mfd >= 0)
			close(mfd);
		return err;
	}
	service_signals(false);
	accept_loop(o, lfd, mfd);
	close(lfd);
	if (mfd >= 0)
		close(mfd);
	if (bound)
		unlink(path);
	pr_info("stopped\n");
	return 0;
}
