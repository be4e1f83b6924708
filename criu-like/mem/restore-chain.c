// SPDX-License-Identifier: GPL-2.0
/*
 * The pages of a task whose pagemap points elsewhere (PE_PARENT: a pre-dump
 * chain, DIR/parent/...; PE_PARENT_SHARED: its parent task's pages), or of a
 * lazy restore: read through every level it needs and flattened into a
 * memfd laid out as a pages image, which the restorer reads as the task's
 * pages (Documentation/memory.md). The parts the task may get from its parent
 * by fork are left as holes there, for rst_cow_prepare() (restore-cow.c).
 */
#define LOG_PREFIX "restore-mem: "

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crc32c.h"
#include "image.h"
#include "log.h"
#include "restore-files.h"
#include "restore-mem.h"
#include "stats.h"
#include "util.h"

#define CHAIN_MAX 128 /* levels: a pre-dump chain, and those of the parent tasks */
#define CHAIN_BUF (1UL << 20)

struct chain {
	unsigned int n;
	unsigned int n_own; /* levels 0..n_own-1: this task's own chain; the others its parents' */
	bool defer; /* leave the parents' pages to the task (rst_plan.deferred) */
	struct rst_chain_level lv[CHAIN_MAX];
	ProtobufCMessage **recs[CHAIN_MAX];
	size_t nrecs[CHAIN_MAX];
	struct cr_img *pages[CHAIN_MAX];
	int dirfd[CHAIN_MAX];
	uint32_t shared_pid[CHAIN_MAX]; /* PagemapHead.shared_pid of each level, 0: none */
	char dirs[CHAIN_MAX][256]; /* each level's directory, relative to level 0's */
	char names[CHAIN_MAX][288]; /* for messages: the directory, and the pid if not level 0's */
	bool *verified[CHAIN_MAX];
};

static void chain_fini(struct chain *c)
{
	for (unsigned int i = 1; i < c->n; i++) {
		img_free_records(c->recs[i], c->nrecs[i]);
		if (c->dirfd[i] >= 0)
			close(c->dirfd[i]);
	}
	for (unsigned int i = 0; i < c->n; i++) {
		if (c->pages[i])
			img_close(c->pages[i]);
		free(c->lv[i].off);
		free(c->verified[i]);
	}
}

static bool has_entries(const struct rst_chain_level *l, uint32_t flag)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->pe[i]->flags & flag)
			return true;
	return false;
}

/* The directory of level @k (relative to level 0's) and its name in messages. */
static void chain_name(struct chain *c, unsigned int k, const char *dir, pid_t pid, pid_t self)
{
	char d[sizeof(c->dirs[0])];

	snprintf(d, sizeof(d), "%s", dir); /* @dir may be another level's */
	memcpy(c->dirs[k], d, sizeof(d));
	if (pid == self)
		snprintf(c->names[k], sizeof(c->names[k]), "%s", d);
	else
		snprintf(c->names[k], sizeof(c->names[k]), "%s (pid %d)", d, pid);
	c->lv[k].name = c->names[k];
}

/* Level @k, whose dirfd, dirs and names are set: @pid's pagemap and pages image there. */
static int chain_read_level(struct chain *c, unsigned int k, pid_t pid, pid_t self)
{
	const PagemapHead *h;
	struct cr_img *img;
	int err;

	img = img_open(c->dirfd[k], CR_IMG_PAGEMAP, (uint32_t)pid, IMG_READ);
	if (!img) {
		pr_err("pid %d: %s has no pagemap of pid %d\n", self, c->names[k], pid);
		return -errno ? -errno : -ENOENT;
	}
	err = img_read_all(img, &c->recs[k], &c->nrecs[k]);
	img_close(img);
	if (!err && !c->nrecs[k])
		err = -EINVAL;
	if (err) {
		pr_err("pid %d: cannot read the pagemap of pid %d in %s\n", self, pid, c->names[k]);
		return err;
	}
	h = (const PagemapHead *)c->recs[k][0];
	c->shared_pid[k] = h->has_shared_pid ? h->shared_pid : 0;
	c->lv[k].pe = (PagemapEntry **)c->recs[k] + 1;
	c->lv[k].n = c->nrecs[k] - 1;
	c->pages[k] = img_open(c->dirfd[k], CR_IMG_PAGES, h->pages_id, IMG_READ | IMG_OPTIONAL);
	/* absent: no page at this level; there but unreadable: an error, not a hole */
	return !c->pages[k] && errno != ENOENT ? -errno : 0;
}

