// SPDX-License-Identifier: GPL-2.0
/*
 * What each mode does with a running test (run.c) before its SIGTERM: dump
 * and restore once or twice, dump -R, pre-dump first, through a page server,
 * a snapshot, a lazy restore; each in the host's namespaces or a container.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "runner.h"

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
				     "snapshot-prearm",
				     "predump-snapshot",
				     "lazy" };

/* The modes userns, userns-X: the container owned by a user namespace of its own. */
bool mode_userns(const char *mode)
{
	return !strcmp(mode, "userns") || !strncmp(mode, "userns-", 7);
}

/* The modes ns, ns-X and the userns ones: the test under an init in a container. */
bool mode_ns(const char *mode)
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

/* The modes whose dump is -R --snapshot: snapshot, snapshot-prearm, predump-snapshot. */
bool mode_snapshot(const char *mode)
{
	return !strcmp(mode, "snapshot") || !strcmp(mode, "snapshot-prearm") ||
	       !strcmp(mode, "predump-snapshot");
}

bool mode_known(const char *mode)
{
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
		if (!strcmp(mode, modes[i]))
			return true;
	return false;
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

	run_step(t, "page-server");
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
	run_step(t, "lazy-pages");
	/* ZDTM_LAZY_DELAY_MS: another delay (a long one: every page the test takes is a fault) */
	setenv("CRIU_LIKE_LAZY_PREFETCH_DELAY_MS",
	       getenv("ZDTM_LAZY_DELAY_MS") ? getenv("ZDTM_LAZY_DELAY_MS") : "100", 1);
	t->lazy_pid = spawn(argv, NULL, out);
	unsetenv("CRIU_LIKE_LAZY_PREFETCH_DELAY_MS");
	if (t->lazy_pid < 0) {
		harness_fail(t, "cannot start lazy-pages: %s", strerror(-t->lazy_pid));
		return t->lazy_pid;
	}
	return 0;
}

/* After the verdict: the daemon served every page (or every task went) and exited 0. */
void lazy_wait(struct run *t)
{
	int status = 0, ret;

	if (t->lazy_pid <= 0)
		return;
	ret = wait_pid(&t->r->reaper, t->lazy_pid, t->deadline, &status);
	if (ret || !WIFEXITED(status) || WEXITSTATUS(status))
		harness_fail(t, "lazy-pages failed (%s/lazy-pages.log): %s", t->dir,
			     ret ? run_errstr(ret) : "exit status not 0");
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

/*
 * dump (mode page-server: through one), check the tree is gone, restore,
 * check pids and state. With @prev (relative to the image directory), the
 * dump is an incremental one on top of that pre-dump.
 */
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
	bool snapshot = mode_snapshot(t->mode);
	bool prearm = !strcmp(t->mode, "snapshot-prearm");
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
	/* every task armed before the freeze, whatever its size (snapshot-prearm.c) */
	if (prearm)
		setenv("CRIU_LIKE_TEST_PREARM_MIN", "0", 1);
	/*
	 * The second cycle of the cycles2 modes: the VMAs read without smaps'
	 * walk, whatever the tree's size (mem/vma-fast-dump.c); the first
	 * with smaps, as every other mode.
	 */
	if (cycle > 1)
		setenv("CRIU_LIKE_TEST_VMA_FAST_MIN", "0", 1);
	ret = run_criu(t, dargs, &t->d->dump_opts, dtag);
	unsetenv("CRIU_LIKE_TEST_VMA_FAST_MIN");
	if (prearm)
		unsetenv("CRIU_LIKE_TEST_PREARM_MIN");
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

int run_mode(struct run *t)
{
	const char *mode = mode_base(t->mode);
	int ret;

	if (!strcmp(mode, "none"))
		return 0;
	if (!strcmp(mode, "plain") || !strcmp(mode, "page-server") || !strcmp(mode, "snapshot") ||
	    !strcmp(mode, "snapshot-prearm") || !strcmp(mode, "lazy"))
		return cycle_plain(t, 1, NULL);
	if (!strcmp(mode, "leave-running"))
		return mode_leave_running(t);
	if (!strcmp(mode, "predump") || !strcmp(mode, "predump-snapshot"))
		return mode_predump(t);
	/* cycles2 */
	ret = cycle_plain(t, 1, NULL);
	return ret ? ret : cycle_plain(t, 2, NULL);
}
