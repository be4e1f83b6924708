// SPDX-License-Identifier: GPL-2.0
/*
 * The hierarchies and their directories (Documentation/cgroups.md).
 *
 * Dump: the hierarchies are the lines of criu-like's /proc/self/cgroup;
 * the tree's root cgroup in each is the deepest cgroup above every set
 * of the tree and every root of its cgroup namespaces; the directories
 * from it down to each of them are saved, parents first, with their
 * properties (cgprops.c), relative to it.
 *
 * Restore: the root of each hierarchy is --cgroup-root's, else the dumped
 * one; each directory is found or made as the mode says, its properties
 * written (never into criu-like's own cgroup or the ones above it), the
 * directories of every set and namespace root opened above the service fds
 * for the tasks to enter (cgset.c). A failed restore removes what it made.
 */
#define LOG_PREFIX "cgroup: "

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup-int.h"
#include "dump.h"
#include "fault.h"
#include "image.h"
#include "log.h"
#include "proc-parse.h"
#include "restore.h"
#include "util.h"

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

char *cg_join(const char *root, const char *rel)
{
	char *s;

	if (!*rel)
		return strdup(root);
	if (asprintf(&s, "%s/%s", strcmp(root, "/") ? root : "", rel) < 0)
		return NULL;
	return s;
}

int cg_host_path(const struct cg_hier *h, const char *path, char *buf, size_t size)
{
	const char *rel = h->mnt ? cg_rel(h->mnt_root, path) : NULL;

	if (!rel)
		return -ENOENT;
	if ((size_t)snprintf(buf, size, "%s%s%s", h->mnt, *rel ? "/" : "", rel) >= size)
		return -ENAMETOOLONG;
	return 0;
}

int cg_hier_find(const struct cg_hiers *hs, const char *ctrls)
{
	unsigned int i;

	for (i = 0; i < hs->n; i++)
		if (!strcmp(hs->h[i].ctrls, ctrls))
			return (int)i;
	return -ENOENT;
}

/* Mount @m shows hierarchy @ctrls: every controller of it is in its super options. */
static bool mount_is(const struct mount_entry *m, const char *ctrls)
{
	_cleanup_free_ char *copy = NULL;
	char *save = NULL, *c;
	char opts[512];

	if (!*ctrls)
		return !strcmp(m->fstype, "cgroup2");
	copy = strdup(ctrls);
	if (strcmp(m->fstype, "cgroup") || !copy)
		return false;
	snprintf(opts, sizeof(opts), ",%s,", m->super_options);
	for (c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
		char want[128];

		snprintf(want, sizeof(want), ",%s,", c);
		if (!strstr(opts, want))
			return false;
	}
	return true;
}

static int find_mount(struct cg_hier *h, const struct mount_list *ml)
{
	unsigned int i;

	for (i = 0; i < ml->nr; i++) {
		const struct mount_entry *m = &ml->mnts[i];

		if (!mount_is(m, h->ctrls))
			continue;
		h->mnt = strdup(m->mountpoint);
		h->mnt_root = strdup(m->root);
		return h->mnt && h->mnt_root ? 0 : -ENOMEM;
	}
	return 0; /* not mounted: h->mnt stays NULL */
}

/* --cgroup-yard DIR: hierarchy @h is DIR/NAME, checked to be a cgroup file system. */
static int find_in_yard(struct cg_hier *h, const char *yard)
{
	const char *name = !*h->ctrls			    ? "unified"
			   : !strncmp(h->ctrls, "name=", 5) ? h->ctrls + 5
							    : h->ctrls;
	struct statfs sf;
	char *path;

	if (asprintf(&path, "%s/%s", yard, name) < 0)
		return -ENOMEM;
	if (statfs(path, &sf) ||
	    (sf.f_type != CGROUP_SUPER_MAGIC && sf.f_type != CGROUP2_SUPER_MAGIC)) {
		pr_debug("--cgroup-yard: %s is not a cgroup mount\n", path);
		free(path);
		return 0;
	}
	h->mnt = path;
	h->mnt_root = strdup("/");
	return h->mnt_root ? 0 : -ENOMEM;
}