/* Level @k (k >= 1): DIR/parent of level k - 1, a complete image with @pid's pagemap. */
static int chain_open_level(struct chain *c, unsigned int k, pid_t pid, pid_t self)
{
	InventoryEntry *inv = NULL;
	bool top = !strcmp(c->dirs[k - 1], ".");
	char dir[sizeof(c->dirs[0])];
	int err;

	snprintf(dir, sizeof(dir), "%.240s%s", top ? "" : c->dirs[k - 1],
		 top ? "parent" : "/parent");
	chain_name(c, k, dir, pid, self);
	c->dirfd[k] = openat(c->dirfd[k - 1], "parent", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->dirfd[k] < 0) {
		err = neg_errno();
		pr_perror("pid %d: pages are in the parent image, but %s", self, c->names[k]);
		return err;
	}
	err = img_read_one(c->dirfd[k], CR_IMG_INVENTORY, 0, (ProtobufCMessage **)&inv);
	if (!err && !inv->completed)
		err = -EINVAL;
	if (err)
		pr_err("pid %d: parent image %s is not a complete (pre-)dump\n", self, c->names[k]);
	/* a lazy dump's holes are filled for its own level only, by the dump itself */
	if (!err) {
		char who[32];

		snprintf(who, sizeof(who), "pid %d", self);
		err = img_lazy_refuse(who, dir, inv, "it cannot be a parent image");
	}
	if (inv)
		protobuf_c_message_free_unpacked(&inv->base, NULL);
	if (err)
		return err;
	return chain_read_level(c, k, pid, self);
}

/* The levels of @pid's pre-dump chain after level @k (its own, read already). */
static int chain_open_parents(struct chain *c, unsigned int k, pid_t pid, pid_t self)
{
	int err = 0;

	for (; !err && has_entries(&c->lv[k], PAGEMAP_FLAG__PE_PARENT); k++) {
		if (c->n == CHAIN_MAX) {
			pr_err("pid %d: chain of more than %d images\n", self, CHAIN_MAX);
			return -ELOOP;
		}
		c->lv[k].next = c->n;
		c->dirfd[c->n] = -1;
		err = chain_open_level(c, c->n, pid, self);
		c->n++;
	}
	return err;
}

/* Level @k has PE_PARENT_SHARED parts: add the parent task's levels, in @k's directory. */
static int chain_open_shared(struct chain *c, unsigned int k, pid_t self)
{
	unsigned int s = c->n;
	pid_t ppid = (pid_t)c->shared_pid[k];
	int err;

	if (!ppid) {
		pr_err("pid %d: %s has pages in the parent task's image, but names no parent "
		       "task\n",
		       self, c->names[k]);
		return -EINVAL;
	}
	if (s == CHAIN_MAX) {
		pr_err("pid %d: chain of more than %d images\n", self, CHAIN_MAX);
		return -ELOOP;
	}
	c->lv[k].shared = s;
	c->dirfd[s] = fcntl(c->dirfd[k], F_DUPFD_CLOEXEC, 0);
	c->n++;
	if (c->dirfd[s] < 0)
		return neg_errno();
	chain_name(c, s, c->dirs[k], ppid, self);
	err = chain_read_level(c, s, ppid, self);
	return err ? err : chain_open_parents(c, s, ppid, self);
}

