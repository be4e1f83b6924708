// SPDX-License-Identifier: GPL-2.0
/*
 * The memory part of the restorer blob (Documentation/restore.md,
 * Documentation/memory.md), before anything else. The leader, alone in the
 * task, unmaps what the restore left, moves [vdso] and [vvar] where they
 * were, maps every VMA; then the leader and the threads made meanwhile read
 * the pages image into them, a share each (crc32c checked); then the leader
 * makes the AIO rings again, then protections, guard regions, mlock, the
 * lazy pages' uffd, seals and the mm fields. Linked into restorer.elf with
 * parasite/restorer.c.
 */
#define RST_FILE "restorer/mem.c"
#include <errno.h>
#include <fcntl.h>
#include <linux/ioctl.h>
#include <linux/mman.h> /* MADV_COLLAPSE */
#include <linux/userfaultfd.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/uio.h>

#include "asm/parasite-syscall.h"
#include "asm/restorer-crc.h"
#include "parasite-lib.h"
#include "restorer.h"
#include "restorer-int.h"

/* Kernel constants newer than the 6.1 UAPI headers, or missing from them. */
#ifndef __NR_mseal
#define __NR_mseal 462 /* 6.10; as criu-like/include/compat.h, which the blob does not include */
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW 0xaa00 /* 6.1: _IO(0xaa, 0), as criu-like/include/compat.h */
#endif
#ifndef MREMAP_FIXED
#define MREMAP_MAYMOVE 1
#define MREMAP_FIXED 2
#endif
#define IOV_BATCH 512
#define HPAGE_SIZE (2UL << 20) /* a PMD-mapped transparent huge page */
#define FILL_CHUNK HPAGE_SIZE /* the unit read_pages() fills */
#define PAGE_SIZE 4096UL
/*
 * Pieces from this size on are populated before the read. Even one page: on
 * a VM whose page tables are shadowed (restore.md, section 8) a fault inside
 * the copy costs more than the call (13 against 18 us a page here); on bare
 * metal the two are about even.
 */
#define POPULATE_MIN PAGE_SIZE

struct kmm_map {
	uint64_t start_code, end_code, start_data, end_data;
	uint64_t start_brk, brk, start_stack;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint64_t auxv;
	uint32_t auxv_size;
	uint32_t exe_fd;
};

struct range {
	uint64_t start, end;
};

static void add_keep(struct range *k, unsigned int *n, uint64_t start, uint64_t end)
{
	unsigned int i = *n;

	/* Insertion sort: a handful of entries. */
	while (i && k[i - 1].start > start) {
		k[i] = k[i - 1];
		i--;
	}
	k[i].start = start;
	k[i].end = end;
	(*n)++;
}

/* Unmap [@from, @to) but the kept VMAs in it (sorted, from *@v on). */
static void unmap_gap(struct rst_args *a, struct rst_thread *th, uint64_t from, uint64_t to,
		      const struct rst_vma **v, const struct rst_vma *vend)
{
	for (; from < to; (*v)++) {
		while (*v < vend && ((*v)->how != RST_VMA_KEEP || (*v)->end <= from))
			(*v)++;
		if (*v == vend || (*v)->start >= to) {
			check(a, th, sys_call2(__NR_munmap, from, to - from), "munmap %lx-%lx",
			      from, to);
			return;
		}
		if ((*v)->start > from)
			check(a, th, sys_call2(__NR_munmap, from, (*v)->start - from),
			      "munmap %lx-%lx", from, (*v)->start);
		from = (*v)->end;
	}
}

/*
 * Unmap the whole address space of the task but the restorer area, the
 * shared area, the vDSO and the VMAs mapped before the forks (RST_VMA_KEEP).
 */
static void unmap_all(struct rst_args *a, struct rst_thread *th)
{
	struct range keep[3 + RST_MAX_SPECIALS] = { { 0, 0 } };
	const struct rst_vma *v = at(a, a->vmas_off), *vend = v + a->nr_vmas;
	unsigned int n = 0, i;
	uint64_t pos = 0;

	add_keep(keep, &n, a->area_start, a->area_start + a->area_len);
	add_keep(keep, &n, a->shared, a->shared + a->shared_len);
	for (i = 0; i < a->nr_specials; i++)
		add_keep(keep, &n, a->specials[i].cur_start, a->specials[i].cur_end);
	for (i = 0; i <= n; i++) {
		uint64_t end = i < n ? keep[i].start : a->task_size;

		if (end > pos)
			unmap_gap(a, th, pos, end, &v, vend);
		if (i < n && keep[i].end > pos)
			pos = keep[i].end;
	}
}

