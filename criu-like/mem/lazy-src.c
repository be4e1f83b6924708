// SPDX-License-Identifier: GPL-2.0
/*
 * Where the lazy-pages daemon takes page contents from. One implementation
 * so far: the local images, each task's pagemap resolved through its
 * pre-dump chain exactly as a restore does (rst_pages_map_open()). A remote
 * page server would be a second struct lazy_src_ops: open_task asks the
 * server for the pagemap, read for a range (Documentation/lazy-pages.md).
 */
#define LOG_PREFIX "lazy-src: "

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "fault.h"
#include "image.h"
#include "lazy.h"
#include "log.h"
#include "pstree.pb-c.h"
#include "restore-mem.h"
#include "stats.h"
#include "util.h"

struct local_task {
	pid_t pid;
	struct rst_pages_map map;
	void **maps; /* [map.n]: each level's pages image mapped whole, or NULL */
	size_t *map_len;
	struct lazy_ranges unserved; /* resolved ahead (local_prepare()), until its task comes */
	bool ready; /* .unserved holds the ranges open_task gives */
	/* the stretches to collapse of the last ranges resolved, from the same mm image */
	uint64_t *thp;
	size_t nthp;
	int thp_err;
};

struct local_src {
	int dirfd;
	const char *name;
	size_t n;
	struct local_task *tasks;
};

static struct local_task *local_find(struct local_src *l, pid_t pid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->tasks[i].pid == pid)
			return &l->tasks[i];
	return NULL;
}

/* The stretches to collapse over @unserved (lazy_thp_chunks()), for local_thp_chunks(). */
static void thp_note(struct local_task *t, const MmEntry *mm, const struct lazy_ranges *unserved)
{
	free(t->thp);
	t->thp = NULL;
	t->nthp = 0;
	t->thp_err = lazy_thp_chunks(mm, unserved, &t->thp, &t->nthp);
}

/*
 * @pid's chain resolved into the ranges still to come, @out: the pages of
 * the VMAs its restore left lazy. Its mm image, read once, also gives the
 * stretches to collapse over them (thp_note()).
 */
