// SPDX-License-Identifier: GPL-2.0
/*
 * The pure planning of the memory restore (criu-like/restore-mem-plan.c) on
 * hand-made mm and pagemap records: VMA checks, page runs and their offsets
 * in the pages image, the hole for the restorer area, the layout of that
 * area; and the register fix-up of a thread stopped in a syscall.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "asm/restorer-crc.h"
#include "asm/restorer-tool.h"
#include "asm/sigframe.h"
#include "crc32c.h"
#include "image.h"
#include "log.h"
#include "restore-mem.h"
#include "util.h"

#define MAX_VMAS 8

struct fixture {
	MmEntry mm;
	VmaEntry v[MAX_VMAS];
	VmaEntry *vp[MAX_VMAS];
	PagemapEntry pe[16];
	PagemapEntry *pep[16];
	struct rst_mem_plan plan;
};

static void add_vma(struct fixture *f, uint64_t start, uint64_t end, VmaKind kind)
{
	VmaEntry *v = &f->v[f->mm.n_vmas];

	vma_entry__init(v);
	v->start = start;
	v->end = end;
	v->kind = kind;
	v->prot = PROT_READ | PROT_WRITE;
	v->flags = MAP_PRIVATE | MAP_ANONYMOUS;
	if (kind == VMA_KIND__VMA_ANON_SHARED) {
		v->has_shmid = true;
		v->shmid = 7;
	}
	if (kind == VMA_KIND__VMA_FILE_PRIVATE || kind == VMA_KIND__VMA_FILE_SHARED) {
		v->has_file_id = true;
		v->file_id = 3;
	}
	f->vp[f->mm.n_vmas++] = v;
}

static void add_pe(struct fixture *f, size_t *n, uint64_t vaddr, uint32_t nr, uint32_t flags)
{
	pagemap_entry__init(&f->pe[*n]);
	f->pe[*n].vaddr = vaddr;
	f->pe[*n].nr_pages = nr;
	f->pe[*n].flags = flags;
	f->pep[*n] = &f->pe[*n];
	(*n)++;
}

/* Private anon 0x10000-0x20000, its neighbour 0x20000-0x30000, shmem 0x40000-0x50000. */
static void fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	mm_entry__init(&f->mm);
	f->mm.vmas = f->vp;
	add_vma(f, 0x10000, 0x20000, VMA_KIND__VMA_ANON_PRIVATE);
	add_vma(f, 0x20000, 0x30000, VMA_KIND__VMA_FILE_PRIVATE);
	add_vma(f, 0x40000, 0x50000, VMA_KIND__VMA_ANON_SHARED);
	f->plan.mm = &f->mm;
}

static void fixture_fini(struct fixture *f)
{
	free(f->plan.runs);
	free(f->plan.crcs);
	free(f->plan.vma_fill);
}

static void test_vmas_ok(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f);
	assert_int_equal(rst_plan_check_vmas(1, &f.mm), 0);
}

static void test_vmas_bad(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f);
	f.v[1].start = 0x18000; /* overlaps the first */
	assert_int_equal(rst_plan_check_vmas(1, &f.mm), -EINVAL);
	fixture_init(&f);
	f.v[0].end = 0x10800; /* not page aligned */
	assert_int_equal(rst_plan_check_vmas(1, &f.mm), -EINVAL);
	fixture_init(&f);
	f.v[2].has_shmid = false;
	assert_int_equal(rst_plan_check_vmas(1, &f.mm), -EINVAL);
	fixture_init(&f);
	f.v[1].has_file_id = false;
	assert_int_equal(rst_plan_check_vmas(1, &f.mm), -EINVAL);
	fixture_init(&f);
	f.v[1].pgoff = 0x100; /* file offset not page aligned */
	assert_int_equal(rst_plan_check_vmas(1, &f.mm), -EINVAL);
	fixture_init(&f);
	f.v[2].start = RST_TASK_SIZE;
	f.v[2].end = RST_TASK_SIZE + 0x10000; /* 5-level paging */
	assert_int_equal(rst_plan_check_vmas(1, &f.mm), -EOPNOTSUPP);
	fixture_init(&f);
	f.v[0].kind = 99;
	assert_int_equal(rst_plan_check_vmas(1, &f.mm), -EINVAL);
}

