/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_CGROUP_H
#define CRIU_LIKE_CGROUP_H

/*
 * Cgroups (criu-like/cgroup/, Documentation/cgroups.md): at dump, the
 * membership of every task and thread in every hierarchy, deduplicated into
 * sets, the directories below the tree's root cgroup with their controllers'
 * properties, and the roots of the tree's cgroup namespaces (cgroup.img). At
 * restore, CRIU's --manage-cgroups modes: the directories made (or found),
 * their properties written, every task moving itself into its set before it
 * does anything else, the threads moved by the controller at the barrier, the
 * freezer state last.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct dump_ctx;
struct restore_ctx;
struct rst_task;

/* CRIU's --manage-cgroups modes, Documentation/cgroups.md */
enum cg_mode {
	CG_MODE_IGNORE,
	CG_MODE_NONE,
	CG_MODE_PROPS,
	CG_MODE_SOFT,
	CG_MODE_FULL,
	CG_MODE_STRICT,
};

/* ---- pure parsing (cgroup-parse.c) ---- */

/* "soft" ... into *@ret; -EINVAL for an unknown name. NULL: the default, soft. */
int cg_mode_parse(const char *name, enum cg_mode *ret);
const char *cg_mode_name(enum cg_mode m);
/*
 * One line of /proc/PID/cgroup, "ID:CONTROLLERS:PATH", cut in place: the
 * controllers ("" for cgroup2) and the path (absolute). -EINVAL if malformed.
 */
int cg_parse_line(char *line, char **ret_ctrls, char **ret_path);
/*
 * --cgroup-root [CONTROLLER:]/PATH: *@ret_ctrl is NULL without a controller,
 * else a malloc'ed copy; *@ret_path points into @arg. -EINVAL if the path is
 * not absolute or the controller empty.
 */
int cg_root_parse(const char *arg, char **ret_ctrl, const char **ret_path);
/* Hierarchy @ctrls ("cpu,cpuacct", "name=systemd", "") has controller @name. */
bool cg_ctrls_match(const char *ctrls, const char *name);
/* Length of the longest common prefix of paths @a and @b that ends at a component. */
size_t cg_common_prefix(const char *a, const char *b);
/* @path relative to @root ("" for @root itself), or NULL if not below it. */
const char *cg_rel(const char *root, const char *path);
/*
 * A property's value as read from its file, as it is written back (the text
 * trimmed; memory.oom_control: its oom_kill_disable; cgroup.subtree_control:
 * "+memory +pids"; freezer.state FREEZING: FROZEN), malloc'ed; NULL with
 * errno set if it cannot be written back.
 */
char *cg_prop_value(const char *name, const char *raw);

/*
 * --cgroup-props and --cgroup-props-file (CRIU's format, Documentation/cgroups.md):
 *
 *   "memory":
 *    - "strategy": "merge"
 *    - "properties": ["memory.oom.group", "memory.swappiness"]
 *
 * per controller, properties saved on top of criu-like's own list ("merge",
 * the default) or instead of its list for that controller ("replace").
 */
struct cg_spec_ctrl {
	char *name; /* "memory", "cpu", "unified" (cgroup2 as a whole) */
	bool replace;
	char **props;
	size_t n_props;
};

struct cg_spec {
	struct cg_spec_ctrl *ctrls;
	size_t n;
};

/*
 * Parse @text into @s, adding to what @s holds (a controller named twice:
 * its properties together, "replace" if either says so). @what names the
 * text in messages ("--cgroup-props", a file's path): -EINVAL with the line.
 */
int cg_spec_parse(struct cg_spec *s, const char *text, const char *what);
void cg_spec_fini(struct cg_spec *s);
/*
 * Whether @name may be saved and written back as a property: a plain file
 * name, not one that moves or kills tasks (cgroup.procs, tasks,
 * cgroup.threads, cgroup.kill) or that the restore manages itself.
 */
bool cg_spec_prop_ok(const char *name);

/* ---- dump (cgroup.c) ---- */

/* cgroup.img of the seized tree in @ctx, unless --manage-cgroups=ignore. */
int cgroup_dump(struct dump_ctx *ctx);

/* ---- restore (cgroup.c, cgset.c, cgns.c) ---- */

/*
 * In the controller, in criu-like's own mount namespace, before the mounts of
 * the tree are made (a cgroup mount binds one of the tree's cgroups): read
 * cgroup.img, make or find the directories as the mode says, write their
 * properties. rst_cgroup_open(), once the service fds are placed: each set's
 * directories opened above them, for the tasks to enter.
 */
int rst_cgroup_prepare(struct restore_ctx *ctx);
int rst_cgroup_open(struct restore_ctx *ctx);
/*
 * For the mount builder (ns/mnt.c): the cgroup @root (as the dump saw it) of
 * a cgroup mount (@fstype "cgroup" with @super options naming the
 * controllers, or "cgroup2") where the restore put it (--cgroup-root), into
 * @buf; @root itself when the restore manages no cgroups or it is not the
 * tree's.
 */
int cgroup_mount_root(const char *fstype, const char *super, const char *root, char *buf,
		      size_t size);
/* In task @t first thing: into its cgroup namespace and its set. */
int rst_cgroup_enter(struct restore_ctx *ctx, const struct rst_task *t);
/* A fork in @parent failed with EAGAIN: name its pids cgroup when it is full. */
void rst_cgroup_why_eagain(const struct restore_ctx *ctx, const struct rst_task *parent);
/* In the controller once every thread waits at the barrier: the threads into their sets. */
int rst_cgroup_threads(struct restore_ctx *ctx);
/* Once the tree runs: the freezer states (frozen cgroups are frozen again). */
void rst_cgroup_resume(struct restore_ctx *ctx);
/* A failed restore, its tasks killed and reaped: remove the directories made. */
void rst_cgroup_abort(struct restore_ctx *ctx);
void rst_cgroup_fini(struct restore_ctx *ctx);

#endif