/* The source entry of @s, checked against its crc32c once (a corrupt parent is named). */
static int chain_verify(struct chain *c, pid_t pid, const struct rst_chain_seg *s)
{
	const PagemapEntry *e = c->lv[s->level].pe[s->entry];
	int err;

	if (c->verified[s->level][s->entry])
		return 0;
	if (!c->pages[s->level]) {
		pr_err("pid %d: %s has no pages image\n", pid, c->lv[s->level].name);
		return -ENOENT;
	}
	err = e->has_crc32c ? img_verify_run(c->pages[s->level], c->lv[s->level].off[s->entry],
					     (uint64_t)e->nr_pages * PAGE_SIZE, e->crc32c)
			    : 0;
	if (err) {
		pr_err("pid %d: pages %lx +%u in %s are corrupt\n", pid, e->vaddr, e->nr_pages,
		       c->lv[s->level].name);
		return err;
	}
	c->verified[s->level][s->entry] = true;
	return 0;
}

/*
 * Whether @s is its whole source entry: then its copy's crc32c is the
 * entry's check, and chain_verify() would only read the same bytes again.
 */
static bool seg_whole(const struct chain *c, const struct rst_chain_seg *s)
{
	const PagemapEntry *e = c->lv[s->level].pe[s->entry];

	return e->has_crc32c && !c->verified[s->level][s->entry] &&
	       s->off == c->lv[s->level].off[s->entry] &&
	       s->len == (uint64_t)e->nr_pages * PAGE_SIZE;
}

/* After the copy of a whole entry (seg_whole()): its crc32c @crc against the image's. */
static int seg_check(struct chain *c, pid_t pid, const struct rst_chain_seg *s, uint32_t crc)
{
	const PagemapEntry *e = c->lv[s->level].pe[s->entry];

	if (crc != e->crc32c) {
		pr_err("pid %d: pages %lx +%u in %s are corrupt (crc32c %x, expected %x)\n", pid,
		       e->vaddr, e->nr_pages, c->lv[s->level].name, crc, e->crc32c);
		return -EBADMSG;
	}
	c->verified[s->level][s->entry] = true;
	return 0;
}

/* Segment @s is another task's: record it, its bytes stay a hole at @out. */
static int defer_seg(struct chain *c, const struct rst_chain_seg *s, uint64_t out,
		     struct rst_mem_plan *p, int *src_of)
{
	struct rst_deferred *d;

