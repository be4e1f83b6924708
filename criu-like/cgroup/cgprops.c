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
 * directory, blkio without its weight) is not saved. --cgroup-props adds
 * properties after the list's, or replaces a controller's part of it
 * (struct cg_spec); the restore writes those after the list's.
 */
#define LOG_PREFIX "cgroup: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	{ NULL, "cpuset.cpus.partition" },
	{ NULL, "memory.min" },
	{ NULL, "memory.low" },
	{ NULL, "memory.high" },
	{ NULL, "memory.max" },
	{ NULL, "memory.swap.high" },
	{ NULL, "memory.swap.max" },
	{ NULL, "memory.oom.group" },
	{ NULL, "pids.max" },
	{ NULL, "cpu.weight" },
	{ NULL, "cpu.idle" },
	{ NULL, "cpu.max" },
	{ NULL, "cpu.max.burst" },
	{ NULL, "io.weight" },
	{ NULL, "io.max" },
	{ NULL, "cgroup.freeze", true },
	{ "cpuset", "cpuset.cpus" },
	{ "cpuset", "cpuset.mems" },
	{ "cpuset", "cpuset.cpu_exclusive" },
	{ "cpuset", "cpuset.mem_exclusive" },
	{ "memory", "memory.limit_in_bytes" },
	{ "memory", "memory.memsw.limit_in_bytes" },
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
	{ "net_cls", "net_cls.classid" },
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

/* Whether spec controller @c applies to hierarchy @h. */
static bool spec_of(const struct cg_spec_ctrl *c, const struct cg_hier *h)
{
	if (cg_hier_v2(h))
		return true; /* cgroup2 holds every controller's files */
	return cg_ctrls_match(h->ctrls, c->name);
}

/* Property @p of the list is not read: a spec's "replace" for its controller. */
static bool replaced(const struct cg_prop *p, const struct cg_hier *h, const struct cg_spec *spec)
{
	size_t i, n;

	for (i = 0; spec && i < spec->n; i++) {
		const struct cg_spec_ctrl *c = &spec->ctrls[i];

		if (!c->replace || !spec_of(c, h))
			continue;
		if (p->ctrl && !strcmp(p->ctrl, c->name))
			return true;
		n = strlen(c->name);
		if (!p->ctrl && !strncmp(p->name, c->name, n) && p->name[n] == '.')
			return true;
	}
	return false;
}

static bool has_prop(const CgroupDirEntry *e, const char *name)
{
	size_t i;

	for (i = 0; i < e->n_props; i++)
		if (!strcmp(e->props[i]->name, name))
			return true;
	return false;
}

/* @name of @dfd into @e; a missing file is not saved. */
static int read_one(int dfd, const char *hostdir, const char *name, CgroupDirEntry *e, bool listed)
{
	_cleanup_free_ char *raw = NULL;
	struct stat st;
	char *v;

	if (fstatat(dfd, name, &st, 0)) {
		if (listed)
			pr_info("cgroup %s: no %s here: not saved\n", hostdir, name);
		return 0; /* not in this kernel, or not enabled here */
	}
	if (listed && (!S_ISREG(st.st_mode) || !(st.st_mode & S_IWUSR))) {
		pr_err("cgroup %s: %s (--cgroup-props) is read-only: it cannot be restored\n",
		       hostdir, name);
		return -EOPNOTSUPP;
	}
	raw = read_file_at(dfd, name, NULL);
	if (!raw && listed) {
		pr_perror("cgroup %s: cannot read %s (--cgroup-props)", hostdir, name);
		return neg_errno();
	}
	if (!raw)
		return 0;
	v = cg_prop_value(name, raw);
	if (!v) {
		pr_err("cgroup %s: %s: cannot save '%s'\n", hostdir, name, raw);
		return -EINVAL;
	}
	return add_prop(e, name, v);
}

int cg_props_read(const struct cg_hier *h, const char *hostdir, const struct cg_spec *spec,
		  CgroupDirEntry *e)
{
	_cleanup_close_ int dfd = open(hostdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t i, j;
	int err = 0;

	if (dfd < 0) {
		pr_perror("cannot open cgroup %s", hostdir);
		return neg_errno();
	}
	for (i = 0; !err && i < ARRAY_SIZE(cg_props); i++)
		if (prop_of(&cg_props[i], h) && !replaced(&cg_props[i], h, spec))
			err = read_one(dfd, hostdir, cg_props[i].name, e, false);
	/* --cgroup-props: after the list, in the order given */
	for (i = 0; !err && spec && i < spec->n; i++) {
		const struct cg_spec_ctrl *c = &spec->ctrls[i];

		if (!spec_of(c, h))
			continue;
		for (j = 0; !err && j < c->n_props; j++) {
			const char *name = c->props[j];
			size_t n = strlen(c->name);

			/* in cgroup2, a controller's own files ("unified": any) */
			if (cg_hier_v2(h) && strcmp(c->name, "unified") &&
			    (strncmp(name, c->name, n) || name[n] != '.'))
				continue;
			if (!has_prop(e, name))
				err = read_one(dfd, hostdir, name, e, true);
		}
	}
	return err;
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

/* A value of several lines: each written on its own (io.max, io.weight: one device a line). */
static int write_lines(int dfd, const char *name, const char *value)
{
	_cleanup_free_ char *copy = NULL;
	char *line, *save = NULL;
	int err = 0;

	if (!*value)
		return write_file(dfd, name, "");
	copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	for (line = strtok_r(copy, "\n", &save); !err && line; line = strtok_r(NULL, "\n", &save))
		err = write_file(dfd, name, line);
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
	if (strchr(p->value, '\n'))
		return write_lines(dfd, p->name, p->value); /* io.max, io.weight: one device each */
	return write_file(dfd, p->name, p->value);
}

static int write_failed(int err, const char *what, const CgroupPropEntry *p)
{
	if (err == -EINVAL)
		pr_errno(err,
			 "cgroup %s: cannot set %s to '%s': the kernel refuses it there (a CFS "
			 "quota above its parent's, an exclusive cpuset overlapping a sibling's?)",
			 what, p->name, p->value);
	else
		pr_errno(err, "cgroup %s: cannot set %s to '%s'", what, p->name, p->value);
	return err;
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
	/* a property outside the list came from --cgroup-props: only a plain file of the cgroup */
	for (j = 0; j < e->n_props; j++)
		if (!prop_find(e->props[j]->name) && !cg_spec_prop_ok(e->props[j]->name)) {
			pr_err("cgroup %s: property %s is not one criu-like writes\n", what,
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
			if (err)
				return write_failed(err, what, p);
			break;
		}
	}
	if (last)
		return 0;
	/* then --cgroup-props's, in the image's order */
	for (j = 0; j < e->n_props; j++) {
		const CgroupPropEntry *p = e->props[j];

		if (prop_find(p->name) || has_value(dfd, p->name, p->value))
			continue;
		err = write_lines(dfd, p->name, p->value);
		if (err)
			return write_failed(err, what, p);
	}
	return 0;
}
