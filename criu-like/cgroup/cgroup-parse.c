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