static long mremap_fixed(uint64_t from, uint64_t len, uint64_t to)
{
	long ret = sys_call6(__NR_mremap, from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to, 0);

	return ret < 0 ? ret : (uint64_t)ret == to ? 0 : -EFAULT;
}

/* Whether the saved place of some special mapping overlaps the current place of one. */
static int specials_overlap(const struct rst_args *a)
{
	unsigned int i, j;

	for (i = 0; i < a->nr_specials; i++) {
		const struct rst_special *s = &a->specials[i];
		uint64_t end = s->saved_start + (s->cur_end - s->cur_start);

		for (j = 0; j < a->nr_specials; j++)
			if (s->saved_start < a->specials[j].cur_end &&
			    a->specials[j].cur_start < end)
				return 1;
	}
	return 0;
}

/*
 * Two hops, through the scratch part of the restorer area, when old and new
 * places overlap; else each one straight to its place (none where it is).
 */
static void move_specials(struct rst_args *a, struct rst_thread *th)
{
	unsigned int i;

	if (!specials_overlap(a)) {
		for (i = 0; i < a->nr_specials; i++) {
			struct rst_special *s = &a->specials[i];

			check(a, th,
			      mremap_fixed(s->cur_start, s->cur_end - s->cur_start, s->saved_start),
			      "mremap the special mapping %lx to %lx", s->cur_start,
			      s->saved_start);
		}
		return;
	}
	for (i = 0; i < a->nr_specials; i++) {
		struct rst_special *s = &a->specials[i];

		check(a, th,
		      mremap_fixed(s->cur_start, s->cur_end - s->cur_start,
				   a->area_start + s->scratch_off),
		      "mremap %lx to the scratch area", s->cur_start);
	}
	for (i = 0; i < a->nr_specials; i++) {
		struct rst_special *s = &a->specials[i];

		check(a, th,
		      mremap_fixed(a->area_start + s->scratch_off, s->cur_end - s->cur_start,
				   s->saved_start),
		      "mremap the special mapping %lx to %lx", s->cur_start, s->saved_start);
	}
}

/*
 * See rst_vma.nomerge. Since 6.17 a move of a never faulted anonymous VMA
 * takes a page offset from its new place and merges again, so one page is
 * faulted before the move and dropped after it (the anon_vma stays). That
 * touch may be given a transparent huge page (THP "always", or an mTHP
 * size enabled): the temporary mapping has no MADV_NOHUGEPAGE yet, and one
 * of 2 MiB or more is placed at a 2 MiB boundary. So what is dropped is the
 * whole first 2 MiB: dropping the page alone split the huge page and left
 * 511 pages of zeros, which a lazy restore's UFFDIO_COPY then found there
 * (EEXIST) and skipped, and which cost 2 MiB where the original may have
 * held nothing (zdtm thp_restore, mode lazy, under "always").
 */
static long map_apart(const struct rst_vma *v, uint64_t len)
{
	long tmp, ret;

	/*
	 * A PROT_NONE reservation at the target first: the kernel must not put the
	 * temporary mapping over the target, or the move would overlap (EINVAL).
	 * The move replaces it.
	 */
	ret = sys_call6(__NR_mmap, v->start, len, PROT_NONE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	if (ret < 0)
		return ret;
	tmp = sys_call6(__NR_mmap, 0, len, PROT_READ | PROT_WRITE, v->flags, -1, 0);
	if (tmp <= 0)
		return tmp ? tmp : -EFAULT;
	*(volatile char *)tmp = 0;
	ret = mremap_fixed((uint64_t)tmp, len, v->start);
	if (ret) {
		sys_call2(__NR_munmap, tmp, len);
		return ret;
	}
	ret = sys_call3(__NR_madvise, v->start, len < HPAGE_SIZE ? len : HPAGE_SIZE, MADV_DONTNEED);
	if (!ret && v->how != RST_VMA_FILL && v->prot != (PROT_READ | PROT_WRITE))
		ret = sys_call3(__NR_mprotect, v->start, len, v->prot);
	return ret ? ret : (long)v->start;
}

static void map_vmas(struct rst_args *a, struct rst_thread *th)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i, adv;

	for (i = 0; i < a->nr_vmas; i++, v++) {
		uint32_t prot = v->how == RST_VMA_FILL ? PROT_READ | PROT_WRITE : v->prot;
		uint64_t len = v->end - v->start;
		long ret;

		if (v->unfixed) {
			continue; /* map_unfixed(), once every other one is in place */
		} else if (v->how == RST_VMA_KEEP) {
			ret = (long)v->start;
		} else if (v->how == RST_VMA_SYSV) {
			ret = v->pgoff ? (long)v->start
				       : sys_call3(__NR_shmat, v->shmid, (long)v->start,
						   v->flags | SHM_REMAP);
			if (ret >= 0 && (uint64_t)ret == v->start)
				ret = sys_call3(__NR_mprotect, v->start, len, v->prot)
					      ?: (long)v->start;
		} else if (v->nomerge) {
			ret = map_apart(v, len);
		} else {
			ret = sys_call6(__NR_mmap, v->start, len, prot, v->flags | MAP_FIXED, v->fd,
					v->fd >= 0 ? v->pgoff : 0);
		}
		if (ret >= 0 && (uint64_t)ret != v->start)
			ret = -EFAULT;
		check(a, th, ret, "mmap %lx-%lx flags %x fd %d", v->start, v->end, v->flags, v->fd);
		for (adv = 0; adv < 64; adv++) {
			if (!(v->madv & (1ULL << adv)))
				continue;
			check(a, th, sys_call3(__NR_madvise, v->start, v->end - v->start, adv),
			      "madvise(%u) on %lx-%lx", adv, v->start, v->end);
		}
	}
}

