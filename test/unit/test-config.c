// SPDX-License-Identifier: GPL-2.0
/*
 * CRIU's configuration files (cli/config.c): how a line splits into words,
 * a file applied as the command line would be, refusals naming the file and
 * line, and the order of the files and the command line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli.h"
#include "cli-config.h"
#include "cli/config-int.h"
#include "log.h"
#include "lib/logcap.h"
#include "options.h"
#include "util.h"

static char dir[] = "/tmp/test-config-XXXXXX";

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -errno;
	unsetenv(CLI_CONFIG_ENV);
	return 0;
}

static int teardown(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -EIO : 0;
}

/* @name in the test directory, with @text; its path in a static buffer per slot. */
static const char *write_file(int slot, const char *name, const char *text)
{
	static char paths[4][256];
	FILE *f;

	snprintf(paths[slot], sizeof(paths[slot]), "%s/%s", dir, name);
	f = fopen(paths[slot], "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	return paths[slot];
}

static void check_split(const char *line, const char *const *expect)
{
	char **w = NULL;
	size_t n = 0, i;

	print_message("line: %s", line);
	assert_int_equal(cfg_split_line(line, &w, &n), 0);
	for (i = 0; expect[i]; i++) {
		assert_true(i < n);
		assert_string_equal(w[i], expect[i]);
	}
	assert_int_equal(n, i);
	for (i = 0; i < n; i++)
		free(w[i]);
	free(w);
}

#define SPLIT(line, ...)                                        \
	do {                                                    \
		const char *const e_[] = { __VA_ARGS__, NULL }; \
		check_split(line, e_[0] ? e_ : e_ + 1);         \
	} while (0)

/* As CRIU's parse_statement(): words, "--" on the first, comments, quotes. */
static void test_split(void **state)
{
	(void)state;
	SPLIT("tcp-established\n", "--tcp-established");
	SPLIT("  log-file\t/x  \n", "--log-file", "/x");
	SPLIT("\n", NULL);
	SPLIT("   \t \n", NULL);
	SPLIT("# tcp-established\n", NULL);
	SPLIT("   # indented comment\n", NULL);
	SPLIT("log-file /x # a comment\n", "--log-file", "/x");
	SPLIT("log-file /x#y\n", "--log-file", "/x#y"); /* # inside a word is no comment */
	SPLIT("log-file \"/a b/c\"\n", "--log-file", "/a b/c");
	SPLIT("log-file \"\"\n", "--log-file", "");
	SPLIT("external \"say \\\"hi\\\" now\"\n", "--external", "say \"hi\" now");
	SPLIT("log-file \"#not a comment\"\n", "--log-file", "#not a comment");
	SPLIT("log-file \"ab\"cd\n", "--log-file", "ab", "cd");
	SPLIT("log-file \"unterminated x\n", "--log-file", "\"unterminated", "x");
	SPLIT("log-file a\\b\n", "--log-file", "a\\b");
	SPLIT("verbosity=4", "--verbosity=4"); /* last line without a newline */
}

/* A file applied as the RPC does: values, lists, CRIU's booleans and their negations. */
static void test_apply_file(void **state)
{
	const char *path = write_file(0, "a.conf",
				      "# runc.conf as a runtime writes it\n"
				      "\n"
				      "tcp-established\n"
				      "log-file \"/tmp/a log\"\n"
				      "verbosity 4\n"
				      "close 98\n"
				      "  close \"99\"   # two of them\n"
				      "file-locks\n"
				      "no-file-locks\n"
				      "manage-cgroups ignore\n"
				      "link-remap\n"
				      "allow-uprobes\n"
				      "ghost-fiemap\n"
				      "ghost-limit 2k\n"
				      "timeout=33\n");
	struct cr_options o;

	(void)state;
	cr_options_init(&o);
	assert_int_equal(cli_apply_config_file(&o, path), 0);
	assert_true(o.tcp_established);
	assert_string_equal(o.log_file, "/tmp/a log");
	assert_int_equal(o.log_level, 4);
	assert_int_equal(o.n_close_fds, 2);
	assert_string_equal(o.close_fds[0], "98");
	assert_string_equal(o.close_fds[1], "99");
	assert_false(o.file_locks);
	assert_int_equal(o.timeout, 33);
	/* CRIU's options as runc.conf or LXC give them (cli/compat.c) */
	assert_true(o.link_remap && o.allow_uprobes);
	assert_true(o.ghost_limit == 2048);
	assert_int_equal(cli_validate_compat(&o), 0);
	/* a second file wins over the first */
	path = write_file(1, "b.conf", "log-file /tmp/b\nno-tcp-established\n");
	assert_int_equal(cli_apply_config_file(&o, path), 0);
	assert_string_equal(o.log_file, "/tmp/b");
	assert_false(o.tcp_established);
	/* a file that does not exist is no error (runc always sends runc.conf) */
	assert_int_equal(cli_apply_config_file(&o, "/nonexistent/runc.conf"), 0);
	cr_options_fini(&o);
}

static void refused(const char *text, int err, const char *expect)
{
	const char *path = write_file(2, "bad.conf", text);
	char msg[512];
	struct cr_options o;

	cr_options_init(&o);
	logcap_start(LOG_ERROR);
	assert_int_equal(cli_apply_config_file(&o, path), err);
	snprintf(msg, sizeof(msg), "%s:%s", path, expect);
	assert_in_log(logcap_stop(), msg);
	cr_options_fini(&o);
}

/* Whatever criu-like refuses is refused by name, with the file and the line. */
static void test_refusals(void **state)
{
	(void)state;
	refused("tcp-established\n\n# x\nbogus-option 1\n", -EINVAL,
		"4: option '--bogus-option' refused");
	refused("tcp-established\nlog-pid\n", -EOPNOTSUPP,
		"2: option --log-pid: a log file per task is not supported");
	refused("log-file /x /y\n", -EINVAL, "1: '/y' is not an option");
	refused("timeout lots\n", -EINVAL, "1: option '--timeout' refused");
	refused("log-file\n", -EINVAL, "1: option '--log-file' refused");
	refused("manage-cgroups bogus\n", -EINVAL, "1: option '--manage-cgroups=bogus' refused");
	refused("skip-mnt /m\n", -EOPNOTSUPP, "1: option --skip-mnt: mount namespaces");
	refused("cgroup-props x\n", -EINVAL, "1: option '--cgroup-props' refused");
}

struct loaded {
	struct cr_options o;
	const struct cli_command *cmd;
	uint64_t seen;
	int ret;
};

/* What the CLI does: the files, then the command line. */
static void load(struct loaded *l, const char *global, int argc, char **argv)
{
	int first;

	cr_options_init(&l->o);
	l->ret = cli_config_load_from(&l->o, argc, argv, global);
	if (!l->ret)
		l->ret = cli_parse(argc, argv, &l->o, &l->cmd, &first, &l->seen);
}

#define LOAD(l, global, ...)                                        \
	do {                                                        \
		char *argv_[] = { "criu-like", __VA_ARGS__, NULL }; \
		load(l, global, ARRAY_SIZE(argv_) - 1, argv_);      \
	} while (0)

/* /etc/criu/default.conf, ~/.criu/default.conf, CRIU_CONFIG_FILE, --config, argv: in this order. */
static void test_order(void **state)
{
	char home[256], userdir[300];
	const char *global, *env, *cfg;
	struct loaded l;

	(void)state;
	global = write_file(0, "global.conf", "log-file g\nimages-dir gdir\ntcp-established\n");
	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(userdir, sizeof(userdir), "%s/.criu", home);
	assert_int_equal(mkdir(home, 0700), 0);
	assert_int_equal(mkdir(userdir, 0700), 0);
	write_file(1, "home/.criu/default.conf", "log-file u\n");
	env = write_file(2, "env.conf", "log-file e\n");
	cfg = write_file(3, "cfg.conf", "log-file c\n");
	setenv("HOME", home, 1);

	LOAD(&l, global, "dump");
	assert_int_equal(l.ret, 0);
	assert_string_equal(l.o.log_file, "u");
	assert_string_equal(l.o.images_dir, "gdir");
	assert_true(l.o.tcp_established);
	assert_true(l.seen & OPTB(TCP_ESTABLISHED));
	cr_options_fini(&l.o);

	setenv(CLI_CONFIG_ENV, env, 1);
	LOAD(&l, global, "dump");
	assert_string_equal(l.o.log_file, "e");
	assert_string_equal(l.o.images_dir, "gdir");
	cr_options_fini(&l.o);

	/* --config turns the default files off (as CRIU), not CRIU_CONFIG_FILE */
	LOAD(&l, global, "dump", "--config", (char *)cfg);
	assert_int_equal(l.ret, 0);
	assert_string_equal(l.o.log_file, "c");
	assert_string_equal(l.o.images_dir, ".");
	assert_false(l.o.tcp_established);
	cr_options_fini(&l.o);

	/* the command line wins, wherever its options stand */
	LOAD(&l, global, "-o", "a", "dump", "--no-tcp-established");
	assert_string_equal(l.o.log_file, "a");
	assert_false(l.o.tcp_established);
	assert_false(l.seen & OPTB(TCP_ESTABLISHED));
	cr_options_fini(&l.o);

	/* --no-default-config: only CRIU_CONFIG_FILE */
	LOAD(&l, global, "--no-default-config", "dump");
	assert_string_equal(l.o.log_file, "e");
	assert_string_equal(l.o.images_dir, ".");
	cr_options_fini(&l.o);
	unsetenv(CLI_CONFIG_ENV);

	/* --help reads no file, even a broken one */
	write_file(1, "home/.criu/default.conf", "no-such-option\n");
	LOAD(&l, global, "dump", "--help");
	assert_int_equal(l.ret, 0);
	cr_options_fini(&l.o);
	logcap_start(LOG_ERROR);
	LOAD(&l, global, "dump");
	assert_int_equal(l.ret, -EINVAL);
	assert_in_log(logcap_stop(),
		      "home/.criu/default.conf:1: option '--no-such-option' refused");
	cr_options_fini(&l.o);
	unlink(write_file(1, "home/.criu/default.conf", ""));
}

/*
 * A file's option whose feature is missing is refused once the log is open,
 * with its file and line, unless the command line overrides it; an option
 * of a file that the command does not take is not for it.
 */
static void test_validate(void **state)
{
	const char *global;
	struct loaded l;

	(void)state;
	setenv("HOME", dir, 1);
	global = write_file(0, "global.conf", "tcp-established\n\nlazy-pages\nlog-pid\n");
	LOAD(&l, global, "restore");
	assert_int_equal(l.ret, 0);
	logcap_start(LOG_ERROR);
	assert_int_equal(cli_config_validate(&l.o, l.seen), -EOPNOTSUPP);
	/* restore takes --lazy-pages (Documentation/lazy-pages.md): log-pid is refused */
	assert_in_log(logcap_stop(), "global.conf:4: option --log-pid:");
	cr_options_fini(&l.o);

	/* pre-dump takes no --lazy-pages (a dump does: lazy-dump.c): only log-pid is left */
	LOAD(&l, global, "pre-dump");
	assert_false(l.seen & OPTB(LAZY_PAGES));
	logcap_start(LOG_ERROR);
	assert_int_equal(cli_config_validate(&l.o, l.seen), -EOPNOTSUPP);
	assert_in_log(logcap_stop(), "global.conf:4: option --log-pid:");
	cr_options_fini(&l.o);

	LOAD(&l, global, "dump", "--no-log-pid");
	assert_int_equal(cli_config_validate(&l.o, l.seen), 0);
	assert_int_equal(cli_validate(l.cmd, l.seen, 0), 0);
	assert_int_equal(cli_validate_compat(&l.o), 0);
	cr_options_fini(&l.o);

	/* a mode on the command line overrides a file's */
	global = write_file(0, "global.conf", "manage-cgroups full\n");
	LOAD(&l, global, "dump", "--manage-cgroups=ignore");
	assert_true(l.seen & OPTB(MANAGE_CGROUPS));
	assert_string_equal(l.o.manage_cgroups, "ignore");
	assert_int_equal(cli_config_validate(&l.o, l.seen), 0);
	assert_int_equal(cli_validate(l.cmd, l.seen, 0), 0);
	cr_options_fini(&l.o);

	/* check takes neither tcp-established nor lazy-pages */
	global = write_file(0, "global.conf", "tcp-established\nlazy-pages\n");
	LOAD(&l, global, "check");
	assert_int_equal(l.seen, 0);
	assert_int_equal(cli_config_validate(&l.o, l.seen), 0);
	assert_int_equal(cli_validate(l.cmd, l.seen, 0), 0);
	cr_options_fini(&l.o);

	/* given on the command line too: taken */
	LOAD(&l, global, "restore", "--lazy-pages");
	assert_int_equal(cli_config_validate(&l.o, l.seen), 0);
	assert_int_equal(cli_validate(l.cmd, l.seen, 0), 0);
	assert_true(l.o.lazy_pages);
	cr_options_fini(&l.o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),	 cmocka_unit_test(test_apply_file),
		cmocka_unit_test(test_refusals), cmocka_unit_test(test_order),
		cmocka_unit_test(test_validate),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