int cg_hiers_read(struct cg_hiers *hs, const char *yard)
{
	_cleanup_fclose_ FILE *f = NULL;
	struct mount_list ml = { 0 };
	char line[4096];
	int err = 0;

	memset(hs, 0, sizeof(*hs));
	if (!yard) {
		err = proc_parse_mountinfo(getpid(), &ml);
		if (err)
			return err;
	}
	f = fopen("/proc/self/cgroup", "re");
	if (!f) {
		err = neg_errno();
		mount_list_fini(&ml);
		return err;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		struct cg_hier *n, *h;
		char *ctrls, *path;

		if (cg_parse_line(line, &ctrls, &path)) {
			err = -EINVAL;
			break;
		}
		n = realloc(hs->h, (hs->n + 1) * sizeof(*n));
		if (!n) {
			err = -ENOMEM;
			break;
		}
		hs->h = n;
		h = &hs->h[hs->n++];
		memset(h, 0, sizeof(*h));
		h->ctrls = strdup(ctrls);
		h->own = strdup(path);
		if (!h->ctrls || !h->own)
			err = -ENOMEM;
		else
			err = yard ? find_in_yard(h, yard) : find_mount(h, &ml);
	}
	mount_list_fini(&ml);
	if (err)
		cg_hiers_fini(hs);
	return err;
}

void cg_hiers_fini(struct cg_hiers *hs)
{
	unsigned int i;

	for (i = 0; i < hs->n; i++) {
		free(hs->h[i].ctrls);
		free(hs->h[i].mnt);
		free(hs->h[i].mnt_root);
		free(hs->h[i].own);
		free(hs->h[i].root);
	}
	free(hs->h);
	memset(hs, 0, sizeof(*hs));
}

/*
 * @abs is criu-like's own cgroup in @h or above it: at restore its properties
 * are never written; at dump, its subtree is not the tree's alone.
 */
static bool is_own_or_above(const struct cg_hier *h, const char *abs)
{
	return cg_rel(abs, h->own) != NULL;
}

/* ---- dump ------------------------------------------------------------------------------------ */

/* The deepest cgroup of hierarchy @i above every set and namespace root. */
static int find_root(struct cg_dump *d, unsigned int i)
{
	const char *first = d->nr_sets ? d->sets[0][i] : "/";
	size_t len = strlen(first);
	unsigned int s;

	for (s = 0; s < d->nr_sets; s++)
		len = min(len, cg_common_prefix(first, d->sets[s][i]));
	for (s = 0; s < d->nr_nss; s++)
		len = min(len, cg_common_prefix(first, d->nss[s][i]));
	d->hiers.h[i].root = strndup(first, len);
	return d->hiers.h[i].root ? 0 : -ENOMEM;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add @rel and every directory above it (below the root) to @dirs, once each. */
static int add_dirs(char ***dirs, size_t *n, const char *rel)
{
	size_t len = strlen(rel), i, j;

	for (i = 0; i <= len; i++) {
		char *s, **nd;

		if (i < len && rel[i] != '/')
			continue;
		for (j = 0; j < *n; j++)
			if (strlen((*dirs)[j]) == i && !strncmp((*dirs)[j], rel, i))
				break;
		if (j < *n)
			continue;
		nd = realloc(*dirs, (*n + 1) * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		*dirs = nd;
		s = strndup(rel, i);
		if (!s)
			return -ENOMEM;
		(*dirs)[(*n)++] = s;
	}
	return 0;
}

/* nftw() has no argument for its callback */
static struct {
	char ***dirs;
	size_t *n;
	size_t skip; /* the length of the root's host path */
	int err;
} walk;

static int walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag != FTW_D || strlen(path) <= walk.skip)
		return 0;
	walk.err = add_dirs(walk.dirs, walk.n, path + walk.skip + 1);
	return walk.err;
}

/*
 * Every cgroup below the tree's root @abs, with no task as well (a
 * container's init makes some): when the root is the tree's own, not
 * criu-like's or one above it (whose other cgroups are not the tree's).
 */
