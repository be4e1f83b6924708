// SPDX-License-Identifier: GPL-2.0
/*
 * The controller's half of the memory restore: read and check mm-PID.img,
 * pagemap-PID.img and creds-PID.img of every live task before the first
 * fork (so the forked tasks inherit the plans), and create the shared
 * anonymous memory objects, filled from pagemap-shmem-SHMID.img, at service
 * fds every task inherits.
 */
#define LOG_PREFIX "restore-mem: "

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "crc32c.h"
#include "image.h"
#include "log.h"
#include "par.h"
#include "fault.h"
#include "restore-files.h"
#include "restore-mem.h"
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
	if (inv)
		protobuf_c_message_free_unpacked(&inv->base, NULL);
	if (err) {
		pr_err("pid %d: parent image %s is not a complete (pre-)dump\n", self, c->names[k]);
		return err ? err : -EINVAL;
	}
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
 * Copy every segment into a memfd laid out as a pages image; one PE_PRESENT
 * entry each. With c->defer, the segments of the parent tasks' levels are
 * left as holes (no crc32c: the parent checks the same bytes as it restores
 * them) for rst_cow_prepare().
 */
static int chain_flatten_to(struct chain *c, pid_t pid, const struct rst_chain_segs *segs,
			    struct rst_mem_plan *p, int fd_base, PagemapEntry *ents,
			    PagemapEntry **ep, uint8_t *buf)
{
	uint64_t out = IMG_RAW_DATA_OFF;
	int src_of[CHAIN_MAX];
	int fd, err = 0;

	for (unsigned int i = 0; i < CHAIN_MAX; i++)
		src_of[i] = -1;
	fd = memfd_create("criu-like-pages", MFD_CLOEXEC);
	if (fd >= 0) {
		/* with the service fds: the task's own fds are rebuilt below them */
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, fd_base);

		close(fd);
		fd = hi;
	}
	if (fd < 0)
		return neg_errno();
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
	/* the holes read as zeros up to the end */
	if (!err && ftruncate(fd, (off_t)out))
		err = neg_errno();
	if (!err)
		err = rst_plan_runs(pid, p, ep, segs->n);
	if (err) {
		close(fd);
		return err;
	}
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

static int addr_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The pages each thread's rseq area lies on: the kernel writes them before
 * the resume; after the @n given already (io_uring registered buffers, which
 * the restorer pins before the lazy-pages daemon serves anything).
 */
static size_t eager_pages(const CoreEntry *core, uint64_t *out, size_t n, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; core && i < core->n_threads; i++) {
		const RseqEntry *r = core->threads[i]->rseq;

		if (!r || !r->len)
			continue;
		for (uint64_t a = r->ptr & ~(PAGE_SIZE - 1); a < r->ptr + r->len && n < max;
		     a += PAGE_SIZE)
			out[n++] = a;
	}
	qsort(out, n, sizeof(*out), addr_cmp);
	for (size_t i = 0; i < n; i++)
		if (!k || out[k - 1] != out[i])
			out[k++] = out[i];
	return k;
}

/* --lazy-pages: keep of @segs what is read now (restore-mem-plan.c decides). */
static int lazy_segs(const struct restore_ctx *ctx, pid_t pid, const CoreEntry *core,
		     struct rst_mem_plan *p, struct rst_chain_segs *segs)
{
	size_t nu = rst_io_uring_buf_pages(ctx, pid, NULL, 0);
	/* an rseq area (32 bytes, aligned) lies on one page, at most two */
	size_t max = 2 * (core ? core->n_threads : 0) + 1 + nu, ne;
	_cleanup_free_ uint64_t *eager = calloc(max, sizeof(*eager));
	struct rst_chain_segs kept = { 0 };
	int err;

	p->vma_lazy = calloc(p->mm->n_vmas + 1, sizeof(*p->vma_lazy));
	if (!p->vma_lazy || !eager)
		return -ENOMEM;
	nu = rst_io_uring_buf_pages(ctx, pid, eager, nu);
	ne = eager_pages(core, eager, nu, max);
	err = rst_lazy_filter(p->mm, eager, ne, p->vma_lazy, segs, &kept, &p->lazy_bytes);
	free(segs->seg);
	*segs = kept;
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
	int err;

	err = chain_open(c, ctx->dirfd, ctx->opts->images_dir, pid, h, pe, n);
	/* the lazy-pages daemon reads what it serves itself; others read the rest */
	c->defer = !ctx->opts->lazy_pages;
	if (!err)
		err = rst_chain_resolve(pid, c->lv, c->n, &segs);
	if (!err && ctx->opts->lazy_pages)
		err = lazy_segs(ctx, pid, core, p, &segs);
	if (!err)
		err = chain_flatten(c, pid, &segs, p, ctx->service_fd_base);
	free(segs.seg);
	chain_fini(c);
	return err;
}

