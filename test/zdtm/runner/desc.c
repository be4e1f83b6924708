// SPDX-License-Identifier: GPL-2.0
/*
 * Per-test metadata: test/zdtm/static/NAME.desc, lines of "key: words...",
 * '#' comments. Unknown keys and flags are errors, so a typo cannot silently
 * turn a test into something else. The keys are documented in README.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static const char *const known_flags[] = { "noauto",  "suid", "expect-fail", "tamper",	 "slow",
					   "predump", "ns",   "userns",	     "snapshot", "lazy" };

void words_free(struct word_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->w[i]);
	l->n = 0;
}

static int add_words(struct word_list *l, const char *s)
{
	while (*s) {
		size_t len;

		s += strspn(s, " \t");
		len = strcspn(s, " \t");
		if (!len)
			break;
		if (l->n == MAX_WORDS)
			return -E2BIG;
		l->w[l->n] = strndup(s, len);
		if (!l->w[l->n])
			return -ENOMEM;
		l->n++;
		s += len;
	}
	return 0;
}

static bool flag_known(const char *f)
{
	for (size_t i = 0; i < ARRAY_SIZE(known_flags); i++)
		if (!strcmp(f, known_flags[i]))
			return true;
	return false;
}

static int parse_line(struct test_desc *d, char *key, const char *val)
{
	if (!strcmp(key, "features"))
		return add_words(&d->features, val);
	if (!strcmp(key, "flags"))
		return add_words(&d->flags, val);
	if (!strcmp(key, "args"))
		return add_words(&d->args, val);
	if (!strcmp(key, "dump-opts"))
		return add_words(&d->dump_opts, val);
	if (!strcmp(key, "restore-opts"))
		return add_words(&d->restore_opts, val);
	if (!strcmp(key, "opts")) {
		int ret = add_words(&d->dump_opts, val);

		return ret ? ret : add_words(&d->restore_opts, val);
	}
	if (!strcmp(key, "skip")) {
		/*
		 * A test whose feature is known broken: skipped with this reason,
		 * run only when named (so its developer can still try it).
		 */
		if (!*val || d->skip[0])
			return -EINVAL;
		snprintf(d->skip, sizeof(d->skip), "%s", val);
		return 0;
	}
	if (!strcmp(key, "skip-ns")) {
		/* What the test checks cannot be done in a container: skipped in the ns modes. */
		if (!*val || d->skip_ns[0])
			return -EINVAL;
		snprintf(d->skip_ns, sizeof(d->skip_ns), "%s", val);
		return 0;
	}
	if (!strcmp(key, "skip-userns")) {
		/* Refused in a container owned by a user namespace: skipped in the userns modes. */
		if (!*val || d->skip_userns[0])
			return -EINVAL;
		snprintf(d->skip_userns, sizeof(d->skip_userns), "%s", val);
		return 0;
	}
	if (!strcmp(key, "skip-snapshot")) {
		/* What the test keeps cannot be restored after dump -R: skipped in the mode snapshot. */
		if (!*val || d->skip_snapshot[0])
			return -EINVAL;
		snprintf(d->skip_snapshot, sizeof(d->skip_snapshot), "%s", val);
		return 0;
	}
	if (!strcmp(key, "skip-lazy")) {
		/* What the test checks does not hold after a lazy restore. */
		if (!*val || d->skip_lazy[0])
			return -EINVAL;
		snprintf(d->skip_lazy, sizeof(d->skip_lazy), "%s", val);
		return 0;
	}
	if (!strcmp(key, "skip-host")) {
		/* What the test checks needs the container: skipped outside the ns modes. */
		if (!*val || d->skip_host[0])
			return -EINVAL;
		snprintf(d->skip_host, sizeof(d->skip_host), "%s", val);
		return 0;
	}
	if (!strcmp(key, "ns-root")) {
		/*
		 * "overlay": in the ns modes the container's root is an overlayfs
		 * over the host's / (run.c: its upper and work directories).
		 */
		if (strcmp(val, "overlay"))
			return -EINVAL;
		d->ns_root_overlay = true;
		return 0;
	}
	if (!strcmp(key, "timeout")) {
		char *end;
		long t = strtol(val, &end, 10);

		if (end == val || *end || t <= 0 || t > 86400)
			return -EINVAL;
		d->timeout = t;
		return 0;
	}
	return -ENOKEY;
}

static char *trim(char *s)
{
	char *e;

	s += strspn(s, " \t");
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* A missing .desc file is an empty one: a plain test with defaults. */
int desc_load(struct test_desc *d, const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[1024];
	int lineno = 0;

	if (!f)
		return errno == ENOENT ? 0 : neg_errno();
	while (fgets(line, sizeof(line), f)) {
		char *key = trim(line), *colon;
		int ret;

		lineno++;
		if (!*key || *key == '#')
			continue;
		colon = strchr(key, ':');
		if (!colon) {
			pr_err("%s:%d: expected \"key: value\"\n", path, lineno);
			return -EINVAL;
		}
		*colon = '\0';
		ret = parse_line(d, trim(key), trim(colon + 1));
		if (ret == -ENOKEY) {
			pr_err("%s:%d: unknown key '%s' (see test/zdtm/README.md)\n", path, lineno,
			       key);
			return ret;
		}
		if (ret) {
			errno = -ret;
			pr_err("%s:%d: bad line for key '%s': %m\n", path, lineno, key);
			return ret;
		}
	}
	for (int i = 0; i < d->flags.n; i++) {
		if (!flag_known(d->flags.w[i])) {
			pr_err("%s: unknown flag '%s'\n", path, d->flags.w[i]);
			return -EINVAL;
		}
	}
	return 0;
}

void desc_free(struct test_desc *d)
{
	words_free(&d->features);
	words_free(&d->flags);
	words_free(&d->args);
	words_free(&d->dump_opts);
	words_free(&d->restore_opts);
}

bool desc_has_flag(const struct test_desc *d, const char *flag)
{
	for (int i = 0; i < d->flags.n; i++)
		if (!strcmp(d->flags.w[i], flag))
			return true;
	return false;
}