	if (src_of[s->level] < 0) {
		struct rst_defer_src *n = reallocarray(p->srcs, p->nr_srcs + 1, sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->srcs = n;
		snprintf(n[p->nr_srcs].dir, sizeof(n[p->nr_srcs].dir), "%s", c->dirs[s->level]);
		n[p->nr_srcs].pages_id = ((const PagemapHead *)c->recs[s->level][0])->pages_id;
		src_of[s->level] = (int)p->nr_srcs++;
	}
	d = reallocarray(p->deferred, p->nr_deferred + 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	p->deferred = d;
	d[p->nr_deferred++] = (struct rst_deferred){ .vaddr = s->vaddr,
						     .len = s->len,
						     .off = out,
						     .src_off = s->off,
						     .src = (uint32_t)src_of[s->level] };
	return 0;
}

/*
 * One memfd for the chains of every task, each task's pages in a range of its
 * own: every task inherits the controller's fds, and one per task made each
 * fork copy, and each task close, as many fds as the tree has tasks.
 */
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static int shared_fd = -1;
static uint64_t shared_end = IMG_RAW_DATA_OFF;

/* The memfd (made on first use, above @fd_base) and *@base, the start of @len bytes of it. */
static int shared_range(int fd_base, uint64_t len, uint64_t *base)
{
	int err = 0;

	pthread_mutex_lock(&shared_lock);
	if (shared_fd < 0) {
		int fd = memfd_create("criu-like-pages", MFD_CLOEXEC);

		/* with the service fds: the task's own fds are rebuilt below them */
		shared_fd = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, fd_base);
		err = shared_fd < 0 ? neg_errno() : 0;
		if (fd >= 0)
			close(fd);
	}
	*base = shared_end;
	shared_end += len;
	pthread_mutex_unlock(&shared_lock);
	return err ?: shared_fd;
}

int rst_chain_done(void)
{
	/* the holes read as zeros up to the end */
	if (shared_fd >= 0 && ftruncate(shared_fd, (off_t)shared_end))
		return neg_errno();
	return 0;
}

void rst_chain_fini(void)
{
	if (shared_fd >= 0)
		close(shared_fd);
	shared_fd = -1;
	shared_end = IMG_RAW_DATA_OFF;
}

/*
 * Copy every segment into a range of the memfd laid out as a pages image;
 * one PE_PRESENT entry each. With c->defer, the segments of the parent tasks' levels are
 * left as holes (no crc32c: the parent checks the same bytes as it restores
 * them) for rst_cow_prepare().
 */
static int chain_flatten_to(struct chain *c, pid_t pid, const struct rst_chain_segs *segs,
			    struct rst_mem_plan *p, int fd_base, PagemapEntry *ents,
			    PagemapEntry **ep, uint8_t *buf)
{
	uint64_t out, base, len = 0, delta;
	int src_of[CHAIN_MAX];
	int fd, err = 0;

	for (unsigned int i = 0; i < CHAIN_MAX; i++)
		src_of[i] = -1;
	for (size_t i = 0; i < segs->n; i++)
		len += segs->seg[i].len;
	fd = shared_range(fd_base, len, &base);
	if (fd < 0)
		return fd;
	out = base;
	for (size_t i = 0; i < segs->n && !err; i++) {
		const struct rst_chain_seg *s = &segs->seg[i];
		bool defer = c->defer && s->level >= c->n_own;
		bool whole = !defer && seg_whole(c, s);
		uint32_t crc = 0;

		/*
		 * Lazy: only a few eager pages are read here; checking their whole
		 * entries would read what the daemon serves later, the point of it.
		 * A whole entry is checked by its copy's crc32c, below.
		 */
		err = p->vma_lazy || defer || whole ? 0 : chain_verify(c, pid, s);
		if (!err && defer) {
			err = defer_seg(c, s, out, p, src_of);
			out += s->len;
		}
		for (uint64_t done = 0; !err && !defer && done < s->len;) {
			size_t len = min(s->len - done, (uint64_t)CHAIN_BUF);

			err = img_read_raw(c->pages[s->level], s->off + done, buf, len);
			if (!err && pwrite(fd, buf, len, (off_t)out) != (ssize_t)len)
				err = neg_errno() ?: -EIO;
			crc = crc32c(crc, buf, len);
			out += len;
			done += len;
		}
		if (!err && whole)
			err = seg_check(c, pid, s, crc);
		pagemap_entry__init(&ents[i]);
		ents[i].vaddr = s->vaddr;
		ents[i].nr_pages = (uint32_t)(s->len / PAGE_SIZE);
		ents[i].flags = PAGEMAP_FLAG__PE_PRESENT;
		ents[i].has_crc32c = !defer;
		ents[i].crc32c = crc;
		ep[i] = &ents[i];
	}
	if (!err)
		err = rst_plan_runs(pid, p, ep, segs->n);
	if (err)
		return err;
	/* rst_plan_runs() lays the runs out from the start of a pages image: this one's range */
	delta = base - IMG_RAW_DATA_OFF;
	for (size_t i = 0; i < p->nr_runs; i++)
		p->runs[i].off += delta;
	for (size_t i = 0; i < p->nr_crcs; i++)
		p->crcs[i].off += delta;
	p->has_chain_fd = true;
	p->chain_fd = fd;
	pr_info("pid %d: %zu runs through a chain of %u images, %lu bytes (%zu parts left to the "
		"task)\n",
		pid, segs->n, c->n, p->pages_bytes, p->nr_deferred);
	return 0;
}

/* The buffers are allocated here, not with a cleanup attribute cppcheck cannot follow. */
static int chain_flatten(struct chain *c, pid_t pid, const struct rst_chain_segs *segs,
			 struct rst_mem_plan *p, int fd_base)
{
	PagemapEntry *ents = calloc(segs->n + 1, sizeof(*ents));
	PagemapEntry **ep = calloc(segs->n + 1, sizeof(*ep));
	uint8_t *buf = malloc(CHAIN_BUF);
	int err = -ENOMEM;