/*
 * The lowest range taken that ends above @c, in [*lo, *hi): the saved VMAs
 * (but the unfixed ones still to place: unfixed 1), the restorer area, the
 * shared area and the special mappings at their saved places. 0 when none
 * is left.
 */
static int next_taken(struct rst_args *a, uint64_t c, uint64_t *lo, uint64_t *hi)
{
	struct rst_vma *v = at(a, a->vmas_off);
	uint64_t best = ~0ULL, end = 0, s, e;
	unsigned int i;

	for (i = 0; i < a->nr_vmas + 2 + a->nr_specials; i++) {
		if (i < a->nr_vmas) {
			if (v[i].unfixed == 1)
				continue;
			s = v[i].start, e = v[i].end;
		} else if (i == a->nr_vmas) {
			s = a->area_start, e = a->area_start + a->area_len;
		} else if (i == a->nr_vmas + 1) {
			s = a->shared, e = a->shared + a->shared_len;
		} else {
			struct rst_special *sp = &a->specials[i - a->nr_vmas - 2];

			s = sp->saved_start, e = sp->saved_start + (sp->cur_end - sp->cur_start);
		}
		if (e > c && s < best)
			best = s, end = e;
	}
	*lo = best, *hi = end;
	return best != ~0ULL;
}

/*
 * Every free range of the address space held by a PROT_NONE placeholder
 * (@hold), or freed again. Below mmap_min_addr the kernel refuses and never
 * looks either: skipped.
 */
static void hold_free(struct rst_args *a, struct rst_thread *th, int hold)
{
	uint64_t c = PAGE_SIZE, lo, hi, top = a->task_size;

	while (c < top) {
		if (!next_taken(a, c, &lo, &hi))
			lo = hi = top;
		if (lo > top)
			lo = top;
		if (lo > c) {
			long r = hold ? sys_call6(__NR_mmap, c, lo - c, PROT_NONE,
						  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
							  0x100000 /* MAP_FIXED_NOREPLACE */,
						  -1, 0)
				      : sys_call2(__NR_munmap, c, lo - c);

			if (hold && r >= 0 && (uint64_t)r != c)
				r = -EEXIST;
			if (r != -EPERM && r != -EACCES)
				check(a, th, r, "placeholder %lx-%lx", c, lo);
		}
		c = hi > c ? hi : c + PAGE_SIZE;
	}
}

/*
 * The unfixed VMAs (struct rst_vma.unfixed), once every other one is in
 * place: all the free address space but the VMA's own range held, the
 * kernel has no other place to give (top-down below mmap_base, or its
 * bottom-up fallback above it).
 */
static void map_unfixed(struct rst_args *a, struct rst_thread *th)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i;

	for (i = 0; i < a->nr_vmas; i++) {
		long ret;

		if (v[i].unfixed != 1)
			continue;
		v[i].unfixed = 3; /* its range is not held */
		hold_free(a, th, 1);
		ret = sys_call6(__NR_mmap, 0, v[i].end - v[i].start, v[i].prot, v[i].flags, v[i].fd,
				v[i].pgoff);
		hold_free(a, th, 0);
		if (ret >= 0 && (uint64_t)ret != v[i].start) {
			sys_call2(__NR_munmap, ret, v[i].end - v[i].start);
			ret = -EADDRNOTAVAIL;
		}
		check(a, th, ret, "mmap %lx-%lx fd %d where the kernel places it", v[i].start,
		      v[i].end, v[i].fd);
		v[i].unfixed = 2;
	}
}

