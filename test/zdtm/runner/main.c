// SPDX-License-Identifier: GPL-2.0
/*
 * zdtm-run: the end-to-end test runner (README.md next to this directory).
 *
 *	zdtm-run [--criu PATH] [--modes m1,m2] [--timeout SEC] [--keep-going] [--no-slow]
 *		 [--thp MODE] [-v] [TEST...]
 *	zdtm-run exec [--timeout SEC] -- CMD ARGS...
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "runner.h"

#define MAX_MODES 16

struct args {
	char modes_text[256];
	char *modes[MAX_MODES];
	int nmodes;
	bool default_modes; /* no --modes: the extra modes too (extra_modes) */
	bool keep_going;
	const char *thp; /* --thp: the machine's THP mode for the run, NULL: as it is */
	char **tests;
	int ntests;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: zdtm-run [--criu PATH] [--modes m1,m2] [--timeout SEC] [--keep-going]\n"
		"                [--tests-dir DIR] [--no-slow] [--thp always|madvise|never] [-v]\n"
		"                [TEST...]\n"
		"       zdtm-run exec [--timeout SEC] -- CMD ARGS...\n"
		"modes: none plain leave-running cycles2 predump ns ns-leave-running ns-cycles2\n"
		"       userns userns-leave-running userns-cycles2 page-server snapshot\n"
		"       snapshot-prearm predump-snapshot lazy "
		"(default: " ZDTM_DEFAULT_MODES
		",\n       then predump for the tests with the flag "
		"predump, snapshot and\n       snapshot-prearm for those with the flag snapshot, "
		"lazy, ns, ns-leave-running\n       and ns-cycles2 for every test, userns and "
		"userns-cycles2 for the tests with\n       the flag userns)\n");
}

static int split_modes(struct args *a, char *list)
{
	a->nmodes = 0;
	snprintf(a->modes_text, sizeof(a->modes_text), "%s", list);
	for (char *save = NULL, *m = strtok_r(list, ",", &save); m;
	     m = strtok_r(NULL, ",", &save)) {
		if (!mode_known(m)) {
			pr_err("unknown mode '%s'\n", m);
			return -EINVAL;
		}
		if (a->nmodes == MAX_MODES) {
			pr_err("more than %d modes\n", MAX_MODES);
			return -E2BIG;
		}
		a->modes[a->nmodes++] = m;
	}
	return a->nmodes ? 0 : -EINVAL;
}

