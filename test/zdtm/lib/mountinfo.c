// SPDX-License-Identifier: GPL-2.0
/* /proc/self/mountinfo made comparable across a dump and restore: the mount tests share it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zdtmtst.h"

/* One line: "parent=LINE dev=DEV" then the rest with the peer groups renumbered. */
static void normalize_line(struct test_mountinfo *m, char *ids[], const char *parent,
			   const char *dev, char *rest, int groups[], int *ng)
{
	char *tok, *save = NULL, *o = m->line[m->n];
	int p = -1, i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(ids[i], parent))
			p = i;
	o += sprintf(o, "parent=%d dev=%s", p, !strncmp(dev, "0:", 2) ? "0:*" : dev);
	for (tok = strtok_r(rest, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		int g;

		if (sscanf(tok, "shared:%d", &g) == 1 || sscanf(tok, "master:%d", &g) == 1) {
			for (i = 0; i < *ng && groups[i] != g; i++)
				;
			if (i == *ng)
				groups[(*ng)++] = g;
			o += sprintf(o, " %.7s%d", tok, i);
		} else {
			o += sprintf(o, " %s", tok);
		}
	}
}

int test_mountinfo_read(struct test_mountinfo *m)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[1024], *ids[TEST_MNT_LINES] = { 0 };
	int groups[TEST_MNT_LINES], ng = 0, err = 0, i;

	if (!f)
		return -errno;
	m->n = 0;
	while (m->n < TEST_MNT_LINES && fgets(line, sizeof(line), f)) {
		char id[32], parent[32], dev[32], rest[900];

		if (sscanf(line, "%31s %31s %31s %899[^\n]", id, parent, dev, rest) != 4) {
			err = -EBADMSG;
			break;
		}
		ids[m->n] = strdup(id);
		if (!ids[m->n]) {
			err = -ENOMEM;
			break;
		}
		normalize_line(m, ids, parent, dev, rest, groups, &ng);
		m->n++;
	}
	fclose(f);
	for (i = 0; i < TEST_MNT_LINES; i++)
		free(ids[i]);
	return err;
}

int test_mountinfo_same(const struct test_mountinfo *before, const struct test_mountinfo *after)
{
	int i;

	for (i = 0; i < before->n || i < after->n; i++) {
		if (i < before->n && i < after->n && !strcmp(before->line[i], after->line[i]))
			continue;
		fail("mountinfo line %d: before \"%s\", after \"%s\"", i,
		     i < before->n ? before->line[i] : "-", i < after->n ? after->line[i] : "-");
		return -EINVAL;
	}
	return 0;
}
