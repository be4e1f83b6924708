// SPDX-License-Identifier: GPL-2.0
/*
 * One test in one mode: start it, [dump, check it is gone, restore, compare],
 * SIGTERM, verdict. Whatever happens, every process started is killed at the
 * end (kill_all), so one test cannot disturb the next.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner.h"

struct run {
	struct runner *r;
	const struct test_desc *d;
	const char *mode;
	struct result *res;
	char dir[PATH_MAX / 2]; /* leaves room for file names below it */
	char pidfile[PATH_MAX];
	char outfile[PATH_MAX];
	char ovl[PATH_MAX]; /* ns-root: overlay: the tmpfs of its upper and work directories */
	pid_t pid; /* the test's daemon (test.pid), a host pid */
	/*
	 * The root of the tree dumped: the test's daemon, or in mode ns the init
	 * of the fresh pid namespace the daemon runs under. A restore may give
	 * them other host pids in a pid namespace: they are checked and found
	 * again by their pids at the root's innermost level (levels - 1), vroot
	 * and vpid, which stay.
	 */
	pid_t root, vroot, vpid;
	unsigned int levels;
	int64_t deadline;
	char timeout_text[32]; /* " after N s" */
	bool harness_failed; /* a failure of the runner's own checks, never inverted */
	bool test_failed; /* the test program's own FAIL verdict */
	pid_t criu_pids[8]; /* every criu-like run for this test: their network locks */
	int ncriu;
	pid_t lazy_pid; /* mode lazy: the lazy-pages daemon, waited for after the verdict */
};

static const char *const modes[] = { "none",
				     "plain",
				     "leave-running",
				     "cycles2",
				     "predump",
				     "ns",
				     "ns-leave-running",
				     "ns-cycles2",
				     "userns",
				     "userns-leave-running",
				     "userns-cycles2",
				     "page-server",
				     "snapshot",
				     "predump-snapshot",
				     "lazy" };

/* The modes userns, userns-X: the container owned by a user namespace of its own. */
static bool mode_userns(const char *mode)
{
	return !strcmp(mode, "userns") || !strncmp(mode, "userns-", 7);
}

/* The modes ns, ns-X and the userns ones: the test under an init in a container. */
static bool mode_ns(const char *mode)
{
	return !strcmp(mode, "ns") || !strncmp(mode, "ns-", 3) || mode_userns(mode);
}

/* What a mode does between start and SIGTERM: ns and userns are plain, ns-X and userns-X X. */
static const char *mode_base(const char *mode)
{
	if (!strcmp(mode, "ns") || !strcmp(mode, "userns"))
		return "plain";
	if (mode_userns(mode))
		return mode + 7;
	return mode_ns(mode) ? mode + 3 : mode;
}

bool mode_known(const char *mode)
{
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
		if (!strcmp(mode, modes[i]))
			return true;
	return false;
}

/* The first failure is the reason shown; later ones are consequences. */
static void __attribute__((format(printf, 2, 3))) harness_fail(struct run *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->harness_failed && !t->test_failed) {
		va_start(ap, fmt);
		vsnprintf(t->res->reason, sizeof(t->res->reason), fmt, ap);
		va_end(ap);
	}
	t->harness_failed = true;
}

static void step(struct run *t, const char *what)
{
	if (t->r->verbose)
		fprintf(stderr, "zdtm-run: %s/%s: %s\n", t->d->name, t->mode, what);
}

static const char *errstr(int ret)
{
	if (ret == -ETIMEDOUT)
		return "timeout";
	if (ret == -EINTR)
		return "interrupted";
	return strerror(-ret);
}

