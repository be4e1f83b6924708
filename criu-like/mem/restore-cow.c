// SPDX-License-Identifier: GPL-2.0
/*
 * Copy-on-write sharing at restore (Documentation/memory.md, section 7):
 * children get the pages they shared with their parent by fork, as the
 * original tree did. Each task, before it forks its children, maps the
 * private anonymous VMAs that it or a child shares pages in ("kept" VMAs)
 * at their saved addresses with its pages in. A child finds its parent's
 * kept VMAs in its own address space: where its VMA lies inside one and its
 * pagemap says PE_PARENT_SHARED, the inherited page stays (the same physical
 * page as the parent's); the other pages of the VMA are dropped and its own
 * written. The restorer then keeps these VMAs (RST_VMA_KEEP) instead of
 * mapping them again and reads only the other runs.
 *
 * Every page of a task is still in its plan (restore-mem.c resolves
 * PE_PARENT_SHARED through the parent's image), so whatever cannot be kept
 * (a VMA of criu-like's own in the way, a child whose parent at restore is
 * not the one the pages came from, --lazy-pages) is restored as before, as
 * private copies.
 */
#define LOG_PREFIX "restore-cow: "

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crc32c.h"
#include "image.h"
#include "log.h"
#include "restore-mem.h"
#include "util.h"

/* The task that forked this process, as it was then (its plan says what it kept). */
static const struct rst_task *cow_forker;
/*
 * Its pages image, opened once before its forks (set_forker()): its children
 * copy their deferred parts from it, each opened it again before.
 */
static struct cr_img *forker_pages;
static uint32_t forker_pages_id;

/* @t forks its children next: what they inherit of it. */
static void set_forker(struct restore_ctx *ctx, const struct rst_task *t)
{
	const struct rst_mem_plan *p = t->mem;

	cow_forker = t;
	/*
	 * Its own forker's, inherited, is left open: the fd table may be shared
	 * with that forker, which forks more children (CLONE_FILES); the
	 * install of the task's fds closes it with every fd it did not have.
	 * Best effort: a child opens the image itself when it is not here.
	 */
	forker_pages = p && t->nr_children ? img_open(ctx->dirfd, CR_IMG_PAGES, p->pages_id,
						      IMG_READ | IMG_OPTIONAL)
					   : NULL;
	forker_pages_id = p ? p->pages_id : 0;
}

size_t rst_cow_cut(const struct rst_page_run *in, size_t n, const struct rst_range *out,
		   size_t nout, uint64_t lo, uint64_t hi, struct rst_page_run *ret)
{
	size_t k = 0, j = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t a = max(in[i].vaddr, lo), b = min(in[i].vaddr + in[i].len, hi);

		while (j < nout && out[j].end <= a)
			j++;
		for (size_t m = j; a < b; m++) {
			uint64_t stop = m < nout ? min(b, out[m].start) : b;

			if (stop > a)
				ret[k++] = (struct rst_page_run){ a, stop - a,
								  in[i].off + (a - in[i].vaddr) };
			if (m >= nout)
				break;
			a = max(a, out[m].end);
		}
	}
	return k;
}

static bool overlaps(const struct rst_range *r, size_t n, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].start < end && start < r[i].end)
			return true;
	return false;
}

/* Plain private anonymous memory that a fork copies as it is. */
static bool vma_can_keep(const struct rst_mem_plan *p, size_t i)
{
	const VmaEntry *v = p->mm->vmas[i];
	uint64_t fork_madv = (1ULL << MADV_DONTFORK) | (1ULL << MADV_WIPEONFORK);

	if (v->kind != VMA_KIND__VMA_ANON_PRIVATE && v->kind != VMA_KIND__VMA_HEAP)
		return false;
	/* hugetlb too: the keeping maps plain memory in place (restore-cow.c) */
	if ((v->flags & (MAP_GROWSDOWN | MAP_LOCKED | MAP_SHARED | MAP_HUGETLB)) ||
	    (v->has_madv && (v->madv & fork_madv)))
		return false;
	return p->vma_fill[i] && !(p->vma_lazy && p->vma_lazy[i]);
}

