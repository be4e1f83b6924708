// SPDX-License-Identifier: GPL-2.0
/*
 * One test in one mode: start it, [dump, check it is gone, restore, compare:
 * run-modes.c], SIGTERM, verdict. Whatever happens, every process started is
 * killed at the end (kill_all), so one test cannot disturb the next.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "runner.h"

/* The first failure is the reason shown; later ones are consequences. */
void harness_fail(struct run *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->harness_failed && !t->test_failed) {
		va_start(ap, fmt);
		vsnprintf(t->res->reason, sizeof(t->res->reason), fmt, ap);
		va_end(ap);
	}
	t->harness_failed = true;
}

void run_step(struct run *t, const char *what)
{
	if (t->r->verbose)
		fprintf(stderr, "zdtm-run: %s/%s: %s\n", t->d->name, t->mode, what);
}

const char *run_errstr(int ret)
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
	run_step(t, "start");
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
		harness_fail(t, "test did not become ready: %s%s", run_errstr(ret),
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
int run_criu(struct run *t, char **args, const struct word_list *opts, const char *tag)
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
	run_step(t, tag);
	pid = spawn(argv, NULL, out);
	if (pid < 0) {
		harness_fail(t, "cannot run %s: %s", t->r->criu, strerror(-pid));
		return pid;
	}
	if (t->ncriu < (int)ARRAY_SIZE(t->criu_pids))
		t->criu_pids[t->ncriu++] = pid;
	ret = wait_pid(&t->r->reaper, pid, t->deadline, &status);
	if (ret) {
		harness_fail(t, "%s: %s%s", tag, run_errstr(ret),
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
	run_step(t, "tamper");
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

	run_step(t, "SIGTERM");
	if (kill(t->pid, SIGTERM)) {
		harness_fail(t, "test pid %d is gone before SIGTERM", t->pid);
		return;
	}
	/* mode ns: the init exits with the test's status (lib/test.c) */
	ret = wait_pid(&t->r->reaper, t->root, t->deadline, &status);
	if (ret && ret != -ECHILD) {
		harness_fail(t, "test did not exit after SIGTERM: %s%s", run_errstr(ret),
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
	if (mode_snapshot(res->mode) && d->skip_snapshot[0]) {
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
				 d->features.w[i], run_errstr(ret));
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

struct log_seen {
	size_t i; /* in show_logs()'s list */
	struct timespec mtime;
};

/* Newest first; of two as new, the earlier in the list. */
static int log_newer(const void *a, const void *b)
{
	const struct log_seen *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : -1;
	return x->i < y->i ? -1 : 1;
}

/*
 * The tails of the test's output and of the logs of its steps, the newest
 * first: the step that failed is the last that wrote, and a reader that
 * sees only the start of a long report (CI shows a part) still sees it.
 */
static void show_logs(struct run *t)
{
	/* outside.log: a peer of the test outside the tree (test_fork_outside). */
	static const char *const logs[] = {
		"launch.log",	 "compare.diff",  "pre-dump.out", "pre-dump.log", "dump.out",
		"dump.log",	 "restore.out",	  "restore.log",  "dump-2.out",	  "dump-2.log",
		"restore-2.out", "restore-2.log", "outside.log",
	};
	struct log_seen seen[ARRAY_SIZE(logs)];
	char path[PATH_MAX + 32];
	size_t n = 0;
	struct stat st;

	print_tail(t->outfile, 20);
	for (size_t i = 0; i < ARRAY_SIZE(logs); i++) {
		snprintf(path, sizeof(path), "%s/%s", t->dir, logs[i]);
		if (!stat(path, &st))
			seen[n++] = (struct log_seen){ i, st.st_mtim };
	}
	qsort(seen, n, sizeof(seen[0]), log_newer);
	for (size_t k = 0; k < n; k++) {
		snprintf(path, sizeof(path), "%s/%s", t->dir, logs[seen[k].i]);
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
	} else if (!start_test(&t) && !run_mode(&t) && !check_netlocks(&t)) {
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
