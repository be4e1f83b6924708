// SPDX-License-Identifier: GPL-2.0
/*
 * User namespaces, the pure half: uid_map and gid_map as text and as
 * extents, and ids translated through them (ns/user-map.h). No system call
 * here: test/unit/test-userns.c runs it on strings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user-map.h"

static int parse_u32(const char **p, uint32_t *ret)
{
	unsigned long long v;
	char *end;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(*p, &end, 10);
	if (errno || v > UINT32_MAX)
		return -EINVAL;
	*p = end;
	*ret = (uint32_t)v;
	return 0;
}

static bool overlap(uint32_t a, uint32_t na, uint32_t b, uint32_t nb)
{
	return (uint64_t)a < (uint64_t)b + nb && (uint64_t)b < (uint64_t)a + na;
}

static int check_extent(const struct id_map *m, const struct id_extent *x)
{
	size_t i;

	if (!x->count || (uint64_t)x->inside + x->count > (uint64_t)UINT32_MAX + 1 ||
	    (uint64_t)x->outside + x->count > (uint64_t)UINT32_MAX + 1)
		return -EINVAL;
	for (i = 0; i < m->nr; i++)
		if (overlap(m->e[i].inside, m->e[i].count, x->inside, x->count) ||
		    overlap(m->e[i].outside, m->e[i].count, x->outside, x->count))
			return -EINVAL;
	return 0;
}

int id_map_parse(const char *text, struct id_map *ret)
{
	const char *p = text;
	int err;

	ret->nr = 0;
	while (*p) {
		struct id_extent x;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n') { /* an empty line */
			p++;
			continue;
		}
		if (!*p)
			break;
		err = parse_u32(&p, &x.inside);
		if (!err)
			err = parse_u32(&p, &x.outside);
		if (!err)
			err = parse_u32(&p, &x.count);
		while (!err && (*p == ' ' || *p == '\t'))
			p++;
		if (!err && *p && *p != '\n')
			err = -EINVAL;
		if (!err)
			err = check_extent(ret, &x);
		if (err)
			return err;
		if (ret->nr == ID_MAP_MAX)
			return -E2BIG;
		ret->e[ret->nr++] = x;
		if (*p == '\n')
			p++;
	}
	return 0;
}

int id_map_format(const struct id_map *m, char *buf, size_t size)
{
	size_t i, off = 0;

	if (!size)
		return -ENOSPC;
	buf[0] = '\0';
	for (i = 0; i < m->nr; i++) {
		int n = snprintf(buf + off, size - off, "%u %u %u\n", m->e[i].inside,
				 m->e[i].outside, m->e[i].count);

		if (n < 0 || (size_t)n >= size - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return 0;
}

bool id_map_to_inside(const struct id_map *m, uint32_t outside, uint32_t *ret)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		if (outside >= m->e[i].outside && outside - m->e[i].outside < m->e[i].count) {
			*ret = m->e[i].inside + (outside - m->e[i].outside);
			return true;
		}
	return false;
}

bool id_map_to_outside(const struct id_map *m, uint32_t inside, uint32_t *ret)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		if (inside >= m->e[i].inside && inside - m->e[i].inside < m->e[i].count) {
			*ret = m->e[i].outside + (inside - m->e[i].inside);
			return true;
		}
	return false;
}
