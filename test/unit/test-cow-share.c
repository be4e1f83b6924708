// SPDX-License-Identifier: GPL-2.0
/*
 * Copy-on-write sharing across fork (Documentation/memory.md, section 7):
 * the pure logic of mem/cow-share.c (dump) and mem/restore-cow.c and the
 * chain resolution of PE_PARENT_SHARED (restore), and the PFN comparison on
 * a live fork.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "compat.h"
#include "cow-share.h"
#include "restore-mem.h"
#include "util.h"

#define P PAGE_SIZE
#define ENT(pfn) (PM_PRESENT | (uint64_t)(pfn))

static void test_same_pfn(void **state)
{
	/* same, same, differs, absent in the child, page cache, zero page, same */
	uint64_t c[] = { ENT(10), ENT(11), ENT(12), 0, ENT(14) | PM_FILE, ENT(99), ENT(16) };
	uint64_t p[] = { ENT(10), ENT(11), ENT(50), ENT(13), ENT(14), ENT(99), ENT(16) };
	struct mem_runs out = { 0 };

	(void)state;
	assert_int_equal(cow_same_pfn(0x10000, c, p, 7, 99, MEM_SAVE_ANON, &out), 0);
	assert_int_equal(out.nr, 2);
	assert_int_equal(out.runs[0].start, 0x10000);
	assert_int_equal(out.runs[0].nr_pages, 2);
	assert_int_equal(out.runs[1].start, 0x10000 + 6 * P);
	assert_int_equal(out.runs[1].nr_pages, 1);
	mem_runs_fini(&out);
	/* a swapped page (no PFN) and PFN 0 are never the same */
	c[0] = PM_SWAP | 5;
	p[0] = PM_SWAP | 5;
	c[1] = p[1] = PM_PRESENT;
	assert_int_equal(cow_same_pfn(0x10000, c, p, 2, 0, MEM_SAVE_ANON, &out), 0);
	assert_int_equal(out.nr, 0);
	mem_runs_fini(&out);
}