static int add_subtree(const struct cg_hier *h, char ***dirs, size_t *n)
{
	char host[4096];

	if (is_own_or_above(h, h->root) || cg_host_path(h, h->root, host, sizeof(host)))
		return 0;
	walk.dirs = dirs;
	walk.n = n;
	walk.skip = strlen(host);
	walk.err = 0;
	if (nftw(host, walk_one, 16, FTW_PHYS) && !walk.err)
		walk.err = -errno;
	if (walk.err)
		pr_errno(walk.err, "cannot list the cgroups below " CG_FMT, CG_NAME(h), h->root);
	return walk.err;
}

/*
 * @hostdir is --freeze-cgroup's cgroup, found frozen by the seize, which
 * thawed it to seize the tree: its freezer state is saved as it was found.
 */
static void keep_frozen(const struct cg_dump *d, const char *hostdir, CgroupDirEntry *de)
{
	struct stat a, b;
	size_t i;

	if (!d->refreeze || stat(d->refreeze, &a) || stat(hostdir, &b) || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino)
		return;
	for (i = 0; i < de->n_props; i++) {
		CgroupPropEntry *p = de->props[i];
		const char *v = !strcmp(p->name, "freezer.state")   ? "FROZEN"
				: !strcmp(p->name, "cgroup.freeze") ? "1"
								    : NULL;
		char *n = v ? strdup(v) : NULL;

		if (!n)
			continue;
		free(p->value);
		p->value = n;
	}
}

/* The directories of hierarchy @i, parents first (a parent sorts before its children). */
static int build_hier(struct cg_dump *d, unsigned int i, CgroupHierEntry *he)
{
	struct cg_hier *h = &d->hiers.h[i];
	char **dirs = NULL, host[4096];
	size_t n = 0, k;
	unsigned int s;
	int err = 0;

	for (s = 0; !err && s < d->nr_sets; s++)
		err = add_dirs(&dirs, &n, cg_rel(h->root, d->sets[s][i]));
	for (s = 0; !err && s < d->nr_nss; s++)
		err = add_dirs(&dirs, &n, cg_rel(h->root, d->nss[s][i]));
	if (!err)
		err = add_subtree(h, &dirs, &n);
	if (!err)
		qsort(dirs, n, sizeof(*dirs), cmp_str);
	he->controllers = h->ctrls;
	he->root = h->root;
	he->dirs = calloc(n ? n : 1, sizeof(*he->dirs));
	if (!he->dirs)
		err = -ENOMEM;
	for (k = 0; !err && k < n; k++) {
		CgroupDirEntry *de = calloc(1, sizeof(*de));
		_cleanup_free_ char *abs = cg_join(h->root, dirs[k]);

		if (!de || !abs) {
			free(de);
			err = -ENOMEM;
			break;
		}
		cgroup_dir_entry__init(de);
		de->path = dirs[k];
		dirs[k] = NULL;
		he->dirs[he->n_dirs++] = de;
		if (!cg_host_path(h, abs, host, sizeof(host))) {
			err = cg_props_read(h, host, &d->spec, de);
			keep_frozen(d, host, de);
		} else
			pr_warn(CG_FMT ": not reachable from criu-like: its properties are not "
				       "saved\n",
				CG_NAME(h), abs);
	}
	for (k = 0; k < n; k++)
		free(dirs[k]);
	free(dirs);
	return err;
}

static void free_entry(CgroupEntry *e)
{
	size_t i, j;

	for (i = 0; i < e->n_hiers; i++) {
		for (j = 0; j < e->hiers[i]->n_dirs; j++) {
			cg_props_free(e->hiers[i]->dirs[j]);
			free(e->hiers[i]->dirs[j]->path);
			free(e->hiers[i]->dirs[j]);
		}
		free(e->hiers[i]->dirs);
		free(e->hiers[i]);
	}
	free(e->hiers);
	for (i = 0; i < e->n_sets; i++) {
		for (j = 0; j < e->sets[i]->n_paths; j++)
			free(e->sets[i]->paths[j]);
		free(e->sets[i]->paths);
		free(e->sets[i]);
	}
	free(e->sets);
	for (i = 0; i < e->n_namespaces; i++) {
		for (j = 0; j < e->namespaces[i]->n_roots; j++)
			free(e->namespaces[i]->roots[j]);
		free(e->namespaces[i]->roots);
		free(e->namespaces[i]);
	}
	free(e->namespaces);
	for (i = 0; i < e->n_members; i++)
		free(e->members[i]);
	free(e->members);
}

