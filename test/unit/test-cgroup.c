// SPDX-License-Identifier: GPL-2.0
/*
 * The pure half of criu-like/cgroup/ (cgroup-parse.c): lines of
 * /proc/PID/cgroup, --manage-cgroups modes, --cgroup-root arguments,
 * hierarchy names, paths relative to a root and common prefixes, the
 * values of properties as they are written back, and --cgroup-props.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cgroup.h"

static void test_parse_line(void **state)
{
	char l1[] = "4:memory:/process_api/abc\n", l2[] = "0::/\n", l3[] = "9:name=systemd:/a b";
	char l4[] = "x:memory:/a", l5[] = "4:memory", l6[] = "4:memory:rel", l7[] = ":cpu:/";
	char l8[] = "2:cpu,cpuacct:/user.slice/x:y";
	char *c, *p;

	(void)state;
	assert_int_equal(cg_parse_line(l1, &c, &p), 0);
	assert_string_equal(c, "memory");
	assert_string_equal(p, "/process_api/abc");
	assert_int_equal(cg_parse_line(l2, &c, &p), 0);
	assert_string_equal(c, "");
	assert_string_equal(p, "/");
	assert_int_equal(cg_parse_line(l3, &c, &p), 0);
	assert_string_equal(c, "name=systemd");
	assert_string_equal(p, "/a b");
	/* a colon inside the path stays there */
	assert_int_equal(cg_parse_line(l8, &c, &p), 0);
	assert_string_equal(c, "cpu,cpuacct");
	assert_string_equal(p, "/user.slice/x:y");
	assert_int_equal(cg_parse_line(l4, &c, &p), -EINVAL);
	assert_int_equal(cg_parse_line(l5, &c, &p), -EINVAL);
	assert_int_equal(cg_parse_line(l6, &c, &p), -EINVAL);
	assert_int_equal(cg_parse_line(l7, &c, &p), -EINVAL);
}

static void test_modes(void **state)
{
	static const char *const names[] = { "ignore", "none", "props", "soft", "full", "strict" };
	enum cg_mode m;
	size_t i;

	(void)state;
	for (i = 0; i < 6; i++) {
		assert_int_equal(cg_mode_parse(names[i], &m), 0);
		assert_string_equal(cg_mode_name(m), names[i]);
	}
	assert_int_equal(cg_mode_parse(NULL, &m), 0);
	assert_int_equal(m, CG_MODE_SOFT);
	assert_int_equal(cg_mode_parse("default", &m), -EINVAL);
	assert_int_equal(cg_mode_parse("", &m), -EINVAL);
}

static void test_root_parse(void **state)
{
	const char *path;
	char *ctrl;

	(void)state;
	assert_int_equal(cg_root_parse("/a/b", &ctrl, &path), 0);
	assert_null(ctrl);
	assert_string_equal(path, "/a/b");
	assert_int_equal(cg_root_parse("memory:/m", &ctrl, &path), 0);
	assert_string_equal(ctrl, "memory");
	assert_string_equal(path, "/m");
	free(ctrl);
	assert_int_equal(cg_root_parse("name=systemd:/s:x", &ctrl, &path), 0);
	assert_string_equal(ctrl, "name=systemd");
	assert_string_equal(path, "/s:x");
	free(ctrl);
	/* a path with a colon and no controller */
	assert_int_equal(cg_root_parse("/a:b", &ctrl, &path), 0);
	assert_null(ctrl);
	assert_string_equal(path, "/a:b");
	assert_int_equal(cg_root_parse("x", &ctrl, &path), -EINVAL);
	assert_int_equal(cg_root_parse(":/x", &ctrl, &path), -EINVAL);
	assert_int_equal(cg_root_parse("cpu:x", &ctrl, &path), -EINVAL);
	assert_int_equal(cg_root_parse("", &ctrl, &path), -EINVAL);
}

static void test_ctrls_match(void **state)
{
	(void)state;
	assert_true(cg_ctrls_match("cpu,cpuacct", "cpu"));
	assert_true(cg_ctrls_match("cpu,cpuacct", "cpuacct"));
	assert_true(cg_ctrls_match("cpu,cpuacct", "cpu,cpuacct"));
	assert_false(cg_ctrls_match("cpuacct", "cpu"));
	assert_false(cg_ctrls_match("cpuset", "cpu"));
	assert_true(cg_ctrls_match("name=systemd", "systemd"));
	assert_true(cg_ctrls_match("name=systemd", "name=systemd"));
	assert_false(cg_ctrls_match("memory", "mem"));
	assert_true(cg_ctrls_match("", "unified"));
	assert_true(cg_ctrls_match("", ""));
	assert_false(cg_ctrls_match("", "memory"));
	assert_false(cg_ctrls_match("memory", ""));
}

static void test_paths(void **state)
{
	(void)state;
	assert_int_equal(cg_common_prefix("/a/b/c", "/a/b/d"), 4);
	assert_int_equal(cg_common_prefix("/a/bc", "/a/bd"), 2);
	assert_int_equal(cg_common_prefix("/a/b", "/a/b/c"), 4);
	assert_int_equal(cg_common_prefix("/a/b", "/a/b"), 4);
	assert_int_equal(cg_common_prefix("/a", "/b"), 1);
	assert_int_equal(cg_common_prefix("/", "/x"), 1);
	assert_string_equal(cg_rel("/a/b", "/a/b/c/d"), "c/d");
	assert_string_equal(cg_rel("/a/b", "/a/b"), "");
	assert_null(cg_rel("/a/b", "/a/bc"));
	assert_null(cg_rel("/a/b", "/a"));
	assert_string_equal(cg_rel("/", "/x/y"), "x/y");
	assert_string_equal(cg_rel("/", "/"), "");
}