static int start_test(struct run *t)
{
	char pidarg[PATH_MAX + 16], outarg[PATH_MAX + 16], log[PATH_MAX + 16];
	char *argv[MAX_WORDS + 4];
	int n = 0, status, ret;
	pid_t launcher;

	snprintf(pidarg, sizeof(pidarg), "--pidfile=%s", t->pidfile);
	/* its path in the container: with an overlay root, the runner reads its upper copy */
	snprintf(outarg, sizeof(outarg), "--outfile=%s/%s.out", t->dir, t->d->name);
	snprintf(log, sizeof(log), "%s/launch.log", t->dir);
	argv[n++] = (char *)t->d->bin;
	argv[n++] = pidarg;
	argv[n++] = outarg;
	for (int i = 0; i < t->d->args.n; i++)
		argv[n++] = t->d->args.w[i];
	argv[n] = NULL;

	if (access(t->d->bin, X_OK)) {
		harness_fail(t, "test binary %s: %m (not built?)", t->d->bin);
		return neg_errno();
	}
	step(t, "start");
	/* lib/test.c: the test runs under an init in a container (fresh namespaces) */
	if (mode_ns(t->mode))
		setenv("ZDTM_NS_INIT", mode_userns(t->mode) ? "user" : "1", 1);
	if (t->ovl[0])
		setenv("ZDTM_NS_OVERLAY", t->ovl, 1);
	launcher = spawn(argv, t->dir, log);
	unsetenv("ZDTM_NS_INIT");
	unsetenv("ZDTM_NS_OVERLAY");
	if (launcher < 0) {
		harness_fail(t, "cannot start %s: %s", t->d->bin, strerror(-launcher));
		return launcher;
	}
	/* The launcher exits 0 once the daemon has written its pidfile (lib/test.c). */
	ret = wait_pid(&t->r->reaper, launcher, t->deadline, &status);
	if (ret) {
		harness_fail(t, "test did not become ready: %s%s", errstr(ret),
			     ret == -ETIMEDOUT ? t->timeout_text : "");
		return ret;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		harness_fail(t, "test did not start (launcher status 0x%x)", status);
		return -ECHILD;
	}
	ret = read_pid(t->pidfile, &t->pid);
	if (ret) {
		harness_fail(t, "bad pidfile %s: %s", t->pidfile, strerror(-ret));
		return ret;
	}
	t->root = mode_ns(t->mode) ? read_ppid(t->pid) : t->pid;
	t->levels = t->root > 0 ? ns_levels(t->root) : 0;
	if (!t->levels) {
		harness_fail(t, "no root for test pid %d", t->pid);
		return -ESRCH;
	}
	t->vroot = ns_pid_at(t->root, t->levels - 1);
	t->vpid = ns_pid_at(t->pid, t->levels - 1);
	if (t->root != t->pid && t->vroot != 1) {
		harness_fail(t, "the parent %d of test pid %d is not the init of its pid namespace",
			     t->root, t->pid);
		return -ESRCH;
	}
	return 0;
}

/* criu-like CMD ARGS... D->OPTS, output to DIR/CMD[-N].out; 0 when it exits 0. */
static int run_criu(struct run *t, char **args, const struct word_list *opts, const char *tag)
{
	char out[PATH_MAX + 16];
	char *argv[64];
	int n = 0, status, ret;
	pid_t pid;

	argv[n++] = (char *)t->r->criu;
	for (; *args && n < 32; args++)
		argv[n++] = *args;
	for (int i = 0; i < opts->n; i++)
		argv[n++] = opts->w[i];
	argv[n] = NULL;
	snprintf(out, sizeof(out), "%s/%s.out", t->dir, tag);
	step(t, tag);
	pid = spawn(argv, NULL, out);
	if (pid < 0) {
		harness_fail(t, "cannot run %s: %s", t->r->criu, strerror(-pid));
		return pid;
	}
	if (t->ncriu < (int)ARRAY_SIZE(t->criu_pids))
		t->criu_pids[t->ncriu++] = pid;
	ret = wait_pid(&t->r->reaper, pid, t->deadline, &status);
	if (ret) {
		harness_fail(t, "%s: %s%s", tag, errstr(ret),
			     ret == -ETIMEDOUT ? t->timeout_text : "");
		return ret;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		if (WIFEXITED(status))
			harness_fail(t, "%s failed (exit %d)", tag, WEXITSTATUS(status));
		else
			harness_fail(t, "%s killed by signal %d", tag, WTERMSIG(status));
		return -EIO;
	}
	return 0;
}

/*
 * A restored tree needs a moment to settle: a task that slept in sigsuspend()
 * shows the temporary mask in SigBlk only once it is back in the call. A
 * difference must last over ~1 s of retries to count.
 */
#define SETTLE_TRIES 20
#define SETTLE_MS 50

/*
 * The state before a dump, once it holds still for SETTLE_MS: in cycles2 the
 * second dump follows a restore, and a test may still be on its way back into
 * sigsuspend() (SIGTERM blocked for a moment) when the first sample is taken.
 */
static int snap_take_settled(struct tree_snap *s, pid_t pid)
{
	int ret = snap_take(s, pid);

	for (int i = 0; !ret && i < SETTLE_TRIES; i++) {
		struct tree_snap next;
		FILE *null = fopen("/dev/null", "we");

		usleep(SETTLE_MS * 1000);
		ret = snap_take(&next, pid);
		if (!ret && null && !snap_compare(s, &next, null)) {
			fclose(null);
			snap_free(&next);
			return 0;
		}
		if (null)
			fclose(null);
		snap_free(s);
		*s = next;
	}
	return ret;
}

static int compare(struct run *t, const struct tree_snap *before, const char *when)
{
	char path[PATH_MAX + 16];
	int ret = 0;

	snprintf(path, sizeof(path), "%s/compare.diff", t->dir);
	for (int i = 0; i < SETTLE_TRIES; i++) {
		struct tree_snap after;
		bool last = i == SETTLE_TRIES - 1;
		FILE *f;

		if (i)
			usleep(SETTLE_MS * 1000);
		ret = snap_take(&after, t->root);
		if (ret) {
			snap_free(&after);
			harness_fail(t, "cannot read the tree %s: %s", when, strerror(-ret));
			return ret;
		}
		f = last ? fopen(path, "we") : fopen("/dev/null", "we");
		ret = snap_compare(before, &after, f ? f : stderr);
		snap_free(&after);
		if (f)
			fclose(f);
		if (!ret)
			return 0;
	}
	harness_fail(t, "process state differs %s: see %s", when, path);
	return ret;
}