int rst_cow_plan(struct restore_ctx *ctx)
{
	unsigned int nr = 0;

	const char *env = getenv("CRIU_LIKE_COW_KEEP");
	/* CRIU_LIKE_COW_KEEP=0: keep nothing, every page read as before (tests the fallback) */
	bool none = env && !strcmp(env, "0");

	/* the lazy-pages daemon fills empty VMAs through their uffd: no sharing there */
	if (ctx->opts->lazy_pages)
		return 0;
	for (unsigned int t = 0; t < ctx->nr_tasks; t++) {
		const struct rst_task *task = &ctx->tasks[t];
		struct rst_mem_plan *p = task->mem;

		if (!p)
			continue;
		p->vma_keep = calloc(p->mm->n_vmas + 1, sizeof(bool));
		p->vma_kept = calloc(p->mm->n_vmas + 1, sizeof(bool));
		if (!p->vma_keep || !p->vma_kept)
			return -ENOMEM;
		for (size_t i = 0; i < p->mm->n_vmas; i++) {
			const VmaEntry *v = p->mm->vmas[i];
			bool keep;

			if (none || !vma_can_keep(p, i))
				continue;
			keep = overlaps(p->shared, p->nr_shared, v->start, v->end);
			for (unsigned int c = 0; !keep && c < task->nr_children; c++) {
				const struct rst_mem_plan *cp = task->children[c]->mem;

				keep = cp && cp->shared_pid == task->pe->pid &&
				       overlaps(cp->shared, cp->nr_shared, v->start, v->end);
			}
			p->vma_keep[i] = keep;
			nr += keep;
		}
	}
	if (nr)
		pr_debug("%u VMAs mapped with their pages before the forks\n", nr);
	return 0;
}

