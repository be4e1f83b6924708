// SPDX-License-Identifier: GPL-2.0
/* Start-up, readiness, SIGTERM and verdicts of a zdtm test program. */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

/*
 * The one state of the library: a test program is a single-purpose process
 * and the signal handler needs the flag, so this is a file-scope struct.
 */
static struct {
	const char *pidfile;
	int argc;
	char **argv;
	int ready_fd; /* write end of the pipe the launcher waits on */
	bool launcher_writes; /* the pidfile: the daemon's pid as the launcher sees it */
	volatile int got_sigterm; /* a futex word: test_waitsig() sleeps on it */
	const char *userns_map; /* CLONE_NEWUSER: the map the launcher writes */
	bool userns_deny;
	/* test_timens() in mode userns: the offsets, set inside the container's user namespace */
	bool timens;
	long mono_off, boot_off;
	bool container; /* the runner's ns modes: the test runs under the container's init */
} tst = { .ready_fd = -1, .userns_map = "0 100000 65536" };

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* unshare(CLONE_NEWTIME) and the offsets of the new namespace, for the children to come. */
static int timens_make(long mono, long boot)
{
	char buf[64];
	int fd, len, err;

	if (unshare(CLONE_NEWTIME)) {
		err = -errno;
		fprintf(stderr, "unshare(CLONE_NEWTIME): %m\n");
		return err;
	}
	len = snprintf(buf, sizeof(buf), "%d %ld 0\n%d %ld 0\n", CLOCK_MONOTONIC, mono,
		       CLOCK_BOOTTIME, boot);
	fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, len) != len) {
		err = -errno;
		fprintf(stderr, "timens_offsets: %m\n");
		return err;
	}
	close(fd);
	return 0;
}

int test_ns_apart_from_parent(const char *kind)
{
	char mine[64], parents[64];
	struct stat a, b;

	snprintf(mine, sizeof(mine), "/proc/self/ns/%s", kind);
	snprintf(parents, sizeof(parents), "/proc/%d/ns/%s", getppid(), kind);
	if (stat(mine, &a) || stat(parents, &b))
		return -errno;
	return a.st_ino != b.st_ino || a.st_dev != b.st_dev;
}

int test_timens_offsets(long long *mono, long long *boot)
{
	char name[32];
	long long s, ns;
	FILE *f = fopen("/proc/self/timens_offsets", "r");

	if (!f)
		return -errno;
	*mono = *boot = -1;
	while (fscanf(f, "%31s %lld %lld", name, &s, &ns) == 3) {
		if (!strcmp(name, "monotonic"))
			*mono = s;
		else if (!strcmp(name, "boottime"))
			*boot = s;
	}
	fclose(f);
	return 0;
}

int test_timens(long mono, long boot)
{
	const char *ns = getenv("ZDTM_NS_INIT");

	/* mode userns: made by the container's first process, owned by its user namespace */
	if (ns && !strcmp(ns, "user")) {
		tst.timens = true;
		tst.mono_off = mono;
		tst.boot_off = boot;
		return 0;
	}
	return timens_make(mono, boot);
}

void test_userns(const char *map, bool deny_setgroups)
{
	tst.userns_map = map;
	tst.userns_deny = deny_setgroups;
}

static int write_proc(pid_t pid, const char *name, const char *text)
{
	char path[64];
	int fd, len = (int)strlen(text), err;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, len) != len) {
		err = -errno;
		fprintf(stderr, "cannot write \"%s\" to %s: %m\n", text, path);
		return err;
	}
	close(fd);
	return 0;
}

/* The launcher: the maps of @child's new user namespace, then let it go on through @go. */
static void userns_maps(pid_t child, int go)
{
	if ((tst.userns_deny && write_proc(child, "setgroups", "deny")) ||
	    write_proc(child, "uid_map", tst.userns_map) ||
	    write_proc(child, "gid_map", tst.userns_map) || write(go, "M", 1) != 1) {
		kill(child, SIGKILL);
		_exit(1);
	}
	close(go);
}