/* The chain is allocated here, not with a cleanup attribute cppcheck cannot follow. */
static int read_chain(struct restore_ctx *ctx, const CoreEntry *core, pid_t pid,
		      struct rst_mem_plan *p, const PagemapHead *h, PagemapEntry **pe, size_t n)
{
	struct chain *c = calloc(1, sizeof(*c));
	int err = c ? read_chain_in(ctx, core, pid, p, h, pe, n, c) : -ENOMEM;

	free(c);
	return err;
}

/* pagemap-PID.img's head and entries. */
static int read_pagemap_recs(int dirfd, pid_t pid, ProtobufCMessage ***recs, size_t *n)
{
	struct cr_img *img = img_open(dirfd, CR_IMG_PAGEMAP, (uint32_t)pid, IMG_READ);
	int err;

	if (!img)
		return -errno;
	err = img_read_all(img, recs, n);
	img_close(img);
	if (!err && !*n) {
		pr_err("pid %d: pagemap image without its head\n", pid);
		img_free_records(*recs, *n);
		err = -EINVAL;
	}
	return err;
}

static int pages_map_open(int dirfd, const char *name, pid_t pid, struct rst_pages_map *m,
			  struct chain *c)
{
	ProtobufCMessage **recs = NULL;
	size_t n = 0;
	int err;

	err = read_pagemap_recs(dirfd, pid, &recs, &n);
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

/* Entries whose data is in another image: a parent dump's, or the parent task's. */
static bool any_parent(PagemapEntry *const *pe, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pe[i]->flags & (PAGEMAP_FLAG__PE_PARENT | PAGEMAP_FLAG__PE_PARENT_SHARED))
			return true;
	return false;
}

/* The PE_PARENT_SHARED ranges of level 0, for mem/restore-cow.c. */
static int read_shared(const PagemapHead *h, PagemapEntry *const *pe, size_t n,
		       struct rst_mem_plan *p)
{
	p->shared_pid = h->has_shared_pid ? h->shared_pid : 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t start = pe[i]->vaddr, end = start + (uint64_t)pe[i]->nr_pages * PAGE_SIZE;
		struct rst_range *r;

		if (!(pe[i]->flags & PAGEMAP_FLAG__PE_PARENT_SHARED))
			continue;
		if (p->nr_shared && p->shared[p->nr_shared - 1].end == start) {
			p->shared[p->nr_shared - 1].end = end;
			continue;
		}
		r = reallocarray(p->shared, p->nr_shared + 1, sizeof(*r));
		if (!r)
			return -ENOMEM;
		p->shared = r;
		p->shared[p->nr_shared++] = (struct rst_range){ start, end };
	}
	return 0;
}

/* pagemap-PID.img into @p's runs; pages-ID.img must hold all their data. */
static int read_pagemap(struct restore_ctx *ctx, const CoreEntry *core, pid_t pid,
			struct rst_mem_plan *p)
{
	ProtobufCMessage **recs = NULL;
	struct cr_img *img;
	size_t n = 0;
	int err;

	err = read_pagemap_recs(ctx->dirfd, pid, &recs, &n);
	if (err)
		return err;
	p->pages_id = ((PagemapHead *)recs[0])->pages_id;
	err = read_shared((PagemapHead *)recs[0], (PagemapEntry *const *)recs + 1, n - 1, p);
	if (err) {
		img_free_records(recs, n);
		return err;
	}
	if (ctx->opts->lazy_pages || any_parent((PagemapEntry *const *)recs + 1, n - 1))
		err = read_chain(ctx, core, pid, p, (PagemapHead *)recs[0],
				 (PagemapEntry **)recs + 1, n - 1);
	else
		err = rst_plan_runs(pid, p, (PagemapEntry *const *)recs + 1, n - 1);
	img_free_records(recs, n);
	if (err || !p->pages_bytes || p->has_chain_fd)
		return err;
	img = img_open(ctx->dirfd, CR_IMG_PAGES, p->pages_id, IMG_READ);
	if (!img)
		return -errno;
	if (img_raw_size(img) < p->pages_bytes) {
		pr_err("pid %d: %s holds %lu bytes of pages, the pagemap needs %lu\n", pid,
		       img_name(img), img_raw_size(img), p->pages_bytes);
		err = -EINVAL;
	}
	img_close(img);
	return err;
}

