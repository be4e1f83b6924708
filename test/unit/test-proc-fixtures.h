/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_TEST_PROC_FIXTURES_H
#define CRIU_LIKE_TEST_PROC_FIXTURES_H

/*
 * Where the /proc fixtures are: $PROC_FIXTURES, else argv[1], else test/unit/fixtures/proc
 * from the current directory (tests run from the repo root), else the same path next to the
 * build directory the binary sits in (/proc/self/exe = B/test/unit/test-x -> B/../test/...).
 * Include after cmocka.h.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

#define PROC_FIXTURES_REL "test/unit/fixtures/proc"

static const char *fixture_dir = PROC_FIXTURES_REL;

static inline void fixtures_init(int argc, char **argv)
{
	static char buf[PATH_MAX];
	ssize_t n;
	int i;

	if (getenv("PROC_FIXTURES")) {
		fixture_dir = getenv("PROC_FIXTURES");
		return;
	}
	if (argc > 1) {
		fixture_dir = argv[1];
		return;
	}
	if (!access(fixture_dir, R_OK))
		return;
	/* /proc/self/exe is absolute whatever the current directory and argv[0] are */
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (i = 0; i < 4; i++) {
		char *slash = strrchr(buf, '/');

		if (!slash)
			return;
		*slash = '\0';
	}
	if (strlen(buf) + sizeof("/" PROC_FIXTURES_REL) <= sizeof(buf)) {
		strcat(buf, "/" PROC_FIXTURES_REL);
		fixture_dir = buf;
	}
}

/* The fixture @name, NUL-terminated and malloc'ed; fails the test when it cannot be read. */
static inline char *load(const char *name)
{
	char path[PATH_MAX];
	char *text;

	snprintf(path, sizeof(path), "%s/%s", fixture_dir, name);
	text = read_file_at(AT_FDCWD, path, NULL);
	if (!text)
		fail_msg("cannot read fixture %s: %m", path);
	return text;
}

#endif
