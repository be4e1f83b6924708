// SPDX-License-Identifier: GPL-2.0
/* Option parsing: CRIU's names and short forms, refusals of what is missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli.h"
#include "log.h"
#include "options.h"
#include "util.h"

struct parsed {
	struct cr_options o;
	const struct cli_command *cmd;
	int optind;
	uint64_t seen;
	int ret;
};

static void parse(struct parsed *p, int argc, char **argv)
{
	cr_options_init(&p->o);
	p->cmd = NULL;
	p->ret = cli_parse(argc, argv, &p->o, &p->cmd, &p->optind, &p->seen);
}

#define PARSE(p, ...)                                               \
	do {                                                        \
		char *argv_[] = { "criu-like", __VA_ARGS__, NULL }; \
		parse(p, ARRAY_SIZE(argv_) - 1, argv_);             \
	} while (0)

static void test_dump_options(void **state)
{
	struct parsed p;

	(void)state;
	PARSE(&p, "dump", "-t", "1234", "-D", "/tmp/img", "-R", "-o", "dump.log", "-v4",
	      "--timeout", "30");
	assert_int_equal(p.ret, 0);
	assert_non_null(p.cmd);
	assert_string_equal(p.cmd->name, "dump");
	assert_int_equal(p.o.tree, 1234);
	assert_string_equal(p.o.images_dir, "/tmp/img");
	assert_true(p.o.leave_running);
	assert_string_equal(p.o.log_file, "dump.log");
	assert_int_equal(p.o.log_level, 4);
	assert_int_equal(p.o.timeout, 30);
	assert_true(p.seen & OPTB(TREE));
	assert_true(p.seen & OPTB(LEAVE_RUNNING));
	cr_options_fini(&p.o);
}

static void test_long_forms_and_options_before_command(void **state)
{
	struct parsed p;

	(void)state;
	PARSE(&p, "--images-dir", "d", "--tree=77", "--shell-job", "--ext-unix-sk", "--file-locks",
	      "dump", "--external", "a", "--external", "b");
	assert_int_equal(p.ret, 0);
	assert_string_equal(p.cmd->name, "dump");
	assert_int_equal(p.o.tree, 77);
	assert_true(p.o.shell_job && p.o.ext_unix_sk && p.o.file_locks);
	assert_int_equal(p.o.n_external, 2);
	assert_string_equal(p.o.external[1], "b");
	assert_null(p.o.external[2]);
	cr_options_fini(&p.o);
}

static void test_verbosity(void **state)
{
	struct parsed p;

	(void)state;
	PARSE(&p, "-v", "check");
	assert_int_equal(p.o.log_level, DEFAULT_LOGLEVEL + 1);
	PARSE(&p, "-vvv", "check");
	assert_int_equal(p.o.log_level, DEFAULT_LOGLEVEL + 3);
	PARSE(&p, "-v0", "check");
	assert_int_equal(p.o.log_level, 0);
	PARSE(&p, "-v9", "check");
	assert_int_equal(p.ret, -EINVAL);
}

static void test_bad_values(void **state)
{
	struct parsed p;

	(void)state;
	PARSE(&p, "dump", "-t", "abc");
	assert_int_equal(p.ret, -EINVAL);
	PARSE(&p, "dump", "-t", "-5");
	assert_int_equal(p.ret, -EINVAL);
	PARSE(&p, "dump", "--port", "70000");
	assert_int_equal(p.ret, -EINVAL);
	PARSE(&p, "dump", "--no-such-option");
	assert_int_equal(p.ret, -EINVAL);
	PARSE(&p, "frobnicate");
	assert_int_equal(p.ret, -EINVAL);
	PARSE(&p, "dump", "-t");
	assert_int_equal(p.ret, -EINVAL);
}

static void test_validate(void **state)
{
	struct parsed p;

	(void)state;
	/* an option the command does not take */
	PARSE(&p, "check", "-R");
	assert_int_equal(p.ret, 0);
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), -EINVAL);
	/* an option whose feature is missing: refused, not ignored */
	PARSE(&p, "infect-test", "-t", "1", "--cycles", "3");
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), 0);
	assert_int_equal(p.o.cycles, 3);
	PARSE(&p, "restore", "--lazy-pages");
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), -EOPNOTSUPP);
	/* positional arguments */
	PARSE(&p, "decode", "a", "b");
	assert_int_equal(cli_validate(p.cmd, p.seen, 2), -EINVAL);
	assert_int_equal(cli_validate(p.cmd, p.seen, 1), 0);
}

/* Which commands need which capabilities: the table behind the privilege check. */
static void test_missing_caps(void **state)
{
	const uint64_t all = ~0ULL, admin = CAPB(SYS_ADMIN), net = CAPB(NET_ADMIN);
	struct parsed p;

	(void)state;
	PARSE(&p, "dump", "-t", "1");
	assert_int_equal(cli_missing_caps(p.cmd, &p.o, all), 0);
	assert_true(cli_missing_caps(p.cmd, &p.o, 0) & admin);
	assert_true(cli_missing_caps(p.cmd, &p.o, 0) & CAPB(SYS_PTRACE));
	assert_true(cli_missing_caps(p.cmd, &p.o, 0) & net);
	assert_int_equal(cli_missing_caps(p.cmd, &p.o, all & ~admin), admin);
	/* no network lock and no TCP repair: no NET_ADMIN */
	PARSE(&p, "dump", "-t", "1", "--network-lock", "skip");
	assert_false(cli_missing_caps(p.cmd, &p.o, 0) & net);
	PARSE(&p, "dump", "-t", "1", "--network-lock", "skip", "--tcp-established");
	assert_true(cli_missing_caps(p.cmd, &p.o, 0) & net);
	PARSE(&p, "restore");
	assert_true(cli_missing_caps(p.cmd, &p.o, 0) & CAPB(SETUID));
	assert_int_equal(cli_missing_caps(p.cmd, &p.o, all & ~net), net);
	PARSE(&p, "net-lock", "list");
	assert_int_equal(cli_missing_caps(p.cmd, &p.o, 0), net);
	PARSE(&p, "infect-test", "-t", "1");
	assert_true(cli_missing_caps(p.cmd, &p.o, 0) & CAPB(SYS_PTRACE));
	/* what needs no privilege */
	PARSE(&p, "decode");
	assert_int_equal(cli_missing_caps(p.cmd, &p.o, 0), 0);
	PARSE(&p, "encode");
	assert_int_equal(cli_missing_caps(p.cmd, &p.o, 0), 0);
	PARSE(&p, "check");
	assert_int_equal(cli_missing_caps(p.cmd, &p.o, 0), 0);
	/* this test runs as root */
	assert_true((cli_effective_caps() & admin) || geteuid());
}

static void test_main_exit_codes(void **state)
{
	char *version[] = { "criu-like", "--version", NULL };
	char *bad[] = { "criu-like", "bogus", NULL };
	char *help[] = { "criu-like", "dump", "--help", NULL };

	(void)state;
	log_set_level(-1); /* keep the expected errors out of the test output */
	assert_int_equal(cli_main(2, version), 0);
	assert_int_equal(cli_main(2, bad), 1);
	assert_int_equal(cli_main(3, help), 0);
	log_set_level(DEFAULT_LOGLEVEL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_options),
		cmocka_unit_test(test_long_forms_and_options_before_command),
		cmocka_unit_test(test_verbosity),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_missing_caps),
		cmocka_unit_test(test_main_exit_codes),
	};

	log_set_level(-1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