static int prepare_task(struct restore_ctx *ctx, struct rst_task *t)
{
	pid_t pid = (pid_t)t->pe->pid;
	struct rst_mem_plan *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	err = img_read_one(ctx->dirfd, CR_IMG_MM, (uint32_t)pid, (ProtobufCMessage **)&p->mm);
	if (!err)
		err = rst_plan_check_vmas(pid, p->mm);
	if (!err)
		err = img_read_one(ctx->dirfd, CR_IMG_CREDS, (uint32_t)pid,
				   (ProtobufCMessage **)&p->creds);
	if (!err)
		err = read_pagemap(ctx, t->core, pid, p);
	if (err) {
		pr_err("cannot prepare the memory of %d\n", pid);
		rst_plan_free(p);
		return err;
	}
	t->mem = p;
	pr_debug("pid %d: %zu VMAs, %zu page runs, %lu bytes of pages, %lu left lazy\n", pid,
		 p->mm->n_vmas, p->nr_runs, p->pages_bytes, p->lazy_bytes);
	return 0;
}

/* Every shmid mapped by some task, with the size the object needs. */
static int collect_shmem(struct restore_ctx *ctx, struct rst_shmem *s)
{
	unsigned int i;
	size_t j;

	for (i = 0; i < ctx->nr_tasks; i++) {
		struct rst_mem_plan *p = ctx->tasks[i].mem;

		for (j = 0; p && j < p->mm->n_vmas; j++) {
			const VmaEntry *v = p->mm->vmas[j];
			struct rst_shmem_obj *o;
			uint64_t end = v->pgoff + v->end - v->start;

			if (v->kind != VMA_KIND__VMA_ANON_SHARED)
				continue;
			o = (struct rst_shmem_obj *)rst_shmem_find(s, v->shmid);
			if (!o) {
				o = reallocarray(s->objs, s->n + 1, sizeof(*o));
				if (!o)
					return -ENOMEM;
				s->objs = o;
				o = &s->objs[s->n++];
				o->shmid = v->shmid;
				o->size = 0;
				o->fd = -1;
				o->huge_flags = v->flags &
						(MAP_HUGETLB | (MAP_HUGE_MASK << MAP_HUGE_SHIFT));
			}
			o->size = max(o->size, end);
		}
	}
	return 0;
}

/* Read pagemap-shmem-SHMID.img's runs into the object mapped at @mem. */
static int fill_shmem(struct restore_ctx *ctx, const struct rst_shmem_obj *o, char *mem)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_SHMEM_PAGEMAP, (uint32_t)o->shmid,
				      IMG_READ | IMG_OPTIONAL);
	struct cr_img *pages = NULL;
	ProtobufCMessage **recs = NULL;
	uint64_t off = 0;
	size_t n = 0, i;
	int err;

	if (!img)
		return errno == ENOENT ? 0 : -errno; /* never touched: all zeros */
	err = img_read_all(img, &recs, &n);
	img_close(img);
	if (!err && n > 1) {
		pages = img_open(ctx->dirfd, CR_IMG_PAGES, ((PagemapHead *)recs[0])->pages_id,
				 IMG_READ);
		err = pages ? 0 : -errno;
	}
	for (i = 1; !err && i < n; i++) {
		const PagemapEntry *e = (PagemapEntry *)recs[i];
		uint64_t len = (uint64_t)e->nr_pages * PAGE_SIZE;

		if (!(e->flags & PAGEMAP_FLAG__PE_PRESENT) || e->vaddr % PAGE_SIZE ||
		    e->vaddr > o->size || len > o->size - e->vaddr) {
			pr_err("shmem %lu: bad pagemap entry %lx +%u pages (object of %lu bytes)\n",
			       o->shmid, e->vaddr, e->nr_pages, o->size);
			err = -EINVAL;
			break;
		}
		err = img_read_run(pages, off, mem + e->vaddr, len, e->crc32c);
		off += len;
		ctx->stats.pages_restored += e->nr_pages;
	}
	img_close(pages);
	img_free_records(recs, n);
	return err;
}

/*
 * A MAP_SHARED|MAP_ANONYMOUS object, opened through map_files so every
 * mapping of it reads "/dev/zero (deleted)" in maps as the original did
 * ("/anon_hugepage (deleted)" with MAP_HUGETLB: the huge pages it holds are
 * taken from the pool here, the restore fails naming it when there are none).
 */