static int local_resolve(struct local_src *l, pid_t pid, struct lazy_ranges *out)
{
	struct local_task *t = local_find(l, pid), *nt;
	MmEntry *mm = NULL;
	int err = 0;

	if (!t) {
		nt = reallocarray(l->tasks, l->n + 1, sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		l->tasks = nt;
		t = &l->tasks[l->n];
		*t = (struct local_task){ .pid = pid };
		err = rst_pages_map_open(l->dirfd, l->name, pid, &t->map);
		if (err)
			return err;
		l->n++;
	}
	err = img_read_one(l->dirfd, CR_IMG_MM, (uint32_t)pid, (ProtobufCMessage **)&mm);
	for (size_t i = 0; i < t->map.segs.n && !err; i++) {
		const struct rst_chain_seg *g = &t->map.segs.seg[i];
		struct lazy_range r = { .vaddr = g->vaddr,
					.len = g->len,
					.off = g->off,
					.level = g->level,
					.entry = (uint32_t)g->entry };

		if (!t->map.pages[g->level]) {
			pr_err("pid %d: level %u of its chain has no pages image\n", pid, g->level);
			err = -ENOENT;
		} else {
			err = lazy_ranges_add_lazy(out, mm, &r);
			if (err == -EINVAL)
				pr_err("pid %d: pages %lx+%lu outside its VMAs\n", pid, r.vaddr,
				       r.len);
		}
	}
	if (!err)
		thp_note(t, mm, out);
	if (mm)
		protobuf_c_message_free_unpacked(&mm->base, NULL);
	return err;
}

static int local_open_task(struct lazy_src *s, pid_t pid, struct lazy_ranges *out)
{
	struct local_src *l = s->priv;
	struct local_task *t = local_find(l, pid);

	if (t && t->ready) {
		*out = t->unserved;
		t->unserved = (struct lazy_ranges){ 0 };
		t->ready = false;
		return 0;
	}
	return local_resolve(l, pid, out);
}

/*
 * Before the restore hands its tasks over: every task of the pstree resolved
 * through its chain now, while the restore makes the namespaces and forks,
 * not while it waits at the handover with the tree held. A task that fails
 * here is resolved again when it comes, and says why then.
 */
static void local_prepare(struct lazy_src *s)
{
	struct local_src *l = s->priv;
	ProtobufCMessage **recs = NULL;
	struct cr_img *img = img_open(l->dirfd, CR_IMG_PSTREE, 0, IMG_READ);
	size_t n = 0, done = 0;
	uint64_t t0 = stats_now_ns();

	if (!img || img_read_all(img, &recs, &n)) {
		if (img)
			img_close(img);
		return;
	}
	img_close(img);
	for (size_t i = 0; i < n; i++) {
		const PstreeEntry *pe = (const PstreeEntry *)recs[i];
		struct lazy_ranges unserved = { 0 };
		struct local_task *t;

		if (pe->state == TASK_STATE__TASK_ZOMBIE ||
		    local_resolve(l, (pid_t)pe->pid, &unserved)) {
			lazy_ranges_fini(&unserved);
			continue;
		}
		t = local_find(l, (pid_t)pe->pid);
		if (!t) {
			lazy_ranges_fini(&unserved);
			continue;
		}
		lazy_ranges_fini(&t->unserved);
		t->unserved = unserved;
		t->ready = true;
		done++;
	}
	img_free_records(recs, n);
	pr_debug("%zu of %zu tasks' pages resolved ahead in %lu us\n", done, n,
		 (unsigned long)((stats_now_ns() - t0) / 1000));
}

static int local_read(struct lazy_src *s, pid_t pid, uint32_t level, uint64_t off, void *buf,
		      size_t len)
{
	struct local_task *t = local_find(s->priv, pid);

	if (!t || level >= t->map.n || !t->map.pages[level])
		return -ENOENT;
	return img_read_raw(t->map.pages[level], off, buf, len);
}

static const void *local_map(struct lazy_src *s, pid_t pid, uint32_t level, uint64_t off,
			     size_t len)
{
	struct local_task *t = local_find(s->priv, pid);
	struct cr_img *img = t && level < t->map.n ? t->map.pages[level] : NULL;

	if (!img || off > img_raw_size(img) || len > img_raw_size(img) - off) {
		errno = ENODATA;
		return NULL;
	}
	/* the fault point of img_read_raw(), which this replaces */
	if (fault_hit("%s: read at %llu", img_name(img), (unsigned long long)off)) {
		errno = EIO;
		return NULL;
	}
	if (!t->maps) {
		t->maps = calloc(t->map.n, sizeof(*t->maps));
		t->map_len = calloc(t->map.n, sizeof(*t->map_len));
		if (!t->maps || !t->map_len)
			return NULL;
	}
	if (!t->maps[level]) {
		size_t size = IMG_RAW_DATA_OFF + img_raw_size(img);
		void *m = mmap(NULL, size, PROT_READ, MAP_SHARED, img_raw_fd(img), 0);

		if (m == MAP_FAILED)
			return NULL;
		madvise(m, size, MADV_SEQUENTIAL);
		t->maps[level] = m;
		t->map_len[level] = size;
	}
	return (const char *)t->maps[level] + IMG_RAW_DATA_OFF + off;
}

static void local_fini(struct lazy_src *s)
{
	struct local_src *l = s->priv;

	for (size_t i = 0; l && i < l->n; i++) {
		struct local_task *t = &l->tasks[i];

		for (unsigned int k = 0; t->maps && k < t->map.n; k++)
			if (t->maps[k])
				munmap(t->maps[k], t->map_len[k]);
		free(t->maps);
		free(t->map_len);
		free(t->thp);
		lazy_ranges_fini(&t->unserved);
		rst_pages_map_fini(&t->map);
	}
	if (l)
		free(l->tasks);
	free(l);
	s->priv = NULL;
}

int lazy_src_local_where(struct lazy_src *s, pid_t pid, uint32_t level, const char **dir,
			 const char **name)
{
	struct local_task *t = local_find(s->priv, pid);

	if (!t || level >= t->map.n || !t->map.pages[level])
		return -ENOENT;
	*dir = t->map.dirs[level];
	*name = img_name(t->map.pages[level]);
	return 0;
}

/* What local_resolve() found with the ranges open_task gave last, handed over once. */
static int local_thp_chunks(struct lazy_src *s, pid_t pid, uint64_t **out, size_t *n)
{
	struct local_task *t = local_find(s->priv, pid);

	if (!t)
		return -ENOENT;
	if (t->thp_err)
		return t->thp_err;
	*out = TAKE_PTR(t->thp);
	*n = t->nthp;
	t->nthp = 0;
	return 0;
}

static const struct lazy_src_ops local_ops = {
	.name = "images",
	.prepare = local_prepare,
	.open_task = local_open_task,
	.thp_chunks = local_thp_chunks,
	.read = local_read,
	.map = local_map,
	.fini = local_fini,
};

int lazy_src_local(int dirfd, const char *name, struct lazy_src *out)
{
	struct local_src *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->dirfd = dirfd;
	l->name = name;
	out->ops = &local_ops;
	out->priv = l;
	return 0;
}