static void test_runs_offsets_and_merge(void **state)
{
	struct fixture f;
	size_t n = 0;

	(void)state;
	fixture_init(&f);
	/* Two touching entries merge; a gap starts a new run; the data stays contiguous. */
	add_pe(&f, &n, 0x10000, 2, PAGEMAP_FLAG__PE_PRESENT);
	add_pe(&f, &n, 0x12000, 1, PAGEMAP_FLAG__PE_PRESENT);
	add_pe(&f, &n, 0x15000, 3, PAGEMAP_FLAG__PE_PRESENT);
	/* Across the boundary of the two adjacent private VMAs. */
	add_pe(&f, &n, 0x1f000, 2, PAGEMAP_FLAG__PE_PRESENT);
	f.pe[1].has_crc32c = f.pe[3].has_crc32c = true;
	f.pe[1].crc32c = 0x1234;
	f.pe[3].crc32c = 0x5678;
	assert_int_equal(rst_plan_runs(1, &f.plan, f.pep, n), 0);
	/* One checksum per entry that has one, at the entry's own data. */
	assert_int_equal(f.plan.nr_crcs, 2);
	assert_int_equal(f.plan.crcs[0].off, IMG_RAW_DATA_OFF + 2 * PAGE_SIZE);
	assert_int_equal(f.plan.crcs[0].len, PAGE_SIZE);
	assert_int_equal(f.plan.crcs[0].crc, 0x1234);
	assert_int_equal(f.plan.crcs[1].off, IMG_RAW_DATA_OFF + 6 * PAGE_SIZE);
	assert_int_equal(f.plan.crcs[1].len, 2 * PAGE_SIZE);
	assert_int_equal(f.plan.nr_runs, 3);
	assert_int_equal(f.plan.runs[0].vaddr, 0x10000);
	assert_int_equal(f.plan.runs[0].len, 3 * PAGE_SIZE);
	assert_int_equal(f.plan.runs[0].off, IMG_RAW_DATA_OFF);
	assert_int_equal(f.plan.runs[1].vaddr, 0x15000);
	assert_int_equal(f.plan.runs[1].off, IMG_RAW_DATA_OFF + 3 * PAGE_SIZE);
	assert_int_equal(f.plan.runs[2].vaddr, 0x1f000);
	assert_int_equal(f.plan.runs[2].len, 2 * PAGE_SIZE);
	assert_int_equal(f.plan.runs[2].off, IMG_RAW_DATA_OFF + 6 * PAGE_SIZE);
	assert_int_equal(f.plan.pages_bytes, 8 * PAGE_SIZE);
	assert_true(f.plan.vma_fill[0]);
	assert_true(f.plan.vma_fill[1]);
	assert_false(f.plan.vma_fill[2]);
	fixture_fini(&f);
}

static void test_runs_empty(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f);
	assert_int_equal(rst_plan_runs(1, &f.plan, f.pep, 0), 0);
	assert_int_equal(f.plan.nr_runs, 0);
	assert_int_equal(f.plan.pages_bytes, 0);
	assert_false(f.plan.vma_fill[0]);
	fixture_fini(&f);
}

/* Each case: one bad entry after a good one, and the error it must give. */
static void expect_runs_refused(uint64_t vaddr, uint32_t nr, uint32_t flags, int want)
{
	struct fixture f;
	size_t n = 0;

	fixture_init(&f);
	add_pe(&f, &n, 0x14000, 1, PAGEMAP_FLAG__PE_PRESENT);
	add_pe(&f, &n, vaddr, nr, flags);
	assert_int_equal(rst_plan_runs(1, &f.plan, f.pep, n), want);
	fixture_fini(&f);
}