/* @clock: 1 CLOCK_MONOTONIC, 3 CLOCK_THREAD_CPUTIME_ID (what this thread spent, whatever the load). */
uint64_t now_us(int clock)
{
	struct {
		int64_t sec, nsec;
	} ts = { 0, 0 };

	sys_call2(__NR_clock_gettime, clock, &ts);
	return (uint64_t)ts.sec * 1000000 + (uint64_t)ts.nsec / 1000;
}

/* preadv all of @iov (@n entries, @len bytes) at file offset @off, through short reads. */
static long preadv_all(int fd, struct iovec *iov, unsigned int n, uint64_t off, uint64_t len)
{
	while (len) {
		long ret = sys_call6(__NR_preadv, fd, (long)iov, n, (long)off, 0, 0);

		if (ret <= 0)
			return ret < 0 ? ret : -ENODATA;
		len -= (uint64_t)ret;
		off += (uint64_t)ret;
		while (n && (uint64_t)ret >= iov->iov_len) {
			ret -= (long)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (char *)iov->iov_base + ret;
			iov->iov_len -= (uint64_t)ret;
		}
	}
	return 0;
}

/*
 * The checksums: each pagemap entry's crc32c is joined from the crc32c of
 * its pieces, whichever thread read them and in whatever order, with
 * crc(A B) = crc(A) * x^(8 |B|) ^ crc(B): a piece that ends @after bytes
 * before its entry's end adds crc(piece) * x^(8 @after) to the entry's
 * @acc (XOR, linear), and the thread whose piece completes the entry
 * compares. Each piece is checked right after its read, while its data is
 * still in that CPU's cache.
 */
/* Where the byte at @off of the pages file went (0: no run holds it). */
static uint64_t addr_of(struct rst_args *a, uint64_t off)
{
	struct rst_page_run *r = at(a, a->runs_off);
	uint32_t i;

	for (i = 0; i < a->nr_runs; i++)
		if (r[i].off <= off && off < r[i].off + r[i].len)
			return r[i].vaddr + (off - r[i].off);
	return 0;
}

static void crc_piece(struct rst_args *a, struct rst_thread *th, struct rst_page_crc *c,
		      uint64_t after, uint32_t crc, uint64_t len)
{
	uint64_t done;

	__atomic_fetch_xor(&c->acc, rst_crc_shift(crc, after), __ATOMIC_SEQ_CST);
	done = __atomic_add_fetch(&c->done, len, __ATOMIC_SEQ_CST);
	if (done < c->len)
		return;
	crc = __atomic_load_n(&c->acc, __ATOMIC_SEQ_CST);
	if (crc != c->crc) {
		rerr(a, th,
		     "pages at %lx (%lu bytes, pages image offset %lx): crc32c %x, expected %x",
		     addr_of(a, c->off), c->len, c->off, crc, c->crc);
		fail(a, -EBADMSG);
	}
}

/* The first entry of the @n sorted by file offset that ends after @off. */
static struct rst_page_crc *crc_find(struct rst_page_crc *c, uint32_t n, uint64_t off)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c[mid].off + c[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return c + lo;
}

/*
 * Feed the batch just read (@n pieces @iov, contiguous in the file from
 * @off) to the entries it overlaps: the overlap with each, in file order,
 * crc'd over the pieces that hold it.
 */
static void crc_batch(struct rst_args *a, struct rst_thread *th, const struct iovec *iov,
		      unsigned int n, uint64_t off)
{
	struct rst_page_crc *c0 = at(a, a->crcs_off), *end = c0 + a->nr_crcs, *c;
	uint64_t pos = off; /* file offset of iov[j]'s first byte */
	unsigned int j = 0;
	uint64_t skip = 0; /* bytes of iov[j] already fed */

	for (c = crc_find(c0, a->nr_crcs, off); c < end && j < n; c++) {
		uint64_t from, to, left;
		uint32_t crc = 0;

		/* move to the piece that holds the entry's first byte in this batch */
		from = c->off > pos + skip ? c->off : pos + skip;
		while (j < n && pos + iov[j].iov_len <= from) {
			pos += iov[j].iov_len;
			j++;
			skip = 0;
		}
		if (j == n)
			break;
		skip = from - pos;
		to = c->off + c->len;
		left = to - from;
		while (left && j < n) {
			uint64_t k = iov[j].iov_len - skip < left ? iov[j].iov_len - skip : left;

			crc = rst_crc32c(crc, (const char *)iov[j].iov_base + skip, k);
			left -= k;
			skip += k;
			if (skip == iov[j].iov_len) {
				pos += iov[j].iov_len;
				j++;
				skip = 0;
			}
		}
		to -= left; /* where this batch's part of the entry ends */
		crc_piece(a, th, c, c->off + c->len - to, crc, to - from);
	}
}

