// SPDX-License-Identifier: GPL-2.0
/* Files of the runner: removing a tree, making a path, a log's tail, a pidfile. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((flag == FTW_DP ? rmdir(path) : unlink(path)) && errno != ENOENT)
		return neg_errno();
	return 0;
}

int rm_rf(const char *path)
{
	int ret = nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);

	if (ret && errno == ENOENT)
		return 0;
	return ret ? neg_errno() : 0;
}

int mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return neg_errno();
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return neg_errno();
	return 0;
}

void print_tail(const char *path, int lines)
{
	_cleanup_free_ char *text = slurp(path);
	const char *p;
	int n = 0;

	if (!text || !*text)
		return;
	p = text + strlen(text);
	if (p > text && p[-1] == '\n')
		p--;
	while (p > text && n < lines)
		if (*--p == '\n')
			n++;
	if (*p == '\n')
		p++;
	printf("    ---- tail of %s ----\n", path);
	for (const char *l = p; *l;) {
		size_t ll = strcspn(l, "\n");

		printf("    | %.*s\n", (int)ll, l);
		l += ll;
		if (*l)
			l++;
	}
}

int read_pid(const char *path, pid_t *ret)
{
	_cleanup_free_ char *s = slurp(path);
	char *end;
	long v;

	if (!s)
		return neg_errno();
	v = strtol(s, &end, 10);
	if (end == s || (*end && *end != '\n') || v <= 0 || v > INT_MAX)
		return -EINVAL;
	*ret = v;
	return 0;
}