static void test_runs_refused(void **state)
{
	(void)state;
	expect_runs_refused(0x16000, 1, PAGEMAP_FLAG__PE_PARENT, -EOPNOTSUPP);
	expect_runs_refused(0x16000, 1, PAGEMAP_FLAG__PE_LAZY, -EOPNOTSUPP);
	expect_runs_refused(0x12000, 1, PAGEMAP_FLAG__PE_PRESENT, -EINVAL); /* out of order */
	expect_runs_refused(0x14000, 1, PAGEMAP_FLAG__PE_PRESENT, -EINVAL); /* twice */
	expect_runs_refused(0x16800, 1, PAGEMAP_FLAG__PE_PRESENT, -EINVAL); /* unaligned */
	expect_runs_refused(0x16000, 0, PAGEMAP_FLAG__PE_PRESENT, -EINVAL); /* empty */
	expect_runs_refused(0x30000, 1, PAGEMAP_FLAG__PE_PRESENT, -EINVAL); /* in a hole */
	expect_runs_refused(0x2f000, 2, PAGEMAP_FLAG__PE_PRESENT, -EINVAL); /* into a hole */
	expect_runs_refused(0x40000, 1, PAGEMAP_FLAG__PE_PRESENT, -EINVAL); /* shared memory */
	expect_runs_refused(RST_TASK_SIZE - PAGE_SIZE, 2, PAGEMAP_FLAG__PE_PRESENT, -EINVAL);
}

/*
 * Random pagemaps against the fixture: either refused, or runs that lie in
 * private VMAs, in order, with contiguous data offsets adding up to the
 * pages of the entries.
 */
static void test_runs_random(void **state)
{
	uint64_t x = 0x2545f4914f6cdd1dULL;
	unsigned int round, ok = 0;

	(void)state;
	for (round = 0; round < 2000; round++) {
		struct fixture f;
		uint64_t pages = 0, vaddr = 0x10000, next_off = IMG_RAW_DATA_OFF;
		size_t n = 0, i, nr = 1 + round % 6;

		fixture_init(&f);
		for (i = 0; i < nr; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			vaddr += (x % 6) * PAGE_SIZE; /* 0: touching the previous entry */
			if (x % 97 == 0)
				vaddr -= PAGE_SIZE; /* sometimes out of order */
			add_pe(&f, &n, vaddr, 1 + (uint32_t)(x >> 8) % 4,
			       x % 53 ? PAGEMAP_FLAG__PE_PRESENT : PAGEMAP_FLAG__PE_PARENT);
			pages += f.pe[n - 1].nr_pages;
			vaddr += (uint64_t)f.pe[n - 1].nr_pages * PAGE_SIZE;
		}
		if (rst_plan_runs(1, &f.plan, f.pep, n)) {
			fixture_fini(&f);
			continue;
		}
		ok++;
		assert_int_equal(f.plan.pages_bytes, pages * PAGE_SIZE);
		for (i = 0; i < f.plan.nr_runs; i++) {
			const struct rst_page_run *r = &f.plan.runs[i];

			assert_int_equal(r->off, next_off);
			next_off += r->len;
			assert_true(r->vaddr >= 0x10000 && r->vaddr + r->len <= 0x30000);
			if (i)
				assert_true(r->vaddr >
					    f.plan.runs[i - 1].vaddr + f.plan.runs[i - 1].len);
		}
		assert_int_equal(next_off - IMG_RAW_DATA_OFF, pages * PAGE_SIZE);
		fixture_fini(&f);
	}
	assert_true(ok > 10); /* the generator does produce valid pagemaps */
}