static int check_gone(struct run *t, const struct tree_snap *before)
{
	/* The dump kills the tree; a zombie is reaped by wait_gone() at once. */
	int64_t deadline = min(t->deadline, now_ms() + 10000);

	for (size_t i = 0; i < before->n; i++) {
		int ret = wait_gone(&t->r->reaper, before->p[i].host, deadline);

		if (ret) {
			harness_fail(t, "pid %d still exists after the dump", before->p[i].host);
			return ret;
		}
	}
	/* Their statuses are of no interest, and the pids come back with the restore. */
	reaper_reset(&t->r->reaper);
	return 0;
}

/*
 * Mode page-server: a free port of 127.0.0.1 (the kernel's pick, released
 * for the server: nothing else here binds ports by number), a page server
 * writing into @dir, ready once its log says it listens.
 */
static int ps_start(struct run *t, const char *dir, pid_t *pid, char *port, size_t port_len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	char log[PATH_MAX + 16], out[PATH_MAX + 16];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		harness_fail(t, "no free port for the page server: %m");
		if (fd >= 0)
			close(fd);
		return -EADDRNOTAVAIL;
	}
	close(fd);
	snprintf(port, port_len, "%u", ntohs(sa.sin_port));
	snprintf(log, sizeof(log), "%s/page-server.log", t->dir);
	snprintf(out, sizeof(out), "%s/page-server.out", t->dir);
	unlink(log);
	char *argv[] = {
		(char *)t->r->criu, "page-server", "--address", "127.0.0.1", "--port", port, "-D",
		(char *)dir,	    "-v4",	   "-o",	log,	     NULL
	};

	step(t, "page-server");
	*pid = spawn(argv, NULL, out);
	if (*pid < 0) {
		harness_fail(t, "cannot start the page server: %s", strerror(-*pid));
		return *pid;
	}
	for (int i = 0; i < 1000; i++) {
		_cleanup_free_ char *text = slurp(log);

		if (text && strstr(text, "listening on"))
			return 0;
		usleep(10000);
	}
	harness_fail(t, "the page server did not listen (see %s)", log);
	return -ETIMEDOUT;
}

/*
 * Mode lazy: `criu-like lazy-pages -D img` started before the restore, as a
 * user would (`lazy-pages &` then `restore --lazy-pages`): restore waits for
 * its socket. Its prefetch waits 100 ms after the handover, so that the
 * test's first steps after the restore (and its check, on a quick SIGTERM)
 * take their pages through faults.
 */
static int lazy_start(struct run *t, const char *img)
{
	char log[PATH_MAX + 16], out[PATH_MAX + 16];
	char *argv[] = {
		(char *)t->r->criu, "lazy-pages", "-D", (char *)img, "-v4", "-o", log, NULL
	};

	snprintf(log, sizeof(log), "%s/lazy-pages.log", t->dir);
	snprintf(out, sizeof(out), "%s/lazy-pages.out", t->dir);
	step(t, "lazy-pages");
	setenv("CRIU_LIKE_LAZY_PREFETCH_DELAY_MS", "100", 1);
	t->lazy_pid = spawn(argv, NULL, out);
	unsetenv("CRIU_LIKE_LAZY_PREFETCH_DELAY_MS");
	if (t->lazy_pid < 0) {
		harness_fail(t, "cannot start lazy-pages: %s", strerror(-t->lazy_pid));
		return t->lazy_pid;
	}
	return 0;
}

/* After the verdict: the daemon served every page (or every task went) and exited 0. */
static void lazy_wait(struct run *t)
{
	int status = 0, ret;

	if (t->lazy_pid <= 0)
		return;
	ret = wait_pid(&t->r->reaper, t->lazy_pid, t->deadline, &status);
	if (ret || !WIFEXITED(status) || WEXITSTATUS(status))
		harness_fail(t, "lazy-pages failed (%s/lazy-pages.log): %s", t->dir,
			     ret ? errstr(ret) : "exit status not 0");
	t->lazy_pid = 0;
}

