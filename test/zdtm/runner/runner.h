/* SPDX-License-Identifier: GPL-2.0 */
#ifndef ZDTM_RUNNER_H
#define ZDTM_RUNNER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Header-only helpers (cleanup attributes); the runner links none of the tool. */
#include "../../../criu-like/include/util.h"

/*
 * The modes every test runs in by default: dump and restore once, dump with
 * -R, and two dump/restore cycles in a row (`none` still runs when named).
 */
#define ZDTM_DEFAULT_MODES "plain,leave-running,cycles2"

#define DEFAULT_TEST_TIMEOUT 60

/* The host uid and gid of root in the user namespace of the modes userns (map "0 100000 65536"). */
#define ZDTM_USERNS_ROOT 100000

/* The runner prints to stderr; it links nothing of the tool, so no log.c. */
#define pr_err(fmt, ...) fprintf(stderr, "zdtm-run: error: " fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...) fprintf(stderr, "zdtm-run: warning: " fmt, ##__VA_ARGS__)
#define pr_perror(fmt, ...) pr_err(fmt ": %m\n", ##__VA_ARGS__)

/* ---- per-test metadata (desc.c) ---- */
#define MAX_WORDS 32

struct word_list {
	int n;
	char *w[MAX_WORDS];
};

struct test_desc {
	char name[128];
	char bin[4096];
	struct word_list features; /* features: names from `criu-like check --json` */
	struct word_list flags; /* flags: noauto suid expect-fail tamper slow */
	struct word_list args; /* args: extra --NAME=VALUE options of the test */
	struct word_list dump_opts; /* opts + dump-opts */
	struct word_list restore_opts; /* opts + restore-opts */
	int timeout; /* timeout: seconds */
	char skip[256]; /* skip: why the test is not run (empty: it runs) */
	char skip_ns[256]; /* skip-ns: why it is not run in the ns modes (userns ones too) */
	char skip_userns[256]; /* skip-userns: why it is not run in the userns modes */
	char skip_snapshot[256]; /* skip-snapshot: why it is not run in the mode snapshot */
	char skip_lazy[256]; /* skip-lazy: why it is not run in the mode lazy */
	char skip_host[256]; /* skip-host: why it is not run outside the ns modes */
	bool ns_root_overlay; /* ns-root: overlay: the container's root is an overlayfs */
};

int desc_load(struct test_desc *d, const char *path);
void desc_free(struct test_desc *d);
bool desc_has_flag(const struct test_desc *d, const char *flag);
void words_free(struct word_list *l);

/* ---- processes (proc.c) ---- */
struct reaped {
	pid_t pid;
	int status;
};

struct reaper {
	struct reaped *v;
	size_t n, cap;
};

/* Set by SIGINT/SIGTERM/SIGHUP: stop at the next wait. */
extern volatile sig_atomic_t zdtm_interrupted;

int reaper_setup(void);
void reaper_reset(struct reaper *r);
int64_t now_ms(void);
/* Reap whatever is ready; returns how many. */
int reap_ready(struct reaper *r);
/* Wait for @pid (our child or a reparented orphan) until @deadline_ms. 0 or -ETIMEDOUT/-EINTR/-ECHILD. */
int wait_pid(struct reaper *r, pid_t pid, int64_t deadline_ms, int *ret_status);
/* Wait until @pid no longer exists (reaped or never ours); 0 or -ETIMEDOUT/-EINTR. */
int wait_gone(struct reaper *r, pid_t pid, int64_t deadline_ms);
/* fork+exec @argv in @cwd (NULL: ours) with stdout+stderr to @out (NULL: ours). Returns the pid or -errno. */
pid_t spawn(char *const argv[], const char *cwd, const char *out);
/* Every descendant of @root (not @root itself), in a malloc'ed array. */
int descendants(pid_t root, pid_t **ret, size_t *ret_n);
/* SIGKILL and reap every descendant of this process, until none is left. */
void kill_all(struct reaper *r);
/* The state letter of @pid in /proc/PID/stat (R, S, T, Z...), 0 when it does not exist. */
char proc_state(pid_t pid);
/*
 * Pid namespaces: the pid of host pid @pid at @level of its NSpid line (0:
 * the runner's own), -1 when it has no such level or is gone; ns_levels():
 * how many levels NSpid has (0: gone). A test tree is compared by its pids
 * at its root's innermost level: the pids its tasks see in a container,
 * where a restore gives them other host pids.
 */