static void test_hole(void **state)
{
	struct rst_range busy[] = {
		{ 0x100000, 0x200000 },
		{ 0x180000, 0x400000 }, /* overlaps the first */
		{ 0x500000, 0x600000 },
		{ 0x900000, 0xa00000 },
	};
	uint64_t at = 0;

	(void)state;
	/* Nothing busy: right below the top, one guard page from it. */
	assert_int_equal(rst_find_hole(NULL, 0, 0x3000, 0x10000, 0x1000000, &at), 0);
	assert_int_equal(at, 0x1000000 - PAGE_SIZE - 0x3000);
	/* The highest gap that fits with a guard page on each side. */
	assert_int_equal(rst_find_hole(busy, 4, 0x100000, 0x10000, 0xa00000, &at), 0);
	assert_int_equal(at, 0x900000 - PAGE_SIZE - 0x100000);
	/* Too small above 0x600000 (guard pages count): the gap between 0x400000 and 0x500000. */
	assert_int_equal(rst_find_hole(busy, 4, 0x80000, 0x10000, 0x680000, &at), 0);
	assert_int_equal(at, 0x500000 - PAGE_SIZE - 0x80000);
	/* The highest gap below the second range is the one under the first. */
	assert_int_equal(rst_find_hole(busy, 4, 0x80000, 0x10000, 0x480000, &at), 0);
	assert_int_equal(at, 0x100000 - PAGE_SIZE - 0x80000);
	/* Nowhere. */
	assert_int_equal(rst_find_hole(busy, 4, 0x800000, 0x10000, 0xa00000, &at), -ENOMEM);
	/* The overlapping pair leaves no gap between them. */
	assert_int_equal(rst_find_hole(busy, 2, 0x10000, 0x100000, 0x400000, &at), -ENOMEM);
}

static bool disjoint(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a + alen <= b || b + blen <= a;
}

static void test_layout(void **state)
{
	uint32_t pending[3] = { 0, 5, 1 };
	uint64_t frames[3] = { arch_sigframe_size(2696), arch_sigframe_size(2696),
			       arch_sigframe_size(576) };
	struct rst_thread_layout th[3] = { { 0 } };
	struct rst_layout_in in = {
		.blob_size = 12345,
		.nr_vmas = 30,
		.nr_runs = 100,
		.nr_threads = 3,
		.nr_timers = 2,
		.nr_shared_pending = 4,
		.nr_groups = 3,
		.nr_close_fds = 16,
		.thread_pending = pending,
		.frame_size = frames,
		.scratch_size = 0x8000,
	};
	struct rst_layout l = { .threads = th };
	struct rst_args a = { 0 };
	uint32_t i, j;

	(void)state;
	assert_int_equal(rst_layout_compute(&in, &l), 0);
	assert_int_equal(l.args_off, 0x4000); /* the blob, page aligned */
	assert_int_equal(l.total % PAGE_SIZE, 0);
	assert_int_equal(l.scratch_off % PAGE_SIZE, 0);
	assert_true(l.scratch_off + in.scratch_size <= l.total);
	assert_true(l.vmas_off >= sizeof(struct rst_args));
	a.size = (uint32_t)l.args_size;
	assert_true(rst_args_range_ok(&a, l.vmas_off, in.nr_vmas, sizeof(struct rst_vma)));
	assert_true(rst_args_range_ok(&a, l.runs_off, in.nr_runs, sizeof(struct rst_page_run)));
	assert_true(rst_args_range_ok(&a, l.close_fds_off, in.nr_close_fds, sizeof(int32_t)));
	assert_false(rst_args_range_ok(&a, l.runs_off, in.nr_runs + 1000000, 24));
	assert_true(disjoint(l.vmas_off, in.nr_vmas * sizeof(struct rst_vma), l.runs_off,
			     in.nr_runs * sizeof(struct rst_page_run)));
	for (i = 0; i < 3; i++) {
		assert_int_equal(th[i].frame_off % 64, 0);
		assert_int_equal(th[i].stack_top_off % 16, 0);
		assert_true(th[i].stack_top_off <= th[i].frame_off);
		assert_true(th[i].stack_top_off - RST_STACK_SIZE >= l.args_size);
		assert_true(th[i].pending_off + pending[i] * sizeof(struct rst_siginfo) <=
			    l.args_size);
		assert_true(l.args_off + th[i].frame_off + frames[i] <= l.scratch_off);
		for (j = 0; j < i; j++)
			assert_true(disjoint(th[j].stack_top_off - RST_STACK_SIZE,
					     RST_STACK_SIZE + frames[j],
					     th[i].stack_top_off - RST_STACK_SIZE,
					     RST_STACK_SIZE + frames[i]));
	}
	in.nr_runs = UINT32_MAX;
	in.nr_vmas = UINT32_MAX;
	in.nr_close_fds = UINT32_MAX;
	pending[1] = UINT32_MAX;
	assert_int_equal(rst_layout_compute(&in, &l), -E2BIG);
}