/* Row @paths (absolute, one per hierarchy) relative to each hierarchy's root. */
static char **rel_row(const struct cg_dump *d, char *const *paths)
{
	char **out = calloc(d->hiers.n, sizeof(*out));
	unsigned int i;

	for (i = 0; out && i < d->hiers.n; i++) {
		out[i] = strdup(cg_rel(d->hiers.h[i].root, paths[i]));
		if (!out[i])
			return NULL; /* freed with the entry by the caller's n_ count */
	}
	return out;
}

static int build_entry(struct cg_dump *d, CgroupEntry *e)
{
	unsigned int i;
	int err = 0;

	e->hiers = calloc(d->hiers.n, sizeof(*e->hiers));
	e->sets = calloc(d->nr_sets + 1, sizeof(*e->sets));
	e->namespaces = calloc(d->nr_nss + 1, sizeof(*e->namespaces));
	e->members = calloc(d->nr_members + 1, sizeof(*e->members));
	if (!e->hiers || !e->sets || !e->namespaces || !e->members)
		return -ENOMEM;
	for (i = 0; !err && i < d->hiers.n; i++) {
		e->hiers[i] = calloc(1, sizeof(**e->hiers));
		if (!e->hiers[i])
			return -ENOMEM;
		cgroup_hier_entry__init(e->hiers[i]);
		e->n_hiers++;
		err = build_hier(d, i, e->hiers[i]);
	}
	for (i = 0; !err && i < d->nr_sets; i++) {
		CgroupSetEntry *s = calloc(1, sizeof(*s));

		if (!s)
			return -ENOMEM;
		cgroup_set_entry__init(s);
		e->sets[e->n_sets++] = s;
		s->id = i + 1;
		s->paths = rel_row(d, d->sets[i]);
		if (!s->paths)
			return -ENOMEM;
		s->n_paths = d->hiers.n;
	}
	for (i = 0; !err && i < d->nr_nss; i++) {
		CgroupNsEntry *s = calloc(1, sizeof(*s));

		if (!s)
			return -ENOMEM;
		cgroup_ns_entry__init(s);
		e->namespaces[e->n_namespaces++] = s;
		s->id = i + 1;
		s->roots = rel_row(d, d->nss[i]);
		if (!s->roots)
			return -ENOMEM;
		s->n_roots = d->hiers.n;
	}
	for (i = 0; !err && i < d->nr_members; i++) {
		CgroupMemberEntry *m = calloc(1, sizeof(*m));

		if (!m)
			return -ENOMEM;
		cgroup_member_entry__init(m);
		e->members[e->n_members++] = m;
		m->pid = (uint32_t)d->members[i].pid;
		m->tid = (uint32_t)d->members[i].tid;
		m->set = d->members[i].set + 1;
		m->has_ns = d->members[i].ns != 0;
		m->ns = d->members[i].ns;
	}
	return err;
}

/* --cgroup-props then --cgroup-props-file into @spec. */
int cg_spec_load(const struct cr_options *o, struct cg_spec *spec)
{
	_cleanup_free_ char *text = NULL;
	int err = 0;

	if (o->cgroup_props)
		err = cg_spec_parse(spec, o->cgroup_props, "--cgroup-props");
	if (err || !o->cgroup_props_file)
		return err;
	text = read_file_at(AT_FDCWD, o->cgroup_props_file, NULL);
	if (!text) {
		pr_perror("--cgroup-props-file %s", o->cgroup_props_file);
		return neg_errno();
	}
	return cg_spec_parse(spec, text, o->cgroup_props_file);
}

/*
 * --cgroup-dump-controller NAME...: the hierarchies naming none of them
 * ("unified" or "cgroup2": the cgroup2 one) move to d->skipped; the tree is
 * not placed in them at restore (Documentation/cgroups.md).
 */
