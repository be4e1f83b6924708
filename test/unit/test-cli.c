// SPDX-License-Identifier: GPL-2.0
/* Option parsing: CRIU's names and short forms, refusals of what is missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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
	/* as CRIU's getopt: -v9 is 9, -vvvv adds four, a word after -v is atoi()'d */
	PARSE(&p, "-v9", "check");
	assert_int_equal(p.ret, 0);
	assert_int_equal(p.o.log_level, 9);
	PARSE(&p, "-vvvv", "check");
	assert_int_equal(p.o.log_level, DEFAULT_LOGLEVEL + 4);
	PARSE(&p, "-verbosity=0", "check");
	assert_int_equal(p.ret, 0);
	assert_int_equal(p.o.log_level, 0);
	PARSE(&p, "--verbosity=3", "check");
	assert_int_equal(p.o.log_level, 3);
	PARSE(&p, "--verbosity", "check");
	assert_int_equal(p.o.log_level, DEFAULT_LOGLEVEL + 1);
}

/* Every option of CRIU 4.x parses; those whose feature is missing are refused by name. */
static void test_criu_options(void **state)
{
	static const char *const accepted[][3] = {
		{ "--no-default-config" },
		{ "--config", "f" }, /* read before the parse (cli_config_load()) */
		{ "--pidfile", "p" },
		{ "--pidfile=p" },
		{ "--pre-dump-mode", "read" },
		{ "--join-ns", "net:/proc/1/ns/net" }, /* the network namespace can be joined */
		{ "-J", "net:42" },
		{ "--pre-dump-mode=splice" },
		{ "--ghost-limit", "2M" },
		{ "--status-fd", "5" },
		{ "--tls" }, /* the page server's (Documentation/page-server.md) */
		{ "--no-tls" },
		{ "--tls-cacert", "c" },
		{ "--tls-cacrl", "c" },
		{ "--tls-cert", "c" },
		{ "--tls-key", "c" },
		{ "--tls-no-cn-verify" },
		{ "--deprecated" },
		{ "--no-deprecated" },
		{ "--daemon" },
		{ "--no-daemon" },
		{ "--manage-cgroups=ignore" },
		{ "--cgroup-root", "/x" }, /* cgroup/: where the tree's cgroups go */
		{ "--cgroup-root=cpu:/x" },
		{ "--cgroup-root=name=systemd:/x" },
		{ "--cgroup-yard", "/y" },
		{ "--cpu-cap=none" },
		{ "--no-tcp-established" },
		{ "--no-shell-job" },
		{ "--no-file-locks" },
		{ "--no-restore-detached" },
		{ "--no-page-server" },
		{ "--no-track-mem" },
		{ "--no-tcp-close" },
		{ "--no-link-remap" },
		{ "--allow-uprobes" }, /* dump: the [uprobes] area is left out */
		{ "--no-allow-uprobes" },
		{ "--ghost-fiemap" }, /* ghosts are saved by extents anyway (files.md) */
		{ "--no-ghost-fiemap" },
		{ "--ghost-limit", "1k" },
		{ "--ghost-limit=10MiB" },
		{ "--ghost-limit=3G" },
		{ "--no-skip-in-flight" },
		{ "--no-force-irmap" },
		{ "--no-auto-dedup" },
		{ "--auto-dedup" }, /* dump and pre-dump (mem/dedup.c) */
		{ "--no-restore-sibling" },
		{ "--no-display-stats" },
		{ "--display-stats" },
		{ "--extra" },
		{ "--experimental" },
		{ "--feature", "timerfd" },
		{ "--close", "99" },
		{ "--veth-pair", "a=b" }, /* the tree's network namespace (ns/net.c) */
		{ "--veth-pair", "a=b@br0" },
		{ "--empty-ns", "net" },
		{ "--cgroup-props", "\"memory\": - \"properties\": [\"memory.swappiness\"]" },
		{ "--cgroup-props-file", "/etc/criu/cgroup.yaml" },
		{ "--cgroup-dump-controller", "cpu" },
		{ "--tcp-close", "--no-tcp-close" }, /* the last one wins, as in CRIU */
		/* LXC's (Documentation/runtimes.md, "LXC") */
		{ "--link-remap" },
		{ "--force-irmap" },
		{ "--restore-sibling" },
		{ "-S" },
		{ "-M", "auto" },
		{ "--ext-mount-map", "/data:data" },
		{ "--ext-mount-map", "console:" },
		{ "--enable-fs", "hugetlbfs" },
		{ "--enable-fs", "all" },
		{ "--enable-external-sharing" },
		{ "--enable-external-masters" },
		{ "--lsm-profile", "apparmor:unconfined" },
	};
	static const struct {
		const char *argv[3];
		const char *name; /* as the refusal names it */
	} refused[] = {
		{ { "--join-ns", "uts:/proc/1/ns/uts" }, "join-ns" },
		{ { "-J", "ipc:/run/netns/a,x" }, "join-ns" },
		{ { "--log-pid" }, "log-pid" },
		{ { "--evasive-devices" }, "evasive-devices" },
		{ { "-L", "/usr/lib/criu" }, "libdir" },
		{ { "--exec-cmd" }, "exec-cmd" },
		{ { "--skip-mnt", "/m" }, "skip-mnt" },
		{ { "--irmap-scan-path", "/" }, "irmap-scan-path" },
		{ { "--lsm-mount-context", "x" }, "lsm-mount-context" },
		{ { "--weak-sysctls" }, "weak-sysctls" },
		{ { "--ps-socket", "3" }, "ps-socket" },
		{ { "--stream" }, "stream" },
		{ { "--file-validation", "buildid" }, "file-validation" },
		{ { "--skip-file-rwx-check" }, "skip-file-rwx-check" },
		{ { "--mntns-compat-mode" }, "mntns-compat-mode" },
		{ { "--unprivileged" }, "unprivileged" },
		{ { "--ms" }, "ms" },
		{ { "--cpu-cap" }, "cpu-cap" },
		{ { "--cpu-cap=fpu,^ins" }, "cpu-cap" },
		{ { "-x5" }, "ext-unix-sk=INODE" },
	};
	static const char *const bad[][2] = {
		{ "--pre-dump-mode", "write" },
		{ "--ghost-limit", "lots" },
		{ "--ghost-limit", "1T" },
		{ "--ghost-limit", "1KX" },
		{ "--ghost-limit", "-1" },
		{ "--status-fd", "x" },
		{ "--manage-cgroups=bogus" },
		{ "--cgroup-root", "x" },
		{ "--cgroup-root", ":/x" },
		{ "--cgroup-yard", "y" },
		{ "--join-ns", "net" },
		{ "--veth-pair", "ab" },
		{ "--empty-ns", "pid" },
		{ "--file-validation", "md5" },
		{ "--cpu-cap=sse" },
		{ "-M", "nocolon" },
		{ "-M", ":x" },
		{ "--lsm-profile", "unconfined" },
		{ "--enable-fs", "" },
	};
	struct parsed p;
	size_t i, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(accepted); i++) {
		char *argv[6] = { "criu-like", "dump" };
		int argc = 2;

		for (j = 0; j < 3 && accepted[i][j]; j++)
			argv[argc++] = (char *)accepted[i][j];
		parse(&p, argc, argv);
		print_message("%s\n", accepted[i][0]);
		assert_int_equal(p.ret, 0);
		assert_int_equal(cli_validate_compat(&p.o), 0);
		cr_options_fini(&p.o);
	}
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		char *argv[6] = { "criu-like", "restore" };
		int argc = 2;
		char buf[4096];
		int pfd[2];
		ssize_t n;

		for (j = 0; j < 3 && refused[i].argv[j]; j++)
			argv[argc++] = (char *)refused[i].argv[j];
		parse(&p, argc, argv);
		print_message("%s\n", refused[i].name);
		assert_int_equal(p.ret, 0);
		/* refused by name, in the log */
		assert_int_equal(pipe(pfd), 0);
		assert_int_equal(log_set_fd(pfd[1]), 0);
		log_set_level(DEFAULT_LOGLEVEL);
		assert_int_equal(cli_validate_compat(&p.o), -EOPNOTSUPP);
		log_close();
		log_set_level(-1);
		close(pfd[1]);
		n = read(pfd[0], buf, sizeof(buf) - 1);
		close(pfd[0]);
		assert_true(n > 0);
		buf[n] = '\0';
		assert_non_null(strstr(buf, refused[i].name));
		assert_non_null(strstr(buf, "not supported"));
		cr_options_fini(&p.o);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char *argv[6] = { "criu-like", "dump", (char *)bad[i][0], (char *)bad[i][1] };

		parse(&p, bad[i][1] ? 4 : 3, argv);
		print_message("%s\n", bad[i][0]);
		assert_int_equal(p.ret, -EINVAL);
		cr_options_fini(&p.o);
	}
	/* the values */
	PARSE(&p, "dump", "--ghost-limit=1M", "--pre-dump-mode", "read", "--status-fd=7",
	      "--no-default-config", "--pidfile", "pf", "--tcp-established",
	      "--no-tcp-established");
	assert_int_equal(p.ret, 0);
	assert_true(p.o.ghost_limit == 1 << 20);
	assert_string_equal(p.o.pre_dump_mode, "read");
	assert_int_equal(p.o.status_fd, 7);
	assert_true(p.o.no_default_config);
	assert_string_equal(p.o.pidfile, "pf");
	assert_false(p.o.tcp_established);
	assert_false(p.seen & OPTB(TCP_ESTABLISHED));
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), 0);
	/* --allow-uprobes, --link-remap and their --no- forms */
	PARSE(&p, "dump", "--allow-uprobes", "--link-remap");
	assert_true(p.o.allow_uprobes && p.o.link_remap);
	PARSE(&p, "dump", "--allow-uprobes", "--link-remap", "--no-allow-uprobes",
	      "--no-link-remap");
	assert_false(p.o.allow_uprobes || p.o.link_remap);
	PARSE(&p, "restore", "--daemon");
	assert_true(p.o.restore_detached);
	/* -M KEY:VAL is --external mnt[KEY]:VAL; an empty VAL gives nothing; auto is noted */
	PARSE(&p, "restore", "-M", "data:/srv/d", "--ext-mount-map", "console:", "-M", "auto", "-S",
	      "--enable-fs", "hugetlbfs,tracefs", "--lsm-profile", "apparmor:unconfined");
	assert_int_equal(p.ret, 0);
	assert_int_equal(p.o.n_external, 1);
	assert_string_equal(p.o.external[0], "mnt[data]:/srv/d");
	assert_true(p.o.ext_mnt_auto);
	assert_true(p.o.restore_sibling);
	assert_int_equal(p.o.n_enable_fs, 1);
	assert_string_equal(p.o.lsm_profile, "apparmor:unconfined");
	assert_int_equal(cli_validate_compat(&p.o), 0);
	PARSE(&p, "check", "--all");
	assert_true(p.o.check_extra && p.o.check_experimental);
	/* every CRIU mode (cgroup/); a bare --manage-cgroups is soft */
	PARSE(&p, "restore", "--manage-cgroups");
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), 0);
	assert_string_equal(p.o.manage_cgroups, "soft");
	PARSE(&p, "restore", "--manage-cgroups=none");
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), 0);
	PARSE(&p, "restore", "--manage-cgroups=full");
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), 0);
	assert_string_equal(p.o.manage_cgroups, "full");
	PARSE(&p, "restore", "--manage-cgroups=strict");
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), 0);
	PARSE(&p, "restore", "--manage-cgroups=ignore");
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), 0);
}

