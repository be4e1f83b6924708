// SPDX-License-Identifier: GPL-2.0
/*
 * The pure half of the cgroup code: the lines of /proc/PID/cgroup, CRIU's
 * --manage-cgroups and --cgroup-root arguments, paths relative to a root,
 * and the values of properties as they are written back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "log.h"
#include "util.h"

static const char *const mode_names[] = {
	[CG_MODE_IGNORE] = "ignore", [CG_MODE_NONE] = "none", [CG_MODE_PROPS] = "props",
	[CG_MODE_SOFT] = "soft",     [CG_MODE_FULL] = "full", [CG_MODE_STRICT] = "strict",
};

int cg_mode_parse(const char *name, enum cg_mode *ret)
{
	size_t i;

	if (!name) {
		*ret = CG_MODE_SOFT;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(mode_names); i++)
		if (!strcmp(name, mode_names[i])) {
			*ret = (enum cg_mode)i;
			return 0;
		}
	return -EINVAL;
}

const char *cg_mode_name(enum cg_mode m)
{
	return (size_t)m < ARRAY_SIZE(mode_names) ? mode_names[m] : "?";
}

int cg_parse_line(char *line, char **ret_ctrls, char **ret_path)
{
	char *c1 = strchr(line, ':'), *c2, *nl;

	if (!c1 || c1 == line)
		return -EINVAL;
	c2 = strchr(c1 + 1, ':');
	if (!c2 || c2[1] != '/')
		return -EINVAL;
	for (char *p = line; p < c1; p++)
		if (*p < '0' || *p > '9')
			return -EINVAL;
	*c2 = '\0';
	nl = strchr(c2 + 1, '\n');
	if (nl)
		*nl = '\0';
	*ret_ctrls = c1 + 1;
	*ret_path = c2 + 1;
	return 0;
}

int cg_root_parse(const char *arg, char **ret_ctrl, const char **ret_path)
{
	const char *colon = strchr(arg, ':');

	*ret_ctrl = NULL;
	if (colon && arg[0] != '/') {
		if (colon == arg)
			return -EINVAL;
		*ret_path = colon + 1;
		if (**ret_path != '/')
			return -EINVAL;
		*ret_ctrl = strndup(arg, (size_t)(colon - arg));
		return *ret_ctrl ? 0 : -ENOMEM;
	}
	if (arg[0] != '/')
		return -EINVAL;
	*ret_path = arg;
	return 0;
}

bool cg_ctrls_match(const char *ctrls, const char *name)
{
	size_t n = strlen(name);
	const char *p = ctrls;

	if (!*ctrls || !*name)
		return !*ctrls && (!*name || !strcmp(name, "unified"));
	if (!strcmp(ctrls, name))
		return true;
	while (p) {
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
		/* "systemd" names "name=systemd", as CRIU's --cgroup-root does */
		if (!strncmp(p, "name=", 5) && !strncmp(p + 5, name, n) &&
		    (p[5 + n] == ',' || !p[5 + n]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

size_t cg_common_prefix(const char *a, const char *b)
{
	size_t i = 0, last = 0;

	for (;; i++) {
		bool ea = !a[i] || a[i] == '/', eb = !b[i] || b[i] == '/';

		if (ea && eb)
			last = i;
		if (!a[i] || !b[i] || a[i] != b[i])
			break;
	}
	/* "/" itself: the root of the hierarchy */
	return last ? last : 1;
}

const char *cg_rel(const char *root, const char *path)
{
	size_t n = strlen(root);

	if (!strcmp(root, "/"))
		return path + 1;
	if (strncmp(root, path, n) || (path[n] && path[n] != '/'))
		return NULL;
	return path[n] ? path + n + 1 : path + n;
}

/* "memory pids" -> "+memory +pids" */
static char *subtree_value(const char *v)
{
	size_t n = strlen(v);
	char *out = malloc(2 * n + 2), *o = out;
	bool start = true;

	if (!out)
		return NULL;
	for (; *v; v++) {
		if (*v == ' ') {
			start = true;
			*o++ = ' ';
			continue;
		}
		if (start)
			*o++ = '+';
		start = false;
		*o++ = *v;
	}
	*o = '\0';
	return out;
}

char *cg_prop_value(const char *name, const char *raw)
{
	_cleanup_free_ char *v = strdup(raw);
	size_t n;

	if (!v)
		return NULL;
	n = strlen(v);
	while (n && (v[n - 1] == '\n' || v[n - 1] == ' '))
		v[--n] = '\0';
	if (!strcmp(name, "memory.oom_control")) {
		const char *p = strstr(v, "oom_kill_disable ");

		if (!p || (p[17] != '0' && p[17] != '1')) {
			errno = EINVAL;
			return NULL;
		}
		return strndup(p + 17, 1);
	}
	if (!strcmp(name, "cgroup.subtree_control"))
		return subtree_value(v);
	if (!strcmp(name, "freezer.state") && !strcmp(v, "FREEZING"))
		return strdup("FROZEN");
	return TAKE_PTR(v);
}

/* ---- --cgroup-props ------------------------------------------------------------------------ */

enum {
	T_END,
	T_STR,
	T_ERR
};

struct spec_lex {
	const char *p, *what;
	unsigned int line;
	int kind; /* T_END, T_STR, T_ERR or the punctuation character itself */
	char str[256];
};

static bool bare_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '=' || c == '-';
}

/* The next token: a quoted or bare string, or one of : - [ ] , */
static int lex_next(struct spec_lex *l)
{
	size_t n = 0;

	for (;;) {
		while (*l->p == ' ' || *l->p == '\t' || *l->p == '\r' || *l->p == '\n')
			if (*l->p++ == '\n')
				l->line++;
		if (*l->p != '#')
			break;
		while (*l->p && *l->p != '\n')
			l->p++;
	}
	if (!*l->p)
		return l->kind = T_END;
	if (strchr(":-[],", *l->p) && !(*l->p == '-' && bare_char(l->p[1])))
		return l->kind = *l->p++;
	if (*l->p == '"' || *l->p == '\'') {
		char q = *l->p++;

		while (*l->p && *l->p != q && *l->p != '\n' && n + 1 < sizeof(l->str))
			l->str[n++] = *l->p++;
		if (*l->p != q) {
			pr_err("%s:%u: a string not closed, or longer than %zu characters\n",
			       l->what, l->line, sizeof(l->str) - 1);
			return l->kind = T_ERR;
		}
		l->p++;
	} else {
		while (bare_char(*l->p) && n + 1 < sizeof(l->str))
			l->str[n++] = *l->p++;
		if (!n || bare_char(*l->p)) {
			pr_err("%s:%u: unexpected '%c'\n", l->what, l->line, *l->p);
			return l->kind = T_ERR;
		}
	}
	l->str[n] = '\0';
	if (!n) {
		pr_err("%s:%u: an empty name\n", l->what, l->line);
		return l->kind = T_ERR;
	}
	return l->kind = T_STR;
}

static int lex_expect(struct spec_lex *l, int kind, const char *after)
{
	char punct[] = { '\'', (char)kind, '\'', '\0' };

	if (lex_next(l) == kind)
		return 0;
	if (l->kind != T_ERR)
		pr_err("%s:%u: expected %s after %s\n", l->what, l->line,
		       kind == T_STR ? "a name" : punct, after);
	return -EINVAL;
}

static struct cg_spec_ctrl *spec_ctrl(struct cg_spec *s, const char *name)
{
	struct cg_spec_ctrl *n;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->ctrls[i].name, name))
			return &s->ctrls[i];
	n = realloc(s->ctrls, (s->n + 1) * sizeof(*n));
	if (!n)
		return NULL;
	s->ctrls = n;
	n = &s->ctrls[s->n];
	memset(n, 0, sizeof(*n));
	n->name = strdup(name);
	if (!n->name)
		return NULL;
	s->n++;
	return n;
}