/*
 * A 2 MiB stretch at @addr, just filled whole, in a VMA that held huge pages
 * without MADV_HUGEPAGE: made one huge page again (MADV_COLLAPSE, 6.1), as
 * it was. Best effort: without a free huge page it stays in small ones.
 */
static void collapse_chunk(struct rst_args *a, uint64_t addr)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i;

	for (i = 0; i < a->nr_vmas; i++, v++)
		if (v->collapse && v->start <= addr && addr + FILL_CHUNK <= v->end) {
			sys_call3(__NR_madvise, addr, FILL_CHUNK, MADV_COLLAPSE);
			return;
		}
}

/*
 * The batches of the fill, in the same order for every thread: the runs are
 * contiguous in the pages file, so one batch is up to IOV_BATCH runs and
 * FILL_CHUNK bytes, a long run cut at 2 MiB boundaries of its address.
 */
struct batch_walk {
	unsigned int i; /* the run */
	uint64_t done; /* bytes of run i already in a batch */
};

static unsigned int next_batch(struct rst_args *a, struct batch_walk *b, struct iovec *iov,
			       uint64_t *off)
{
	struct rst_page_run *r = at(a, a->runs_off);
	uint64_t len = 0;
	unsigned int n = 0;

	if (b->i < a->nr_runs)
		*off = r[b->i].off + b->done;
	while (b->i < a->nr_runs && n < IOV_BATCH && len < FILL_CHUNK &&
	       r[b->i].off + b->done == *off + len) {
		uint64_t va = r[b->i].vaddr + b->done, piece = r[b->i].len - b->done;
		uint64_t edge = ((va + FILL_CHUNK) & ~(FILL_CHUNK - 1)) - va;

		if (piece > edge)
			piece = edge;
		if (len && len + piece > FILL_CHUNK)
			break;
		iov[n].iov_base = (void *)va;
		iov[n].iov_len = piece;
		len += piece;
		n++;
		b->done += piece;
		if (b->done == r[b->i].len) {
			b->done = 0;
			b->i++;
		}
	}
	return n;
}

/*
 * One thread's share of the pages: every batch whose number it takes from
 * a->fill_claim. Each large piece is populated first (MADV_POPULATE_WRITE,
 * Linux 5.14): its pages, huge ones in a VMA that had them, are allocated in
 * one call rather than by a fault per page inside the copy, and the copy
 * then finds them in the cache where their clearing left them; then one
 * preadv per batch, then its checksums (crc_batch()). The first touch of
 * the pages bounds it, on one CPU: threads on other CPUs take batches too.
 */
void fill_pages(struct rst_args *a, struct rst_thread *th)
{
	struct iovec iov[IOV_BATCH], rd[IOV_BATCH]; /* rd: what preadv_all() advances */
	struct batch_walk b = { 0, 0 };
	uint32_t k, mine = __atomic_fetch_add(&a->fill_claim, 1, __ATOMIC_SEQ_CST);
	unsigned int j, n, collapse = 0, nr = 0;
	uint64_t t0 = now_us(1), c0 = now_us(3), bytes = 0;

	for (j = 0; j < a->nr_vmas; j++)
		collapse |= ((struct rst_vma *)at(a, a->vmas_off))[j].collapse;
	for (k = 0;; k++) {
		uint64_t off = 0, len = 0;

		n = next_batch(a, &b, iov, &off);
		if (!n)
			break;
		if (k != mine)
			continue;
		mine = __atomic_fetch_add(&a->fill_claim, 1, __ATOMIC_SEQ_CST);
		for (j = 0; j < n; j++) {
			rd[j] = iov[j];
			len += iov[j].iov_len;
			if (iov[j].iov_len >= POPULATE_MIN)
				sys_call3(__NR_madvise, (long)iov[j].iov_base, iov[j].iov_len,
					  MADV_POPULATE_WRITE);
		}
		check(a, th, preadv_all(a->pages_fd, rd, n, off, len),
		      "preadv of %lu bytes at %lx from the pages image", len, off);
		__atomic_fetch_add(&shared_of(a)->filled, len, __ATOMIC_RELAXED);
		if (a->nr_crcs)
			crc_batch(a, th, iov, n, off);
		for (j = 0; collapse && j < n; j++)
			if (iov[j].iov_len == FILL_CHUNK &&
			    !((uint64_t)iov[j].iov_base & (FILL_CHUNK - 1)))
				collapse_chunk(a, (uint64_t)iov[j].iov_base);
		bytes += len;
		nr++;
	}
	rdebug(a, th, "%u batches, %lu bytes of pages read and checked in %lu us (%lu us of CPU)",
	       nr, bytes, now_us(1) - t0, now_us(3) - c0);
}

