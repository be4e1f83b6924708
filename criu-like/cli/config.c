// SPDX-License-Identifier: GPL-2.0
/*
 * CRIU's configuration files (Documentation/config.md): read before the
 * command line, each line parsed by cli.c's getopt table as if it were one
 * option of the command line, with "--" put in front of its first word.
 * Where each option came from is noted, so that an option refused later
 * (its feature is missing) is named with its file and line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_PREFIX "cli: "
#include "cli.h"
#include "cli-compat.h"
#include "cli-config.h"
#include "config-int.h"
#include "log.h"
#include "util.h"

struct cfg_origin {
	const char *file; /* NULL: the command line */
	unsigned int line;
	int opt; /* enum cli_opt, -1: none */
	int compat; /* enum compat_id, -1: none */
	bool neg; /* --no-X: cleared it */
};

struct cli_config {
	char **strings; /* every word and file name read: option values point into them */
	size_t n_strings;
	struct cfg_origin *origins; /* in the order the options were parsed */
	size_t n_origins;
	uint64_t seen; /* OPTB() bits the files left set */
};

static struct cli_config *cfg_get(struct cr_options *o)
{
	if (!o->config)
		o->config = calloc(1, sizeof(*o->config));
	return o->config;
}

void cli_config_free(struct cli_config *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n_strings; i++)
		free(c->strings[i]);
	free(c->strings);
	free(c->origins);
	free(c);
}

/* Keep @s until cli_config_free(); on failure @s is freed. 0 or -ENOMEM. */
static int cfg_keep(struct cli_config *c, char *s)
{
	char **n = reallocarray(c->strings, c->n_strings + 1, sizeof(*n));

	if (!n) {
		free(s);
		return -ENOMEM;
	}
	c->strings = n;
	c->strings[c->n_strings++] = s;
	return 0;
}

