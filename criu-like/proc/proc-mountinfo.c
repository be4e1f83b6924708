// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/mountinfo:
 *   "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue"
 * Paths, the source and the fstype escape ' ', '\t', '\n' and '\\' as 3-digit octal (\040 \011
 * \012 \134), so single spaces separate the fields. Zero or more optional fields come before the
 * lone "-"; proc(5) says to ignore the ones we do not know. The source may be empty (two spaces).
 */
#define LOG_PREFIX "proc: "

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proc-parse.h"
#include "proc-parse-int.h"
#include "util.h"

/* Take the field up to the next ' ' or end of line, unescaping \ooo. */
static int mi_field(const char **p, char **ret)
{
	const char *s = *p, *e = s;
	char *d, *o;

	while (!pp_eol(e) && *e != ' ')
		e++;
	d = o = malloc(e - s + 1);
	if (!d)
		return -ENOMEM;
	while (s < e) {
		if (s[0] == '\\' && e - s >= 4 && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o = (s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0');
			if (*o++ == '\0') {
				free(d);
				return -EINVAL; /* would cut the string */
			}
			s += 4;
		} else {
			/* The kernel escapes '\\' itself: a lone one is kept as it is. */
			*o++ = *s++;
		}
	}
	*o = '\0';
	*p = e;
	*ret = d;
	return 0;
}

static int mi_sep(const char **p)
{
	return pp_expect(p, " ");
}

/* Optional fields up to and including "- ". */
static int mi_optional(const char **p, struct mount_entry *m)
{
	for (;;) {
		const char *s = *p;
		int *dst = NULL;

		if (!strncmp(s, "- ", 2)) {
			*p = s + 2;
			return 0;
		}
		if (!strncmp(s, "shared:", 7))
			dst = &m->shared, s += 7;
		else if (!strncmp(s, "master:", 7))
			dst = &m->master, s += 7;
		else if (!strncmp(s, "propagate_from:", 15))
			dst = &m->propagate_from, s += 15;
		else if (!strncmp(s, "unbindable", 10) && (s[10] == ' '))
			m->unbindable = true, s += 10;
		if (dst && (pp_int(&s, 10, 1, INT_MAX, dst) || *s != ' '))
			return -EINVAL;
		while (!pp_eol(s) && *s != ' ')
			s++; /* an unknown tag of a newer kernel */
		if (pp_eol(s) || s == *p)
			return -EINVAL;
		*p = s + 1;
	}
}

static void mount_entry_fini(struct mount_entry *m)
{
	free(m->root);
	free(m->mountpoint);
	free(m->options);
	free(m->fstype);
	free(m->source);
	free(m->super_options);
}

static int mi_line(const char *p, struct mount_entry *m)
{
	int err;

	if (pp_int(&p, 10, 0, INT_MAX, &m->mnt_id) || mi_sep(&p) ||
	    pp_int(&p, 10, 0, INT_MAX, &m->parent_id) || mi_sep(&p) ||
	    pp_uint(&p, 10, UINT_MAX, &m->major) || pp_expect(&p, ":") ||
	    pp_uint(&p, 10, UINT_MAX, &m->minor) || mi_sep(&p))
		return -EINVAL;
	if ((err = mi_field(&p, &m->root)) || (err = mi_sep(&p)) ||
	    (err = mi_field(&p, &m->mountpoint)) || (err = mi_sep(&p)) ||
	    (err = mi_field(&p, &m->options)) || (err = mi_sep(&p)) || (err = mi_optional(&p, m)) ||
	    (err = mi_field(&p, &m->fstype)) || (err = mi_sep(&p)) ||
	    (err = mi_field(&p, &m->source)) || (err = mi_sep(&p)) ||
	    (err = mi_field(&p, &m->super_options)))
		return err;
	if (!pp_eol(p) || !m->root[0] || !m->mountpoint[0] || !m->fstype[0])
		return -EINVAL;
	return 0;
}

void mount_list_fini(struct mount_list *l)
{
	unsigned int i;

	for (i = 0; i < l->nr; i++)
		mount_entry_fini(&l->mnts[i]);
	free(l->mnts);
	l->mnts = NULL;
	l->nr = l->cap = 0;
}

int parse_mountinfo(const char *text, struct mount_list *ret)
{
	struct mount_list l = { 0 };
	const char *cur = text, *line;
	size_t len;
	int err;

	while (pp_next_line(&cur, &line, &len)) {
		struct mount_entry *m;

		err = pp_grow((void **)&l.mnts, &l.cap, l.nr, sizeof(*l.mnts));
		if (err)
			goto bad;
		m = &l.mnts[l.nr];
		memset(m, 0, sizeof(*m));
		err = mi_line(line, m);
		if (err) {
			pr_debug("cannot parse mountinfo line: %.*s\n", (int)min(len, 300), line);
			mount_entry_fini(m);
			goto bad;
		}
		l.nr++;
	}
	*ret = l;
	return 0;
bad:
	mount_list_fini(&l);
	return err == -ENOMEM ? err : -EINVAL;
}

int proc_parse_mountinfo(pid_t pid, struct mount_list *ret)
{
	_cleanup_free_ char *text = NULL;
	char path[64];

	snprintf(path, sizeof(path), "%d/mountinfo", pid);
	text = pp_read_proc(path);
	/*
	 * open() fails with EINVAL once the task has dropped its namespaces (a zombie, checked on
	 * 6.18): say ESRCH, so -EINVAL keeps meaning text we could not parse.
	 */
	if (!text)
		return errno == EINVAL ? -ESRCH : neg_errno();
	return parse_mountinfo(text, ret);
}