/* The page server's images into the dump's directory: the migration, on one host. */
static int ps_collect(struct run *t, pid_t pid, const char *dir, const char *img)
{
	int status, ret = wait_pid(&t->r->reaper, pid, t->deadline, &status);
	DIR *d;
	struct dirent *e;

	if (ret || !WIFEXITED(status) || WEXITSTATUS(status)) {
		harness_fail(t, "the page server failed (%s/page-server.log)", t->dir);
		return ret ? ret : -EIO;
	}
	d = opendir(dir);
	if (!d) {
		harness_fail(t, "opendir %s: %m", dir);
		return neg_errno();
	}
	while ((e = readdir(d))) {
		char from[2 * PATH_MAX], to[2 * PATH_MAX];

		if (e->d_name[0] == '.')
			continue;
		snprintf(from, sizeof(from), "%s/%s", dir, e->d_name);
		snprintf(to, sizeof(to), "%s/%s", img, e->d_name);
		if (rename(from, to)) {
			harness_fail(t, "rename %s: %m", from);
			ret = neg_errno();
		}
	}
	closedir(d);
	return ret;
}

/*
 * dump (mode page-server: through one), check the tree is gone, restore,
 * check pids and state. With @prev
 * (relative to the image directory), the dump is an incremental one on top
 * of that pre-dump.
 */
/*
 * Mode snapshot: the dump -R --snapshot left the tree running and unchanged;
 * then it is killed, so that its images can be restored in its place.
 */
static int snapshot_kill(struct run *t, const struct tree_snap *before)
{
	int ret;

	for (size_t i = 0; i < before->n; i++) {
		char st = proc_state(before->p[i].host);

		if (!st || (st == 'Z') != (before->p[i].state == 'Z')) {
			harness_fail(t, "pid %d is %s after dump --snapshot", before->p[i].pid,
				     st ? "a zombie" : "gone");
			return -ESRCH;
		}
	}
	ret = compare(t, before, "after dump --snapshot");
	/*
	 * Stopped first, all of them: a process killed while another of the
	 * tree still runs would make it notice (a reset connection) and write
	 * to its outfile, which the images recorded smaller.
	 */
	for (size_t i = 0; !ret && i < before->n; i++)
		kill(before->p[i].host, SIGSTOP);
	for (size_t i = 0; !ret && i < before->n; i++)
		kill(before->p[i].host, SIGKILL);
	return ret;
}

static int cycle_plain(struct run *t, int cycle, const char *prev)
{
	char img[PATH_MAX], dlog[PATH_MAX + 16], rlog[PATH_MAX + 16], rpid[PATH_MAX + 16];
	char dtag[16], rtag[16], pidstr[16];
	const char *sfx = cycle > 1 ? "-2" : "";
	struct tree_snap before;
	pid_t restored = 0;
	int ret;

	snprintf(img, sizeof(img), "%s/img%s", t->dir, sfx);
	snprintf(dlog, sizeof(dlog), "%s/dump%s.log", t->dir, sfx);
	snprintf(rlog, sizeof(rlog), "%s/restore%s.log", t->dir, sfx);
	snprintf(rpid, sizeof(rpid), "%s/restore%s.pid", t->dir, sfx);
	snprintf(dtag, sizeof(dtag), "dump%s", sfx);
	snprintf(rtag, sizeof(rtag), "restore%s", sfx);
	snprintf(pidstr, sizeof(pidstr), "%d", t->root);
	char psdir[PATH_MAX + 16], port[16] = "0";
	char *dargs[16] = { "dump", "-t", pidstr, "-D", img, "-v4", "-o", dlog, NULL };
	char *rargs[] = { "restore", "-D",	  img,	"-d",		"-v4", "-o",
			  rlog,	     "--pidfile", rpid, "--lazy-pages", NULL };
	bool ps = !strcmp(t->mode, "page-server");
	bool snapshot = !strcmp(t->mode, "snapshot") || !strcmp(t->mode, "predump-snapshot");
	bool lazy = !strcmp(t->mode, "lazy");
	pid_t ps_pid = -1;
	int na = 8;

	if (prev) {
		dargs[na++] = "--prev-images-dir";
		dargs[na++] = (char *)prev;
	}
	snprintf(psdir, sizeof(psdir), "%s/ps%s", t->dir, sfx);
	if (ps) {
		dargs[na++] = "--page-server";
		dargs[na++] = "--address";
		dargs[na++] = "127.0.0.1";
		dargs[na++] = "--port";
		dargs[na++] = port;
	}
	if (snapshot) {
		dargs[na++] = "-R";
		dargs[na++] = "--snapshot";
	}
	dargs[na] = NULL;
	ret = mkdir_p(img);
	if (ret) {
		harness_fail(t, "mkdir %s: %s", img, strerror(-ret));
		return ret;
	}
	ret = snap_take_settled(&before, t->root);
	if (ret) {
		harness_fail(t, "cannot read the tree before the dump: %s", strerror(-ret));
		goto out;
	}
	if (ps) {
		ret = ps_start(t, psdir, &ps_pid, port, sizeof(port));
		if (ret)
			goto out;
	}
	ret = run_criu(t, dargs, &t->d->dump_opts, dtag);
	if (!ret && ps)
		ret = ps_collect(t, ps_pid, psdir, img);
	if (!ret && snapshot)
		ret = snapshot_kill(t, &before);
	if (!ret)
		ret = check_gone(t, &before);
	/* the test's own cgroups, now empty: the restore makes them again */
	if (!ret)
		cgroups_drop(t->dir);
	if (!lazy)
		rargs[9] = NULL;
	if (!ret && lazy)
		ret = lazy_start(t, img);
	if (!ret)
		ret = run_criu(t, rargs, &t->d->restore_opts, rtag);
	if (!ret) {
		ret = read_pid(rpid, &restored);
		if (ret)
			harness_fail(t, "restore wrote no pid to %s: %s", rpid, strerror(-ret));
		else if (ns_levels(restored) != t->levels ||
			 ns_pid_at(restored, t->levels - 1) != t->vroot)
			/* the same pid, or in a pid namespace the same pid inside it */
			harness_fail(t, "restored pid %d (%d inside), expected %d (%d inside)",
				     restored, ns_pid_at(restored, t->levels - 1), t->root,
				     t->vroot);
		else
			t->root = restored;
		ret = ret ? ret : t->root != restored ? -ESRCH : 0;
	}
	if (!ret && (t->pid = ns_find(t->root, t->levels - 1, t->vpid)) <= 0) {
		harness_fail(t, "test pid %d inside its pid namespace not restored", t->vpid);
		ret = -ESRCH;
	}
	if (!ret)
		ret = compare(t, &before, "after the restore");
out:
	snap_free(&before);
	return ret;
}