static int pages_fd(struct restore_ctx *ctx, const struct rst_mem_plan *p)
{
	struct cr_img *img;
	int fd;

	if (p->has_chain_fd) {
		fd = fcntl(p->chain_fd, F_DUPFD_CLOEXEC, 0);
		return fd < 0 ? neg_errno() : fd;
	}
	img = img_open(ctx->dirfd, CR_IMG_PAGES, p->pages_id, IMG_READ);
	if (!img)
		return neg_errno();
	fd = fcntl(img_raw_fd(img), F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		fd = neg_errno();
	img_close(img);
	return fd;
}

static int pread_all(int fd, char *to, uint64_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, to, min(len, (uint64_t)1 << 30), (off_t)off);

		if (n <= 0)
			return n < 0 ? neg_errno() : -ENODATA;
		to += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

/*
 * The pages are read in pieces of FILL_CHUNK bytes, as the restorer does:
 * each populated first (MADV_POPULATE_WRITE, 5.14: its pages allocated in
 * one call rather than by a fault per page inside the copy, 20% of the
 * time at 256 MiB here), then read, then the crc32c of the pagemap entries
 * (p->crcs, in pages file order) chained over it while it is still in the
 * cache: an entry read whole in one go is checked here (p->crc_done); one
 * read in parts or not at all is left to check_kept().
 */
#define FILL_CHUNK (2UL << 20)
/*
 * Pieces from this size on are populated before the read. Even one page: on
 * a VM whose page tables are shadowed (restore.md, section 8) a fault inside
 * the copy costs more than the call (13 against 18 us a page here); on bare
 * metal the two are about even.
 */
#define POPULATE_MIN PAGE_SIZE

struct crc_walk {
	struct rst_mem_plan *p;
	size_t c; /* the entry being fed */
	uint64_t pos; /* where its next byte is in the pages file; 0: not fed from its start */
	uint64_t vaddr; /* where its first byte went */
	uint32_t crc;
};

static int crc_feed(pid_t pid, struct crc_walk *w, uint64_t off, const char *buf, uint64_t n,
		    uint64_t vaddr)
{
	struct rst_mem_plan *p = w->p;

	while (n && w->c < p->nr_crcs) {
		const struct rst_page_crc *e = &p->crcs[w->c];
		uint64_t k;

		if (e->off + e->len <= off) {
			w->c++;
			w->pos = 0;
			continue;
		}
		if (off < e->off) {
			k = min(n, e->off - off);
			goto skip;
		}
		if (off == e->off) {
			w->pos = off;
			w->vaddr = vaddr;
			w->crc = 0;
		}
		k = min(n, e->off + e->len - off);
		if (w->pos != off) {
			w->pos = 0; /* a part of it was not read here */
			goto skip;
		}
		w->crc = crc32c(w->crc, buf, k);
		w->pos += k;
		if (w->pos == e->off + e->len) {
			if (w->crc != e->crc) {
				pr_err("pid %d: pages at %lx (%lu bytes, pages image offset %lx): "
				       "crc32c %x, expected %x\n",
				       pid, w->vaddr, e->len, e->off, w->crc, e->crc);
				return -EBADMSG;
			}
			p->crc_done[w->c] = true;
		}
	skip:
		off += k;
		buf += k;
		vaddr += k;
		n -= k;
	}
	return 0;
}

/*
 * Write the runs of @p in [@start, @end) but the ranges of @skip to
 * @base + (address - @start), checking the crc32c of what is read whole.
 */
static int write_runs(pid_t pid, int fd, struct rst_mem_plan *p, uint64_t start, uint64_t end,
		      const struct rst_range *skip, size_t nskip, char *base)
{
	_cleanup_free_ struct rst_page_run *r = NULL;
	struct crc_walk w = { .p = p };
	size_t n;
	int err = 0;

	if (!p->crc_done && p->nr_crcs) {
		p->crc_done = calloc(p->nr_crcs, sizeof(*p->crc_done));
		if (!p->crc_done)
			return -ENOMEM;
	}
	r = calloc(p->nr_runs + nskip + 1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	n = rst_cow_cut(p->runs, p->nr_runs, skip, nskip, start, end, r);
	for (size_t i = 0; i < n && !err; i++) {
		char *to = base + (r[i].vaddr - start);

		for (uint64_t done = 0; done < r[i].len && !err; done += FILL_CHUNK) {
			uint64_t k = min(r[i].len - done, FILL_CHUNK);

			/* a failure only leaves the faults to the copy */
			if (k >= POPULATE_MIN)
				(void)madvise(to + done, k, MADV_POPULATE_WRITE);
			err = pread_all(fd, to + done, k, r[i].off + done);
			if (err)
				pr_errno(err, "pid %d: reading %lu bytes of pages for %lx", pid,
					 r[i].len, r[i].vaddr);
			else
				err = crc_feed(pid, &w, r[i].off + done, to + done, k,
					       r[i].vaddr + done);
		}
	}
	return err;
}

/* In an inherited VMA: drop the pages that are not the parent's, write the task's own. */
static int fill_inherited(pid_t pid, int fd, struct rst_mem_plan *p, const VmaEntry *v)
{
	const struct rst_range all = { v->start, v->end };
	struct rst_page_run whole = { v->start, v->end - v->start, 0 };
	_cleanup_free_ struct rst_page_run *gap = calloc(p->nr_shared + 2, sizeof(*gap));
	size_t n;

	if (!gap)
		return -ENOMEM;
	n = rst_cow_cut(&whole, 1, p->shared, p->nr_shared, all.start, all.end, gap);
	for (size_t i = 0; i < n; i++)
		if (madvise((void *)gap[i].vaddr, gap[i].len, MADV_DONTNEED)) {
			pr_perror("pid %d: madvise(DONTNEED) %lx +%lu", pid, gap[i].vaddr,
				  gap[i].len);
			return neg_errno();
		}
	return write_runs(pid, fd, p, v->start, v->end, p->shared, p->nr_shared, (char *)v->start);
}

/*
 * Not inherited: filled elsewhere and moved into place, over a reservation
 * that fails if anything of criu-like's own is there (then it is not kept:
 * the restorer maps it as any other). A moved VMA keeps the page offset of
 * its first place, so it merges with no neighbour the restorer maps.
 */
static int fill_fresh(pid_t pid, int fd, struct rst_mem_plan *p, const VmaEntry *v, bool *kept)
{
	uint64_t len = v->end - v->start;
	void *res, *tmp;
	int err;

	res = mmap((void *)v->start, len, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (res == MAP_FAILED || res != (void *)v->start) {
		if (res != MAP_FAILED)
			munmap(res, len);
		pr_debug("pid %d: %lx-%lx is busy here: not kept\n", pid, v->start, v->end);
		return 0;
	}
	tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED) {
		err = neg_errno();
		munmap(res, len);
		return err;
	}
	err = write_runs(pid, fd, p, v->start, v->end, NULL, 0, tmp);
	if (!err && mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, res) != res)
		err = neg_errno();
	if (err) {
		pr_errno(err, "pid %d: cannot map %lx-%lx with its pages", pid, v->start, v->end);
		munmap(tmp, len);
		munmap(res, len);
		return err;
	}
	*kept = true;
	return 0;
}

/* Copy @len bytes at data offset @src_off of @img to file offset @off of @fd. */
static int copy_piece(struct cr_img *img, uint64_t src_off, int fd, uint64_t off, uint64_t len,
		      char *buf, size_t buf_len)
{
	while (len) {
		size_t n = min(len, (uint64_t)buf_len);
		int err = img_read_raw(img, src_off, buf, n);

		if (err)
			return err;
		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n)
			return neg_errno() ?: -EIO;
		src_off += n;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * The parts of p->deferred this task does not get by fork (all but its
 * PE_PARENT_SHARED pages in VMAs it keeps from its parent, @inh) into its
 * chain_fd, from the parent tasks' pages images.
 */
static int fill_deferred_with(struct restore_ctx *ctx, pid_t pid, const struct rst_mem_plan *p,
			      const bool *inh, struct rst_range *skip, struct rst_page_run *pc,
			      char *buf)
{
	size_t ns = 0, i, v = 0;
	int err = 0;
	/* the shared ranges inside kept inherited VMAs */
	for (i = 0; inh && i < p->nr_shared; i++) {
		const struct rst_range *r = &p->shared[i];

		while (v < p->mm->n_vmas && p->mm->vmas[v]->end <= r->start)
			v++;
		for (size_t j = v; j < p->mm->n_vmas && p->mm->vmas[j]->start < r->end; j++)
			if (inh[j])
				skip[ns++] = (struct rst_range){ max(r->start,
								     p->mm->vmas[j]->start),
								 min(r->end, p->mm->vmas[j]->end) };
	}
	for (i = 0; i < p->nr_srcs && !err; i++) {
		/* the forker's own, opened already (set_forker()) */
		bool forker = forker_pages && p->srcs[i].pages_id == forker_pages_id &&
			      !strcmp(p->srcs[i].dir, ".");
		_cleanup_close_ int dfd = forker ? -1
						 : openat(ctx->dirfd, p->srcs[i].dir,
							  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct cr_img *img = forker    ? forker_pages
				     : dfd < 0 ? NULL
					       : img_open(dfd, CR_IMG_PAGES, p->srcs[i].pages_id,
							  IMG_READ);

		if (!img) {
			err = neg_errno() ?: -ENOENT;
			pr_errno(err, "pid %d: the pages of its parent in %s", pid, p->srcs[i].dir);
			break;
		}
		for (size_t d = 0; d < p->nr_deferred && !err; d++) {
			const struct rst_deferred *df = &p->deferred[d];
			struct rst_page_run run = { df->vaddr, df->len, df->off };
			size_t n;

			if (df->src != i)
				continue;
			n = rst_cow_cut(&run, 1, skip, ns, 0, UINT64_MAX, pc);
			for (size_t k = 0; k < n && !err; k++)
				err = copy_piece(img, df->src_off + (pc[k].vaddr - df->vaddr),
						 p->chain_fd, pc[k].off, pc[k].len, buf, 1 << 20);
		}
		if (!forker)
			img_close(img);
		if (err)
			pr_errno(err, "pid %d: copying the pages of its parent from %s", pid,
				 p->srcs[i].dir);
	}
	return err;
}

/* The buffers are allocated here, not with a cleanup attribute cppcheck cannot follow. */
static int fill_deferred(struct restore_ctx *ctx, pid_t pid, const struct rst_mem_plan *p,
			 const bool *inh)
{
	struct rst_range *skip;
	struct rst_page_run *pc;
	char *buf;
	int err = -ENOMEM;

	if (!p->nr_deferred)
		return 0;
	/*
	 * A shared range across N kept VMAs gives N skipped ranges (one more per
	 * VMA border): at most nr_shared + n_vmas; a run cut by them, one more.
	 */
	skip = calloc(p->nr_shared + p->mm->n_vmas + 1, sizeof(*skip));
	pc = calloc(p->nr_shared + p->mm->n_vmas + 2, sizeof(*pc));
	buf = malloc(1 << 20);
	if (skip && pc && buf)
		err = fill_deferred_with(ctx, pid, p, inh, skip, pc, buf);
	free(skip);
	free(pc);
	free(buf);
	return err;
}

/* Bytes of @r (@n ranges, by address) inside [@lo, @hi). */
static uint64_t ranges_in(const struct rst_range *r, size_t n, uint64_t lo, uint64_t hi)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		if (r[i].end > lo && r[i].start < hi)
			sum += min(r[i].end, hi) - max(r[i].start, lo);
	return sum;
}

/* Bytes of the runs (any order) inside [@lo, @hi). */
static uint64_t runs_in(const struct rst_page_run *r, size_t n, uint64_t lo, uint64_t hi)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		if (r[i].vaddr + r[i].len > lo && r[i].vaddr < hi)
			sum += min(r[i].vaddr + r[i].len, hi) - max(r[i].vaddr, lo);
	return sum;
}

/*
 * CRIU's pages_compared and pages_skipped_cow: the pages an inherited VMA
 * holds in the images (the dump compared them with the parent's by their
 * physical page), and of those the ones kept from the parent, not written.
 */
static void count_cow(struct restore_ctx *ctx, const struct rst_mem_plan *p, const VmaEntry *v)
{
	uint64_t kept = ranges_in(p->shared, p->nr_shared, v->start, v->end);
	/* the plan's runs hold every page of the task, the kept ones too */
	uint64_t all = max(runs_in(p->runs, p->nr_runs, v->start, v->end), kept);

	if (!ctx->shared)
		return;
	__atomic_add_fetch(&ctx->shared->pages_skipped_cow, kept / PAGE_SIZE, __ATOMIC_RELAXED);
	__atomic_add_fetch(&ctx->shared->pages_compared, all / PAGE_SIZE, __ATOMIC_RELAXED);
}

/* Inside one of the VMAs the forker kept? */
static bool inherited(const struct rst_mem_plan *pp, const VmaEntry *v)
{
	for (size_t j = 0; pp && pp->vma_kept && j < pp->mm->n_vmas; j++)
		if (pp->vma_kept[j] && pp->mm->vmas[j]->start <= v->start &&
		    v->end <= pp->mm->vmas[j]->end)
			return true;
	return false;
}

/* Unmap what the forker kept and this task does not keep in place. */
static int unmap_unused(pid_t pid, const struct rst_mem_plan *pp, const struct rst_mem_plan *p,
			const bool *inh)
{
	for (size_t j = 0; pp && pp->vma_kept && j < pp->mm->n_vmas; j++) {
		uint64_t pos = pp->mm->vmas[j]->start, end = pp->mm->vmas[j]->end;

		if (!pp->vma_kept[j])
			continue;
		for (size_t i = 0; i <= p->mm->n_vmas && pos < end; i++) {
			const VmaEntry *v = i < p->mm->n_vmas ? p->mm->vmas[i] : NULL;
			uint64_t stop = v && inh && inh[i] ? min(end, v->start) : end;

			if (v && (!inh || !inh[i] || v->end <= pos))
				continue;
			if (stop > pos && munmap((void *)pos, stop - pos)) {
				pr_perror("pid %d: munmap %lx-%lx", pid, pos, stop);
				return neg_errno();
			}
			pos = v ? max(pos, v->end) : end;
		}
	}
	return 0;
}

int rst_cow_prepare(struct restore_ctx *ctx, struct rst_task *t)
{
	const struct rst_mem_plan *pp = cow_forker ? cow_forker->mem : NULL;
	struct rst_mem_plan *p = t->mem;
	pid_t pid = (pid_t)t->pe->pid;
	_cleanup_free_ bool *inh = NULL;
	_cleanup_close_ int fd = -1;
	unsigned int nr_inh = 0, nr_fresh = 0;
	bool from_parent;
	int err = 0;

	if (!p || !p->vma_keep) {
		/* nothing kept here, and what the forker kept is not this task's */
		err = p ? unmap_unused(pid, pp, p, NULL) : 0;
		err = err || !p ? err : fill_deferred(ctx, pid, p, NULL);
		set_forker(ctx, t);
		return err;
	}
	inh = calloc(p->mm->n_vmas + 1, sizeof(*inh));
	if (!inh)
		return -ENOMEM;
	/* the inherited pages are this task's only if it was forked by the one they came from */
	from_parent = cow_forker && cow_forker->pe->pid == p->shared_pid;
	for (size_t i = 0; from_parent && i < p->mm->n_vmas; i++)
		inh[i] = p->vma_keep[i] && inherited(pp, p->mm->vmas[i]);
	err = unmap_unused(pid, pp, p, inh);
	if (!err)
		err = fill_deferred(ctx, pid, p, inh);
	if (!err) {
		fd = pages_fd(ctx, p);
		if (fd < 0 && p->nr_runs)
			err = fd;
	}
	for (size_t i = 0; !err && i < p->mm->n_vmas; i++) {
		if (!p->vma_keep[i])
			continue;
		if (inh[i]) {
			err = fill_inherited(pid, fd, p, p->mm->vmas[i]);
			p->vma_kept[i] = !err;
			if (!err)
				count_cow(ctx, p, p->mm->vmas[i]);
			nr_inh++;
		} else {
			err = fill_fresh(pid, fd, p, p->mm->vmas[i], &p->vma_kept[i]);
			nr_fresh += p->vma_kept[i];
		}
	}
	if (err) {
		pr_err("pid %d: cannot map its memory shared with its parent or children\n", pid);
		return err;
	}
	pr_debug("pid %d: %u VMAs kept from its parent, %u mapped with their pages\n", pid, nr_inh,
		 nr_fresh);
	set_forker(ctx, t);
	return 0;
}

/* crc32c of @len bytes of the pages fd at @off. */
static int file_crc(int fd, uint64_t off, uint64_t len, uint32_t *crc)
{
	_cleanup_free_ char *buf = malloc(1 << 20);
	int err = 0;

	*crc = 0;
	if (!buf)
		return -ENOMEM;
	while (len && !err) {
		uint64_t n = min(len, (uint64_t)1 << 20);

		err = pread_all(fd, buf, n, off);
		*crc = crc32c(*crc, buf, n);
		off += n;
		len -= n;
	}
	return err;
}

/* [@a, @b) wholly in a kept VMA: 1; partly in kept VMAs: 0; in none: -1. */
static int kept_at(const struct rst_mem_plan *p, uint64_t a, uint64_t b)
{
	int ret = -1;

	for (size_t i = 0; i < p->mm->n_vmas; i++) {
		const VmaEntry *v = p->mm->vmas[i];

		if (!p->vma_kept[i] || v->end <= a || b <= v->start)
			continue;
		if (v->start <= a && b <= v->end)
			return 1;
		ret = 0;
	}
	return ret;
}

/*
 * The crc32c of every pagemap entry that lies in a kept VMA and was not
 * checked as it was read is checked here (the restorer no longer reads it):
 * in memory when wholly in one, else in the pages image. Those entries are
 * dropped from p->crcs.
 */
static int check_kept(pid_t pid, int fd, struct rst_mem_plan *p)
{
	size_t r = 0, k = 0;

	for (size_t c = 0; c < p->nr_crcs; c++) {
		const struct rst_page_crc *e = &p->crcs[c];
		uint64_t a;
		uint32_t crc;
		int where, err = 0;

		if (p->crc_done && p->crc_done[c])
			continue; /* read whole into a kept VMA, checked then (crc_feed()) */
		while (r < p->nr_runs && p->runs[r].off + p->runs[r].len <= e->off)
			r++;
		if (r == p->nr_runs || e->off < p->runs[r].off) {
			p->crcs[k++] = *e; /* the restorer names it */
			continue;
		}
		a = p->runs[r].vaddr + (e->off - p->runs[r].off);
		where = kept_at(p, a, a + e->len);
		if (where < 0) {
			p->crcs[k++] = *e;
			continue;
		}
		if (where)
			crc = crc32c(0, (const void *)a, e->len);
		else
			err = file_crc(fd, e->off, e->len, &crc);
		if (!err && crc != e->crc) {
			pr_err("pid %d: pages at %lx (%lu bytes, pages image offset %lx): crc32c "
			       "%x, "
			       "expected %x\n",
			       pid, a, e->len, e->off, crc, e->crc);
			err = -EBADMSG;
		}
		if (err)
			return err;
	}
	p->nr_crcs = k;
	free(p->crc_done); /* its indices were the entries' before they were dropped */
	p->crc_done = NULL;
	return 0;
}

int rst_cow_finish(struct restore_ctx *ctx, struct rst_task *t)
{
	struct rst_mem_plan *p = t->mem;
	pid_t pid = (pid_t)t->pe->pid;
	_cleanup_free_ struct rst_range *kept = NULL;
	struct rst_page_run *runs;
	_cleanup_close_ int fd = -1;
	size_t nk = 0;
	int err;

	if (!p || !p->vma_kept)
		return 0;
	kept = calloc(p->mm->n_vmas + 1, sizeof(*kept));
	if (!kept)
		return -ENOMEM;
	for (size_t i = 0; i < p->mm->n_vmas; i++)
		if (p->vma_kept[i])
			kept[nk++] = (struct rst_range){ p->mm->vmas[i]->start,
							 p->mm->vmas[i]->end };
	if (!nk)
		return 0;
	fd = pages_fd(ctx, p);
	if (fd < 0 && p->nr_runs)
		return fd;
	err = check_kept(pid, fd, p);
	if (err)
		return err;
	runs = calloc(p->nr_runs + nk + 1, sizeof(*runs));
	if (!runs)
		return -ENOMEM;
	p->nr_runs = rst_cow_cut(p->runs, p->nr_runs, kept, nk, 0, UINT64_MAX, runs);
	free(p->runs);
	p->runs = runs;
	return 0;
}
