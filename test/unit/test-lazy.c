// SPDX-License-Identifier: GPL-2.0
/*
 * The pure logic of lazy restore: the lazy-pages daemon's bookkeeping of
 * the pages still to come (mem/lazy-ranges.c: fill, unmap, MADV_DONTNEED,
 * mremap, fork), and the restore's choice of what stays lazy
 * (rst_lazy_filter(), rst_lazy_vma() of mem/restore-mem-plan.c), which the
 * daemon's queue follows (lazy_ranges_add_lazy()); and the daemon's copy by
 * pieces that a pending fault cuts short (mem/lazy-copy.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "lazy.h"
#include "core.pb-c.h"
#include "mm.pb-c.h"
#include "restore-mem.h"
#include "../../criu-like/mem/lazy-int.h"

#define PG 4096UL

static void add(struct lazy_ranges *s, uint64_t vaddr, uint64_t len, uint64_t off)
{
	struct lazy_range r = { .vaddr = vaddr, .len = len, .off = off };

	assert_int_equal(lazy_ranges_add(s, &r), 0);
}

static void expect(const struct lazy_ranges *s, size_t i, uint64_t vaddr, uint64_t len,
		   uint64_t off)
{
	assert_true(i < s->n);
	assert_int_equal(s->r[i].vaddr, vaddr);
	assert_int_equal(s->r[i].len, len);
	assert_int_equal(s->r[i].off, off);
}

static uint64_t sum(const struct lazy_ranges *s)
{
	uint64_t b = 0;

	for (size_t i = 0; i < s->n; i++)
		b += s->r[i].len;
	return b;
}

static void test_add_find(void **state)
{
	struct lazy_ranges s = { 0 };
	struct lazy_range bad = { .vaddr = 0x1000, .len = PG };

	(void)state;
	add(&s, 0x10000, 4 * PG, 0);
	add(&s, 0x20000, 2 * PG, 4 * PG);
	assert_int_equal(lazy_ranges_add(&s, &bad), -EINVAL); /* below the last one */
	assert_non_null(lazy_ranges_find(&s, 0x10000));
	assert_non_null(lazy_ranges_find(&s, 0x13fff));
	assert_null(lazy_ranges_find(&s, 0x14000));
	assert_ptr_equal(lazy_ranges_find(&s, 0x21000), &s.r[1]);
	assert_null(lazy_ranges_find(&s, 0x22000));
	assert_int_equal(s.bytes, 6 * PG);
	lazy_ranges_fini(&s);
}

static void test_remove(void **state)
{
	struct lazy_ranges s = { 0 };

	(void)state;
	add(&s, 0x10000, 8 * PG, 0x100000);
	add(&s, 0x30000, 4 * PG, 0x200000);
	/* a hole in the middle: split, the tail's offset follows */
	assert_int_equal(lazy_ranges_remove(&s, 0x12000, 0x14000), 0);
	assert_int_equal(s.n, 3);
	expect(&s, 0, 0x10000, 2 * PG, 0x100000);
	expect(&s, 1, 0x14000, 4 * PG, 0x104000);
	/* across two ranges: the end of one, the start of the next */
	assert_int_equal(lazy_ranges_remove(&s, 0x17000, 0x31000), 0);
	expect(&s, 1, 0x14000, 3 * PG, 0x104000);
	expect(&s, 2, 0x31000, 3 * PG, 0x201000);
	/* a whole range, and nothing */
	assert_int_equal(lazy_ranges_remove(&s, 0x10000, 0x12000), 0);
	assert_int_equal(lazy_ranges_remove(&s, 0x50000, 0x60000), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.bytes, sum(&s));
	assert_int_equal(s.bytes, 6 * PG);
	lazy_ranges_fini(&s);
}