/*
 * After the dump (which takes the write tracking over from the pre-dump's
 * keeper, criu-like-track, and kills the tree the keeper watches), no keeper
 * may be left: not running, not a zombie.
 */
static int check_no_keeper(struct run *t)
{
	int64_t deadline = min(t->deadline, now_ms() + 2000);
	pid_t left = 0;

	do {
		_cleanup_free_ pid_t *pids = NULL;
		size_t n = 0;

		if (left)
			usleep(10000);
		left = 0;
		reap_ready(&t->r->reaper);
		if (descendants(getpid(), &pids, &n))
			return 0; /* not ours to judge: /proc unreadable */
		for (size_t i = 0; i < n && !left; i++) {
			char path[64];
			_cleanup_free_ char *comm = NULL;

			snprintf(path, sizeof(path), "/proc/%d/comm", pids[i]);
			comm = slurp(path);
			if (comm && !strcmp(comm, "criu-like-track\n"))
				left = pids[i];
		}
	} while (left && now_ms() < deadline);
	if (left)
		harness_fail(t, "the pre-dump's keeper (pid %d, state %c) is left after the dump",
			     left, proc_state(left));
	return left ? -EEXIST : 0;
}

/*
 * predump: pre-dump into img-pre while the test runs on (the tree must be
 * unchanged by it), then a plain cycle whose dump is on top of it.
 */
static int mode_predump(struct run *t)
{
	char img[PATH_MAX], plog[PATH_MAX + 16], pidstr[16];
	struct tree_snap before;
	int ret;

	snprintf(img, sizeof(img), "%s/img-pre", t->dir);
	snprintf(plog, sizeof(plog), "%s/pre-dump.log", t->dir);
	snprintf(pidstr, sizeof(pidstr), "%d", t->root);
	char *pargs[] = { "pre-dump", "-t", pidstr, "-D", img, "-v4", "-o", plog, NULL };

	ret = mkdir_p(img);
	if (ret) {
		harness_fail(t, "mkdir %s: %s", img, strerror(-ret));
		return ret;
	}
	ret = snap_take_settled(&before, t->root);
	if (ret)
		harness_fail(t, "cannot read the tree before the pre-dump: %s", strerror(-ret));
	if (!ret)
		ret = run_criu(t, pargs, &t->d->dump_opts, "pre-dump");
	if (!ret)
		ret = compare(t, &before, "after the pre-dump");
	snap_free(&before);
	ret = ret ? ret : cycle_plain(t, 1, "../img-pre");
	return ret ? ret : check_no_keeper(t);
}

static int mode_leave_running(struct run *t)
{
	char img[PATH_MAX], dlog[PATH_MAX + 16], pidstr[16];
	struct tree_snap before;
	int ret;

	snprintf(img, sizeof(img), "%s/img", t->dir);
	snprintf(dlog, sizeof(dlog), "%s/dump.log", t->dir);
	snprintf(pidstr, sizeof(pidstr), "%d", t->root);
	char *dargs[] = { "dump", "-t", pidstr, "-D", img, "-v4", "-o", dlog, "-R", NULL };

	ret = mkdir_p(img);
	if (ret) {
		harness_fail(t, "mkdir %s: %s", img, strerror(-ret));
		return ret;
	}
	ret = snap_take_settled(&before, t->root);
	if (ret)
		harness_fail(t, "cannot read the tree before the dump: %s", strerror(-ret));
	if (!ret)
		ret = run_criu(t, dargs, &t->d->dump_opts, "dump");
	for (size_t i = 0; !ret && i < before.n; i++) {
		char st = proc_state(before.p[i].host);
		bool was_zombie = before.p[i].state == 'Z';

		if (!st || (st == 'Z') != was_zombie) {
			harness_fail(t, "pid %d is %s after dump --leave-running", before.p[i].pid,
				     st ? "a zombie" : "gone");
			ret = -ESRCH;
		}
	}
	if (!ret)
		ret = compare(t, &before, "after dump --leave-running");
	snap_free(&before);
	return ret;
}