pid_t ns_pid_at(pid_t pid, unsigned int level);
/* The parent of host pid @pid (/proc/PID/stat), 0 if unknown. */
pid_t read_ppid(pid_t pid);
unsigned int ns_levels(pid_t pid);
/* The host pid of the task under @root (or @root) whose pid at @level is @vpid; -ESRCH if none. */
pid_t ns_find(pid_t root, unsigned int level, pid_t vpid);
/* A whole file in a NUL-terminated malloc'ed buffer, or NULL with errno. */
char *slurp(const char *path);
int exec_main(int argc, char **argv);

/* ---- process tree state (snapshot.c) ---- */
struct proc_snap {
	pid_t pid; /* at the level of the tree's root: the host's, or a container's */
	pid_t host;
	char state; /* from /proc/PID/stat: a zombie must stay one, a live task alive */
	char *maps;
	char *status;
};

struct tree_snap {
	struct proc_snap *p;
	size_t n;
};

int snap_take(struct tree_snap *s, pid_t root);
void snap_free(struct tree_snap *s);
/* 0 if equal; else -EINVAL and a readable diff written to @diff. */
int snap_compare(const struct tree_snap *a, const struct tree_snap *b, FILE *diff);

/* ---- kernel features (features.c) ---- */
struct features {
	bool probed;
	int err; /* why `check --json` gave nothing, -errno or exit status */
	char *json;
};

/* Whether @name is present: 1 yes, 0 no, -ENOENT not listed, other -errno: check failed. */
int feature_present(struct features *f, const char *criu, const char *workdir, const char *name);

/* ---- the transparent huge page mode for the run (thp.c, --thp) ---- */
/* Write @mode (always, madvise, never), the current one saved in @saved: 0 or -errno. */
int thp_set(const char *mode, char *saved, size_t size);
/* Write @saved back (nothing when empty). */
void thp_put_back(const char *saved);

/* ---- network locks left behind (locks.c) ---- */
/*
 * Whether `@criu net-lock list` shows a lock made by one of the criu-like
 * processes @pids: 0 none, -EEXIST one (named in @why), other -errno: the
 * list failed (@why says so when it ran). Its output goes to DIR/net-lock-list.out.
 */
int netlock_leaks(struct reaper *r, const char *criu, const char *dir, const pid_t *pids, int n,
		  int64_t deadline, char *why, size_t size);

/* ---- running a test (run.c, run-modes.c; run.h) ---- */
enum verdict {
	V_PASS,
	V_FAIL,
	V_SKIP,
};

struct result {
	char test[128];
	char mode[32];
	enum verdict v;
	double secs;
	char reason[512];
};

struct runner {
	const char *criu;
	const char *bindir; /* where test binaries live */
	const char *descdir; /* where NAME.desc files live */
	const char *outdir; /* per-test work directories */
	int timeout; /* --timeout, 0: per test or default */
	bool verbose;
	bool no_slow; /* --no-slow: skip tests with the flag "slow" */
	struct reaper reaper;
	struct features feat;
};

void run_test(struct runner *r, const struct test_desc *d, const char *mode, struct result *res);
bool mode_known(const char *mode);
/* files.c: rm -rf; the last @lines lines of a log; mkdir -p; a pid read from a pidfile (-EINVAL when it holds none). */
int rm_rf(const char *path);
void print_tail(const char *path, int lines);
int mkdir_p(const char *path);
int read_pid(const char *path, pid_t *ret);

/* cgroups.c: remove the cgroups a test listed in DIR/cgroups.list; how many are gone. */
int cgroups_drop(const char *dir);

#endif