/*
 * The next run of a lazy VMA from @pos on, below @end: its first byte (from
 * @pos) in *@from and its end in *@to; none: *@from = *@to = @end.
 */
static void next_run(struct rst_args *a, uint64_t pos, uint64_t end, uint64_t *from, uint64_t *to)
{
	struct rst_page_run *r = at(a, a->runs_off);
	uint32_t i;

	*from = *to = end;
	for (i = 0; i < a->nr_runs; i++) {
		uint64_t s = r[i].vaddr > pos ? r[i].vaddr : pos, e = r[i].vaddr + r[i].len;

		if (e > pos && s < *from) {
			*from = s;
			*to = e < end ? e : end;
		}
	}
}

/*
 * --lazy-pages: in each lazy VMA, every page that no run gave is dropped
 * before the controller registers the VMA with the uffd. The fill's first
 * touch of an eager page there (an rseq area, the arguments) may be given a
 * transparent huge page (a VMA with MADV_HUGEPAGE, THP "always"): 2 MiB of
 * zeros around it, where the daemon's UFFDIO_COPY then found pages (EEXIST)
 * and skipped them, the task reading zeros for its data. MADV_DONTNEED of
 * the rest splits the huge page: only the eager pages stay, in small pages
 * as the daemon's are (it collapses them once all are in).
 */
static void drop_lazy_gaps(struct rst_args *a, struct rst_thread *th)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i, n = 0;

	for (i = 0; i < a->nr_vmas; i++, v++) {
		uint64_t pos = v->start, from, to;

		if (!v->lazy)
			continue;
		/* one without an eager page: nothing of the fill touched it */
		next_run(a, pos, v->end, &from, &to);
		if (from == v->end)
			continue;
		for (; pos < v->end; next_run(a, pos, v->end, &from, &to)) {
			if (from > pos) {
				check(a, th,
				      sys_call3(__NR_madvise, pos, from - pos, MADV_DONTNEED),
				      "madvise(MADV_DONTNEED) of the lazy %lx-%lx", pos, from);
				n++;
			}
			pos = to;
		}
	}
	if (n)
		rdebug(a, th, "%u ranges of lazy VMAs cleared around the eager pages", n);
}

/* Every checksum complete once every thread's share is in. */
static void crc_all_done(struct rst_args *a, struct rst_thread *th)
{
	struct rst_page_crc *c = at(a, a->crcs_off);
	uint32_t i;

	for (i = 0; i < a->nr_crcs; i++)
		if (c[i].done != c[i].len) {
			rerr(a, th, "checksum of pages image offset %lx: no run holds it",
			     c[i].off);
			fail(a, -EINVAL);
		}
}

static void protect_vmas(struct rst_args *a, struct rst_thread *th)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i;

	for (i = 0; i < a->nr_vmas; i++, v++) {
		if ((v->how != RST_VMA_FILL && v->how != RST_VMA_KEEP) ||
		    v->prot == (PROT_READ | PROT_WRITE))
			continue;
		check(a, th, sys_call3(__NR_mprotect, v->start, v->end - v->start, v->prot),
		      "mprotect %lx-%lx %x", v->start, v->end, v->prot);
	}
}

/* The guard regions, page tables markers that fault with SIGSEGV: not in any saved page. */
static void install_guards(struct rst_args *a, struct rst_thread *th)
{
	struct rst_range *g = at(a, a->guards_off);
	unsigned int i;

	for (i = 0; i < a->nr_guards; i++, g++)
		check(a, th, sys_call3(__NR_madvise, g->start, g->end - g->start, 102),
		      "madvise(MADV_GUARD_INSTALL) on %lx-%lx", g->start, g->end);
}