int cfg_note(struct cr_options *o, const char *file, unsigned int line, int opt, int compat,
	     bool neg)
{
	struct cli_config *c;
	struct cfg_origin *n;

	if (!file && !o->config)
		return 0; /* no file was read: nothing to tell apart */
	c = cfg_get(o);
	if (!c)
		return -ENOMEM;
	n = reallocarray(c->origins, c->n_origins + 1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->origins = n;
	c->origins[c->n_origins++] = (struct cfg_origin){
		.file = file, .line = line, .opt = opt, .compat = compat, .neg = neg
	};
	return 0;
}

uint64_t cfg_seen(const struct cr_options *o)
{
	return o->config ? o->config->seen : 0;
}

/* The last note of OPT_ @opt (@compat < 0) or of compat option @compat: the one that won. */
static const struct cfg_origin *winner(const struct cli_config *c, int opt, int compat)
{
	size_t i = c->n_origins;

	while (i--) {
		const struct cfg_origin *w = &c->origins[i];

		if (compat >= 0 ? w->compat == compat : w->opt == opt)
			return w;
	}
	return NULL;
}

static bool on_command_line(const struct cli_config *c, int opt)
{
	size_t i;

	for (i = 0; i < c->n_origins; i++)
		if (!c->origins[i].file && c->origins[i].opt == opt && !c->origins[i].neg)
			return true;
	return false;
}

uint64_t cfg_filter_seen(const struct cr_options *o, uint64_t seen, uint64_t takes)
{
	int i;

	if (!o->config)
		return seen;
	for (i = 0; i < OPT__MAX; i++) {
		uint64_t b = 1ULL << i;

		if ((seen & b) && !(takes & b) && !on_command_line(o->config, i)) {
			pr_debug("option --%s of a configuration file: not for this command\n",
				 cli_opt_name(i));
			seen &= ~b;
		}
	}
	return seen;
}

/* A word starting with a quote that has its closing one: its text, \" read as ". */
static char *quoted_word(const char *p, const char **end)
{
	const char *q = p + 1;
	size_t len = 0;
	char *w;

	w = calloc(1, strlen(p) + 1);
	if (!w)
		return NULL;
	while (*q && *q != '"') {
		if (q[0] == '\\' && q[1] == '"')
			q++;
		w[len++] = *q++;
	}
	if (*q != '"') {
		/* the only quotes after it were escaped: a plain word, as CRIU */
		free(w);
		*end = NULL;
		return NULL;
	}
	*end = q + 1;
	return w;
}

int cfg_split_line(const char *line, char ***ret_words, size_t *ret_n)
{
	char **words = NULL, **nw, *w;
	const char *p = line, *end;
	size_t n = 0, len;

	for (;;) {
		while (*p && *p != '\n' && isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '\n' || *p == '#') /* a comment: to the end of the line */
			break;
		w = NULL;
		end = NULL;
		if (*p == '"' && strchr(p + 1, '"')) {
			w = quoted_word(p, &end);
			if (!w && end)
				goto enomem;
		}
		if (!end) {
			free(w);
			len = strcspn(p, " \t\n");
			w = strndup(p, len);
			end = p + len;
		}
		if (!w)
			goto enomem;
		p = end;
		if (!n) {
			char *dashed;

			if (asprintf(&dashed, "--%s", w) < 0) {
				free(w);
				goto enomem;
			}
			free(w);
			w = dashed;
		}
		nw = reallocarray(words, n + 2, sizeof(*nw));
		if (!nw) {
			free(w);
			goto enomem;
		}
		words = nw;
		words[n++] = w;
		words[n] = NULL;
	}
	*ret_words = words;
	*ret_n = n;
	return 0;
enomem:
	while (n--)
		free(words[n]);
	free(words);
	return -ENOMEM;
}

/*
 * getopt reads an optional argument only when it is attached (--verbosity=4);
 * on a line of its own, "verbosity 4" means that too, as the line has no
 * other use for the word.
 */
static int join_optional(struct cli_config *c, char **words, size_t *n)
{
	static const char *const optional[] = { "--verbosity", "--manage-cgroups", "--cpu-cap",
						"--ext-unix-sk" };
	char *joined;
	size_t i;

	if (*n != 2 || words[1][0] == '-')
		return 0;
	for (i = 0; i < ARRAY_SIZE(optional); i++)
		if (!strcmp(words[0], optional[i]))
			break;
	if (i == ARRAY_SIZE(optional))
		return 0;
	if (asprintf(&joined, "%s=%s", words[0], words[1]) < 0)
		return -ENOMEM;
	/* words[0] and [1] are kept by the caller's cfg_keep() already */
	words[0] = joined;
	words[1] = NULL;
	*n = 1;
	return cfg_keep(c, joined);
}

/* One line: its words through the command line's getopt. */
static int apply_line(struct cr_options *o, struct cli_config *c, const char *file,
		      unsigned int lineno, const char *line)
{
	_cleanup_free_ char **argv = NULL;
	char **words = NULL;
	size_t n = 0, i;
	int err, first;

	err = cfg_split_line(line, &words, &n);
	if (err || !n)
		return err;
	for (i = 0; i < n && !err; i++)
		err = cfg_keep(c, words[i]);
	while (err && i < n)
		free(words[i++]);
	if (!err)
		err = join_optional(c, words, &n);
	argv = err ? NULL : calloc(n + 2, sizeof(*argv));
	if (!err && !argv)
		err = -ENOMEM;
	if (err) {
		free(words);
		return err;
	}
	argv[0] = "criu-like";
	memcpy(argv + 1, words, n * sizeof(*words));
	free(words);
	first = cli_parse_words((int)n + 1, argv, o, &c->seen, file, lineno);
	if (first < 0) {
		pr_err("%s:%u: option '%s' refused\n", file, lineno, argv[1]);
		return first;
	}
	if (first <= (int)n) {
		pr_err("%s:%u: '%s' is not an option: one option, and its value, per line\n", file,
		       lineno, argv[first]);
		return -EINVAL;
	}
	return 0;
}

/*
 * 0 or -errno; -ENOENT, -EACCES... without a message when @path cannot be
 * opened: the caller says what that means. The options are not validated here.
 */
static int apply_file(struct cr_options *o, const char *path, const char **ret_file)
{
	struct cli_config *c = cfg_get(o);
	_cleanup_free_ char *line = NULL;
	unsigned int lineno = 0;
	size_t size = 0;
	char *file;
	FILE *f;
	int err = 0;

	if (!c)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f)
		return neg_errno();
	file = strdup(path);
	err = file ? cfg_keep(c, file) : -ENOMEM;
	if (!err && ret_file)
		*ret_file = file;
	pr_debug("reading configuration file %s\n", path);
	while (!err && getline(&line, &size, f) >= 0)
		err = apply_line(o, c, file, ++lineno, line);
	if (!err && ferror(f)) {
		pr_perror("cannot read configuration file %s", path);
		err = -EIO;
	}
	fclose(f);
	return err;
}