static void test_shmem_find(void **state)
{
	struct rst_shmem_obj objs[] = { { 5, 4096, 100 }, { 9, 8192, 101 } };
	struct rst_shmem s = { 2, objs };

	(void)state;
	assert_ptr_equal(rst_shmem_find(&s, 9), &objs[1]);
	assert_null(rst_shmem_find(&s, 6));
	assert_null(rst_shmem_find(NULL, 5));
}

/* The blob's crc32c is the tool's, on every length and alignment, and chains. */
static void test_blob_crc(void **state)
{
	unsigned char buf[300];
	size_t i, off, len;

	(void)state;
	if (!__builtin_cpu_supports("sse4.2"))
		skip();
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	for (off = 0; off < 9; off++)
		for (len = 0; len + off <= sizeof(buf); len += 37)
			assert_int_equal(rst_crc32c(0, buf + off, len),
					 crc32c_sw(0, buf + off, len));
	assert_int_equal(rst_crc32c(rst_crc32c(0, buf, 100), buf + 100, 200),
			 crc32c_sw(0, buf, 300));
	assert_int_equal(rst_crc32c(0, "123456789", 9), 0xe3069283); /* the check value */
}

/* @size bytes of xorshift64 from *@x (which it advances); free() them. */
static unsigned char *random_buf(size_t size, uint64_t *x)
{
	unsigned char *buf = malloc(size);
	size_t i;

	assert_non_null(buf);
	for (i = 0; i < size; i++) {
		*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
		buf[i] = (unsigned char)*x;
	}
	return buf;
}

/* Past three stripes the blob joins three CRCs computed side by side: same values. */
static void test_blob_crc_long(void **state)
{
	static const size_t lens[] = { 3 * RST_CRC_STRIPE - 8, 3 * RST_CRC_STRIPE,
				       3 * RST_CRC_STRIPE + 4096, 7 * RST_CRC_STRIPE + 13,
				       1 << 20 };
	size_t size = (1 << 20) + 64, i;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned char *buf;

	(void)state;
	if (!__builtin_cpu_supports("sse4.2"))
		skip();
	buf = random_buf(size, &x);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		assert_int_equal(rst_crc32c(0, buf + 3, lens[i]), crc32c_sw(0, buf + 3, lens[i]));
		assert_int_equal(rst_crc32c(0x12345678, buf, lens[i]),
				 crc32c_sw(0x12345678, buf, lens[i]));
	}
	free(buf);
}

/*
 * The restorer's threads check an entry's pieces each on its own: the XOR of
 * each piece's crc32c shifted to the entry's end (rst_crc_shift()) is the
 * entry's crc32c, whatever the cuts (round 0: one piece).
 */
static void test_blob_crc_pieces(void **state)
{
	size_t size = 5 * RST_CRC_STRIPE + 77, round;
	uint64_t x = 0x2545f4914f6cdd1dULL;
	unsigned char *buf;

	(void)state;
	if (!__builtin_cpu_supports("sse4.2"))
		skip();
	buf = random_buf(size, &x);
	for (round = 0; round < 20; round++) {
		uint32_t acc = 0;
		size_t pos = 0;

		while (pos < size) {
			size_t len;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			len = round == 0 ? size : 1 + (size_t)(x % (size / 3));
			if (len > size - pos)
				len = size - pos;
			acc ^= rst_crc_shift(rst_crc32c(0, buf + pos, len), size - pos - len);
			pos += len;
		}
		assert_int_equal(acc, crc32c_sw(0, buf, size));
	}
	assert_int_equal(rst_crc_shift(0x1234abcd, 0), 0x1234abcd);
	free(buf);
}

