// SPDX-License-Identifier: GPL-2.0
/*
 * `check` and kerndat: release parsing, the vDSO layout and freezer mounts
 * parsed from fixture text, the dump/restore verdict from crafted result
 * sets, the text and JSON output, and one live probe of this machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kerndat.h"
#include "log.h"
#include "util.h"

/* Fixtures are found from the repository root or from the build dir's binary. */
static char *fixture(const char *name)
{
	char path[PATH_MAX + 128], exe[PATH_MAX];
	ssize_t n;
	char *s, *slash;

	snprintf(path, sizeof(path), "test/unit/fixtures/check/%s", name);
	s = read_file_at(AT_FDCWD, path, NULL);
	if (s)
		return s;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	slash = strrchr(exe, '/'); /* B/test/unit/test-check -> repository root is B/../ */
	assert_non_null(slash);
	*slash = '\0';
	snprintf(path, sizeof(path), "%s/../../../test/unit/fixtures/check/%s", exe, name);
	s = read_file_at(AT_FDCWD, path, NULL);
	if (!s)
		fail_msg("fixture %s not found", name);
	return s;
}

static void test_release(void **state __unused)
{
	struct kver v;
	struct kver v67 = { 6, 7, 0 }, v618 = { 6, 18, 44 };

	assert_int_equal(kd_parse_release("6.18.44-fc-v1147", &v), 0);
	assert_int_equal(v.major, 6);
	assert_int_equal(v.minor, 18);
	assert_int_equal(v.patch, 44);
	assert_int_equal(kver_cmp(&v, &v618), 0);
	assert_true(kver_cmp(&v, &v67) > 0);
	assert_true(kver_cmp(&v67, &v) < 0);

	assert_int_equal(kd_parse_release("5.15.0-91-generic", &v), 0);
	assert_int_equal(v.major, 5);
	assert_int_equal(v.minor, 15);
	assert_int_equal(v.patch, 0);

	assert_int_equal(kd_parse_release("6.1-rc3", &v), 0);
	assert_int_equal(v.major, 6);
	assert_int_equal(v.minor, 1);
	assert_int_equal(v.patch, 0);

	assert_int_equal(kd_parse_release("6", &v), 0);
	assert_int_equal(v.major, 6);
	assert_int_equal(v.minor, 0);

	v.major = 99;
	assert_int_equal(kd_parse_release("linux", &v), -EINVAL);
	assert_int_equal(kd_parse_release("", &v), -EINVAL);
	assert_int_equal(kd_parse_release("6.999999.1", &v), -EINVAL);
	assert_int_equal(v.major, 99); /* untouched on failure */
}

static void test_vdso_layout_6_18(void **state __unused)
{
	_cleanup_free_ char *maps = fixture("maps-6.18");
	struct vdso_layout l;
	char buf[128];

	assert_int_equal(kd_parse_vdso_layout(maps, &l), 0);
	assert_true(l.area[VDSO_AREA_VVAR].present);
	assert_true(l.area[VDSO_AREA_VVAR_VCLOCK].present);
	assert_true(l.area[VDSO_AREA_VDSO].present);
	assert_true(l.area[VDSO_AREA_VSYSCALL].present);
	assert_int_equal(l.area[VDSO_AREA_VVAR].start, 0x7fead6a8c000UL);
	assert_int_equal(l.area[VDSO_AREA_VVAR_VCLOCK].end, 0x7fead6a92000UL);
	assert_int_equal(l.area[VDSO_AREA_VDSO].start, 0x7fead6a92000UL);
	kd_format_vdso_layout(&l, buf, sizeof(buf));
	assert_string_equal(
		buf, "[vvar] 4 pages, [vvar_vclock] 2 pages, [vdso] 2 pages, [vsyscall] 1 page");
}