/* A refused option reaches --log-file: the log is opened before any refusal. */
static void test_refusal_in_log_file(void **state)
{
	char dir[] = "/tmp/test-cli-XXXXXX", path[64], buf[4096];
	char *argv[] = { "criu-like", "check", "-o", path, "--log-pid", NULL };
	char *argv2[] = { "criu-like", "check", "-o", path, "-R", NULL };
	ssize_t n;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.log", dir);
	assert_int_equal(cli_main(5, argv), 1);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "option --log-pid"));
	unlink(path);
	/* an option the command does not take: the same */
	assert_int_equal(cli_main(5, argv2), 1);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "leave-running"));
	unlink(path);
	/* -S without -d: the root would be the caller's, criu-like could not wait for it */
	{
		char *argv3[] = { "criu-like", "restore", "-o", path, "-S", NULL };

		assert_int_equal(cli_main(5, argv3), 1);
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		assert_true(n > 0);
		buf[n] = '\0';
		assert_non_null(strstr(buf, "--restore-sibling needs --restore-detached"));
		unlink(path);
	}
	rmdir(dir);
	log_set_level(-1);
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
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), 0);
	/* CRIU's dump --lazy-pages (its other options checked by cr_dump()); not a pre-dump's */
	PARSE(&p, "dump", "--lazy-pages", "--address", "127.0.0.1", "--port", "1");
	assert_int_equal(p.ret, 0);
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), 0);
	PARSE(&p, "pre-dump", "--lazy-pages");
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), -EINVAL);
	/* lazy-pages from a remote page server is refused when it runs (lazy-pages.c) */
	PARSE(&p, "lazy-pages", "--page-server", "--address", "127.0.0.1", "--port", "1");
	assert_int_equal(cli_validate(p.cmd, p.seen, 0), 0);
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