static int create_shmem(struct restore_ctx *ctx, struct rst_shmem_obj *o)
{
	char path[64];
	char *mem;
	int fd, err;

	mem = fault_err(-ENOMEM, "shmem %lu: mmap", o->shmid)
		      ? MAP_FAILED
		      : mmap(NULL, o->size, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS | (int)o->huge_flags, -1, 0);
	if (mem == MAP_FAILED) {
		pr_perror("shmem %lu: mmap of %lu bytes%s", o->shmid, o->size,
			  o->huge_flags ? " of hugetlb memory" : "");
		return neg_errno();
	}
	err = fill_shmem(ctx, o, mem);
	/* criu-like's own /proc: inside a container's mount namespace its /proc is not there yet */
	snprintf(path, sizeof(path), "%sself/map_files/%lx-%lx", ctx->proc_fd >= 0 ? "" : "/proc/",
		 (unsigned long)mem, (unsigned long)mem + o->size);
	fd = err ? -1
		 : openat(ctx->proc_fd >= 0 ? ctx->proc_fd : AT_FDCWD, path, O_RDWR | O_CLOEXEC);
	if (!err && fd < 0) {
		pr_perror("shmem %lu: open %s", o->shmid, path);
		err = neg_errno();
	}
	munmap(mem, o->size);
	if (err)
		return err;
	o->fd = fcntl(fd, F_DUPFD_CLOEXEC, ctx->service_fd_base);
	if (o->fd < 0) {
		pr_perror("shmem %lu: F_DUPFD above %d", o->shmid, ctx->service_fd_base);
		err = neg_errno();
	}
	close(fd);
	return err;
}

static int add_range(struct rst_range **r, size_t *n, uint64_t start, uint64_t end)
{
	struct rst_range *nr = reallocarray(*r, *n + 1, sizeof(**r));

	if (!nr)
		return -ENOMEM;
	nr[*n].start = start;
	nr[*n].end = end;
	*r = nr;
	(*n)++;
	return 0;
}

/* Every mapping of the controller and every saved VMA of every task. */
static int busy_ranges(struct restore_ctx *ctx, struct rst_range **r, size_t *n)
{
	/* as in create_shmem(): criu-like's own /proc, not the container's */
	int fd = ctx->proc_fd >= 0 ? openat(ctx->proc_fd, "self/maps", O_RDONLY | O_CLOEXEC)
				   : open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	_cleanup_fclose_ FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	unsigned long s, e;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	unsigned int i;
	size_t j;
	int err = 0;

	if (!f) {
		err = neg_errno();
		if (fd >= 0)
			close(fd);
		pr_errno(err, "cannot read criu-like's own /proc/self/maps");
		return err;
	}
	while (!err && getline(&line, &cap, f) > 0)
		if (sscanf(line, "%lx-%lx", &s, &e) == 2)
			err = add_range(r, n, s, e);
	for (i = 0; !err && i < ctx->nr_tasks; i++) {
		const struct rst_mem_plan *p = ctx->tasks[i].mem;

		for (j = 0; !err && p && j < p->mm->n_vmas; j++)
			err = add_range(r, n, p->mm->vmas[j]->start, p->mm->vmas[j]->end);
	}
	return err;
}

/*
 * The shared area stays mapped in every task while the blob maps the saved
 * VMAs: move it (before any fork) out of the way of every saved layout.
 */
static int place_shared(struct restore_ctx *ctx)
{
	uint64_t start = (uint64_t)ctx->shared, len = PAGE_ALIGN(ctx->shared_size), to;
	_cleanup_free_ struct rst_range *busy = NULL;
	size_t n = 0, i;
	void *moved;
	int err;

	err = busy_ranges(ctx, &busy, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		if (busy[i].start < start + len && start < busy[i].end &&
		    !(busy[i].start == start && busy[i].end == start + len))
			break;
	if (i == n)
		return 0;
	err = rst_find_hole(busy, n, len, 1UL << 20, RST_TASK_SIZE, &to);
	if (err) {
		pr_err("no room for the shared area of %lu bytes outside every saved layout\n",
		       len);
		return err;
	}
	moved = mremap(ctx->shared, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)to);
	if (moved == MAP_FAILED) {
		pr_perror("mremap of the shared area to %lx", to);
		return neg_errno();
	}
	pr_debug("shared area moved from %lx to %lx, out of a saved VMA\n", start, to);
	ctx->shared = moved;
	return 0;
}

#ifndef PR_TIMER_CREATE_RESTORE_IDS
#define PR_TIMER_CREATE_RESTORE_IDS 77 /* 6.17 */
#define PR_TIMER_CREATE_RESTORE_IDS_GET 2
#endif