static void test_vdso_layout_6_1(void **state __unused)
{
	_cleanup_free_ char *maps = fixture("maps-6.1");
	struct vdso_layout l;
	char buf[128], small[20];
	int n;

	/* "/tmp/my [vdso] copy" is a file, not the vDSO. */
	assert_int_equal(kd_parse_vdso_layout(maps, &l), 0);
	assert_true(l.area[VDSO_AREA_VVAR].present);
	assert_false(l.area[VDSO_AREA_VVAR_VCLOCK].present);
	assert_int_equal(l.area[VDSO_AREA_VDSO].start, 0x7f3c1a3cc000UL);
	assert_int_equal(l.area[VDSO_AREA_VDSO].end, 0x7f3c1a3ce000UL);
	n = kd_format_vdso_layout(&l, buf, sizeof(buf));
	assert_string_equal(buf, "[vvar] 4 pages, [vdso] 2 pages, [vsyscall] 1 page");
	assert_int_equal(n, strlen(buf));
	/* Truncation is safe and reports the full length, like snprintf. */
	assert_int_equal(kd_format_vdso_layout(&l, small, sizeof(small)), n);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

static void test_vdso_layout_bad(void **state __unused)
{
	_cleanup_free_ char *maps = fixture("maps-novdso");
	struct vdso_layout l;

	assert_int_equal(kd_parse_vdso_layout(maps, &l), -ENOENT);
	assert_int_equal(kd_parse_vdso_layout("", &l), -ENOENT);
	assert_int_equal(kd_parse_vdso_layout("not a maps line\n", &l), -EINVAL);
	assert_int_equal(kd_parse_vdso_layout("7000-6000 r--p 00000000 00:00 0 [vdso]\n", &l),
			 -EINVAL);
}

static void test_freezer_mounts(void **state __unused)
{
	_cleanup_free_ char *both = fixture("mountinfo-v1-v2");
	_cleanup_free_ char *v2 = fixture("mountinfo-v2-only");
	_cleanup_free_ char *odd = fixture("mountinfo-odd");
	_cleanup_free_ char *bad = fixture("mountinfo-bad");
	struct freezer_mounts fm;

	assert_int_equal(kd_parse_freezer_mounts(both, &fm), 0);
	assert_true(fm.has_v1);
	assert_string_equal(fm.v1, "/sys/fs/cgroup/freezer");
	assert_true(fm.has_v2);
	assert_string_equal(fm.v2, "/sys/fs/cgroup/unified");

	assert_int_equal(kd_parse_freezer_mounts(v2, &fm), 0);
	assert_false(fm.has_v1);
	assert_true(fm.has_v2);
	assert_string_equal(fm.v2, "/sys/fs/cgroup");

	/* name=freezerish is not the controller; escapes are undone; optional fields skipped. */
	assert_int_equal(kd_parse_freezer_mounts(odd, &fm), 0);
	assert_true(fm.has_v1);
	assert_string_equal(fm.v1, "/mnt/my cgroups");
	assert_true(fm.has_v2);
	assert_string_equal(fm.v2, "/mnt/unified\\v2");

	fm.has_v1 = true;
	assert_int_equal(kd_parse_freezer_mounts(bad, &fm), -EINVAL);
	assert_true(fm.has_v1); /* untouched on failure */

	assert_int_equal(kd_parse_freezer_mounts("", &fm), 0);
	assert_false(fm.has_v1);
	assert_false(fm.has_v2);
}

/* Every feature probed and present, on a 6.18 kernel. */
static void all_present(struct kerndat *kd)
{
	int i;

	memset(kd, 0, sizeof(*kd));
	snprintf(kd->release, sizeof(kd->release), "6.18.44-fc-v1147");
	kd_parse_release(kd->release, &kd->kernel);
	for (i = 0; i < KD__MAX; i++) {
		kd->res[i].probed = true;
		kd->res[i].present = true;
		snprintf(kd->res[i].detail, sizeof(kd->res[i].detail), "ok");
	}
}

static void test_table(void **state __unused)
{
	static const char *const required[] = {
		"ptrace-seize",
		"ptrace-interrupt",
		"ptrace-peeksiginfo",
		"ptrace-sigmask",
		"clone3-set-tid",
		"pr-set-mm-map",
		"kcmp",
		"memfd",
		"process-vm-readv",
		"vmsplice",
		"pagemap-scan",
		"proc-maps",
	};
	unsigned int nr_required = 0, i;
	int id, j;

	for (id = 0; id < KD__MAX; id++) {
		const struct kd_feature_desc *f = kd_feature(id);

		assert_non_null(f);
		assert_int_equal(f->id, id);
		assert_non_null(f->name);
		assert_non_null(f->what);
		assert_non_null(f->probe);
		assert_true(f->min.major >= 2);
		assert_ptr_equal(kd_feature_by_name(f->name), f);
		for (j = 0; j < id; j++)
			assert_string_not_equal(kd_feature(j)->name, f->name);
		if (f->need == KD_REQUIRED)
			nr_required++;
	}
	assert_null(kd_feature(KD__MAX));
	assert_null(kd_feature_by_name("no-such-feature"));
	assert_int_equal(nr_required, ARRAY_SIZE(required));
	for (i = 0; i < ARRAY_SIZE(required); i++)
		assert_int_equal(kd_feature_by_name(required[i])->need, KD_REQUIRED);
	assert_int_not_equal(kd_feature(KD_SOFT_DIRTY)->need, KD_REQUIRED);
}

static void test_verdict(void **state __unused)
{
	enum kd_feature missing[KD__MAX];
	struct kerndat kd;
	unsigned int nr = 99;
	int id;

	all_present(&kd);
	assert_int_equal(kd_check_required(&kd, missing, &nr), 0);
	assert_int_equal(nr, 0);

	/* soft-dirty is optional: this kernel lacks it and dump/restore still work. */
	kd.res[KD_SOFT_DIRTY].present = false;
	kd.res[KD_PROCMAP_QUERY].present = false;
	kd.res[KD_PTRACE_SYSGOOD].probed = false;
	assert_int_equal(kd_check_required(&kd, missing, &nr), 0);

	/* Each required feature alone decides. */
	for (id = 0; id < KD__MAX; id++) {
		if (kd_feature(id)->need != KD_REQUIRED)
			continue;
		all_present(&kd);
		kd.res[id].present = false;
		assert_int_equal(kd_check_required(&kd, missing, &nr), -ENOTSUP);
		assert_int_equal(nr, 1);
		assert_int_equal(missing[0], id);
	}

	/* Not probed counts as absent; several are listed in table order. */
	all_present(&kd);
	kd.res[KD_PAGEMAP_SCAN].probed = false;
	kd.res[KD_CLONE3_SET_TID].present = false;
	assert_int_equal(kd_check_required(&kd, missing, &nr), -ENOTSUP);
	assert_int_equal(nr, 2);
	assert_int_equal(missing[0], KD_CLONE3_SET_TID);
	assert_int_equal(missing[1], KD_PAGEMAP_SCAN);
}

static char *print_text(const struct kerndat *kd, bool all, int *ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*ret = check_print_text(f, kd, all);
	fclose(f);
	return buf;
}

static unsigned int count(const char *s, const char *what)
{
	unsigned int n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s += strlen(what);
	}
	return n;
}