static void check_value(const char *name, const char *raw, const char *want)
{
	char *v = cg_prop_value(name, raw);

	if (!want) {
		assert_null(v);
		return;
	}
	assert_non_null(v);
	assert_string_equal(v, want);
	free(v);
}

static void test_prop_values(void **state)
{
	(void)state;
	check_value("memory.limit_in_bytes", "52428800\n", "52428800");
	check_value("pids.max", "max\n", "max");
	check_value("cpu.max", "max 100000\n", "max 100000");
	check_value("memory.oom_control", "oom_kill_disable 1\nunder_oom 0\noom_kill 0\n", "1");
	check_value("memory.oom_control", "under_oom 0\n", NULL);
	check_value("cgroup.subtree_control", "memory pids\n", "+memory +pids");
	check_value("cgroup.subtree_control", "\n", "");
	check_value("freezer.state", "FREEZING\n", "FROZEN");
	check_value("freezer.state", "THAWED\n", "THAWED");
	check_value("devices.list", "c 1:3 rwm\nb 8:0 r\n", "c 1:3 rwm\nb 8:0 r");
}

/* --cgroup-props: CRIU's example, one line, quotes optional, comments, two texts merged */
static void test_spec(void **state)
{
	struct cg_spec s = { 0 };
	const char *crius = "\"cpu\":\n"
			    " - \"strategy\": \"replace\"\n"
			    " - \"properties\": [\"cpu.shares\", \"cpu.cfs_period_us\"]\n"
			    "\"memory\":\n"
			    " - \"strategy\": \"merge\"\n"
			    " - \"properties\": [\"memory.limit_in_bytes\",\n"
			    "     \"memory.memsw.limit_in_bytes\"]\n";

	(void)state;
	assert_int_equal(cg_spec_parse(&s, crius, "t"), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.ctrls[0].name, "cpu");
	assert_true(s.ctrls[0].replace);
	assert_int_equal(s.ctrls[0].n_props, 2);
	assert_string_equal(s.ctrls[0].props[1], "cpu.cfs_period_us");
	assert_string_equal(s.ctrls[1].name, "memory");
	assert_false(s.ctrls[1].replace);
	assert_string_equal(s.ctrls[1].props[1], "memory.memsw.limit_in_bytes");
	/* more for memory, a repeat not added twice; bare words, a comment, an empty list */
	assert_int_equal(
		cg_spec_parse(&s,
			      "# more\nmemory: - properties: [memory.swappiness, "
			      "'memory.limit_in_bytes'] - strategy: replace\nio: - properties: []",
			      "t2"),
		0);
	assert_int_equal(s.n, 3);
	assert_true(s.ctrls[1].replace);
	assert_int_equal(s.ctrls[1].n_props, 3);
	assert_string_equal(s.ctrls[1].props[2], "memory.swappiness");
	assert_int_equal(s.ctrls[2].n_props, 0);
	cg_spec_fini(&s);
	assert_int_equal(s.n, 0);
	assert_int_equal(cg_spec_parse(&s, "", "empty"), 0);
	assert_int_equal(s.n, 0);
}

static void bad_spec(const char *text)
{
	struct cg_spec s = { 0 };

	assert_int_equal(cg_spec_parse(&s, text, "bad"), -EINVAL);
	cg_spec_fini(&s);
}

static void test_spec_bad(void **state)
{
	(void)state;
	bad_spec("\"cpu\""); /* no ':' */
	bad_spec("cpu: - strategy: both"); /* not merge or replace */
	bad_spec("cpu: - colour: [a]"); /* an unknown key */
	bad_spec("cpu: - properties: [a, b"); /* the list not closed */
	bad_spec("cpu: - properties: [a b]"); /* no comma */
	bad_spec("cpu: - properties: \"cpu.shares\""); /* not a list */
	bad_spec("cpu: - properties: [\"cpu.shares]"); /* a string not closed */
	bad_spec("cpu: - properties: [cgroup.procs]"); /* moves tasks */
	bad_spec("cpu: - properties: [tasks]");
	bad_spec("cpu: - properties: [\"../../x\"]"); /* a path */
	bad_spec("cpu: - properties: [cgroup.kill]");
	bad_spec("{cpu: x}");
	assert_true(cg_spec_prop_ok("io.max"));
	assert_true(cg_spec_prop_ok("notify_on_release"));
	assert_false(cg_spec_prop_ok(""));
	assert_false(cg_spec_prop_ok(".hidden"));
	assert_false(cg_spec_prop_ok("cgroup.threads"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line), cmocka_unit_test(test_modes),
		cmocka_unit_test(test_root_parse), cmocka_unit_test(test_ctrls_match),
		cmocka_unit_test(test_paths),	   cmocka_unit_test(test_prop_values),
		cmocka_unit_test(test_spec),	   cmocka_unit_test(test_spec_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