/*
 * A test of TCP connections (--tcp-established in its dump options): once
 * the restored tree runs (or dump -R ended), no network lock of the dumps
 * may be left (Documentation/network-lock.md).
 */
static int check_netlocks(struct run *t)
{
	char why[256] = "";
	bool tcp = false;
	int ret;

	for (int i = 0; i < t->d->dump_opts.n; i++)
		tcp |= !strcmp(t->d->dump_opts.w[i], "--tcp-established");
	if (!tcp || !t->ncriu)
		return 0;
	ret = netlock_leaks(&t->r->reaper, t->r->criu, t->dir, t->criu_pids, t->ncriu, t->deadline,
			    why, sizeof(why));
	if (ret)
		harness_fail(t, "%s", why[0] ? why : strerror(-ret));
	return ret;
}

static int do_mode(struct run *t)
{
	const char *mode = mode_base(t->mode);
	int ret;

	if (!strcmp(mode, "none"))
		return 0;
	if (!strcmp(mode, "plain") || !strcmp(mode, "page-server") || !strcmp(mode, "snapshot") ||
	    !strcmp(mode, "lazy"))
		return cycle_plain(t, 1, NULL);
	if (!strcmp(mode, "leave-running"))
		return mode_leave_running(t);
	if (!strcmp(mode, "predump") || !strcmp(mode, "predump-snapshot"))
		return mode_predump(t);
	/* cycles2 */
	ret = cycle_plain(t, 1, NULL);
	return ret ? ret : cycle_plain(t, 2, NULL);
}

/* Flip one byte in the middle of the area the test published (flag "tamper"). */
static int tamper(struct run *t)
{
	_cleanup_free_ char *out = slurp(t->outfile);
	unsigned long addr = 0;
	size_t len = 0;
	unsigned char byte;
	struct iovec local = { &byte, 1 }, remote;
	const char *p = out ? strstr(out, "zdtm-area: ") : NULL;

	if (!p || sscanf(p, "zdtm-area: %lx %zu", &addr, &len) != 2 || !len) {
		harness_fail(t, "tamper: the test published no area (test_publish_area)");
		return -ENOENT;
	}
	step(t, "tamper");
	remote.iov_base = (void *)(addr + len / 2);
	remote.iov_len = 1;
	if (process_vm_readv(t->pid, &local, 1, &remote, 1, 0) != 1) {
		harness_fail(t, "tamper: process_vm_readv %d at %#lx: %m", t->pid, addr + len / 2);
		return neg_errno();
	}
	byte ^= 0xff;
	if (process_vm_writev(t->pid, &local, 1, &remote, 1, 0) != 1) {
		harness_fail(t, "tamper: process_vm_writev %d at %#lx: %m", t->pid, addr + len / 2);
		return neg_errno();
	}
	return 0;
}

static void read_verdict(struct run *t, bool status_known, int status)
{
	_cleanup_free_ char *out = slurp(t->outfile);
	bool passed = false;

	for (const char *l = out; l && *l;) {
		size_t ll = strcspn(l, "\n");

		if (!strncmp(l, "FAIL", 4) && !t->test_failed) {
			const char *why = l + 4 + strspn(l + 4, ": ");
			int wl = ll - (why - l);

			if (!t->harness_failed)
				snprintf(t->res->reason, sizeof(t->res->reason), "%.*s", wl, why);
			t->test_failed = true;
		} else if (ll == 4 && !strncmp(l, "PASS", 4)) {
			passed = true;
		}
		l += ll;
		if (*l)
			l++;
	}
	if (!passed && !t->test_failed)
		harness_fail(t, "no verdict in %s", t->outfile);
	if (!status_known)
		return;
	if (WIFSIGNALED(status))
		harness_fail(t, "test killed by signal %d", WTERMSIG(status));
	else if (WEXITSTATUS(status) && !t->test_failed)
		harness_fail(t, "test exited with status %d", WEXITSTATUS(status));
}

