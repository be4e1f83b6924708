// SPDX-License-Identifier: GPL-2.0
/*
 * The properties of a cgroup directory: a fixed list, in the order they are
 * written at restore (Documentation/cgroups.md has it):
 *
 * - cgroup2: cgroup.type first (a threaded cgroup before its threads come),
 *   cgroup.subtree_control (before the children are made: it gives them
 *   their controllers' files), then the cpuset (before any task is in it:
 *   an empty cpuset takes no task), memory, pids and cpu limits;
 * - v1, by controller: cpuset.cpus and cpuset.mems before the exclusive
 *   flags, the memory limits before anything is charged (the tasks enter
 *   afterwards), cpu.cfs_period_us before cpu.cfs_quota_us (a quota is
 *   checked against the period), pids.max, the devices list (deny all, then
 *   allow each line), the blkio weights;
 * - last of all, once the tree runs: freezer.state (v1) and cgroup.freeze
 *   (v2), so a frozen cgroup is frozen again.
 *
 * A file the kernel does not have (a controller not enabled in a cgroup2
 * directory, blkio without its weight) is not saved.
 */
#define LOG_PREFIX "cgroup: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup-int.h"
#include "log.h"
#include "util.h"

struct cg_prop {
	const char *ctrl; /* the v1 controller; NULL: a cgroup2 file */
	const char *name;
	bool last; /* written once the tree runs */
};

/* clang-format off */
static const struct cg_prop cg_props[] = {
	{ NULL, "cgroup.type" },
	{ NULL, "cgroup.subtree_control" },
	{ NULL, "cpuset.cpus" },
	{ NULL, "cpuset.mems" },
	{ NULL, "memory.min" },
	{ NULL, "memory.low" },
	{ NULL, "memory.high" },
	{ NULL, "memory.max" },
	{ NULL, "memory.swap.max" },
	{ NULL, "pids.max" },
	{ NULL, "cpu.weight" },
	{ NULL, "cpu.max" },
	{ NULL, "cgroup.freeze", true },
	{ "cpuset", "cpuset.cpus" },
	{ "cpuset", "cpuset.mems" },
	{ "cpuset", "cpuset.cpu_exclusive" },
	{ "cpuset", "cpuset.mem_exclusive" },
	{ "memory", "memory.limit_in_bytes" },
	{ "memory", "memory.soft_limit_in_bytes" },
	{ "memory", "memory.swappiness" },
	{ "memory", "memory.oom_control" },
	{ "cpu", "cpu.shares" },
	{ "cpu", "cpu.cfs_period_us" },
	{ "cpu", "cpu.cfs_quota_us" },
	{ "pids", "pids.max" },
	{ "devices", "devices.list" },
	{ "blkio", "blkio.weight" },
	{ "blkio", "blkio.bfq.weight" },
	{ "freezer", "freezer.state", true },
};
/* clang-format on */

static bool prop_of(const struct cg_prop *p, const struct cg_hier *h)
{
	if (!p->ctrl)
		return cg_hier_v2(h);
	return !cg_hier_v2(h) && cg_ctrls_match(h->ctrls, p->ctrl);
}

static const struct cg_prop *prop_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cg_props); i++)
		if (!strcmp(cg_props[i].name, name))
			return &cg_props[i];
	return NULL;
}

static int add_prop(CgroupDirEntry *e, const char *name, char *value)
{
	CgroupPropEntry *p = calloc(1, sizeof(*p)), **n;

	n = realloc(e->props, (e->n_props + 1) * sizeof(*n));
	if (!p || !n) {
		free(p);
		free(value);
		return -ENOMEM;
	}
	e->props = n;
	cgroup_prop_entry__init(p);
	p->name = strdup(name);
	p->value = value;
	e->props[e->n_props++] = p;
	return p->name ? 0 : -ENOMEM;
}