	if (ents && ep && buf)
		err = chain_flatten_to(c, pid, segs, p, fd_base, ents, ep, buf);
	free(ents);
	free(ep);
	free(buf);
	return err;
}

/*
 * Open level 0 and every level its entries need: its pre-dump chain, and for
 * PE_PARENT_SHARED parts the parent task's pagemap (and its chain, and its
 * parent's...), each level's offsets.
 */
static int chain_open(struct chain *c, int dirfd, const char *name, pid_t pid, const PagemapHead *h,
		      PagemapEntry **pe, size_t n)
{
	int err;

	c->n = 1;
	c->lv[0] = (struct rst_chain_level){ .name = name, .pe = pe, .n = n };
	c->dirfd[0] = dirfd;
	c->shared_pid[0] = h->has_shared_pid ? h->shared_pid : 0;
	snprintf(c->dirs[0], sizeof(c->dirs[0]), ".");
	c->pages[0] = img_open(dirfd, CR_IMG_PAGES, h->pages_id, IMG_READ | IMG_OPTIONAL);
	if (!c->pages[0] && errno != ENOENT)
		return -errno; /* there but unreadable (img_open() said why) */
	err = chain_open_parents(c, 0, pid, pid);
	c->n_own = c->n;
	/* c->n grows while this runs: the parents' levels are looked at too */
	for (unsigned int k = 0; !err && k < c->n; k++)
		if (has_entries(&c->lv[k], PAGEMAP_FLAG__PE_PARENT_SHARED))
			err = chain_open_shared(c, k, pid);
	for (unsigned int i = 0; !err && i < c->n; i++) {
		err = rst_chain_offsets(&c->lv[i]);
		c->verified[i] = calloc(c->lv[i].n + 1, sizeof(bool));
		if (!err && !c->verified[i])
			err = -ENOMEM;
	}
	return err;
}

/* --lazy-pages: keep of @segs what is read now (restore-mem-plan.c decides). */
static int lazy_segs(const struct restore_ctx *ctx, pid_t pid, const CoreEntry *core,
		     struct rst_mem_plan *p, struct rst_chain_segs *segs)
{
	size_t nu = rst_io_uring_buf_pages(ctx, pid, NULL, 0);
	/* io_uring registered buffers, which the restorer pins before the daemon serves */
	size_t max = rst_eager_pages_max(p->mm, core) + 1 + nu, ne;
	_cleanup_free_ uint64_t *eager = calloc(max, sizeof(*eager));
	struct rst_chain_segs kept = { 0 };
	int err;

	p->vma_lazy = calloc(p->mm->n_vmas + 1, sizeof(*p->vma_lazy));
	if (!p->vma_lazy || !eager)
		return -ENOMEM;
	nu = rst_io_uring_buf_pages(ctx, pid, eager, nu);
	ne = rst_eager_pages(p->mm, core, eager, nu, max);
	err = rst_lazy_filter(p->mm, eager, ne, p->vma_lazy, segs, &kept, &p->lazy_bytes);
	free(segs->seg);
	*segs = kept;
	return err;
}

/*
 * --lazy-pages: what lies outside the lazy VMAs, and the eager pages, of
 * level 0's entries (lazy_segs() on the entries themselves), resolved
 * through the chain; the lazy-pages daemon resolves the rest for itself.
 * An address the chain does not hold (never populated) resolves to
 * nothing either way; the lazy VMAs are those holding entries.
 */
static int lazy_resolve(struct restore_ctx *ctx, pid_t pid, const CoreEntry *core,
			struct rst_mem_plan *p, const struct chain *c, struct rst_chain_segs *segs)
{
	struct rst_chain_segs need = { 0 };
	int err;

	err = rst_chain_top(&c->lv[0], &need);
	if (!err)
		err = lazy_segs(ctx, pid, core, p, &need);
	if (!err)
		err = rst_chain_resolve_ranges(pid, c->lv, c->n, &need, segs);
	free(need.seg);
	return err;
}

/*
 * pagemap-PID.img has PE_PARENT entries, or the restore is lazy: read the
 * pages through DIR/parent, DIR/parent/parent... into a memfd.
 */
static int read_chain_in(struct restore_ctx *ctx, const CoreEntry *core, pid_t pid,
			 struct rst_mem_plan *p, const PagemapHead *h, PagemapEntry **pe, size_t n,
			 struct chain *c)
{
	struct rst_chain_segs segs = { 0 };
	uint64_t t0 = stats_now_ns(), t1 = 0, t2 = 0;
	int err;

