/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_CGROUP_INT_H
#define CRIU_LIKE_CGROUP_INT_H

/* Shared by the files of criu-like/cgroup/ only. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"

struct cr_options;

#include "cgroup.pb-c.h"

/* One hierarchy as criu-like sees it (cgroup.c). */
struct cg_hier {
	char *ctrls; /* "memory", "cpu,cpuacct", "name=systemd"; "" for cgroup2 */
	char *mnt; /* where criu-like reaches it: a mount point, or --cgroup-yard's dir; NULL */
	char *mnt_root; /* the cgroup mounted there ("/" unless a bind or a namespace's) */
	char *own; /* criu-like's own cgroup in it */
	char *root; /* the tree's root cgroup (dump: found; restore: where it goes) */
};

struct cg_hiers {
	unsigned int n;
	struct cg_hier *h;
};

/*
 * The hierarchies of /proc/self/cgroup, each with its mount from
 * /proc/self/mountinfo, or YARD/NAME with --cgroup-yard (NAME: the
 * controllers without "name=", "unified" for cgroup2).
 */
int cg_hiers_read(struct cg_hiers *hs, const char *yard);
void cg_hiers_fini(struct cg_hiers *hs);
/* The index of hierarchy @ctrls, or -ENOENT. */
int cg_hier_find(const struct cg_hiers *hs, const char *ctrls);
static inline bool cg_hier_v2(const struct cg_hier *h)
{
	return !*h->ctrls;
}
/* "memory:/a/b" for messages */
#define CG_FMT "%s:%s"
#define CG_NAME(h) (*(h)->ctrls ? (h)->ctrls : "cgroup2")
/* The host path of cgroup @path of @h into @buf; -ENOENT if not reachable there. */
int cg_host_path(const struct cg_hier *h, const char *path, char *buf, size_t size);
/* @root joined with @rel ("" is @root), malloc'ed. */
char *cg_join(const char *root, const char *rel);

/* ---- the dump's collection (cgset.c, cgns.c) ---- */

struct cg_member {
	pid_t pid, tid; /* as the images name them */
	unsigned int set; /* index in sets */
	unsigned int ns; /* 1 + index in nss, 0: criu-like's own */
};

struct cg_dump {
	struct cg_hiers hiers;
	unsigned int nr_sets;
	char ***sets; /* [set][hier]: absolute paths */
	unsigned int nr_members;
	struct cg_member *members;
	unsigned int nr_nss;
	char ***nss; /* [ns][hier]: absolute roots */
	uint64_t *ns_ino;
	/* --freeze-cgroup's cgroup when the seize found it frozen (thawed since): saved frozen */
	const char *refreeze;
	struct cg_spec spec; /* --cgroup-props, --cgroup-props-file */
	/* --cgroup-dump-controller: the hierarchies it leaves out (not in hiers) */
	struct cg_hiers skipped;
};

/* cgroup.c: --cgroup-props and --cgroup-props-file parsed into @spec. */
int cg_spec_load(const struct cr_options *o, struct cg_spec *spec);
/* cgset.c: every live task's and thread's sets. */
int cg_members_read(const struct dump_ctx *ctx, struct cg_dump *d);
/* cgns.c: the cgroup namespace of every live task (refused where it cannot be restored). */
int cg_ns_read(const struct dump_ctx *ctx, struct cg_dump *d);
/* cgns.c, --manage-cgroups=ignore: refuse a tree with a cgroup namespace of its own. */
int cg_ns_refuse_ignored(const struct dump_ctx *ctx);
void cg_dump_fini(struct cg_dump *d);

/* ---- properties (cgprops.c) ---- */

/*
 * Read the properties of @h's directory @hostdir into @e (the files that
 * exist): the list, less what @spec replaces, then @spec's (--cgroup-props;
 * NULL: none). A property of @spec that is read-only is refused.
 */
int cg_props_read(const struct cg_hier *h, const char *hostdir, const struct cg_spec *spec,
		  CgroupDirEntry *e);
/*
 * Write @e's properties into @hostdir (@what names it in messages), all but
 * the freezer's, or with @last the freezer's only. A value the file already
 * has is not written again.
 */
int cg_props_write(const char *hostdir, const char *what, const CgroupDirEntry *e, bool last);
void cg_props_free(CgroupDirEntry *e);

/* ---- the restore's state (cgroup.c; cgset.c and cgns.c use it) ---- */

struct rst_cgroup {
	CgroupEntry *e;
	enum cg_mode mode;
	struct cg_hiers hiers; /* criu-like's, in e->hiers order (h[i] is e->hiers[i]) */
	int *set_fds; /* [set * nr_hiers + hier]: the directory, -1 */
	int *ns_fds; /* [ns * nr_hiers + hier] */
	char **made; /* host paths of the directories made, in order */
	unsigned int nr_made;
	bool **wrote; /* [hier][dir]: its properties were written (the freezer's come last) */
};

/* The index of set (namespace) @id in @e, or -ENOENT. */
int cg_set_idx(const CgroupEntry *e, uint32_t id);
int cg_ns_idx(const CgroupEntry *e, uint32_t id);
/* Open @rel of every hierarchy, for @count rows of @paths, above @base into @fds. */
int cg_open_dirs(struct rst_cgroup *cg, char **const *paths, size_t count, int base, int *fds);
/*
 * The task: write "0" into cgroup.procs of the directories @fds (one per
 * hierarchy), except, with @skip_own (the set's paths), where that is
 * criu-like's own cgroup.
 */
int cg_enter_row(const struct rst_cgroup *cg, const int *fds, char *const *skip_own, pid_t pid,
		 const char *what);
/* cgns.c: in task @pid (ns @ns, its parent's @parent_ns), before it enters its set. */
int cg_ns_enter(const struct rst_cgroup *cg, pid_t pid, uint32_t ns, uint32_t parent_ns);

#endif