/* POSIX timers keep their ids only with PR_TIMER_CREATE_RESTORE_IDS: refuse before any fork. */
static int check_timers(struct restore_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ctx->nr_tasks; i++) {
		const CoreEntry *c = ctx->tasks[i].core;

		if (!c || !c->tc->n_posix_timers)
			continue;
		if (prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) <
		    0) {
			pr_err("pid %u has POSIX timers: restoring their ids needs "
			       "prctl(PR_TIMER_CREATE_RESTORE_IDS) (Linux 6.17), which this kernel "
			       "lacks\n",
			       ctx->tasks[i].pe->pid);
			return -EOPNOTSUPP;
		}
		return 0;
	}
	return 0;
}

static int prepare_task_at(void *arg, unsigned int i)
{
	struct restore_ctx *ctx = arg;

	return ctx->tasks[i].core ? prepare_task(ctx, &ctx->tasks[i]) : 0;
}

/*
 * Every task's mm, creds and pagemap images read and planned: side by side
 * on one thread per CPU (par_for(): each task's own images and plan; the
 * images opened are noted under the image layer's lock), but for lazy pages,
 * whose plan asks the daemon. The threads end before any fork.
 */
static int prepare_tasks(struct restore_ctx *ctx)
{
	_cleanup_free_ int *errs = calloc(ctx->nr_tasks + 1, sizeof(*errs));
	unsigned int i;
	int err = 0;

	if (ctx->opts->lazy_pages || !errs || ctx->nr_tasks < 3) {
		for (i = 0; !err && i < ctx->nr_tasks; i++)
			err = prepare_task_at(ctx, i);
	} else {
		/*
		 * The plans go to the main heap, which is collapsed into huge
		 * pages for the forks (restore-fork.c), not to an arena of each
		 * thread that every task would copy and unmap page by page.
		 */
		mallopt(M_ARENA_MAX, 1);
		err = par_for(ctx->nr_tasks, prepare_task_at, ctx, errs, NULL);
	}
	for (i = 0; !err && i < ctx->nr_tasks; i++) {
		const struct rst_mem_plan *p = ctx->tasks[i].mem;

		if (p)
			ctx->stats.pages_restored += p->pages_bytes / PAGE_SIZE;
	}
	return err;
}

int rst_mem_prepare(struct restore_ctx *ctx)
{
	struct rst_shmem *s;
	size_t j;
	int err = check_timers(ctx);

	if (!err)
		err = prepare_tasks(ctx);
	s = err ? NULL : calloc(1, sizeof(*s));
	if (!err && !s)
		err = -ENOMEM;
	if (err)
		return err;
	ctx->shmem = s;
	err = place_shared(ctx);
	if (!err)
		err = collect_shmem(ctx, s);
	for (j = 0; !err && j < s->n; j++) {
		err = create_shmem(ctx, &s->objs[j]);
		if (err)
			pr_err("cannot restore shared memory object %lu\n", s->objs[j].shmid);
	}
	if (!err)
		err = rst_sysv_shm_prepare(ctx, s);
	if (!err)
		err = rst_cow_plan(ctx);
	return err;
}

int rst_mem_report_bad_pages(struct restore_ctx *ctx, pid_t pid)
{
	const struct rst_mem_plan *p = NULL;
	struct cr_img *img;
	unsigned int i;
	size_t j;
	int err = 0;

	for (i = 0; i < ctx->nr_tasks && !p; i++)
		if ((pid_t)ctx->tasks[i].pe->pid == pid)
			p = ctx->tasks[i].mem;
	if (!p || !p->nr_crcs)
		return 0;
	img = img_open(ctx->dirfd, CR_IMG_PAGES, p->pages_id, IMG_READ);
	if (!img)
		return -errno;
	/* crcs[] offsets are file offsets; img_verify_run() takes data offsets */
	for (j = 0; j < p->nr_crcs && err != -EBADMSG; j++)
		err = img_verify_run(img, p->crcs[j].off - IMG_RAW_DATA_OFF, p->crcs[j].len,
				     p->crcs[j].crc);
	if (!err)
		pr_info("pid %d: every page run of %s matches its crc32c\n", pid, img_name(img));
	img_close(img);
	return err;
}

void rst_mem_fini(struct restore_ctx *ctx)
{
	unsigned int i;
	size_t j;

	for (i = 0; i < ctx->nr_tasks; i++) {
		rst_plan_free(ctx->tasks[i].mem);
		ctx->tasks[i].mem = NULL;
	}
	if (!ctx->shmem)
		return;
	for (j = 0; j < ctx->shmem->n; j++)
		if (ctx->shmem->objs[j].fd >= 0)
			close(ctx->shmem->objs[j].fd);
	rst_sysv_shm_fini(ctx->shmem);
	free(ctx->shmem->objs);
	free(ctx->shmem);
	ctx->shmem = NULL;
}