	err = chain_open(c, ctx->dirfd, ctx->opts->images_dir, pid, h, pe, n);
	/* the lazy-pages daemon reads what it serves itself; others read the rest */
	c->defer = !ctx->opts->lazy_pages;
	t1 = stats_now_ns();
	if (!err && !ctx->opts->lazy_pages)
		err = rst_chain_resolve(pid, c->lv, c->n, &segs);
	if (!err && ctx->opts->lazy_pages)
		err = lazy_resolve(ctx, pid, core, p, c, &segs);
	t2 = stats_now_ns();
	if (!err)
		err = chain_flatten(c, pid, &segs, p, ctx->service_fd_base);
	if (!err)
		pr_debug("pid %d: the chain read in %llu us, resolved in %llu, its pages copied in "
			 "%llu\n",
			 pid, (unsigned long long)(t1 - t0) / 1000,
			 (unsigned long long)(t2 - t1) / 1000,
			 (unsigned long long)(stats_now_ns() - t2) / 1000);
	free(segs.seg);
	chain_fini(c);
	return err;
}

/* The chain is allocated here, not with a cleanup attribute cppcheck cannot follow. */
int rst_read_chain(struct restore_ctx *ctx, const CoreEntry *core, pid_t pid,
		   struct rst_mem_plan *p, const PagemapHead *h, PagemapEntry **pe, size_t n)
{
	struct chain *c = calloc(1, sizeof(*c));
	int err = c ? read_chain_in(ctx, core, pid, p, h, pe, n, c) : -ENOMEM;

	free(c);
	return err;
}

static int pages_map_open(int dirfd, const char *name, pid_t pid, struct rst_pages_map *m,
			  struct chain *c)
{
	ProtobufCMessage **recs = NULL;
	size_t n = 0;
	int err;

	err = rst_read_pagemap_recs(dirfd, pid, &recs, &n);
	if (err)
		return err;
	err = chain_open(c, dirfd, name, pid, (PagemapHead *)recs[0], (PagemapEntry **)recs + 1,
			 n - 1);
	if (!err)
		err = rst_chain_resolve(pid, c->lv, c->n, &m->segs);
	m->pages = err ? NULL : calloc(c->n, sizeof(*m->pages));
	m->dirs = err ? NULL : calloc(c->n, sizeof(*m->dirs));
	if (!err && (!m->pages || !m->dirs))
		err = -ENOMEM;
	for (unsigned int i = 0; !err && i < c->n; i++) {
		m->pages[i] = c->pages[i];
		c->pages[i] = NULL;
		m->dirs[i] = strdup(c->dirs[i]);
		if (!m->dirs[i])
			err = -ENOMEM;
	}
	m->n = c->n;
	chain_fini(c);
	img_free_records(recs, n);
	if (err)
		rst_pages_map_fini(m);
	return err;
}

/* The chain is allocated here, not with a cleanup attribute cppcheck cannot follow. */
int rst_pages_map_open(int dirfd, const char *name, pid_t pid, struct rst_pages_map *m)
{
	struct chain *c = calloc(1, sizeof(*c));
	int err;

	*m = (struct rst_pages_map){ 0 };
	if (!c)
		return -ENOMEM;
	err = pages_map_open(dirfd, name, pid, m, c);
	free(c);
	return err;
}

void rst_pages_map_fini(struct rst_pages_map *m)
{
	for (unsigned int i = 0; m->pages && i < m->n; i++)
		if (m->pages[i])
			img_close(m->pages[i]);
	for (unsigned int i = 0; m->dirs && i < m->n; i++)
		free(m->dirs[i]);
	free(m->dirs);
	free(m->pages);
	free(m->segs.seg);
	*m = (struct rst_pages_map){ 0 };
}