int cg_props_read(const struct cg_hier *h, const char *hostdir, CgroupDirEntry *e)
{
	_cleanup_close_ int dfd = open(hostdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t i;
	int err;

	if (dfd < 0) {
		pr_perror("cannot open cgroup %s", hostdir);
		return neg_errno();
	}
	for (i = 0; i < ARRAY_SIZE(cg_props); i++) {
		_cleanup_free_ char *raw = NULL;
		char *v;

		if (!prop_of(&cg_props[i], h))
			continue;
		raw = read_file_at(dfd, cg_props[i].name, NULL);
		if (!raw)
			continue; /* not in this kernel, or not enabled here */
		v = cg_prop_value(cg_props[i].name, raw);
		if (!v) {
			pr_err("cgroup %s: %s: cannot save '%s'\n", hostdir, cg_props[i].name, raw);
			return -EINVAL;
		}
		err = add_prop(e, cg_props[i].name, v);
		if (err)
			return err;
	}
	return 0;
}

void cg_props_free(CgroupDirEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_props; i++) {
		free(e->props[i]->name);
		free(e->props[i]->value);
		free(e->props[i]);
	}
	free(e->props);
	e->props = NULL;
	e->n_props = 0;
}

static int write_file(int dfd, const char *name, const char *text)
{
	_cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		return neg_errno();
	return 0;
}

/* devices.list: everything denied, then each line allowed (v1 keeps no other order). */
static int write_devices(int dfd, const char *list)
{
	_cleanup_free_ char *copy = NULL;
	char *line, *save = NULL;
	int err;

	if (!strcmp(list, "a *:* rwm"))
		return write_file(dfd, "devices.allow", "a");
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	err = write_file(dfd, "devices.deny", "a");
	for (line = strtok_r(copy, "\n", &save); !err && line; line = strtok_r(NULL, "\n", &save))
		err = write_file(dfd, "devices.allow", line);
	return err;
}

/* Whether @name already reads @value (then it is not written: an exclusive flag would fail). */
static bool has_value(int dfd, const char *name, const char *value)
{
	_cleanup_free_ char *raw = read_file_at(dfd, name, NULL);
	_cleanup_free_ char *v = raw ? cg_prop_value(name, raw) : NULL;

	return v && !strcmp(v, value);
}

static int write_prop(int dfd, const CgroupPropEntry *p)
{
	if (has_value(dfd, p->name, p->value))
		return 0;
	if (!strcmp(p->name, "devices.list"))
		return write_devices(dfd, p->value);
	if (!strcmp(p->name, "cgroup.type") && strcmp(p->value, "threaded"))
		return 0; /* only "threaded" can be written; the others follow from it */
	return write_file(dfd, p->name, p->value);
}

int cg_props_write(const char *hostdir, const char *what, const CgroupDirEntry *e, bool last)
{
	_cleanup_close_ int dfd = open(hostdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t i, j;
	int err;

	if (dfd < 0) {
		pr_perror("cannot open cgroup %s", what);
		return neg_errno();
	}
	/* a property the table does not know: an image from a newer criu-like */
	for (j = 0; j < e->n_props; j++)
		if (!prop_find(e->props[j]->name)) {
			pr_err("cgroup %s: property %s is not one criu-like restores\n", what,
			       e->props[j]->name);
			return -EINVAL;
		}
	/* in the table's order, whatever the image's */
	for (i = 0; i < ARRAY_SIZE(cg_props); i++) {
		if (cg_props[i].last != last)
			continue;
		for (j = 0; j < e->n_props; j++) {
			const CgroupPropEntry *p = e->props[j];

			if (strcmp(p->name, cg_props[i].name))
				continue;
			err = write_prop(dfd, p);
			if (!err)
				break;
			if (err == -EINVAL)
				pr_errno(err,
					 "cgroup %s: cannot set %s to '%s': the kernel refuses it "
					 "there (a CFS quota above its parent's, an exclusive "
					 "cpuset overlapping a sibling's?)",
					 what, p->name, p->value);
			else
				pr_errno(err, "cgroup %s: cannot set %s to '%s'", what, p->name,
					 p->value);
			return err;
		}
	}
	return 0;
}