static void test_regs_restart(void **state)
{
	UserRegsEntry e = USER_REGS_ENTRY__INIT;
	struct user_regs_struct r;

	(void)state;
	e.ip = 0x1002;
	e.orig_ax = 7; /* poll */
	e.ax = (uint64_t)-514; /* -ERESTARTNOHAND */
	arch_rst_regs(&e, &r);
	assert_int_equal(r.rip, 0x1000);
	assert_int_equal(r.rax, 7);
	e.ax = (uint64_t)-516; /* -ERESTART_RESTARTBLOCK: its block is gone */
	arch_rst_regs(&e, &r);
	assert_int_equal(r.rip, 0x1002);
	assert_int_equal((long)r.rax, -EINTR);
	e.orig_ax = (uint64_t)-1; /* not in a syscall: untouched */
	e.ax = (uint64_t)-512;
	arch_rst_regs(&e, &r);
	assert_int_equal(r.rip, 0x1002);
	assert_int_equal((long)r.rax, -512);
}

static PagemapEntry *chain_pe(PagemapEntry *e, uint64_t vaddr, uint32_t nr, uint32_t flags)
{
	pagemap_entry__init(e);
	e->vaddr = vaddr;
	e->nr_pages = nr;
	e->flags = flags;
	return e;
}

/* Three levels: each part of the dump comes from the first level that holds its data. */
/* Three levels of two entries each into @lv, their offsets computed. */
struct chain3 {
	PagemapEntry e[6];
	PagemapEntry *l[3][2];
	struct rst_chain_level lv[3];
};

static void chain3_init(struct chain3 *c)
{
	static const char *names[3] = { "d0", "d1", "d2" };

	c->l[0][0] = chain_pe(&c->e[0], 0x10000, 4, PAGEMAP_FLAG__PE_PARENT);
	c->l[0][1] = chain_pe(&c->e[1], 0x14000, 1, PAGEMAP_FLAG__PE_PRESENT);
	c->l[1][0] = chain_pe(&c->e[2], 0x10000, 1, PAGEMAP_FLAG__PE_PRESENT);
	c->l[1][1] = chain_pe(&c->e[3], 0x11000, 3, PAGEMAP_FLAG__PE_PARENT);
	/* 0x12000 missing: not populated then, the mapping's own contents */
	c->l[2][0] = chain_pe(&c->e[4], 0x10000, 2, PAGEMAP_FLAG__PE_PRESENT);
	c->l[2][1] = chain_pe(&c->e[5], 0x13000, 1, PAGEMAP_FLAG__PE_PRESENT);
	for (int i = 0; i < 3; i++) {
		c->lv[i] = (struct rst_chain_level){ names[i], c->l[i], 2, NULL };
		assert_int_equal(rst_chain_offsets(&c->lv[i]), 0);
	}
}

static void test_chain_resolve(void **state)
{
	struct chain3 c;
	struct rst_chain_level *lv = c.lv;
	struct rst_chain_segs s = { 0 };

	(void)state;
	chain3_init(&c);
	assert_int_equal(rst_chain_resolve(1, lv, 3, &s), 0);
	assert_int_equal(s.n, 4);
	/* 0x10000 from d1 (first entry, offset 0) */
	assert_int_equal(s.seg[0].vaddr, 0x10000);
	assert_int_equal(s.seg[0].level, 1);
	assert_int_equal(s.seg[0].off, 0);
	/* 0x11000 from d2, second page of its first entry */
	assert_int_equal(s.seg[1].vaddr, 0x11000);
	assert_int_equal(s.seg[1].level, 2);
	assert_int_equal(s.seg[1].off, 0x1000);
	/* 0x13000 from d2's second entry, after the 2 pages of the first */
	assert_int_equal(s.seg[2].vaddr, 0x13000);
	assert_int_equal(s.seg[2].level, 2);
	assert_int_equal(s.seg[2].off, 0x2000);
	assert_int_equal(s.seg[3].vaddr, 0x14000);
	assert_int_equal(s.seg[3].level, 0);
	free(s.seg);
	s = (struct rst_chain_segs){ 0 };
	/* the last level still says "in the parent": no such image */
	assert_int_not_equal(rst_chain_resolve(1, lv, 2, &s), 0);
	free(s.seg);
	for (int i = 0; i < 3; i++)
		free(lv[i].off);
}