static int spec_add_prop(struct cg_spec_ctrl *c, const struct spec_lex *l)
{
	char **n;
	size_t i;

	if (!cg_spec_prop_ok(l->str)) {
		pr_err("%s:%u: '%s' cannot be a property: criu-like places tasks itself, and a "
		       "property is a file of the cgroup's own directory\n",
		       l->what, l->line, l->str);
		return -EINVAL;
	}
	for (i = 0; i < c->n_props; i++)
		if (!strcmp(c->props[i], l->str))
			return 0;
	n = realloc(c->props, (c->n_props + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->props = n;
	c->props[c->n_props] = strdup(l->str);
	if (!c->props[c->n_props])
		return -ENOMEM;
	c->n_props++;
	return 0;
}

/* [ "a", "b" ] after "properties": */
static int spec_props(struct spec_lex *l, struct cg_spec_ctrl *c)
{
	int err = lex_expect(l, '[', "\"properties\":");

	if (err)
		return err;
	if (lex_next(l) == ']')
		return 0;
	for (;;) {
		if (l->kind != T_STR) {
			if (l->kind != T_ERR)
				pr_err("%s:%u: expected a property name in the list\n", l->what,
				       l->line);
			return -EINVAL;
		}
		err = spec_add_prop(c, l);
		if (err)
			return err;
		if (lex_next(l) == ']')
			return 0;
		if (l->kind != ',') {
			if (l->kind != T_ERR)
				pr_err("%s:%u: expected ',' or ']' in the list of properties\n",
				       l->what, l->line);
			return -EINVAL;
		}
		lex_next(l);
	}
}

int cg_spec_parse(struct cg_spec *s, const char *text, const char *what)
{
	struct spec_lex l = { .p = text, .what = what, .line = 1 };
	int err;

	lex_next(&l);
	while (l.kind != T_END) {
		struct cg_spec_ctrl *c;

		if (l.kind != T_STR) {
			if (l.kind != T_ERR)
				pr_err("%s:%u: expected a controller name\n", what, l.line);
			return -EINVAL;
		}
		c = spec_ctrl(s, l.str);
		if (!c)
			return -ENOMEM;
		err = lex_expect(&l, ':', "the controller's name");
		if (err)
			return err;
		/* - "strategy": "merge" | - "properties": [...] */
		while (lex_next(&l) == '-') {
			if (lex_expect(&l, T_STR, "'-'"))
				return -EINVAL;
			if (!strcmp(l.str, "strategy")) {
				if (lex_expect(&l, ':', "\"strategy\"") ||
				    lex_expect(&l, T_STR, "\"strategy\":"))
					return -EINVAL;
				if (!strcmp(l.str, "replace"))
					c->replace = true;
				else if (strcmp(l.str, "merge")) {
					pr_err("%s:%u: strategy '%s': not merge or replace\n", what,
					       l.line, l.str);
					return -EINVAL;
				}
			} else if (!strcmp(l.str, "properties")) {
				err = lex_expect(&l, ':', "\"properties\"") ?: spec_props(&l, c);
				if (err)
					return err;
			} else {
				pr_err("%s:%u: '%s': not strategy or properties\n", what, l.line,
				       l.str);
				return -EINVAL;
			}
		}
	}
	return 0;
}

void cg_spec_fini(struct cg_spec *s)
{
	size_t i, j;

	for (i = 0; i < s->n; i++) {
		for (j = 0; j < s->ctrls[i].n_props; j++)
			free(s->ctrls[i].props[j]);
		free(s->ctrls[i].props);
		free(s->ctrls[i].name);
	}
	free(s->ctrls);
	s->ctrls = NULL;
	s->n = 0;
}

bool cg_spec_prop_ok(const char *name)
{
	static const char *const managed[] = {
		"cgroup.procs",	 "cgroup.threads", "tasks",	    "cgroup.kill",
		"cgroup.freeze", "freezer.state",  "release_agent",
	};
	size_t i;

	if (!*name || *name == '.' || strchr(name, '/'))
		return false;
	for (i = 0; i < ARRAY_SIZE(managed); i++)
		if (!strcmp(name, managed[i]))
			return false;
	return true;
}