static void redirect_stdio(const char *outfile);

/*
 * The test in its new user namespace: once mapped, its outfile opened (as
 * the runner's uid still, unmapped there), then uid and gid 0 there, no groups.
 */
static void userns_wait(int go, const char *outfile)
{
	char c;

	if (read(go, &c, 1) != 1) {
		perror("user namespace of the test: no maps");
		exit(1);
	}
	redirect_stdio(outfile);
	if ((!tst.userns_deny && setgroups(0, NULL)) || setresgid(0, 0, 0) || setresuid(0, 0, 0)) {
		perror("user namespace of the test");
		exit(1);
	}
	close(go);
}

/*
 * SIGTERM goes to the process, so any thread that does not block it may
 * run the handler: the flag is a futex word the handler wakes, and the
 * main thread waits on the word, not for the signal.
 */
static void sigterm_handler(int sig)
{
	int saved = errno;

	(void)sig;
	tst.got_sigterm = 1;
	syscall(SYS_futex, &tst.got_sigterm, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	errno = saved;
}

static void usage_exit(const char *prog, const char *why)
{
	fprintf(stderr, "%s: %s\nusage: %s --pidfile=FILE --outfile=FILE [--NAME=VALUE...]\n", prog,
		why, prog);
	exit(2);
}

const char *test_arg(const char *name, const char *def)
{
	size_t n = strlen(name);

	for (int i = 1; i < tst.argc; i++) {
		const char *a = tst.argv[i];

		if (!strncmp(a, "--", 2) && !strncmp(a + 2, name, n) && a[2 + n] == '=')
			return a + 3 + n;
	}
	return def;
}

/*
 * The pidfile, complete or not at all (rename). By the daemon itself, or by
 * the launcher when the daemon is in a pid namespace of its own (its
 * getpid() is not the runner's pid for it).
 */
static int write_pidfile(pid_t pid)
{
	char tmp[4096], buf[32];
	int fd, len;

	snprintf(tmp, sizeof(tmp), "%s.tmp", tst.pidfile);
	len = snprintf(buf, sizeof(buf), "%d\n", pid);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, len) != len || close(fd) || rename(tmp, tst.pidfile))
		return -errno;
	return 0;
}

/* Mode ns: the daemon is the init's only child (/proc/INIT/task/INIT/children). */
static pid_t child_of(pid_t init)
{
	char path[64], buf[64];
	int fd, n, err;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", init, init);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : -ESRCH; /* nothing read: no child yet */
	close(fd);
	if (n <= 0)
		return err;
	buf[n] = '\0';
	return (pid_t)atoi(buf);
}

/* The launcher: exit 0 once the daemon is ready, 1 if it died before. */
static void launcher_wait(pid_t child, int rfd, bool ns_init)
{
	char c;
	ssize_t n;
	int status;

	do {
		n = read(rfd, &c, 1);
	} while (n < 0 && errno == EINTR);
	if (n == 1 && tst.launcher_writes) {
		pid_t daemon = ns_init ? child_of(child) : child;

		if (daemon <= 0 || write_pidfile(daemon)) {
			fprintf(stderr, "cannot write pidfile %s for %d: %m\n", tst.pidfile,
				daemon);
			_exit(1);
		}
	}
	if (n == 1)
		_exit(0);
	if (waitpid(child, &status, 0) == child)
		fprintf(stderr, "test daemon %d ended before it was ready (status 0x%x)\n", child,
			status);
	_exit(1);
}