/*
 * The locked VMAs, last: every page the image gave is in, so MLOCK_ONFAULT
 * keeps the same pages resident, and a plain lock faults in the rest as the
 * original mlock() did.
 */
static void lock_vmas(struct rst_args *a, struct rst_thread *th)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i;

	for (i = 0; i < a->nr_vmas; i++, v++) {
		if (v->lock == RST_LOCK_NONE)
			continue;
		check(a, th,
		      sys_call3(__NR_mlock2, v->start, v->end - v->start,
				v->lock == RST_LOCK_ONFAULT ? 1 /* MLOCK_ONFAULT */ : 0),
		      "mlock2 %lx-%lx (%u)", v->start, v->end, v->lock);
	}
}

/*
 * --lazy-pages: the task's uffd, made here (a uffd belongs to the mm of its
 * creator) and left as it is: the controller asks its features and
 * registers the lazy VMAs, left empty, at the barrier (restore-lazy.c).
 */
static void make_uffd(struct rst_args *a, struct rst_thread *th)
{
	long fd;

	if (!a->uffd_slot)
		return;
	if (a->uffd_dev >= 0) {
		fd = sys_call3(__NR_ioctl, a->uffd_dev, USERFAULTFD_IOC_NEW,
			       O_CLOEXEC | O_NONBLOCK);
		check(a, th, fd, "USERFAULTFD_IOC_NEW on /dev/userfaultfd (fd %d)", a->uffd_dev);
		if (a->uffd_dev_close)
			sys_close(a->uffd_dev);
	} else {
		fd = sys_call1(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
		check(a, th, fd, "userfaultfd() (no /dev/userfaultfd)");
	}
	*(volatile int32_t *)a->uffd_slot = (int32_t)fd;
	rdebug(a, th, "uffd %ld made for the lazy pages", fd);
}

/*
 * The sealed VMAs (mseal, 6.10), after every mmap, mremap, mprotect and
 * madvise of the blob on them and on their neighbours: a sealed VMA refuses
 * them all, and a change that spans it (a merge on munmap of a neighbour
 * does not) would fail. What follows on the task's memory is the
 * controller's munmap() of the restorer and shared areas: VMAs of their own,
 * never merged with a sealed one (VM_SEALED is one of the flags a merge
 * compares), so sealing first leaves that munmap() free.
 */
static void seal_vmas(struct rst_args *a, struct rst_thread *th)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i;

	for (i = 0; i < a->nr_vmas; i++, v++) {
		if (!v->seal)
			continue;
		check(a, th, sys_call3(__NR_mseal, v->start, v->end - v->start, 0), "mseal %lx-%lx",
		      v->start, v->end);
	}
}

static void set_mm(struct rst_args *a, struct rst_thread *th)
{
	struct rst_mm *m = &a->mm;
	struct kmm_map k = {
		.start_code = m->start_code,
		.end_code = m->end_code,
		.start_data = m->start_data,
		.end_data = m->end_data,
		.start_brk = m->start_brk,
		.brk = m->brk,
		.start_stack = m->start_stack,
		.arg_start = m->arg_start,
		.arg_end = m->arg_end,
		.env_start = m->env_start,
		.env_end = m->env_end,
		.auxv = (uint64_t)m->auxv,
		.auxv_size = m->nr_auxv * 8,
		.exe_fd = (uint32_t)m->exe_fd,
	};

	check(a, th, sys_call6(__NR_prctl, PR_SET_MM, PR_SET_MM_MAP, (long)&k, sizeof(k), 0, 0),
	      "prctl(PR_SET_MM_MAP)");
}

static void close_fds(struct rst_args *a)
{
	int32_t *fd = at(a, a->close_fds_off);
	unsigned int i;

	for (i = 0; i < a->nr_close_fds; i++)
		sys_close(fd[i]);
}

/* ---- AIO contexts (struct rst_aio) ---------------------------------------- */

struct kiocb_abi { /* struct iocb of linux/aio_abi.h */
	uint64_t data;
	uint32_t key, rw_flags;
	uint16_t opcode;
	int16_t reqprio;
	uint32_t fildes;
	uint64_t buf, nbytes;
	int64_t offset;
	uint64_t reserved2;
	uint32_t flags, resfd;
};

#define AIO_BATCH 32

/*
 * Complete @n requests in context @ctx (reads of 0 bytes from the eventfd
 * @fd: each fails at once with -EINVAL, an event all the same), and reap
 * them when @reap.
 */
