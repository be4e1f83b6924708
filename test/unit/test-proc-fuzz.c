// SPDX-License-Identifier: GPL-2.0
/*
 * Robustness of the /proc parsers: every parser on every fixture, on every truncation of the
 * fixtures of its own kind and on seeded random mutations of them. Each input sits in a buffer
 * of exactly its size, so running this under valgrind catches any read past the text. A parser
 * must answer 0 or -EINVAL, never anything else, and never crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc-parse.h"
#include "util.h"

#include "test-proc-fixtures.h"

enum parser {
	P_STAT,
	P_STATUS,
	P_MAPS,
	P_SMAPS,
	P_FDINFO,
	P_MOUNTINFO,
	P_PIDS,
	P_NR,
};

static const char *const prefixes[P_NR] = { "stat-",   "status-",    "maps-",	 "smaps-",
					    "fdinfo-", "mountinfo-", "children-" };

/* Run parser @p on @len bytes of @src copied into an exact-size buffer. */
static void run(enum parser p, const char *src, size_t len)
{
	char *buf = malloc(len + 1);
	struct proc_stat st;
	struct proc_status ss;
	struct vma_list vl;
	struct fdinfo fi;
	struct mount_list ml;
	pid_t *pids;
	unsigned int nr;
	int err = 0;

	assert_non_null(buf);
	memcpy(buf, src, len);
	buf[len] = '\0';
	switch (p) {
	case P_STAT:
		err = parse_stat(buf, &st);
		break;
	case P_STATUS:
		err = parse_status(buf, &ss);
		if (!err)
			proc_status_fini(&ss);
		break;
	case P_MAPS:
	case P_SMAPS:
		err = parse_maps(buf, p == P_SMAPS, &vl);
		if (!err)
			vma_list_fini(&vl);
		break;
	case P_FDINFO:
		err = parse_fdinfo(buf, &fi);
		if (!err)
			fdinfo_fini(&fi);
		break;
	case P_MOUNTINFO:
		err = parse_mountinfo(buf, &ml);
		if (!err)
			mount_list_fini(&ml);
		break;
	case P_PIDS:
		err = parse_pid_list(buf, &pids, &nr);
		if (!err)
			free(pids);
		break;
	case P_NR:
		break;
	}
	if (err != 0 && err != -EINVAL)
		fail_msg("parser %d returned %d on %.*s", p, err, (int)min(len, 200), src);
	free(buf);
}

/* Truncations: every length for small files, around each line end for large ones. */
static void truncations(enum parser p, const char *text, size_t len)
{
	size_t i;
	int d;

	if (len <= 4096) {
		for (i = 0; i <= len; i++)
			run(p, text, i);
		return;
	}
	for (i = 0; i < len; i++) {
		if (text[i] != '\n')
			continue;
		for (d = -2; d <= 2; d++) {
			if ((ssize_t)i + d >= 0 && i + d <= len)
				run(p, text, i + d);
		}
	}
}

static void mutations(enum parser p, const char *text, size_t len, unsigned int seed)
{
	static const char alphabet[] = " \n\t()[]-:\\0123456789abcdefxX";
	char *m = malloc(len + 1);
	unsigned int round, k;

	assert_non_null(m);
	srand(seed);
	for (round = 0; round < 300 && len; round++) {
		memcpy(m, text, len + 1);
		for (k = 0; k < 1 + (unsigned int)rand() % 3; k++) {
			size_t at = (size_t)rand() % len;

			m[at] = alphabet[rand() % (sizeof(alphabet) - 1)];
		}
		run(p, m, len);
	}
	free(m);
}

static void test_fuzz_fixtures(void **state)
{
	_cleanup_closedir_ DIR *d = opendir(fixture_dir);
	struct dirent *de;
	unsigned int files = 0;

	(void)state;
	if (!d)
		fail_msg("cannot open %s: %m", fixture_dir);
	while ((de = readdir(d))) {
		_cleanup_free_ char *text = NULL;
		char path[PATH_MAX];
		size_t len;
		int p;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", fixture_dir, de->d_name);
		text = read_file_at(AT_FDCWD, path, &len);
		assert_non_null(text);
		files++;
		for (p = 0; p < P_NR; p++) {
			run(p, text, len);
			if (strncmp(de->d_name, prefixes[p], strlen(prefixes[p])))
				continue;
			truncations(p, text, len);
			mutations(p, text, len, files);
		}
	}
	assert_true(files >= 30);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fuzz_fixtures),
	};

	fixtures_init(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