static const char *line_of(const char *text, const char *name)
{
	char key[64];

	snprintf(key, sizeof(key), "\n%s ", name);
	return strstr(text, key);
}

/* Does the output line of feature @name contain @what? */
static bool line_has(const char *text, const char *name, const char *what)
{
	const char *l = line_of(text, name), *end;
	char line[512];

	assert_non_null(l);
	end = strchr(l + 1, '\n');
	assert_non_null(end);
	snprintf(line, sizeof(line), "%.*s", (int)(end - l), l + 1);
	return strstr(line, what) != NULL;
}

static void test_text_output(void **state __unused)
{
	struct kerndat kd;
	char *out;
	const char *l, *d;
	int ret;

	all_present(&kd);
	kd.res[KD_SOFT_DIRTY].present = false;
	snprintf(kd.res[KD_SOFT_DIRTY].detail, KD_DETAIL_MAX, "bit 55 stays clear");
	out = print_text(&kd, false, &ret);
	assert_int_equal(ret, 0);
	assert_true(!strncmp(out, "Linux 6.18.44-fc-v1147\n", 23));
	l = line_of(out, "soft-dirty");
	assert_non_null(l);
	assert_non_null(strstr(l, " absent "));
	d = strstr(l, "bit 55 stays clear\n");
	assert_non_null(d);
	assert_true(d < strchr(l + 1, '\n'));
	assert_true(line_has(out, "pagemap-scan", " present required "));
	assert_null(line_of(out, "ptrace-sysgood")); /* extra: only with --all */
	assert_non_null(strstr(out, "\nDump and restore can work on this kernel.\n"));
	free(out);

	out = print_text(&kd, true, &ret);
	assert_non_null(line_of(out, "ptrace-sysgood"));
	assert_int_equal(count(out, "\n"), 1 + KD__MAX + 1);
	free(out);

	/* An old kernel: the absent feature says which release brings it. */
	kd_parse_release("6.1.0", &kd.kernel);
	snprintf(kd.release, sizeof(kd.release), "6.1.0-18-amd64");
	kd.res[KD_PAGEMAP_SCAN].present = false;
	snprintf(kd.res[KD_PAGEMAP_SCAN].detail, KD_DETAIL_MAX, "PAGEMAP_SCAN: Invalid argument");
	kd.res[KD_KCMP].present = false;
	out = print_text(&kd, false, &ret);
	assert_int_equal(ret, -ENOTSUP);
	l = line_of(out, "pagemap-scan");
	assert_non_null(strstr(l, " absent  required "));
	assert_non_null(strstr(l, "PAGEMAP_SCAN: Invalid argument (needs Linux 6.7)\n"));
	assert_true(line_has(out, "kcmp", " absent  required "));
	assert_false(line_has(out, "kcmp", "needs Linux")); /* 3.5 <= 6.1 */
	assert_non_null(strstr(
		out,
		"\nDump and restore cannot work: required features absent: kcmp, pagemap-scan\n"));
	free(out);
}