/* --ghost-limit's sizes (CRIU's K, M, G; lower case and a B or iB after too). */
static void test_parse_size(void **state)
{
	static const struct {
		const char *s;
		unsigned long long v;
		int ret;
	} cases[] = {
		{ "0", 0, 0 },
		{ "4096", 4096, 0 },
		{ "1K", 1024, 0 },
		{ "1k", 1024, 0 },
		{ "2KB", 2048, 0 },
		{ "2KiB", 2048, 0 },
		{ "1M", 1 << 20, 0 },
		{ "5m", 5 << 20, 0 },
		{ "1G", 1ULL << 30, 0 },
		{ "16g", 16ULL << 30, 0 },
		{ "", 0, -EINVAL },
		{ "K", 0, -EINVAL },
		{ "1X", 0, -EINVAL },
		{ "1KK", 0, -EINVAL },
		{ "-1", 0, -EINVAL },
		{ "1 K", 0, -EINVAL },
		{ "99999999999999999999", 0, -EINVAL },
		{ "17179869184G", 0, -ERANGE },
	};
	unsigned long long v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		v = 0;
		print_message("%s\n", cases[i].s);
		assert_int_equal(cli_parse_size(cases[i].s, &v), cases[i].ret);
		if (!cases[i].ret)
			assert_true(v == cases[i].v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_options),
		cmocka_unit_test(test_long_forms_and_options_before_command),
		cmocka_unit_test(test_verbosity),
		cmocka_unit_test(test_criu_options),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_refusal_in_log_file),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_missing_caps),
		cmocka_unit_test(test_main_exit_codes),
	};

	log_set_level(-1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