/*
 * The same chain, parts of level 0 only (a lazy restore's eager pages): each
 * part from the same level and offset as in the whole resolution, nothing
 * for a range the chain never held, and the whole of level 0 as ranges gives
 * the whole resolution.
 */
static void seg_is(const struct rst_chain_seg *g, uint64_t vaddr, uint64_t len, unsigned int level,
		   uint64_t off)
{
	assert_int_equal(g->vaddr, vaddr);
	assert_int_equal(g->len, len);
	assert_int_equal(g->level, level);
	assert_int_equal(g->off, off);
}

static void test_chain_resolve_ranges(void **state)
{
	struct chain3 c;
	struct rst_chain_level *lv = c.lv;
	struct rst_chain_seg r[3] = { { .vaddr = 0x11000, .len = 0x1000 },
				      { .vaddr = 0x12000, .len = 0x1000 },
				      { .vaddr = 0x13000, .len = 0x2000 } };
	struct rst_chain_segs ranges = { 3, 3, r }, s = { 0 }, all = { 0 }, top = { 0 };

	(void)state;
	chain3_init(&c);
	assert_int_equal(rst_chain_resolve_ranges(1, lv, 3, &ranges, &s), 0);
	assert_int_equal(s.n, 3);
	/* d2's second page; 0x12000 in no level, nothing; d2's second entry; level 0's own */
	seg_is(&s.seg[0], 0x11000, 0x1000, 2, 0x1000);
	seg_is(&s.seg[1], 0x13000, 0x1000, 2, 0x2000);
	seg_is(&s.seg[2], 0x14000, 0x1000, 0, 0);
	free(s.seg);
	s = (struct rst_chain_segs){ 0 };
	assert_int_equal(rst_chain_top(&lv[0], &top), 0);
	assert_int_equal(top.n, 2);
	assert_int_equal(top.seg[0].len, 0x4000);
	assert_int_equal(rst_chain_resolve_ranges(1, lv, 3, &top, &s), 0);
	assert_int_equal(rst_chain_resolve(1, lv, 3, &all), 0);
	assert_int_equal(s.n, all.n);
	for (size_t i = 0; i < all.n; i++) {
		seg_is(&s.seg[i], all.seg[i].vaddr, all.seg[i].len, all.seg[i].level,
		       all.seg[i].off);
		assert_int_equal(s.seg[i].entry, all.seg[i].entry);
	}
	free(s.seg);
	free(all.seg);
	free(top.seg);
	for (int i = 0; i < 3; i++)
		free(lv[i].off);
}

/*
 * A parent level whose entries go back (a tail reported twice by a dump that
 * resumed PAGEMAP_SCAN at a stale walk_end): refused, not searched by halves,
 * which would take its pages for never populated (zeros).
 */