static int parse_timeout(const char *s, int *ret)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || *end || v <= 0 || v > 86400) {
		pr_err("bad --timeout '%s'\n", s);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct runner *r, struct args *a, const char **tdir)
{
	static const struct option opts[] = {
		{ "criu", required_argument, NULL, 'c' },
		{ "modes", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "keep-going", no_argument, NULL, 'k' },
		{ "tests-dir", required_argument, NULL, 'd' },
		{ "no-slow", no_argument, NULL, 's' },
		{ "thp", required_argument, NULL, 'T' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static char default_modes[] = ZDTM_DEFAULT_MODES;
	char *modes = default_modes;
	int c;

	a->default_modes = true;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			r->criu = optarg;
			break;
		case 'm':
			modes = optarg;
			a->default_modes = false;
			break;
		case 't':
			if (parse_timeout(optarg, &r->timeout))
				return -EINVAL;
			break;
		case 'k':
			a->keep_going = true;
			break;
		case 'd':
			*tdir = optarg;
			break;
		case 's':
			r->no_slow = true;
			break;
		case 'T':
			if (strcmp(optarg, "always") && strcmp(optarg, "madvise") &&
			    strcmp(optarg, "never")) {
				pr_err("bad --thp '%s': always, madvise or never\n", optarg);
				return -EINVAL;
			}
			a->thp = optarg;
			break;
		case 'v':
			r->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	a->tests = argv + optind;
	a->ntests = argc - optind;
	return split_modes(a, modes);
}

/*
 * Without --modes, after the default ones: predump for the tests flagged
 * predump, snapshot and snapshot-prearm for those flagged snapshot, lazy,
 * ns, ns-leave-running and ns-cycles2 for every test, userns and
 * userns-cycles2 for the tests flagged userns (what `make test` can afford:
 * test/zdtm/README.md).
 */
static const struct extra_mode {
	const char *mode;
	const char *flag; /* NULL: every test */
} extra_modes[] = {
	{ "predump", "predump" },
	{ "snapshot", "snapshot" },
	{ "snapshot-prearm", "snapshot" },
	{ "lazy", NULL },
	{ "ns", NULL },
	{ "ns-leave-running", NULL },
	{ "ns-cycles2", NULL },
	{ "userns", "userns" },
	{ "userns-cycles2", "userns" },
};

/* "counter", "static/counter.c", "test/zdtm/static/counter.desc" all name "counter". */
static void test_name(const char *arg, char *out, size_t size)
{
	const char *base = strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg;
	size_t len = strlen(base);

	if (len > 2 && !strcmp(base + len - 2, ".c"))
		len -= 2;
	else if (len > 5 && !strcmp(base + len - 5, ".desc"))
		len -= 5;
	snprintf(out, size, "%.*s", (int)len, base);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every test: one NAME.c in the tests directory. */
static int list_tests(const char *dir, char ***ret, int *ret_n)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	char **v = NULL;
	int n = 0;
	struct dirent *de;

	if (!d) {
		pr_perror("cannot open the tests directory %s", dir);
		return neg_errno();
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char **nv;

		if (len < 3 || strcmp(de->d_name + len - 2, ".c"))
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			return -ENOMEM;
		v = nv;
		v[n] = strndup(de->d_name, len - 2);
		if (!v[n])
			return -ENOMEM;
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_str);
	*ret = v;
	*ret_n = n;
	return 0;
}

static int load_test(const struct runner *r, const char *arg, struct test_desc *d)
{
	char path[PATH_MAX];

	memset(d, 0, sizeof(*d));
	test_name(arg, d->name, sizeof(d->name));
	snprintf(d->bin, sizeof(d->bin), "%s/%s", r->bindir, d->name);
	snprintf(path, sizeof(path), "%s/%s.desc", r->descdir, d->name);
	return desc_load(d, path);
}

static void summary(const struct result *res, int n)
{
	int passed = 0, failed = 0, skipped = 0;

	printf("\n%-24s %-20s %-7s %8s  %s\n", "test", "mode", "verdict", "seconds", "reason");
	for (int i = 0; i < n; i++)
		printf("%-24s %-20s %-7s %8.2f  %s\n", res[i].test, res[i].mode,
		       res[i].v == V_PASS   ? "PASS"
		       : res[i].v == V_FAIL ? "FAIL"
					    : "SKIP",
		       res[i].secs, res[i].v == V_PASS ? "" : res[i].reason);
	printf("\n");
	for (int i = 0; i < n; i++) {
		passed += res[i].v == V_PASS;
		failed += res[i].v == V_FAIL;
		if (res[i].v == V_SKIP) {
			printf("skipped %s (%s): %s\n", res[i].test, res[i].mode, res[i].reason);
			skipped++;
		}
	}
	if (skipped)
		printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	else
		printf("%d passed, %d failed\n", passed, failed);
}

/* One test in every mode; false when it failed. */
static bool run_one(struct runner *r, const struct args *a, const char *arg, bool named,
		    struct result *res, int *nres)
{
	struct test_desc d;
	bool ok = true;

	if (load_test(r, arg, &d)) {
		struct result *x = &res[(*nres)++];

		memset(x, 0, sizeof(*x));
		snprintf(x->test, sizeof(x->test), "%s", d.name);
		snprintf(x->mode, sizeof(x->mode), "-");
		snprintf(x->reason, sizeof(x->reason), "bad metadata %s.desc", d.name);
		x->v = V_FAIL;
		desc_free(&d);
		return false;
	}
	for (int m = 0; m < a->nmodes + (int)ARRAY_SIZE(extra_modes) && !zdtm_interrupted; m++) {
		const struct extra_mode *e = m < a->nmodes ? NULL : &extra_modes[m - a->nmodes];
		const char *mode = e ? e->mode : a->modes[m];
		struct result *x;

		/* The default modes, then the extra ones, for the tests flagged so. */
		if (e && (!a->default_modes || (e->flag && !desc_has_flag(&d, e->flag))))
			continue;
		x = &res[(*nres)++];

		if (desc_has_flag(&d, "noauto") && !named) {
			memset(x, 0, sizeof(*x));
			snprintf(x->test, sizeof(x->test), "%s", d.name);
			snprintf(x->mode, sizeof(x->mode), "%s", mode);
			snprintf(x->reason, sizeof(x->reason), "flag noauto: runs only when named");
			x->v = V_SKIP;
			continue;
		}
		if (d.skip[0] && !named) {
			memset(x, 0, sizeof(*x));
			snprintf(x->test, sizeof(x->test), "%s", d.name);
			snprintf(x->mode, sizeof(x->mode), "%s", mode);
			snprintf(x->reason, sizeof(x->reason), "skip: %.400s", d.skip);
			x->v = V_SKIP;
			continue;
		}
		run_test(r, &d, mode, x);
		ok &= x->v != V_FAIL;
	}
	desc_free(&d);
	return ok;
}

/* Binaries next to this executable: $B/test/zdtm/{static/,out/,../../criu-like}. */
static int setup_paths(struct runner *r, char *exedir, size_t size, const char **tdir)
{
	static char bindir[PATH_MAX + 64], outdir[PATH_MAX + 64], criu[PATH_MAX + 64],
		descdir[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exedir, size - 1);
	struct stat st;

	if (n < 0)
		return neg_errno();
	exedir[n] = '\0';
	dirname(exedir);
	snprintf(bindir, sizeof(bindir), "%s/static", exedir);
	snprintf(outdir, sizeof(outdir), "%s/out", exedir);
	r->bindir = bindir;
	r->outdir = outdir;
	if (!r->criu) {
		char *top = strdup(exedir);

		/* exedir is $B/test/zdtm: the tool is $B/criu-like. */
		if (top && strrchr(top, '/'))
			*strrchr(top, '/') = '\0';
		if (top && strrchr(top, '/'))
			*strrchr(top, '/') = '\0';
		snprintf(criu, sizeof(criu), "%s/criu-like", top ? top : ".");
		free(top);
		r->criu = criu;
	} else if (strchr(r->criu, '/') && realpath(r->criu, criu)) {
		r->criu = criu; /* the tests run in their own directories */
	}
	if (!*tdir) {
		*tdir = "test/zdtm/static";
		if (stat(*tdir, &st)) {
			snprintf(descdir, sizeof(descdir), "%s/../../../test/zdtm/static", exedir);
			*tdir = descdir;
		}
	}
	r->descdir = *tdir;
	return 0;
}

static int run_main(int argc, char **argv)
{
	struct runner r = { 0 };
	struct args a = { 0 };
	char exedir[PATH_MAX];
	const char *tdir = NULL;
	_cleanup_free_ struct result *res = NULL;
	char **names = NULL, thp_saved[32] = "";
	int ntests, nres = 0, failed = 0;

	if (parse_args(argc, argv, &r, &a, &tdir) || setup_paths(&r, exedir, sizeof(exedir), &tdir))
		return 2;
	if (a.ntests) {
		names = a.tests;
		ntests = a.ntests;
	} else if (list_tests(tdir, &names, &ntests)) {
		return 2;
	}
	if (reaper_setup())
		return 2;
	res = calloc((size_t)ntests * (a.nmodes + ARRAY_SIZE(extra_modes)) + 1, sizeof(*res));
	if (!res || (mkdir(r.outdir, 0755) && errno != EEXIST)) {
		pr_perror("cannot create %s", r.outdir);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("zdtm-run: %d test(s), modes %s, criu-like %s\n", ntests, a.modes_text, r.criu);
	/* after reaper_setup(): a SIGINT/SIGTERM/SIGHUP ends the loop, and the mode goes back */
	if (a.thp && thp_set(a.thp, thp_saved, sizeof(thp_saved)))
		return 2;
	if (a.thp)
		printf("zdtm-run: transparent huge pages \"%s\" for the run (were \"%s\")\n", a.thp,
		       thp_saved);
	for (int i = 0; i < ntests && !zdtm_interrupted; i++) {
		if (!run_one(&r, &a, names[i], a.ntests > 0, res, &nres))
			failed++;
		if (failed && !a.keep_going) {
			printf("zdtm-run: stopping after the first failure (--keep-going runs "
			       "all)\n");
			break;
		}
	}
	if (zdtm_interrupted)
		printf("zdtm-run: interrupted\n");
	kill_all(&r.reaper);
	reaper_reset(&r.reaper);
	thp_put_back(thp_saved);
	free(r.feat.json);
	summary(res, nres);
	return failed || zdtm_interrupted ? 1 : 0;
}

int exec_main(int argc, char **argv)
{
	struct reaper rp = { 0 };
	int timeout = 0, status = 0, ret, i = 1;
	pid_t pid;

	for (; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			if (parse_timeout(argv[++i], &timeout))
				return 2;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (i + 1 >= argc) {
		usage(stderr);
		return 2;
	}
	if (reaper_setup())
		return 2;
	pid = spawn(argv + i + 1, NULL, NULL);
	if (pid < 0) {
		pr_err("cannot run %s: %s\n", argv[i + 1], strerror(-pid));
		return 127;
	}
	ret = wait_pid(&rp, pid, now_ms() + (timeout ? timeout : 86400) * 1000LL, &status);
	if (ret == -ETIMEDOUT)
		pr_err("%s: timeout after %d s, killed\n", argv[i + 1], timeout);
	else if (ret == -EINTR)
		pr_err("%s: interrupted, killed\n", argv[i + 1]);
	/* Whatever CMD left behind (daemons, restored trees) dies with it. */
	kill_all(&rp);
	reaper_reset(&rp);
	if (ret)
		return ret == -ETIMEDOUT ? 124 : 130;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec"))
		return exec_main(argc - 1, argv + 1);
	return run_main(argc, argv);
}