static void test_move(void **state)
{
	struct lazy_ranges s = { 0 }, d = { 0 };

	(void)state;
	add(&s, 0x10000, 8 * PG, 0);
	add(&s, 0x40000, 2 * PG, 8 * PG);
	/* mremap of pages 2-5 over the second range: it goes, they land there */
	assert_int_equal(lazy_ranges_move(&s, 0x12000, 0x40000, 4 * PG), 0);
	assert_int_equal(s.n, 3);
	expect(&s, 0, 0x10000, 2 * PG, 0);
	expect(&s, 1, 0x16000, 2 * PG, 6 * PG);
	expect(&s, 2, 0x40000, 4 * PG, 2 * PG);
	assert_int_equal(s.bytes, 8 * PG);
	assert_int_equal(s.bytes, sum(&s));
	/* below everything */
	assert_int_equal(lazy_ranges_move(&s, 0x40000, 0x1000, PG), 0);
	expect(&s, 0, 0x1000, PG, 2 * PG);
	expect(&s, 3, 0x41000, 3 * PG, 3 * PG);
	/* fork: an independent copy */
	assert_int_equal(lazy_ranges_dup(&s, &d), 0);
	assert_int_equal(lazy_ranges_remove(&d, 0, 0x100000), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(d.bytes, 0);
	assert_int_equal(s.n, 4);
	lazy_ranges_fini(&s);
	lazy_ranges_fini(&d);
}

static VmaEntry *vma(VmaEntry *v, uint64_t start, uint64_t end, VmaKind kind, uint32_t prot,
		     uint32_t flags)
{
	vma_entry__init(v);
	v->start = start;
	v->end = end;
	v->kind = kind;
	v->prot = prot;
	v->flags = flags;
	return v;
}

static void test_filter(void **state)
{
	VmaEntry v[4];
	VmaEntry *vp[4] = {
		vma(&v[0], 0x10000, 0x20000, VMA_KIND__VMA_FILE_PRIVATE, PROT_READ, MAP_PRIVATE),
		vma(&v[1], 0x20000, 0x40000, VMA_KIND__VMA_ANON_PRIVATE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS),
		vma(&v[2], 0x40000, 0x50000, VMA_KIND__VMA_ANON_PRIVATE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED),
		vma(&v[3], 0x50000, 0x60000, VMA_KIND__VMA_HEAP, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS),
	};
	MmEntry mm;
	struct rst_chain_seg seg = { 0x18000, 0x40000, 0, 0, 0x1000 };
	struct rst_chain_segs in = { 1, 1, &seg }, out = { 0 };
	uint64_t eager[] = { 0x23000 }, lazy = 0;
	bool vl[4] = { 0 };

	(void)state;
	mm_entry__init(&mm);
	mm.n_vmas = 4;
	mm.vmas = vp;
	assert_false(rst_lazy_vma(&v[0]));
	assert_true(rst_lazy_vma(&v[1]));
	assert_false(rst_lazy_vma(&v[2])); /* locked */
	assert_false(rst_lazy_vma(&v[3])); /* PROT_NONE with pages */
	assert_int_equal(rst_lazy_filter(&mm, eager, 1, vl, &in, &out, &lazy), 0);
	/* file part, the eager page, the locked and PROT_NONE parts read now */
	assert_int_equal(out.n, 4);
	assert_int_equal(out.seg[0].vaddr, 0x18000);
	assert_int_equal(out.seg[0].len, 0x8000);
	assert_int_equal(out.seg[1].vaddr, 0x23000);
	assert_int_equal(out.seg[1].len, PG);
	assert_int_equal(out.seg[1].off, 0x1000 + 0xb000);
	assert_int_equal(out.seg[2].vaddr, 0x40000);
	assert_int_equal(out.seg[3].vaddr, 0x50000);
	assert_int_equal(out.seg[3].len, 0x8000);
	assert_int_equal(lazy, 0x20000 - PG);
	assert_false(vl[0]);
	assert_true(vl[1]);
	assert_false(vl[2]);
	assert_false(vl[3]);
	free(out.seg);
}

/*
 * What the daemon queues of a pagemap run: the parts in the VMAs the restore
 * registered (rst_lazy_vma()), cut at their ends with the offsets following;
 * not the private file mapping, the locked or the hugetlb VMA the restore
 * filled itself. A run reaching a hole between VMAs is refused.
 */
static void test_add_lazy(void **state)
{
	VmaEntry v[5];
	VmaEntry *vp[5] = {
		vma(&v[0], 0x10000, 0x20000, VMA_KIND__VMA_FILE_PRIVATE, PROT_READ, MAP_PRIVATE),
		vma(&v[1], 0x20000, 0x30000, VMA_KIND__VMA_ANON_PRIVATE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS),
		vma(&v[2], 0x30000, 0x40000, VMA_KIND__VMA_ANON_PRIVATE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED),
		vma(&v[3], 0x40000, 0x50000, VMA_KIND__VMA_HEAP, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS),
		vma(&v[4], 0x60000, 0x70000, VMA_KIND__VMA_ANON_PRIVATE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB),
	};
	MmEntry mm;
	struct lazy_ranges s = { 0 };
	struct lazy_range r = {
		.vaddr = 0x18000, .len = 0x30000, .off = 0x2000, .level = 1, .entry = 7
	};
	struct lazy_range file = { .vaddr = 0x10000, .len = 0x8000 };
	struct lazy_range huge = { .vaddr = 0x60000, .len = 0x10000 };
	struct lazy_range hole = { .vaddr = 0x48000, .len = 0x10000 };

	(void)state;
	mm_entry__init(&mm);
	mm.n_vmas = 5;
	mm.vmas = vp;
	assert_int_equal(lazy_ranges_add_lazy(&s, &mm, &r), 0);
	/* [0x18000, 0x48000): the file part and the locked VMA left out */
	assert_int_equal(s.n, 2);
	assert_int_equal(s.r[0].vaddr, 0x20000);
	assert_int_equal(s.r[0].len, 0x10000);
	assert_int_equal(s.r[0].off, 0x2000 + 0x8000);
	assert_int_equal(s.r[0].level, 1);
	assert_int_equal(s.r[0].entry, 7);
	assert_int_equal(s.r[1].vaddr, 0x40000);
	assert_int_equal(s.r[1].len, 0x8000);
	assert_int_equal(s.r[1].off, 0x2000 + 0x28000);
	assert_int_equal(s.bytes, 0x18000);
	/* wholly in VMAs the restore filled: nothing queued */
	assert_int_equal(lazy_ranges_add_lazy(&s, &mm, &file), 0);
	assert_int_equal(lazy_ranges_add_lazy(&s, &mm, &huge), 0);
	assert_int_equal(s.n, 2);
	/* past the heap's end into the hole before the hugetlb VMA */
	assert_int_equal(lazy_ranges_add_lazy(&s, &mm, &hole), -EINVAL);
	lazy_ranges_fini(&s);
}

/*
 * The stretches to collapse: in a MADV_HUGEPAGE VMA every aligned 2 MiB one
 * with a lazy page, in a VMA that held huge pages without it (thp) only those
 * covered whole (by two ranges here too), none under MADV_NOHUGEPAGE, and
 * none that reaches past the VMA's end.
 */
/*
 * rst_eager_pages(): the rseq area's page, the pages of the arguments (two)
 * and of the environment (on the arguments' second page), after one given
 * already: sorted, each once, within what rst_eager_pages_max() bounds.
 */
static void test_eager_pages(void **state)
{
	MmEntry mm = MM_ENTRY__INIT;
	CoreEntry core = CORE_ENTRY__INIT;
	ThreadCoreEntry th = THREAD_CORE_ENTRY__INIT, *ths[] = { &th };
	RseqEntry rs = RSEQ_ENTRY__INIT;
	uint64_t out[16] = { 0x9000000 };
	size_t max, n;

	(void)state;
	mm.arg_start = 0x1000ff0;
	mm.arg_end = 0x1001010;
	mm.env_start = 0x1001010;
	mm.env_end = 0x1001100;
	rs.ptr = 0x5000020;
	rs.len = 32;
	th.rseq = &rs;
	core.n_threads = 1;
	core.threads = ths;
	max = rst_eager_pages_max(&mm, &core);
	assert_int_equal(max, 2 + 2 + 1);
	n = rst_eager_pages(&mm, &core, out, 1, 1 + max);
	assert_int_equal(n, 4);
	assert_int_equal(out[0], 0x1000000);
	assert_int_equal(out[1], 0x1001000);
	assert_int_equal(out[2], 0x5000000);
	assert_int_equal(out[3], 0x9000000);
	/* no arguments, no rseq: nothing but what was given */
	mm.arg_start = mm.arg_end = mm.env_start = mm.env_end = 0;
	th.rseq = NULL;
	out[0] = 0x7000;
	assert_int_equal(rst_eager_pages(&mm, &core, out, 1, 1 + rst_eager_pages_max(&mm, &core)),
			 1);
	assert_int_equal(out[0], 0x7000);
}

static void test_thp_chunks(void **state)
{
	const uint64_t M2 = 2UL << 20;
	VmaEntry hg = VMA_ENTRY__INIT, thp = VMA_ENTRY__INIT, no = VMA_ENTRY__INIT;
	VmaEntry *vmas[] = { &hg, &thp, &no };
	MmEntry mm = MM_ENTRY__INIT;
	struct lazy_ranges unserved = { 0 };
	uint64_t *c = NULL;
	size_t n = 0;

	(void)state;
	hg.start = M2 - PG;
	hg.end = 4 * M2 + PG;
	hg.has_madv = true;
	hg.madv = 1ULL << MADV_HUGEPAGE;
	thp.start = 8 * M2;
	thp.end = 10 * M2;
	thp.has_thp = thp.thp = true;
	no.start = 12 * M2;
	no.end = 14 * M2;
	no.has_madv = true;
	no.madv = 1ULL << MADV_HUGEPAGE | 1ULL << MADV_NOHUGEPAGE;
	mm.vmas = vmas;
	mm.n_vmas = 3;
	add(&unserved, M2, PG, 0); /* hg: the first stretch touched, the second not */
	add(&unserved, 4 * M2 - PG, 2 * PG, PG); /* the third touched at its end */
	add(&unserved, 8 * M2, M2 / 2, 0); /* thp: the first covered by two ranges */
	add(&unserved, 8 * M2 + M2 / 2, M2 / 2, 0);
	add(&unserved, 9 * M2, M2 - PG, 0); /* the second one page short */
	add(&unserved, 12 * M2, M2, 0); /* no: never */
	assert_int_equal(lazy_thp_chunks(&mm, &unserved, &c, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(c[0], M2);
	assert_int_equal(c[1], 3 * M2);
	assert_int_equal(c[2], 8 * M2);
	free(c);
	lazy_ranges_fini(&unserved);
}

/* Faults that follow each other double the fill up to the cap; a jump starts again. */
static void test_readahead(void **state)
{
	struct lazy_readahead ra = { 0 };
	const uint64_t min = 16 * PG, max = 256 * PG;

	(void)state;
	assert_int_equal(lazy_readahead(&ra, 0x100000, min, max), min);
	/* right at the end of the last fill */
	assert_int_equal(lazy_readahead(&ra, 0x100000 + min, min, max), 2 * min);
	/* within the last fill's size past its end (a page skipped) */
	assert_int_equal(lazy_readahead(&ra, 0x100000 + 3 * min + PG, min, max), 4 * min);
	assert_int_equal(ra.next, 0x100000 + 3 * min + PG + 4 * min);
	for (int i = 0; i < 8; i++)
		lazy_readahead(&ra, ra.next, min, max);
	assert_int_equal(ra.len, max);
	assert_int_equal(lazy_readahead(&ra, ra.next, min, max), max);
	/* further than one fill's size past the end: a jump */
	assert_int_equal(lazy_readahead(&ra, ra.next + max + PG, min, max), min);
	/* before the end of the last fill (backwards): a jump too */
	assert_int_equal(lazy_readahead(&ra, ra.next - PG, min, max), min);
	/* a cap under the minimum */
	ra = (struct lazy_readahead){ 0 };
	assert_int_equal(lazy_readahead(&ra, 0, max, min), min);
}

static void add_lv(struct lazy_ranges *s, uint64_t vaddr, uint64_t len, uint32_t level)
{
	struct lazy_range r = { .vaddr = vaddr, .len = len, .level = level };

	assert_int_equal(lazy_ranges_add(s, &r), 0);
}

/* The next hot stretch is [@start, @start + @len); @filled bytes of it go in. */
static void hot_step(struct lazy_hot *h, struct lazy_ranges *s, uint64_t start, uint64_t len,
		     uint64_t filled)
{
	uint64_t a, l;

	assert_true(lazy_hot_next(h, s, &a, &l));
	assert_int_equal(a, start);
	assert_int_equal(l, len);
	assert_int_equal(lazy_ranges_remove(s, a, a + filled), 0);
}

/* The newer levels' ranges first, newest first then by address; what is in already skipped. */
static void test_hot(void **state)
{
	struct lazy_ranges s = { 0 };
	struct lazy_hot h;
	uint64_t start, len;

	(void)state;
	/* one level: nothing first */
	add_lv(&s, 0x10000, 8 * PG, 3);
	assert_int_equal(lazy_hot_init(&s, &h), 0);
	assert_int_equal(h.n, 0);
	assert_false(lazy_hot_next(&h, &s, &start, &len));
	lazy_hot_fini(&h);
	lazy_ranges_fini(&s);

	add_lv(&s, 0x10000, 8 * PG, 2); /* the oldest level: last */
	add_lv(&s, 0x18000, 2 * PG, 1);
	add_lv(&s, 0x1a000, 4 * PG, 2);
	add_lv(&s, 0x20000, 4 * PG, 0);
	add_lv(&s, 0x30000, 8 * PG, 1);
	assert_int_equal(lazy_hot_init(&s, &h), 0);
	assert_int_equal(h.n, 3);
	hot_step(&h, &s, 0x20000, 4 * PG, 4 * PG); /* level 0 first */
	hot_step(&h, &s, 0x18000, 2 * PG, PG); /* then level 1 by address: one page of it filled */
	hot_step(&h, &s, 0x18000 + PG, PG, PG); /* the rest */
	/* a fault took the middle of the last one: its two sides */
	assert_int_equal(lazy_ranges_remove(&s, 0x32000, 0x34000), 0);
	hot_step(&h, &s, 0x30000, 2 * PG, 2 * PG);
	hot_step(&h, &s, 0x34000, 4 * PG, 4 * PG);
	/* done: the oldest level is left, by address */
	assert_false(lazy_hot_next(&h, &s, &start, &len));
	assert_int_equal(s.n, 2);
	expect(&s, 0, 0x10000, 8 * PG, 0);
	lazy_hot_fini(&h);
	lazy_ranges_fini(&s);
}

static bool ep_pending(void *arg)
{
	struct epoll_event e;

	return epoll_wait(*(int *)arg, &e, 1, 0) > 0;
}

/*
 * lazy_uffd_copy_cut() into a region of ours registered with a uffd: whole
 * without a cut callback or while it says no (an epoll set with nothing to
 * read); one 128 KiB piece when it says yes, the rest left missing.
 */
static void test_copy_cut(void **state)
{
	const uint64_t len = 1UL << 20, piece = 128UL << 10;
	int uffd = (int)syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	struct uffdio_api api = { .api = UFFD_API };
	int ep = epoll_create1(EPOLL_CLOEXEC), efd = eventfd(0, EFD_CLOEXEC);
	struct epoll_event e = { .events = EPOLLIN };
	uint8_t *src = malloc(len), *dst, vec[256];
	int64_t copied;

	(void)state;
	if (uffd < 0)
		skip(); /* vm.unprivileged_userfaultfd and no CAP_SYS_PTRACE */
	assert_true(ep >= 0 && efd >= 0 && src);
	assert_int_equal(ioctl(uffd, UFFDIO_API, &api), 0);
	memset(src, 0x5a, len);
	dst = mmap(NULL, 3 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(dst != MAP_FAILED);
	{
		struct uffdio_register r = { .range = { (uint64_t)(uintptr_t)dst, 3 * len },
					     .mode = UFFDIO_REGISTER_MODE_MISSING };

		assert_int_equal(ioctl(uffd, UFFDIO_REGISTER, &r), 0);
	}
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &e), 0);

	/* no set: all of it */
	assert_int_equal(lazy_uffd_copy_cut(uffd, (uintptr_t)dst, src, len, NULL, NULL, &copied),
			 0);
	assert_int_equal(copied, len);
	/* a set with nothing to read: all of it */
	assert_int_equal(lazy_uffd_copy_cut(uffd, (uintptr_t)dst + len, src, len, ep_pending, &ep,
					    &copied),
			 0);
	assert_int_equal(copied, len);
	/* something to read: one piece, the rest still missing */
	assert_int_equal(eventfd_write(efd, 1), 0);
	assert_int_equal(lazy_uffd_copy_cut(uffd, (uintptr_t)dst + 2 * len, src, len, ep_pending,
					    &ep, &copied),
			 0);
	assert_int_equal(copied, piece);
	assert_int_equal(mincore(dst + 2 * len, len, vec), 0);
	for (uint64_t i = 0; i < len / PG; i++)
		assert_int_equal(vec[i] & 1, i < piece / PG);
	assert_memory_equal(dst + len, src, len);
	/* a page there already in the second piece: its error, and the first piece counted */
	{
		eventfd_t v;

		assert_int_equal(eventfd_read(efd, &v),
				 0); /* nothing to read: by pieces to the end */
	}
	assert_int_equal(lazy_uffd_copy_cut(uffd, (uintptr_t)dst + 2 * len + 3 * piece, src, PG,
					    NULL, NULL, &copied),
			 0);
	assert_int_equal(lazy_uffd_copy_cut(uffd, (uintptr_t)dst + 2 * len + 2 * piece, src,
					    2 * piece, ep_pending, &ep, &copied),
			 -EEXIST);
	assert_int_equal(copied, piece);
	/* in the first: the ioctl's own */
	assert_int_equal(lazy_uffd_copy_cut(uffd, (uintptr_t)dst + 2 * len, src, 2 * piece,
					    ep_pending, &ep, &copied),
			 -EEXIST);
	assert_int_equal(copied, -EEXIST);
	munmap(dst, 3 * len);
	free(src);
	close(efd);
	close(ep);
	close(uffd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_find),    cmocka_unit_test(test_remove),
		cmocka_unit_test(test_move),	    cmocka_unit_test(test_filter),
		cmocka_unit_test(test_thp_chunks),  cmocka_unit_test(test_add_lazy),
		cmocka_unit_test(test_eager_pages), cmocka_unit_test(test_readahead),
		cmocka_unit_test(test_copy_cut),    cmocka_unit_test(test_hot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