static int pick_hiers(const struct cr_options *o, struct cg_dump *d)
{
	unsigned int i, keep = 0;
	int k;

	if (!o->n_cgroup_dump_ctrls)
		return 0;
	d->skipped.h = calloc(d->hiers.n, sizeof(*d->skipped.h));
	if (!d->skipped.h)
		return -ENOMEM;
	for (i = 0; i < d->hiers.n; i++) {
		struct cg_hier *h = &d->hiers.h[i];
		bool want = false;

		for (k = 0; k < o->n_cgroup_dump_ctrls && !want; k++) {
			const char *name = o->cgroup_dump_ctrls[k];

			want = cg_hier_v2(h) ? !strcmp(name, "unified") || !strcmp(name, "cgroup2")
					     : cg_ctrls_match(h->ctrls, name);
		}
		if (want)
			d->hiers.h[keep++] = *h;
		else {
			pr_info("cgroup hierarchy %s: not dumped (--cgroup-dump-controller)\n",
				CG_NAME(h));
			d->skipped.h[d->skipped.n++] = *h;
		}
	}
	d->hiers.n = keep;
	return 0;
}

int cgroup_dump(struct dump_ctx *ctx)
{
	CgroupEntry e = CGROUP_ENTRY__INIT;
	struct cg_dump d = { 0 };
	enum cg_mode mode;
	unsigned int i;
	int err;

	if (cg_mode_parse(ctx->opts->manage_cgroups, &mode))
		return -EINVAL;
	if (mode == CG_MODE_IGNORE)
		return cg_ns_refuse_ignored(ctx);
	d.refreeze = ctx->tree->refreeze;
	err = cg_spec_load(ctx->opts, &d.spec);
	if (!err)
		err = cg_hiers_read(&d.hiers, NULL);
	if (!err)
		err = pick_hiers(ctx->opts, &d);
	if (!err)
		err = cg_members_read(ctx, &d);
	if (!err)
		err = cg_ns_read(ctx, &d);
	for (i = 0; !err && i < d.hiers.n; i++)
		err = find_root(&d, i);
	if (!err)
		err = build_entry(&d, &e);
	if (!err)
		err = img_write_one(ctx->dirfd, CR_IMG_CGROUP, 0, &e.base);
	if (!err)
		pr_info("%u tasks and threads in %u cgroup sets, %u cgroup namespaces\n",
			d.nr_members, d.nr_sets, d.nr_nss);
	/* the strings of the hierarchies belong to d.hiers */
	for (i = 0; i < e.n_hiers; i++) {
		e.hiers[i]->controllers = NULL;
		e.hiers[i]->root = NULL;
	}
	free_entry(&e);
	cg_dump_fini(&d);
	return err;
}

/* ---- restore --------------------------------------------------------------------------------- */

/* --cgroup-root for hierarchy @ctrls: the one naming it, else the one naming none, else NULL. */
static int root_option(const struct cr_options *o, const char *ctrls, const char **ret)
{
	const char *any = NULL;
	int i;

	*ret = NULL;
	for (i = 0; i < o->n_cgroup_roots; i++) {
		_cleanup_free_ char *ctrl = NULL;
		const char *path;

		if (cg_root_parse(o->cgroup_roots[i], &ctrl, &path)) {
			pr_err("--cgroup-root %s: not [CONTROLLER:]/PATH\n", o->cgroup_roots[i]);
			return -EINVAL;
		}
		if (!ctrl && !any)
			any = path;
		else if (ctrl && cg_ctrls_match(ctrls, ctrl) && !*ret)
			*ret = path;
	}
	if (!*ret)
		*ret = any;
	return 0;
}

/* Hierarchy @he of the image: criu-like's one, with the root the restore uses. */
static int match_hier(const struct cg_hiers *mine, const CgroupHierEntry *he, struct cg_hier *out,
		      const struct cr_options *o)
{
	int i = cg_hier_find(mine, he->controllers);
	const char *root;
	int err;

	if (i < 0 || !mine->h[i].mnt) {
		pr_err("cgroup hierarchy %s (the tree's cgroups below %s) is %s here: "
		       "%s\n",
		       *he->controllers ? he->controllers : "cgroup2", he->root,
		       i < 0 ? "not on this system" : "not mounted",
		       o->cgroup_yard ? "not in --cgroup-yard either"
				      : "mount it, or use --manage-cgroups=ignore");
		return -ENOENT;
	}
	err = root_option(o, he->controllers, &root);
	if (err)
		return err;
	out->ctrls = strdup(mine->h[i].ctrls);
	out->mnt = strdup(mine->h[i].mnt);
	out->mnt_root = strdup(mine->h[i].mnt_root);
	out->own = strdup(mine->h[i].own);
	out->root = strdup(root ? root : he->root);
	return out->ctrls && out->mnt && out->mnt_root && out->own && out->root ? 0 : -ENOMEM;
}