static void test_json_output(void **state __unused)
{
	struct kerndat kd;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	unsigned int shown = 0;
	int id;

	all_present(&kd);
	kd.res[KD_MEMFD].present = false;
	snprintf(kd.res[KD_MEMFD].detail, KD_DETAIL_MAX, "say \"no\" \\ then\ttab");
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(check_print_json(f, &kd, false), -ENOTSUP);
	fclose(f);

	for (id = 0; id < KD__MAX; id++)
		shown += kd_feature(id)->need != KD_EXTRA;
	assert_true(buf[0] == '[');
	assert_string_equal(buf + len - 2, "]\n");
	assert_int_equal(count(buf, "{\"name\": "), shown);
	assert_int_equal(count(buf, "}"), shown);
	assert_int_equal(count(buf, "\"present\": false"), 1);
	assert_non_null(strstr(buf,
			       "{\"name\": \"memfd\", \"present\": false, \"need\": \"required\", "
			       "\"min_kernel\": \"3.17\", \"used_for\": "));
	assert_non_null(strstr(buf, "\"detail\": \"say \\\"no\\\" \\\\ then\\u0009tab\"}"));
	assert_non_null(strstr(buf, "\"name\": \"pagemap-scan\", \"present\": true"));
	assert_null(strstr(buf, "ptrace-sysgood"));
	free(buf);
}

/* This machine (ARCHITECTURE.md section 8): Linux 6.18 without CONFIG_MEM_SOFT_DIRTY. */
static void test_live_probe(void **state __unused)
{
	enum kd_feature missing[KD__MAX];
	struct kver v67 = { 6, 7, 0 };
	struct kerndat kd;
	unsigned int nr;

	if (geteuid() != 0)
		skip();
	assert_int_equal(kerndat_probe(&kd), 0);
	if (kver_cmp(&kd.kernel, &v67) < 0)
		skip();
	for (int id = 0; id < KD__MAX; id++)
		assert_true(kd.res[id].probed);
	assert_true(kerndat_has(&kd, KD_PAGEMAP_SCAN));
	assert_true(kerndat_has(&kd, KD_UFFD_WP_ASYNC));
	assert_true(kerndat_has(&kd, KD_DIRTY_TRACKING));
	assert_true(kerndat_has(&kd, KD_CLONE3_SET_TID));
	assert_true(kerndat_has(&kd, KD_PTRACE_RSEQ));
	assert_true(kd.uffd_features & (1 << 15)); /* UFFD_FEATURE_WP_ASYNC */
	assert_false(kerndat_has(&kd, KD_SOFT_DIRTY));
	assert_non_null(strstr(kd.res[KD_SOFT_DIRTY].detail, "bit 55"));
	assert_true(kd.vdso.area[VDSO_AREA_VDSO].present);
	assert_int_equal(kd_check_required(&kd, missing, &nr), 0);
}