/* Refuse the first option noted from @file (any file: NULL) whose feature is missing. */
static int refuse_missing(const struct cr_options *o, const char *file, uint64_t seen)
{
	const struct cli_config *c = o->config;
	const struct cfg_origin *w;
	const char *missing;
	int i;

	if (!c)
		return 0;
	for (i = 0; i < OPT__MAX; i++) {
		missing = cli_opt_missing(i);
		if (!missing || !(seen & (1ULL << i)))
			continue;
		w = winner(c, i, -1);
		if (!w || !w->file || w->neg || (file && w->file != file))
			continue;
		pr_err("%s:%u: option --%s: %s is not supported by this version yet\n", w->file,
		       w->line, cli_opt_name(i), missing);
		return -EOPNOTSUPP;
	}
	for (i = 0; compat_name(i); i++) {
		missing = compat_missing(o, i);
		if (!missing)
			continue;
		w = winner(c, -1, i);
		if (!w || !w->file || w->neg || (file && w->file != file))
			continue;
		pr_err("%s:%u: option --%s: %s is not supported by this version yet\n", w->file,
		       w->line, compat_name(i), missing);
		return -EOPNOTSUPP;
	}
	return 0;
}

int cli_config_validate(const struct cr_options *o, uint64_t seen)
{
	return refuse_missing(o, NULL, seen);
}

int cli_apply_config_file(struct cr_options *o, const char *path)
{
	const char *file = NULL;
	uint64_t seen;
	int err;

	err = apply_file(o, path, &file);
	if (err == -ENOENT) {
		pr_info("configuration file %s does not exist: nothing to apply\n", path);
		return 0;
	}
	if (err && !file && err != -ENOMEM) {
		pr_errno(err, "cannot read configuration file %s", path);
		return err;
	}
	if (err)
		return err;
	/* every OPT_ option whose winner is this file: those it set and did not clear */
	seen = ~0ULL;
	return refuse_missing(o, file, seen);
}

/*
 * As CRIU, a file that cannot be opened is skipped: a default one in silence
 * (~/.criu of root under setpriv), one asked for with a warning.
 */
static int load_one(struct cr_options *o, const char *path, bool explicit_, const char *what)
{
	const char *file = NULL;
	int err = apply_file(o, path, &file);

	if (err && !file && err != -ENOMEM) {
		if (explicit_)
			pr_warn("configuration file %s (%s) skipped: %s\n", path, what,
				strerror(-err));
		else
			pr_debug("configuration file %s skipped: %s\n", path, strerror(-err));
		return 0;
	}
	return err;
}

int cli_config_load_from(struct cr_options *o, int argc, char **argv, const char *global)
{
	_cleanup_free_ char *user = NULL;
	const char *cfg = NULL, *env, *home;
	bool no_default = false;
	int i, err = 0;

	/*
	 * As CRIU, before getopt: with --help no file is read (a broken one must
	 * not hide the help); --config FILE also turns the default files off.
	 */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 0;
		if (!strcmp(argv[i], "--no-default-config")) {
			no_default = true;
		} else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			cfg = argv[i + 1];
			no_default = true;
		} else if (!strncmp(argv[i], "--config=", strlen("--config="))) {
			cfg = argv[i] + strlen("--config=");
			no_default = true;
		}
	}
	if (!no_default && global)
		err = load_one(o, global, false, "global");
	home = getenv("HOME");
	if (!err && !no_default && home && *home) {
		if (asprintf(&user, "%s/%s", home, CLI_USER_CONFIG) < 0)
			return -ENOMEM;
		err = load_one(o, user, false, "user");
	}
	env = getenv(CLI_CONFIG_ENV);
	if (!err && env && *env)
		err = load_one(o, env, true, CLI_CONFIG_ENV);
	if (!err && cfg)
		err = load_one(o, cfg, true, "--config");
	return err;
}

int cli_config_load(struct cr_options *o, int argc, char **argv)
{
	return cli_config_load_from(o, argc, argv, CLI_GLOBAL_CONFIG);
}