static void test_chain_parent_out_of_order(void **state)
{
	PagemapEntry e[6];
	PagemapEntry *l0[] = { chain_pe(&e[0], 0x10000, 8, PAGEMAP_FLAG__PE_PARENT) };
	PagemapEntry *l1[] = { chain_pe(&e[1], 0x10000, 1, PAGEMAP_FLAG__PE_PRESENT),
			       chain_pe(&e[2], 0x12000, 1, PAGEMAP_FLAG__PE_PRESENT),
			       chain_pe(&e[3], 0x14000, 1, PAGEMAP_FLAG__PE_PRESENT),
			       chain_pe(&e[4], 0x12000, 1, PAGEMAP_FLAG__PE_PRESENT),
			       chain_pe(&e[5], 0x14000, 1, PAGEMAP_FLAG__PE_PRESENT) };
	struct rst_chain_level lv[2] = { { "d0", l0, 1, NULL }, { "d1", l1, 5, NULL } };
	struct rst_chain_segs s = { 0 };

	(void)state;
	for (int i = 0; i < 2; i++)
		assert_int_equal(rst_chain_offsets(&lv[i]), 0);
	assert_int_equal(rst_chain_resolve(1, lv, 2, &s), -EINVAL);
	free(s.seg);
	/* overlapping the one before: refused too */
	s = (struct rst_chain_segs){ 0 };
	lv[1].n = 3;
	chain_pe(&e[2], 0x10000, 2, PAGEMAP_FLAG__PE_PRESENT);
	assert_int_equal(rst_chain_resolve(1, lv, 2, &s), -EINVAL);
	free(s.seg);
	/* in order: 3 pages from d1, the rest never populated */
	s = (struct rst_chain_segs){ 0 };
	chain_pe(&e[2], 0x12000, 1, PAGEMAP_FLAG__PE_PRESENT);
	assert_int_equal(rst_chain_resolve(1, lv, 2, &s), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.seg[2].vaddr, 0x14000);
	free(s.seg);
	for (int i = 0; i < 2; i++)
		free(lv[i].off);
}

/* A part punched out by dedup keeps its place in the data; needed, it is refused. */
static void test_chain_deduped(void **state)
{
	PagemapEntry e[4];
	PagemapEntry *l0[] = { chain_pe(&e[0], 0x10000, 3, PAGEMAP_FLAG__PE_PARENT) };
	PagemapEntry *l1[] = { chain_pe(&e[1], 0x10000, 1, PAGEMAP_FLAG__PE_DEDUPED),
			       chain_pe(&e[2], 0x11000, 2, PAGEMAP_FLAG__PE_PRESENT) };
	struct rst_chain_level lv[2] = { { "d0", l0, 1, NULL }, { "d1", l1, 2, NULL } };
	struct rst_chain_segs s = { 0 };

	(void)state;
	for (int i = 0; i < 2; i++)
		assert_int_equal(rst_chain_offsets(&lv[i]), 0);
	assert_int_equal(lv[1].off[1], 0x1000);
	assert_int_equal(rst_chain_resolve(1, lv, 2, &s), -ENODATA);
	free(s.seg);
	/* the newest image does not need it: resolved from d1's second entry */
	s = (struct rst_chain_segs){ 0 };
	chain_pe(&e[0], 0x11000, 2, PAGEMAP_FLAG__PE_PARENT);
	assert_int_equal(rst_chain_resolve(1, lv, 2, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.seg[0].level, 1);
	assert_int_equal(s.seg[0].off, 0x1000);
	free(s.seg);
	for (int i = 0; i < 2; i++)
		free(lv[i].off);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vmas_ok),
		cmocka_unit_test(test_vmas_bad),
		cmocka_unit_test(test_runs_offsets_and_merge),
		cmocka_unit_test(test_runs_empty),
		cmocka_unit_test(test_chain_resolve),
		cmocka_unit_test(test_chain_resolve_ranges),
		cmocka_unit_test(test_chain_deduped),
		cmocka_unit_test(test_chain_parent_out_of_order),
		cmocka_unit_test(test_runs_refused),
		cmocka_unit_test(test_runs_random),
		cmocka_unit_test(test_hole),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_shmem_find),
		cmocka_unit_test(test_blob_crc),
		cmocka_unit_test(test_blob_crc_long),
		cmocka_unit_test(test_blob_crc_pieces),
		cmocka_unit_test(test_regs_restart),
	};

	log_set_level(LOG_MSG);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