/* check --feature NAME with CRIU's names: one line, 0 only when usable here. */
static void check_one(const char *name, int expect, const char *says)
{
	char buf[1024] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	int ret;

	assert_non_null(f);
	ret = check_feature(f, name);
	fclose(f);
	print_message("%s -> %d: %s", name, ret, buf);
	assert_int_equal(ret, expect);
	if (says)
		assert_non_null(strstr(buf, says));
}

static void test_feature(void **state)
{
	(void)state;
	/* used by criu-like and present on every kernel this runs on (root) */
	check_one("timerfd", 0, "timerfd is supported");
	check_one("seccomp_suspend", 0, "seccomp_suspend is supported");
	check_one("seccomp_filters", 0, NULL);
	check_one("pagemap_scan", 0, NULL);
	check_one("clone3_set_tid", 0, NULL);
	check_one("lazy_pages", 0, NULL); /* userfaultfd: ARCHITECTURE.md 8 */
	check_one("uffd-noncoop", 0, NULL);
	/* supported since: pre-dump, tun devices, namespaces (ARCHITECTURE.md 8) */
	check_one("mem_dirty_track", 0, "mem_dirty_track is supported");
	check_one("tun", 0, NULL);
	check_one("userns", 0, NULL);
	check_one("ns_pid", 0, NULL);
	check_one("sockopt_buf_lock", 0, NULL);
	check_one("move_mount_set_group", 0, NULL);
	/* the kernel has it, criu-like does not use it */
	check_one("pidfd_store", -ENOTSUP, "keeps no pidfd store");
	check_one("openat2", -ENOTSUP, NULL);
	/* this kernel has no raw sock_diag (criu-like reads /proc/net/raw) */
	check_one("net_diag_raw", -ENOTSUP, "the kernel lacks it");
	/* what criu-like refuses, whatever the kernel has */
	check_one("autofs", -ENOTSUP, "refuses autofs mounts");
	/* a name CRIU does not have */
	check_one("no_such_feature", -EINVAL, NULL);
}

/* check --feature list: every CRIU name once, exit 0, lines within 80 columns. */
static void test_feature_list(void **state)
{
	char buf[4096] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	const char *line, *nl;

	(void)state;
	assert_non_null(f);
	assert_int_equal(check_feature(f, "list"), 0);
	fclose(f);
	assert_int_equal(buf[0], '\n');
	assert_non_null(strstr(buf, "  mnt_id, mem_dirty_track, "));
	assert_non_null(strstr(buf, "uffd-noncoop"));
	assert_non_null(strstr(buf, "get_rseq_conf"));
	assert_int_equal(count(buf, "timerfd"), 1);
	for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
		assert_true(nl - line <= 80);
		assert_true(nl == line || nl[-1] != ' ');
	}
}

/* CRIU's last line of check, which scripts grep. */
static void test_check_verdict(void **state)
{
	(void)state;
	assert_string_equal(check_verdict(true, true), "Looks good.");
	assert_string_equal(check_verdict(false, true), "Does not look good.");
	assert_string_equal(check_verdict(false, false), "Does not look good.");
	assert_non_null(strstr(check_verdict(true, false),
			       "Looks good but some kernel features are missing\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_release),		cmocka_unit_test(test_vdso_layout_6_18),
		cmocka_unit_test(test_vdso_layout_6_1), cmocka_unit_test(test_vdso_layout_bad),
		cmocka_unit_test(test_freezer_mounts),	cmocka_unit_test(test_table),
		cmocka_unit_test(test_verdict),		cmocka_unit_test(test_text_output),
		cmocka_unit_test(test_json_output),	cmocka_unit_test(test_live_probe),
		cmocka_unit_test(test_feature),		cmocka_unit_test(test_feature_list),
		cmocka_unit_test(test_check_verdict),
	};

	log_set_level(LOG_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