static int note_made(struct rst_cgroup *cg, const char *host)
{
	char **n = realloc(cg->made, (cg->nr_made + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	cg->made = n;
	n[cg->nr_made] = strdup(host);
	if (!n[cg->nr_made])
		return -ENOMEM;
	cg->nr_made++;
	return 0;
}

/* mkdir -p of @host, each directory made noted; *@made: the last one was made. */
static int make_dirs(struct rst_cgroup *cg, const char *host, bool *made)
{
	_cleanup_free_ char *p = strdup(host);
	char *s;
	int err;

	*made = false;
	if (!p)
		return -ENOMEM;
	for (s = p + 1;; s++) {
		if (*s && *s != '/')
			continue;
		bool end = !*s;

		*s = '\0';
		if (!mkdir(p, 0755)) {
			err = note_made(cg, p);
			if (err)
				return err;
			*made = end;
		} else if (errno != EEXIST) {
			return neg_errno();
		}
		if (end)
			return 0;
		*s = '/';
	}
}

/* One directory of the image at restore, as the mode says; *@wrote: its properties written. */
static int restore_dir(struct rst_cgroup *cg, const struct cg_hier *h, const CgroupDirEntry *de,
		       bool *wrote)
{
	_cleanup_free_ char *abs = cg_join(h->root, de->path);
	char host[4096], what[4200];
	bool exists, made = false, props;
	struct stat st;
	int err;

	if (!abs)
		return -ENOMEM;
	snprintf(what, sizeof(what), CG_FMT, CG_NAME(h), abs);
	err = cg_host_path(h, abs, host, sizeof(host));
	if (err) {
		pr_err("cgroup %s: outside %s, where criu-like reaches the hierarchy (%s)\n", what,
		       h->mnt_root, h->mnt);
		return err;
	}
	exists = !stat(host, &st);
	if (!exists && (cg->mode == CG_MODE_NONE || cg->mode == CG_MODE_PROPS)) {
		pr_err("cgroup %s does not exist: --manage-cgroups=%s restores into existing "
		       "cgroups only\n",
		       what, cg_mode_name(cg->mode));
		return -ENOENT;
	}
	/* strict: the root may be there (runc makes it), nothing below it */
	if (exists && cg->mode == CG_MODE_STRICT && *de->path) {
		pr_err("cgroup %s exists already: --manage-cgroups=strict makes every cgroup "
		       "below the tree's root itself\n",
		       what);
		return -EEXIST;
	}
	if (!exists) {
		err = fault_err(-ENOSPC, "cgroup %s: mkdir", what) ?: make_dirs(cg, host, &made);
		if (err) {
			pr_errno(err, "cannot make cgroup %s (%s)", what, host);
			return err;
		}
	}
	props = cg->mode == CG_MODE_FULL || cg->mode == CG_MODE_PROPS || made ||
		(cg->mode == CG_MODE_STRICT && !exists);
	if (!props || is_own_or_above(h, abs))
		return 0;
	*wrote = true;
	return cg_props_write(host, what, de, false);
}

/* Every hierarchy of the image matched, its directories made and configured. */
static int restore_hiers(struct rst_cgroup *cg, const struct cr_options *o)
{
	struct cg_hiers mine;
	size_t i, j;
	int err;

	err = cg_hiers_read(&mine, o->cgroup_yard);
	if (err) {
		pr_errno(err, "cannot read criu-like's own cgroups");
		return err;
	}
	cg->hiers.h = calloc(cg->e->n_hiers + 1, sizeof(*cg->hiers.h));
	if (!cg->hiers.h) {
		cg_hiers_fini(&mine);
		return -ENOMEM;
	}
	for (i = 0; !err && i < cg->e->n_hiers; i++) {
		err = match_hier(&mine, cg->e->hiers[i], &cg->hiers.h[i], o);
		if (!err)
			cg->hiers.n++;
	}
	cg_hiers_fini(&mine);
	cg->wrote = calloc(cg->e->n_hiers + 1, sizeof(*cg->wrote));
	if (!err && !cg->wrote)
		err = -ENOMEM;
	for (i = 0; !err && i < cg->e->n_hiers; i++) {
		cg->wrote[i] = calloc(cg->e->hiers[i]->n_dirs + 1, sizeof(**cg->wrote));
		if (!cg->wrote[i])
			return -ENOMEM;
		for (j = 0; !err && j < cg->e->hiers[i]->n_dirs; j++)
			err = restore_dir(cg, &cg->hiers.h[i], cg->e->hiers[i]->dirs[j],
					  &cg->wrote[i][j]);
	}
	return err;
}

static int check_entry(const CgroupEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_sets; i++)
		if (e->sets[i]->n_paths != e->n_hiers)
			return -EINVAL;
	for (i = 0; i < e->n_namespaces; i++)
		if (e->namespaces[i]->n_roots != e->n_hiers)
			return -EINVAL;
	for (i = 0; i < e->n_members; i++)
		if (cg_set_idx(e, e->members[i]->set) < 0 ||
		    (e->members[i]->ns && cg_ns_idx(e, e->members[i]->ns) < 0))
			return -EINVAL;
	return 0;
}

static int open_all(struct rst_cgroup *cg, int base)
{
	size_t nh = cg->e->n_hiers, i;
	int err = 0;

	cg->set_fds = malloc((cg->e->n_sets * nh + 1) * sizeof(int));
	cg->ns_fds = malloc((cg->e->n_namespaces * nh + 1) * sizeof(int));
	if (!cg->set_fds || !cg->ns_fds)
		return -ENOMEM;
	for (i = 0; i < cg->e->n_sets * nh; i++)
		cg->set_fds[i] = -1;
	for (i = 0; i < cg->e->n_namespaces * nh; i++)
		cg->ns_fds[i] = -1;
	for (i = 0; !err && i < cg->e->n_sets; i++)
		err = cg_open_dirs(cg, &cg->e->sets[i]->paths, 1, base, cg->set_fds + i * nh);
	for (i = 0; !err && i < cg->e->n_namespaces; i++)
		err = cg_open_dirs(cg, &cg->e->namespaces[i]->roots, 1, base, cg->ns_fds + i * nh);
	return err;
}

/* The restore's cgroups, for cgroup_mount_root() (the mount builder has no context). */
static const struct rst_cgroup *current_cg;

int rst_cgroup_prepare(struct restore_ctx *ctx)
{
	const struct cr_options *o = ctx->opts;
	struct rst_cgroup *cg;
	enum cg_mode mode;
	int err;

	if (cg_mode_parse(o->manage_cgroups, &mode))
		return -EINVAL;
	if (mode == CG_MODE_IGNORE)
		return 0;
	if (faccessat(ctx->dirfd, "cgroup.img", F_OK, 0)) {
		pr_info("no cgroup.img: the tree stays in criu-like's cgroups\n");
		return 0;
	}
	cg = calloc(1, sizeof(*cg));
	if (!cg)
		return -ENOMEM;
	ctx->cgroup = cg;
	cg->mode = mode;
	err = img_read_one(ctx->dirfd, CR_IMG_CGROUP, 0, (ProtobufCMessage **)&cg->e);
	if (!err && check_entry(cg->e)) {
		pr_err("cgroup.img: a set, namespace or member that does not add up\n");
		err = -EINVAL;
	}
	if (!err)
		err = restore_hiers(cg, o);
	if (!err) {
		current_cg = cg;
		pr_info("--manage-cgroups=%s: %zu sets in %zu hierarchies, %u cgroups made\n",
			cg_mode_name(mode), cg->e->n_sets, cg->e->n_hiers, cg->nr_made);
	}
	return err;
}

int rst_cgroup_open(struct restore_ctx *ctx)
{
	return ctx->cgroup ? open_all(ctx->cgroup, ctx->service_fd_base) : 0;
}

/* Hierarchy @ctrls ("memory", "name=systemd") is what a cgroup mount's @super options name. */
static bool super_names(const char *super, const char *ctrls)
{
	_cleanup_free_ char *copy = strdup(ctrls);
	char opts[1024], want[256], *c, *save = NULL;

	if (!copy)
		return false;
	snprintf(opts, sizeof(opts), ",%s,", super);
	for (c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
		snprintf(want, sizeof(want), ",%s,", c);
		if (!strstr(opts, want))
			return false;
	}
	return true;
}

int cgroup_mount_root(const char *fstype, const char *super, const char *root, char *buf,
		      size_t size)
{
	const struct rst_cgroup *cg = current_cg;
	unsigned int i;

	snprintf(buf, size, "%s", root);
	for (i = 0; cg && i < cg->hiers.n; i++) {
		const struct cg_hier *h = &cg->hiers.h[i];
		const char *rel;
		_cleanup_free_ char *to = NULL;

		if (strcmp(fstype, "cgroup2") ? cg_hier_v2(h) || !super_names(super, h->ctrls)
					      : !cg_hier_v2(h))
			continue;
		rel = cg_rel(cg->e->hiers[i]->root, root);
		if (!rel)
			return 0; /* outside the tree's cgroups: as it was */
		to = cg_join(h->root, rel);
		if (!to)
			return -ENOMEM;
		if ((size_t)snprintf(buf, size, "%s", to) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	return 0;
}

void rst_cgroup_resume(struct restore_ctx *ctx)
{
	struct rst_cgroup *cg = ctx->cgroup;
	char host[4096], what[4200];
	size_t i, j;

	if (!cg)
		return;
	/* the freezer states of the cgroups whose properties the mode wrote */
	for (i = 0; i < cg->hiers.n; i++)
		for (j = 0; j < cg->e->hiers[i]->n_dirs; j++) {
			const CgroupDirEntry *de = cg->e->hiers[i]->dirs[j];
			_cleanup_free_ char *abs = cg_join(cg->hiers.h[i].root, de->path);

			if (!cg->wrote[i][j] || !abs ||
			    cg_host_path(&cg->hiers.h[i], abs, host, sizeof(host)))
				continue;
			snprintf(what, sizeof(what), CG_FMT, CG_NAME(&cg->hiers.h[i]), abs);
			/* logged; the tree runs already */
			cg_props_write(host, what, de, true);
		}
}

static void close_fds(int *fds, size_t n)
{
	size_t i;

	for (i = 0; fds && i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
}

void rst_cgroup_abort(struct restore_ctx *ctx)
{
	struct rst_cgroup *cg = ctx->cgroup;
	unsigned int i, tries;

	if (!cg)
		return;
	for (i = cg->nr_made; i-- > 0;) {
		/* killed tasks leave their cgroups once reaped: give them a moment */
		for (tries = 0; rmdir(cg->made[i]) && errno == EBUSY && tries < 50; tries++)
			usleep(20000);
		if (access(cg->made[i], F_OK) == 0)
			pr_warn("cannot remove cgroup %s made by the failed restore: %m\n",
				cg->made[i]);
	}
	if (cg->nr_made)
		pr_info("removed the %u cgroups the failed restore made\n", cg->nr_made);
}

void rst_cgroup_fini(struct restore_ctx *ctx)
{
	struct rst_cgroup *cg = ctx->cgroup;
	unsigned int i;

	if (!cg)
		return;
	if (current_cg == cg)
		current_cg = NULL;
	for (i = 0; cg->wrote && cg->e && i < cg->e->n_hiers; i++)
		free(cg->wrote[i]);
	free(cg->wrote);
	if (cg->e) {
		close_fds(cg->set_fds, cg->e->n_sets * cg->e->n_hiers);
		close_fds(cg->ns_fds, cg->e->n_namespaces * cg->e->n_hiers);
		protobuf_c_message_free_unpacked(&cg->e->base, NULL);
	}
	cg_hiers_fini(&cg->hiers);
	for (i = 0; i < cg->nr_made; i++)
		free(cg->made[i]);
	free(cg->made);
	free(cg);
	ctx->cgroup = NULL;
}