static void finish(struct run *t)
{
	int status = 0, ret;

	step(t, "SIGTERM");
	if (kill(t->pid, SIGTERM)) {
		harness_fail(t, "test pid %d is gone before SIGTERM", t->pid);
		return;
	}
	/* mode ns: the init exits with the test's status (lib/test.c) */
	ret = wait_pid(&t->r->reaper, t->root, t->deadline, &status);
	if (ret && ret != -ECHILD) {
		harness_fail(t, "test did not exit after SIGTERM: %s%s", errstr(ret),
			     ret == -ETIMEDOUT ? t->timeout_text : "");
		return;
	}
	/* -ECHILD: exited but not ours to reap (restored under another parent). */
	read_verdict(t, ret == 0, status);
	lazy_wait(t);
}

/* Whether the test must be skipped (reason in @res), or fails before it starts. */
static bool skip_or_refuse(struct runner *r, const struct test_desc *d, struct result *res)
{
	if (r->no_slow && desc_has_flag(d, "slow")) {
		res->v = V_SKIP;
		snprintf(res->reason, sizeof(res->reason), "flag slow: --no-slow");
		return true;
	}
	if (mode_ns(res->mode) && d->skip_ns[0]) {
		res->v = V_SKIP;
		snprintf(res->reason, sizeof(res->reason), "skip-ns: %.400s", d->skip_ns);
		return true;
	}
	if (!mode_ns(res->mode) && d->skip_host[0]) {
		res->v = V_SKIP;
		snprintf(res->reason, sizeof(res->reason), "skip-host: %.400s", d->skip_host);
		return true;
	}
	if (mode_userns(res->mode) && d->skip_userns[0]) {
		res->v = V_SKIP;
		snprintf(res->reason, sizeof(res->reason), "skip-userns: %.400s", d->skip_userns);
		return true;
	}
	if ((!strcmp(res->mode, "snapshot") || !strcmp(res->mode, "predump-snapshot")) &&
	    d->skip_snapshot[0]) {
		res->v = V_SKIP;
		snprintf(res->reason, sizeof(res->reason), "skip-snapshot: %.400s",
			 d->skip_snapshot);
		return true;
	}
	if (!strcmp(res->mode, "lazy") && d->skip_lazy[0]) {
		res->v = V_SKIP;
		snprintf(res->reason, sizeof(res->reason), "skip-lazy: %.400s", d->skip_lazy);
		return true;
	}
	if (desc_has_flag(d, "suid") && geteuid() != 0) {
		res->v = V_SKIP;
		snprintf(res->reason, sizeof(res->reason), "flag suid: needs root");
		return true;
	}
	for (int i = 0; i < d->features.n; i++) {
		int ret = feature_present(&r->feat, r->criu, r->outdir, d->features.w[i]);

		if (ret == 1)
			continue;
		res->v = ret == 0 ? V_SKIP : V_FAIL;
		if (ret == 0)
			snprintf(res->reason, sizeof(res->reason),
				 "feature %s absent (criu-like check)", d->features.w[i]);
		else if (ret == -ENOENT)
			snprintf(res->reason, sizeof(res->reason),
				 "feature %s unknown to criu-like check --json", d->features.w[i]);
		else
			snprintf(res->reason, sizeof(res->reason),
				 "cannot check feature %s: criu-like check --json: %s",
				 d->features.w[i], errstr(ret));
		return true;
	}
	return false;
}

static void conclude(struct run *t)
{
	struct result *res = t->res;

	if (t->harness_failed) {
		res->v = V_FAIL;
	} else if (desc_has_flag(t->d, "expect-fail")) {
		if (t->test_failed) {
			char why[sizeof(res->reason)];

			snprintf(why, sizeof(why), "%s", res->reason);
			snprintf(res->reason, sizeof(res->reason), "failed as expected: %.400s",
				 why);
			res->v = V_PASS;
		} else {
			snprintf(res->reason, sizeof(res->reason),
				 "expect-fail: the test passed, a FAIL verdict was expected");
			res->v = V_FAIL;
		}
	} else {
		res->v = t->test_failed ? V_FAIL : V_PASS;
	}
}

static void show_logs(struct run *t)
{
	/* outside.log: a peer of the test outside the tree (test_fork_outside). */
	static const char *const logs[] = {
		"launch.log",	 "compare.diff",  "pre-dump.out", "pre-dump.log", "dump.out",
		"dump.log",	 "restore.out",	  "restore.log",  "dump-2.out",	  "dump-2.log",
		"restore-2.out", "restore-2.log", "outside.log",
	};
	char path[PATH_MAX + 32];

	print_tail(t->outfile, 20);
	for (size_t i = 0; i < ARRAY_SIZE(logs); i++) {
		snprintf(path, sizeof(path), "%s/%s", t->dir, logs[i]);
		print_tail(path, 20);
	}
}

/*
 * The images of a passing test are of no more use and may be large (mem_1g
 * leaves 2 GiB per cycles2 run): remove them, keep the logs. A failure keeps
 * everything for a look.
 */
static void drop_images(struct run *t)
{
	static const char *const dirs[] = { "img", "img-2", "img-pre" };
	char path[PATH_MAX + 16];

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", t->dir, dirs[i]);
		rm_rf(path);
	}
}

