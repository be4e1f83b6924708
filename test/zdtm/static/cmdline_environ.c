// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel keeps about the program's start: /proc/self/cmdline and
 * /proc/self/environ (with an argument and a variable of known values), the
 * auxiliary vector, the exe link, and the mm fields of /proc/self/stat
 * (start_code to env_end). After SIGTERM all of them must read the same and
 * argv[]/environ must still be usable; a restore that does not set the mm
 * fields (PR_SET_MM_MAP) shows an empty or different cmdline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zdtmtst.h"

struct snap {
	char cmdline[4096], environ[16384], auxv[1024], exe[4096], mm[512];
	long lcmd, lenv, lauxv;
};

/* Fields 26-28 (start_code end_code start_stack) and 45-51 of /proc/self/stat. */
static int mm_fields(char *out, size_t size)
{
	char stat[2048], *p;
	int field = 3;
	size_t n = 0;

	if (test_read_file("/proc/self/stat", stat, sizeof(stat)) < 0 || !(p = strrchr(stat, ')')))
		return -EIO;
	for (p += 2; *p && n + 32 < size; field++) {
		size_t len = strcspn(p, " \n");

		if ((field >= 26 && field <= 28) || (field >= 45 && field <= 51))
			n += snprintf(out + n, size - n, "%.*s ", (int)len, p);
		p += len + (p[len] != '\0');
	}
	return 0;
}

static int take(struct snap *s)
{
	ssize_t n;

	s->lcmd = test_read_file("/proc/self/cmdline", s->cmdline, sizeof(s->cmdline));
	s->lenv = test_read_file("/proc/self/environ", s->environ, sizeof(s->environ));
	s->lauxv = test_read_file("/proc/self/auxv", s->auxv, sizeof(s->auxv));
	n = readlink("/proc/self/exe", s->exe, sizeof(s->exe) - 1);
	if (s->lcmd <= 0 || s->lenv <= 0 || s->lauxv <= 0 || n <= 0)
		return -EIO;
	s->exe[n] = '\0';
	return mm_fields(s->mm, sizeof(s->mm));
}

static const char *differs(const struct snap *a, const struct snap *b)
{
	if (a->lcmd != b->lcmd || memcmp(a->cmdline, b->cmdline, a->lcmd))
		return "/proc/self/cmdline";
	if (a->lenv != b->lenv || memcmp(a->environ, b->environ, a->lenv))
		return "/proc/self/environ";
	if (a->lauxv != b->lauxv || memcmp(a->auxv, b->auxv, a->lauxv))
		return "/proc/self/auxv";
	if (strcmp(a->exe, b->exe))
		return "/proc/self/exe";
	if (strcmp(a->mm, b->mm))
		return "the mm fields of /proc/self/stat";
	return NULL;
}

int main(int argc, char **argv)
{
	static struct snap before, after;
	const char *why;
	bool arg_seen = false;

	/* Re-exec once, before test_init(), to get a variable into the initial environment. */
	if (!getenv("ZDTM_ENV_CHECK")) {
		setenv("ZDTM_ENV_CHECK", "value with spaces", 1);
		execv("/proc/self/exe", argv);
		perror("re-exec");
		return 1;
	}
	test_init(argc, argv);
	for (int i = 1; i < argc; i++)
		arg_seen |= !strcmp(argv[i], "--marker=argv-check");
	if (take(&before) || !arg_seen) {
		fail("cannot read the start-up state, or the marker argument is missing");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (take(&after)) {
		fail("cannot read the state after SIGTERM");
		return 1;
	}
	why = differs(&before, &after);
	if (why) {
		fail("%s changed", why);
		return 1;
	}
	if (strcmp(getenv("ZDTM_ENV_CHECK"), "value with spaces") ||
	    strcmp(test_arg("marker", ""), "argv-check")) {
		fail("environ or argv in memory changed");
		return 1;
	}
	pass();
	return 0;
}