static void aio_advance(struct rst_args *a, struct rst_thread *th, uint64_t ctx, long fd,
			uint32_t n, int reap)
{
	struct kiocb_abi cb[AIO_BATCH];
	struct kiocb_abi *p[AIO_BATCH];
	uint8_t ev[AIO_BATCH * 32];
	uint32_t k, i;
	long ret;

	while (n) {
		k = n < AIO_BATCH ? n : AIO_BATCH;
		for (i = 0; i < k; i++) {
			memset(&cb[i], 0, sizeof(cb[i]));
			cb[i].fildes = (uint32_t)fd;
			p[i] = &cb[i];
		}
		ret = sys_call3(__NR_io_submit, ctx, k, p);
		if (ret != (long)k) {
			rerr(a, th,
			     "io_submit of %u placeholder requests in the AIO context %lx: %ld", k,
			     ctx, ret);
			fail(a, ret < 0 ? ret : -EAGAIN);
		}
		if (reap) {
			ret = sys_call6(__NR_io_getevents, ctx, k, k, (long)ev, 0, 0);
			if (ret != (long)k) {
				rerr(a, th, "io_getevents of the AIO context %lx: %ld", ctx, ret);
				fail(a, ret < 0 ? ret : -EIO);
			}
		}
		n -= k;
	}
}

static void restore_aios(struct rst_args *a, struct rst_thread *th)
{
	struct rst_aio *r = at(a, a->aios_off);
	uint32_t i, k;
	long fd;

	if (!a->nr_aios)
		return;
	/* where the rings go, taken first: io_setup() must not put a ring there */
	for (i = 0; i < a->nr_aios; i++)
		check(a, th,
		      sys_call6(__NR_mmap, r[i].addr, r[i].len, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0),
		      "mmap of a placeholder for the AIO ring %lx", r[i].addr);
	fd = sys_call2(__NR_eventfd2, 0, O_CLOEXEC);
	check(a, th, fd, "eventfd for the AIO contexts");
	for (i = 0; i < a->nr_aios; i++) {
		volatile uint32_t *ring;
		uint64_t ctx = 0;
		uint8_t *ev = at(a, r[i].events_off);

		check(a, th, sys_call2(__NR_io_setup, r[i].nr_req, &ctx),
		      "io_setup(%u) for the AIO context %lx", r[i].nr_req, r[i].addr);
		ring = (volatile uint32_t *)ctx;
		if (ring[1] != r[i].nr_events) {
			rerr(a, th, "io_setup(%u) made a ring of %u events, not %u", r[i].nr_req,
			     ring[1], r[i].nr_events);
			fail(a, -EINVAL);
		}
		aio_advance(a, th, ctx, fd, r[i].head, 1);
		aio_advance(a, th, ctx, fd, r[i].nr_unreaped, 0);
		if (ring[2] != r[i].head || ring[3] != r[i].tail) {
			rerr(a, th, "AIO context %lx: head %u, tail %u instead of %u, %u",
			     r[i].addr, ring[2], ring[3], r[i].head, r[i].tail);
			fail(a, -EIO);
		}
		check(a, th, mremap_fixed(ctx, r[i].len, r[i].addr),
		      "mremap of the AIO ring %lx to %lx", ctx, r[i].addr);
		for (k = 0; k < r[i].nr_unreaped; k++)
			memcpy((uint8_t *)r[i].addr + 32 +
				       (uint64_t)((r[i].head + k) % r[i].nr_events) * 32,
			       ev + (uint64_t)k * 32, 32);
	}
	sys_close(fd);
	rdebug(a, th, "%u AIO contexts", a->nr_aios);
}

void map_memory(struct rst_args *a, struct rst_thread *th)
{
	unmap_all(a, th);
	move_specials(a, th);
	map_vmas(a, th);
	map_unfixed(a, th);
}

void finish_memory(struct rst_args *a, struct rst_thread *th)
{
	crc_all_done(a, th);
	/* lazy VMAs left empty but for the eager pages, before the barrier registers them */
	drop_lazy_gaps(a, th);
	restore_aios(a, th);
	protect_vmas(a, th);
	install_guards(a, th);
	lock_vmas(a, th);
	make_uffd(a, th);
	/* last of the memory: nothing may change a sealed VMA after it */
	seal_vmas(a, th);
	set_mm(a, th);
	close_fds(a);
	rdebug(a, th, "%u VMAs mapped", a->nr_vmas);
}
