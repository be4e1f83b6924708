// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel features a test needs, as `criu-like check --json` reports them.
 * The parser only needs, for each feature, an object with "name": "X" and
 * "present": true|false (or "status": "present"|"absent"), or a member
 * "X": true|false; names compare case-insensitively. It is a scanner, not a
 * full JSON parser: the check output is produced by our own tool.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

#include "runner.h"

static int probe(struct features *f, const char *criu, const char *workdir)
{
	char out[4096];
	char *argv[] = { (char *)criu, "check", "--json", NULL };
	struct reaper r = { 0 };
	int status, ret;
	pid_t pid;

	f->probed = true;
	snprintf(out, sizeof(out), "%s/check.json", workdir);
	unlink(out);
	pid = spawn(argv, NULL, out);
	if (pid < 0)
		return f->err = pid;
	ret = wait_pid(&r, pid, now_ms() + 60000, &status);
	reaper_reset(&r);
	if (ret)
		return f->err = ret;
	f->json = slurp(out);
	if (!f->json)
		return f->err = neg_errno();
	/* check exits non-zero when dump/restore cannot work; the table is still valid. */
	if (!strchr(f->json, '{')) {
		pr_err("'%s check --json' printed no JSON (status 0x%x); see %s\n", criu, status,
		       out);
		return f->err = -EPROTO;
	}
	return 0;
}

static const char *skip_ws(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* After "key": at @p, the boolean verdict: 1, 0, or -ENOENT when not a verdict. */
static int value_verdict(const char *p)
{
	p = skip_ws(p);
	if (*p != ':')
		return -ENOENT;
	p = skip_ws(p + 1);
	if (!strncmp(p, "true", 4) || !strncasecmp(p, "\"present\"", 9) ||
	    !strncasecmp(p, "\"yes\"", 5))
		return 1;
	if (!strncmp(p, "false", 5) || !strncasecmp(p, "\"absent\"", 8) ||
	    !strncasecmp(p, "\"no\"", 4))
		return 0;
	return -ENOENT;
}

/* Inside the object around @at (bounded by braces), the "present"/"status" verdict. */
static int object_verdict(const char *json, const char *at)
{
	const char *start = at, *end = strchr(at, '}');
	static const char *const keys[] = { "\"present\"", "\"status\"", "\"available\"" };

	while (start > json && *start != '{')
		start--;
	if (!end)
		return -ENOENT;
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		const char *p = start;
		size_t kl = strlen(keys[k]);

		while ((p = strstr(p, keys[k])) && p < end) {
			int v = value_verdict(p + kl);

			if (v >= 0)
				return v;
			p += kl;
		}
	}
	return -ENOENT;
}

int feature_present(struct features *f, const char *criu, const char *workdir, const char *name)
{
	size_t nl = strlen(name);

	if (!f->probed)
		probe(f, criu, workdir);
	if (f->err)
		return f->err;
	for (const char *p = f->json; (p = strchr(p, '"')); p++) {
		const char *q = p + 1;
		int v;

		if (strncasecmp(q, name, nl) || q[nl] != '"')
			continue;
		/* "X": true */
		v = value_verdict(q + nl + 1);
		if (v >= 0)
			return v;
		/* "name": "X" inside an object */
		v = object_verdict(f->json, p);
		if (v >= 0)
			return v;
	}
	return -ENOENT;
}