static void redirect_stdio(const char *outfile)
{
	int fd = open(outfile, O_WRONLY | O_CREAT | O_APPEND, 0644);
	int nul = open("/dev/null", O_RDONLY);

	if (fd < 0 || nul < 0) {
		fprintf(stderr, "cannot open %s or /dev/null: %m\n", outfile);
		exit(1);
	}
	if (dup2(nul, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
	    dup2(fd, STDERR_FILENO) < 0) {
		fprintf(stderr, "dup2: %m\n");
		exit(1);
	}
	close(fd);
	close(nul);
	setvbuf(stdout, NULL, _IONBF, 0);
}

/* fork(), or a clone in new namespaces (CLONE_NEW*): returns like fork(). */
static pid_t fork_flags(int flags)
{
	if (!flags)
		return fork();
	return (pid_t)syscall(SYS_clone, (unsigned long)flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

static void ns_mount(const char *src, const char *target, const char *type, unsigned long flags,
		     const char *data)
{
	if (mkdir(target, 0755) && errno != EEXIST) {
		fprintf(stderr, "ns init: mkdir %s: %m\n", target);
		exit(1);
	}
	if (mount(src, target, type, flags, data)) {
		fprintf(stderr, "ns init: mount %s (%s) on %s: %m\n", src, type ? type : "bind",
			target);
		exit(1);
	}
}

/*
 * The container's root itself: a bind of the host's / alone, or with
 * ZDTM_NS_OVERLAY (the runner's "ns-root: overlay"), an overlayfs whose
 * lower layer is the host's / and whose upper and work directories are on
 * the runner's tmpfs there.
 */
static void ns_root_mount(const char *root)
{
	const char *ovl = getenv("ZDTM_NS_OVERLAY");
	char opts[3 * 4096];

	if (!ovl) {
		ns_mount("/", root, NULL, MS_BIND, NULL);
		return;
	}
	snprintf(opts, sizeof(opts), "lowerdir=/,upperdir=%s/upper,workdir=%s/work", ovl, ovl);
	ns_mount("overlay", root, "overlay", 0, opts);
}

/*
 * Mode userns, in the launcher (host root) before the init is cloned: what
 * only the host's root may mount, in a mount namespace of the launcher's
 * own (made private first): a bind of the host's / alone (not the mounts
 * under it: the host's cgroup v1 mounts are not dumped) on ns-root, a
 * devtmpfs on its /dev (the devices of a container). The init's mount
 * namespace, owned by its new user namespace, is a copy of this one.
 */
static void ns_root_host(void)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fprintf(stderr, "ns launcher: a private mount namespace: %m\n");
		exit(1);
	}
	ns_root_mount("ns-root");
	ns_mount("devtmpfs", "ns-root/dev", "devtmpfs", MS_NOSUID, "mode=755");
	/* the mount points of what the init mounts (it may not create them in the host's /dev) */
	for (const char *d = "ns-root/dev/pts\0ns-root/dev/shm\0ns-root/dev/mqueue\0"; *d;
	     d += strlen(d) + 1)
		if (mkdir(d, 0755) && errno != EEXIST) {
			fprintf(stderr, "ns launcher: mkdir %s: %m\n", d);
			exit(1);
		}
}

/*
 * The root of the container, as a container sees it: in the fresh mount
 * namespace (made private first, so nothing goes back to the host), a bind
 * of the host's / alone (not the mounts under it: the host's cgroup v1
 * mounts are not dumped), with a proc of the new pid namespace, a devtmpfs
 * /dev with a devpts of its own and a tmpfs /dev/shm, an mqueue of the new
 * IPC namespace; pivot_root into it, back in the same directory. The
 * test's files (its binary, its directory, the outfile) are on the host's
 * root filesystem and keep their paths.
 *
 * In a user namespace (@user) the bind and the devtmpfs were made by the
 * launcher (ns_root_host()); their copies here are locked to their parents,
 * so ns-root is bound again onto itself, with what is under it, for a root
 * that pivot_root accepts. The proc of the new pid namespace may be mounted
 * there because the host's proc is still fully visible in this namespace.
 */
static void ns_root(bool user)
{
	char cwd[4096];
	const char *root = "ns-root";

	if (!getcwd(cwd, sizeof(cwd)) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fprintf(stderr, "ns init: getcwd or making / private: %m\n");
		exit(1);
	}
	if (user)
		ns_mount(root, root, NULL, MS_BIND | MS_REC, NULL);
	else
		ns_root_mount(root);
	if (chdir(root)) {
		fprintf(stderr, "ns init: chdir %s: %m\n", root);
		exit(1);
	}
	ns_mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	if (!user)
		ns_mount("devtmpfs", "dev", "devtmpfs", MS_NOSUID, "mode=755");
	ns_mount("devpts", "dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		 "newinstance,ptmxmode=0666,mode=620");
	ns_mount("shm", "dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
	ns_mount("mqueue", "dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	if (syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) || chdir(cwd)) {
		fprintf(stderr, "ns init: pivot_root into %s/%s: %m\n", cwd, root);
		exit(1);
	}
}

/* The container's network namespace has its loopback up, as a container's has. */
static void ns_lo_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (sk < 0 || ioctl(sk, SIOCGIFFLAGS, &ifr)) {
		fprintf(stderr, "ns init: the flags of lo: %m\n");
		exit(1);
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(sk, SIOCSIFFLAGS, &ifr)) {
		fprintf(stderr, "ns init: bringing lo up: %m\n");
		exit(1);
	}
	close(sk);
}

/*
 * Mode ns of the runner (ZDTM_NS_INIT): pid 1 of the fresh namespaces, in
 * the container's root (ns_root). It forks the daemon, reaps whatever comes
 * to it, and exits with the daemon's status when the daemon ends.
 */
static pid_t ns_init_rest(const char *outfile, int flags);

/*
 * With an overlay root (ZDTM_NS_OVERLAY), the init was exec'ed on the host:
 * its program and mappings are files of the host's root filesystem, which
 * the container sees only through the overlay, as other files. A
 * container's processes are exec'ed inside it: the init execs the test
 * again by its path, now resolved in the container's root, and goes on as
 * ns_init_rest() (test_init_ns(), ZDTM_NS_REEXEC).
 */
static void ns_reexec(bool user)
{
	char env[64];

	if (!getenv("ZDTM_NS_OVERLAY"))
		return;
	snprintf(env, sizeof(env), "%d %d", tst.ready_fd, user);
	if (setenv("ZDTM_NS_REEXEC", env, 1) || unsetenv("ZDTM_NS_OVERLAY") ||
	    fcntl(tst.ready_fd, F_SETFD, 0)) {
		perror("ns init: exec again");
		exit(1);
	}
	execv(tst.argv[0], tst.argv);
	fprintf(stderr, "ns init: exec %s in the container: %m\n", tst.argv[0]);
	exit(1);
}

static pid_t ns_init(const char *outfile, int flags, bool user)
{
	if (setsid() < 0) {
		perror("setsid");
		exit(1);
	}
	ns_root(user);
	ns_reexec(user);
	return ns_init_rest(outfile, flags);
}

static pid_t ns_init_rest(const char *outfile, int flags)
{
	pid_t daemon;
	int status;

	ns_lo_up();
	daemon = fork_flags(flags);
	if (daemon <= 0)
		return daemon;
	redirect_stdio(outfile);
	close(tst.ready_fd);
	for (;;) {
		pid_t w = waitpid(-1, &status, __WALL);

		if (w == daemon)
			_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		if (w < 0 && errno != EINTR)
			_exit(1);
	}
}

void test_init(int argc, char **argv)
{
	test_init_ns(argc, argv, 0);
}

/*
 * Mode userns, in the init: once mapped, uid and gid 0 in its user namespace,
 * no groups; dumpable again, as a container's init exec'ed inside is (the ids
 * changed made it not: its /proc files would be the host root's, unmapped
 * there, and the test's /proc/self/environ unreadable).
 */
static void ns_user_wait(int go)
{
	char c;

	if (read(go, &c, 1) != 1 || setgroups(0, NULL) || setresgid(0, 0, 0) ||
	    setresuid(0, 0, 0) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)) {
		perror("ns init: its user namespace");
		exit(1);
	}
	close(go);
}

/*
 * Mode userns, in the launcher: the container's user namespace is made by a
 * first process (as a container runtime does), cloned with CLONE_NEWUSER,
 * whose maps the launcher writes; it becomes uid 0 there, makes the time
 * namespace the test asked for (test_timens()), then clones the container's
 * init with the other namespaces, all of them owned by the user namespace,
 * tells the launcher its pid and exits (the init goes to the runner, a
 * subreaper). Returns in the init (0), or the init's pid in the launcher.
 */
static pid_t ns_user_container(int ns_flags)
{
	int u[2], ip[2];
	pid_t first, init = -1;
	int status;

	if (pipe2(u, O_CLOEXEC) || pipe2(ip, O_CLOEXEC)) {
		perror("test_init");
		exit(1);
	}
	ns_root_host();
	first = fork_flags(CLONE_NEWUSER);
	if (first < 0) {
		perror("clone(CLONE_NEWUSER)");
		exit(1);
	}
	if (first > 0) {
		close(u[0]);
		close(ip[1]);
		userns_maps(first, u[1]);
		if (read(ip[0], &init, sizeof(init)) != sizeof(init) || init <= 0) {
			waitpid(first, &status, 0);
			fprintf(stderr,
				"the container's first process made no init (status 0x%x)\n",
				status);
			exit(1);
		}
		waitpid(first, &status, 0);
		close(ip[0]);
		return init;
	}
	close(u[1]);
	close(ip[0]);
	ns_user_wait(u[0]);
	if (tst.timens && timens_make(tst.mono_off, tst.boot_off))
		_exit(1);
	init = fork_flags(ns_flags);
	if (init < 0) {
		perror("clone of the container's init");
		_exit(1);
	}
	if (init > 0)
		_exit(write(ip[1], &init, sizeof(init)) == sizeof(init) ? 0 : 1);
	close(ip[1]);
	return 0;
}

void test_init_ns(int argc, char **argv, int flags)
{
	struct sigaction sa = { .sa_handler = sigterm_handler };
	const char *ns_env = getenv("ZDTM_NS_INIT");
	bool in_ns_init = ns_env != NULL;
	/* ZDTM_NS_INIT=user: the container's namespaces are owned by a user namespace of its own */
	bool ns_user = in_ns_init && !strcmp(ns_env, "user");
	int ns_flags = CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET;
	const char *outfile;
	int p[2], u[2] = { -1, -1 };
	pid_t pid;

	tst.argc = argc;
	tst.argv = argv;
	tst.pidfile = test_arg("pidfile", NULL);
	outfile = test_arg("outfile", NULL);
	if (!tst.pidfile || !outfile)
		usage_exit(argv[0], "--pidfile and --outfile are required");
	if (!test_launching()) {
		/* the container's init exec'ed again inside its root (ns_reexec()) */
		int user = 0;

		/* user: a container of a user namespace of its own, nothing more to do here */
		if (sscanf(getenv("ZDTM_NS_REEXEC"), "%d %d", &tst.ready_fd, &user) != 2 ||
		    unsetenv("ZDTM_NS_REEXEC") || fcntl(tst.ready_fd, F_SETFD, FD_CLOEXEC)) {
			fprintf(stderr, "ns init: exec'ed again: bad ZDTM_NS_REEXEC\n");
			exit(1);
		}
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		tst.launcher_writes = true;
		tst.container = true;
		if (ns_init_rest(outfile, flags) < 0) {
			perror("fork");
			exit(1);
		}
		if (setsid() < 0) {
			perror("setsid");
			exit(1);
		}
		redirect_stdio(outfile);
		test_msg("started, pid %d\n", getpid());
		return;
	}

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) || pipe2(p, O_CLOEXEC)) {
		perror("test_init");
		exit(1);
	}
	/* always the launcher: a test may chroot() before test_daemon() */
	tst.launcher_writes = true;
	unsetenv("ZDTM_NS_INIT");
	if ((flags & CLONE_NEWUSER) && in_ns_init) {
		fprintf(stderr, "a user namespace of the test's own: not in mode ns\n");
		exit(1);
	}
	if ((flags & CLONE_NEWUSER) && pipe2(u, O_CLOEXEC)) {
		perror("test_init");
		exit(1);
	}
	if (ns_user)
		pid = ns_user_container(ns_flags);
	else
		pid = fork_flags(in_ns_init ? ns_flags : flags);
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid > 0) {
		close(p[1]);
		if (u[1] >= 0) {
			close(u[0]);
			userns_maps(pid, u[1]);
		}
		launcher_wait(pid, p[0], in_ns_init);
	}
	close(p[0]);
	if (u[0] >= 0) {
		close(u[1]);
		userns_wait(u[0], outfile);
	}
	tst.ready_fd = p[1];
	tst.container = in_ns_init;
	if (in_ns_init) {
		pid = ns_init(outfile, flags, ns_user);
		if (pid < 0) {
			perror("fork");
			exit(1);
		}
	}
	/* Own session: the runner's terminal signals must not reach the test. */
	if (setsid() < 0) {
		perror("setsid");
		exit(1);
	}
	if (u[0] < 0) /* else done by userns_wait() */
		redirect_stdio(outfile);
	test_msg("started, pid %d\n", getpid());
}