/*
 * ns-root: overlay, in the ns modes: a tmpfs on DIR/ovl in the runner's (the
 * host's) mount namespace holds the upper and work directories of the
 * container's root, an overlayfs over the host's / (lib/test.c): what the
 * container writes goes there, its outfile too, and the paths stay valid
 * for criu-like's restore in the host's namespace, as a runtime's storage
 * is. Unmounted when the test is over.
 */
static int ovl_prepare(struct run *t)
{
	char path[PATH_MAX + 16];
	int n;

	if (!t->d->ns_root_overlay || !mode_ns(t->mode))
		return 0;
	n = snprintf(t->ovl, sizeof(t->ovl), "%s/ovl", t->dir);
	if (n >= (int)sizeof(t->ovl) || mkdir(t->ovl, 0755) ||
	    mount("zdtm-ovl", t->ovl, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755")) {
		t->ovl[0] = '\0';
		return neg_errno();
	}
	snprintf(path, sizeof(path), "%s/upper", t->ovl);
	if (mkdir(path, 0755))
		return neg_errno();
	snprintf(path, sizeof(path), "%s/work", t->ovl);
	if (mkdir(path, 0755))
		return neg_errno();
	/* the container's writes are in the upper layer, at their paths */
	n = snprintf(t->outfile, sizeof(t->outfile), "%s/upper%s/%s.out", t->ovl, t->dir,
		     t->d->name);
	return n >= (int)sizeof(t->outfile) ? -ENAMETOOLONG : 0;
}

static void ovl_drop(const char *dir)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/ovl", dir);
	umount2(path, MNT_DETACH);
}

void run_test(struct runner *r, const struct test_desc *d, const char *mode, struct result *res)
{
	struct run t = { .r = r, .d = d, .mode = mode, .res = res };
	int64_t start = now_ms();
	int timeout = r->timeout ? r->timeout : d->timeout ? d->timeout : DEFAULT_TEST_TIMEOUT;
	int ret;

	memset(res, 0, sizeof(*res));
	snprintf(res->test, sizeof(res->test), "%s", d->name);
	snprintf(res->mode, sizeof(res->mode), "%s", mode);
	if (skip_or_refuse(r, d, res))
		goto report;

	if (snprintf(t.dir, sizeof(t.dir), "%s/%s/%s", r->outdir, d->name, mode) >=
	    (int)sizeof(t.dir)) {
		res->v = V_FAIL;
		snprintf(res->reason, sizeof(res->reason), "work directory path too long");
		t.dir[0] = '\0';
		goto report;
	}
	snprintf(t.pidfile, sizeof(t.pidfile), "%s/test.pid", t.dir);
	snprintf(t.outfile, sizeof(t.outfile), "%s/%s.out", t.dir, d->name);
	t.deadline = start + timeout * 1000LL;
	snprintf(t.timeout_text, sizeof(t.timeout_text), " after %d s", timeout);
	ovl_drop(t.dir); /* left by a runner that was killed */
	ret = rm_rf(t.dir);
	if (!ret)
		ret = mkdir_p(t.dir);
	if (!ret)
		ret = ovl_prepare(&t);
	/*
	 * userns: the test is root of a user namespace mapped to host uid
	 * ZDTM_USERNS_ROOT: its directory is that uid's, so that it may create
	 * its files there (owned by that uid on the host); the runner's own
	 * files there (logs, images) stay root's.
	 */
	if (!ret && mode_userns(mode) && chown(t.dir, ZDTM_USERNS_ROOT, ZDTM_USERNS_ROOT))
		ret = neg_errno();
	if (ret) {
		harness_fail(&t, "cannot prepare %s: %s", t.dir, strerror(-ret));
	} else if (!start_test(&t) && !do_mode(&t) && !check_netlocks(&t)) {
		if (!desc_has_flag(d, "tamper") || !tamper(&t))
			finish(&t);
	}
	if (now_ms() >= t.deadline && !t.harness_failed)
		harness_fail(&t, "timeout (%d s)", timeout);
	/* Whatever happened: nothing this test started survives it. */
	kill_all(&r->reaper);
	reaper_reset(&r->reaper);
	if (t.dir[0])
		cgroups_drop(t.dir);
	conclude(&t);
report:
	res->secs = (now_ms() - start) / 1000.0;
	printf("  %-4s  %-24s %-20s %6.2fs  %s\n",
	       res->v == V_PASS	  ? "PASS"
	       : res->v == V_FAIL ? "FAIL"
				  : "SKIP",
	       res->test, res->mode, res->secs, res->reason);
	if (res->v == V_FAIL && t.dir[0])
		show_logs(&t);
	if (res->v == V_PASS && t.dir[0])
		drop_images(&t);
	if (t.ovl[0])
		ovl_drop(t.dir);
	fflush(stdout);
}