static void test_union_and_shared(void **state)
{
	struct mem_runs a = { 0 }, b = { 0 }, c = { 0 }, all = { 0 }, same = { 0 }, out = { 0 };
	const struct mem_runs *lists[] = { &a, NULL, &b, &c };

	(void)state;
	/* the parent's data, its PE_PARENT pages and its own shared ones, disjoint */
	assert_int_equal(mem_runs_append(&a, 0x10000, 2, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(&a, 0x20000, 1, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(&b, 0x12000, 2, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(&c, 0x30000, 4, MEM_SAVE_COW), 0);
	assert_int_equal(cow_runs_union(lists, 4, &all), 0);
	assert_int_equal(all.nr, 3);
	assert_int_equal(all.runs[0].start, 0x10000);
	assert_int_equal(all.runs[0].nr_pages, 4); /* 0x10000 + 0x12000 touch */
	assert_int_equal(all.runs[1].start, 0x20000);
	assert_int_equal(all.runs[2].start, 0x30000);
	/* the child's same-PFN pages, partly outside what the parent saved */
	assert_int_equal(mem_runs_append(&same, 0xf000, 3, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(&same, 0x13000, 0x10, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(&same, 0x31000, 1, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(&same, 0x40000, 1, MEM_SAVE_ANON), 0);
	assert_int_equal(cow_shared_runs(&same, &all, &out), 0);
	assert_int_equal(out.nr, 4);
	assert_int_equal(out.runs[0].start, 0x10000); /* 0xf000 +3: its part the parent saved */
	assert_int_equal(out.runs[0].nr_pages, 2);
	assert_int_equal(out.runs[1].start, 0x13000); /* 0x13000 +16 meets two saved runs */
	assert_int_equal(out.runs[1].nr_pages, 1);
	assert_int_equal(out.runs[2].start, 0x20000);
	assert_int_equal(out.runs[2].nr_pages, 1);
	assert_int_equal(out.runs[3].start, 0x31000);
	assert_int_equal(out.runs[3].nr_pages, 1);
	assert_int_equal(out.runs[3].policy, MEM_SAVE_ANON); /* the child's policy */
	mem_runs_fini(&a);
	mem_runs_fini(&b);
	mem_runs_fini(&c);
	mem_runs_fini(&all);
	mem_runs_fini(&same);
	mem_runs_fini(&out);
}

/* The entries of a loaded parent at any address: 0 where it saved nothing. */
static void test_parent_ents(void **state)
{
	uint64_t ents[] = { 1, 2, 3, 4, 5 };
	struct cow_parent cp = { .ents = ents };
	uint64_t out[6];

	(void)state;
	assert_int_equal(mem_runs_append(&cp.saved, 0x10000, 2, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(&cp.saved, 0x20000, 3, MEM_SAVE_ANON), 0);
	cow_parent_ents(&cp, 0xf000, 4, out);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 1);
	assert_int_equal(out[2], 2);
	assert_int_equal(out[3], 0);
	cow_parent_ents(&cp, 0x21000, 6, out);
	assert_int_equal(out[0], 4);
	assert_int_equal(out[1], 5);
	assert_int_equal(out[2], 0);
	cow_parent_ents(&cp, 0x1f000, 2, out);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 3);
	mem_runs_fini(&cp.saved);
}

static void test_cut(void **state)
{
	const struct rst_page_run in[] = { { 0x10000, 8 * P, 0x1000 }, { 0x20000, 2 * P, 0x9000 } };
	const struct rst_range out[] = { { 0x11000, 0x12000 },
					 { 0x14000, 0x16000 },
					 { 0x1f000, 0x21000 } };
	struct rst_page_run r[8];
	size_t n;

	(void)state;
	n = rst_cow_cut(in, 2, out, 3, 0, UINT64_MAX, r);
	assert_int_equal(n, 4);
	assert_int_equal(r[0].vaddr, 0x10000);
	assert_int_equal(r[0].len, P);
	assert_int_equal(r[0].off, 0x1000);
	assert_int_equal(r[1].vaddr, 0x12000);
	assert_int_equal(r[1].len, 2 * P);
	assert_int_equal(r[1].off, 0x3000);
	assert_int_equal(r[2].vaddr, 0x16000);
	assert_int_equal(r[2].len, 2 * P);
	assert_int_equal(r[2].off, 0x7000);
	assert_int_equal(r[3].vaddr, 0x21000);
	assert_int_equal(r[3].len, P);
	assert_int_equal(r[3].off, 0xa000);
	/* clipped to one VMA, nothing cut out */
	n = rst_cow_cut(in, 2, NULL, 0, 0x13000, 0x15000, r);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].vaddr, 0x13000);
	assert_int_equal(r[0].len, 2 * P);
	assert_int_equal(r[0].off, 0x4000);
	/* everything cut out */
	n = rst_cow_cut(in, 2, (struct rst_range[]){ { 0, UINT64_MAX } }, 1, 0, UINT64_MAX, r);
	assert_int_equal(n, 0);
}

static PagemapEntry *pe(PagemapEntry *e, uint64_t vaddr, uint32_t nr, uint32_t flags)
{
	pagemap_entry__init(e);
	e->vaddr = vaddr;
	e->nr_pages = nr;
	e->flags = flags;
	return e;
}

/*
 * A child (level 0) whose parent task's pagemap is level 2, after the
 * child's own pre-dump (level 1); the parent's part is itself in its
 * parent dump (level 3).
 */
static void test_resolve_shared(void **state)
{
	PagemapEntry e[8];
	PagemapEntry *l0[] = { pe(&e[0], 0x10000, 2, PAGEMAP_FLAG__PE_PARENT_SHARED),
			       pe(&e[1], 0x12000, 1, PAGEMAP_FLAG__PE_PARENT),
			       pe(&e[2], 0x13000, 1, PAGEMAP_FLAG__PE_PRESENT) };
	PagemapEntry *l1[] = { pe(&e[3], 0x12000, 1, PAGEMAP_FLAG__PE_PRESENT) };
	PagemapEntry *l2[] = { pe(&e[4], 0x10000, 1, PAGEMAP_FLAG__PE_PRESENT),
			       pe(&e[5], 0x11000, 1, PAGEMAP_FLAG__PE_PARENT) };
	PagemapEntry *l3[] = { pe(&e[6], 0x11000, 1, PAGEMAP_FLAG__PE_PRESENT) };
	struct rst_chain_level lv[4] = { { "d0", l0, 3, NULL, 1, 2 },
					 { "d0/parent", l1, 1, NULL, 0, 0 },
					 { "d0 (pid 2)", l2, 2, NULL, 3, 0 },
					 { "d0/parent (pid 2)", l3, 1, NULL, 0, 0 } };
	struct rst_chain_segs s = { 0 };

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(rst_chain_offsets(&lv[i]), 0);
	assert_int_equal(rst_chain_resolve(3, lv, 4, &s), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.seg[0].vaddr, 0x10000);
	assert_int_equal(s.seg[0].level, 2);
	assert_int_equal(s.seg[1].vaddr, 0x11000);
	assert_int_equal(s.seg[1].level, 3);
	assert_int_equal(s.seg[2].vaddr, 0x12000);
	assert_int_equal(s.seg[2].level, 1);
	assert_int_equal(s.seg[3].vaddr, 0x13000);
	assert_int_equal(s.seg[3].level, 0);
	free(s.seg);
	/* no parent task's level: refused, never a loop */
	s = (struct rst_chain_segs){ 0 };
	lv[0].shared = 0;
	assert_int_equal(rst_chain_resolve(3, lv, 4, &s), -EINVAL);
	free(s.seg);
	for (int i = 0; i < 4; i++)
		free(lv[i].off);
}

/* A live fork: the pages neither side wrote since are found, the others not. */
/*
 * The child's entries read ahead over its private anonymous VMAs (from its
 * smaps) give what reading them at the comparison gives (@want); entries
 * read ahead are what is compared (zeroed, nothing is shared).
 */
static void live_prefetch(pid_t pid, const struct cow_parent *cp, const char *m, size_t n,
			  const struct mem_runs *runs, const struct mem_runs *want)
{
	struct vma_list vl = { 0 };
	struct cow_pagemap pm;
	struct mem_runs same = { 0 };
	unsigned int i, k = 0;

	assert_int_equal(proc_parse_maps(pid, true, &vl), 0);
	assert_int_equal(cow_pagemap_prefetch(pid, &vl, &pm), 0);
	for (i = 0; i < pm.nr; i++)
		k += pm.seg[i].start <= (unsigned long)m &&
		     (unsigned long)m + n * P <= pm.seg[i].start + pm.seg[i].n * P;
	assert_int_equal(k, 1);
	assert_int_equal(cow_scan_same_cached(pid, -1, cp, &pm, runs, &same), 0);
	assert_int_equal(same.nr, want->nr);
	for (i = 0; i < same.nr; i++) {
		assert_int_equal(same.runs[i].start, want->runs[i].start);
		assert_int_equal(same.runs[i].nr_pages, want->runs[i].nr_pages);
	}
	mem_runs_fini(&same);
	for (i = 0; i < pm.nr; i++)
		memset(pm.seg[i].ents, 0, pm.seg[i].n * sizeof(*pm.seg[i].ents));
	assert_int_equal(cow_scan_same_cached(pid, -1, cp, &pm, runs, &same), 0);
	assert_int_equal(same.nr, 0);
	cow_pagemap_fini(&pm);
	vma_list_fini(&vl);
}

static void test_live_fork(void **state)
{
	const int n = 16;
	char *m = mmap(NULL, n * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct mem_runs runs = { 0 }, same = { 0 };
	int go[2], ready[2];
	pid_t pid;
	char c;

	(void)state;
	if (geteuid() != 0)
		skip(); /* PFNs are visible to CAP_SYS_ADMIN only */
	assert_ptr_not_equal(m, MAP_FAILED);
	memset(m, 7, n * P);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		m[3 * P] = 1; /* the child writes page 3 */
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	m[5 * P] = 2; /* the parent writes page 5 */
	assert_int_equal(mem_runs_append(&runs, (unsigned long)m, n, MEM_SAVE_ANON), 0);
	assert_int_equal(cow_scan_same(pid, getpid(), &runs, &same), 0);
	assert_int_equal(same.nr, 3);
	assert_int_equal(same.runs[0].start, (unsigned long)m);
	assert_int_equal(same.runs[0].nr_pages, 3);
	assert_int_equal(same.runs[1].start, (unsigned long)m + 4 * P);
	assert_int_equal(same.runs[1].nr_pages, 1);
	assert_int_equal(same.runs[2].start, (unsigned long)m + 6 * P);
	assert_int_equal(same.runs[2].nr_pages, n - 6);
	/* the same through the parent's entries read once, over what it saved (not page 10) */
	{
		struct mem_runs saved = { 0 }, same2 = { 0 };
		struct cow_parent cp;

		assert_int_equal(mem_runs_append(&saved, (unsigned long)m, 10, MEM_SAVE_ANON), 0);
		assert_int_equal(mem_runs_append(&saved, (unsigned long)m + 11 * P, n - 11,
						 MEM_SAVE_ANON),
				 0);
		assert_int_equal(cow_parent_load(getpid(), &saved, &cp), 0);
		assert_int_equal(cow_scan_same_cached(pid, -1, &cp, NULL, &runs, &same2), 0);
		assert_int_equal(same2.nr, 4);
		assert_int_equal(same2.runs[2].start, (unsigned long)m + 6 * P);
		assert_int_equal(same2.runs[2].nr_pages, 4);
		assert_int_equal(same2.runs[3].start, (unsigned long)m + 11 * P);
		assert_int_equal(same2.runs[3].nr_pages, n - 11);
		live_prefetch(pid, &cp, m, n, &runs, &same2);
		cow_parent_fini(&cp);
		mem_runs_fini(&same2);
	}
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	mem_runs_fini(&runs);
	mem_runs_fini(&same);
	munmap(m, n * P);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_pfn),    cmocka_unit_test(test_union_and_shared),
		cmocka_unit_test(test_cut),	    cmocka_unit_test(test_resolve_shared),
		cmocka_unit_test(test_parent_ents), cmocka_unit_test(test_live_fork),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