bool test_launching(void)
{
	return !getenv("ZDTM_NS_REEXEC");
}

bool test_in_container(void)
{
	return tst.container;
}

void test_daemon(void)
{
	if (!tst.launcher_writes && write_pidfile(getpid())) {
		fail("cannot write pidfile %s: %m", tst.pidfile);
		exit(1);
	}
	test_msg("ready\n");
	if (write(tst.ready_fd, "R", 1) != 1) {
		fail("cannot release the launcher: %m");
		exit(1);
	}
	close(tst.ready_fd);
	tst.ready_fd = -1;
}

bool test_go(void)
{
	return !tst.got_sigterm;
}

void test_waitsig(void)
{
	sigset_t term, old;

	/*
	 * Not sigsuspend(): a thread restored in it takes up the wait again
	 * from its saved mask, SIGTERM blocked, and a SIGTERM sent before it
	 * got there goes to another thread. A futex wait on the flag returns
	 * at once once it is set, whichever thread set it and whenever.
	 */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &term, &old);
	while (!tst.got_sigterm)
		syscall(SYS_futex, &tst.got_sigterm, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024];
	struct timespec ts;
	struct tm tm;
	int n, saved = errno;

	/* not through the vDSO: vdso_unmap and vdso_mremap take it away from glibc */
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(buf, sizeof(buf), "%s%02d:%02d:%02d.%03ld %d: ", prefix, tm.tm_hour, tm.tm_min,
		     tm.tm_sec, ts.tv_nsec / 1000000, getpid());
	errno = saved;
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	if (n >= (int)sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	if (buf[n - 1] != '\n')
		buf[n++] = '\n';
	/* One write per line: the processes of a tree share the outfile (O_APPEND). */
	if (write(STDOUT_FILENO, buf, n) < 0)
		errno = saved;
	errno = saved;
}

void test_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void pass(void)
{
	static const char line[] = "PASS\n";

	if (write(STDOUT_FILENO, line, sizeof(line) - 1) < 0)
		exit(1);
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	char buf[768];
	char out[1024];
	va_list ap;
	int n, saved = errno;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	n = snprintf(out, sizeof(out), "FAIL: %s (%s:%d)\n", buf, file, line);
	if (n >= (int)sizeof(out))
		n = sizeof(out) - 1;
	if (write(STDOUT_FILENO, out, n) < 0)
		exit(1);
	errno = saved; /* the caller may return -errno after fail("...: %m") */
}

void test_publish_area(const void *addr, size_t len)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "zdtm-area: %p %zu\n", addr, len);

	if (write(STDOUT_FILENO, buf, n) != n)
		exit(1);
}
