// SPDX-License-Identifier: GPL-2.0
/*
 * proc/vma-fast.c: the translation of the kernel's VMA flags into smaps'
 * VmFlags bits (pure), then, as root on a kernel with BTF, the check of the
 * table on this kernel and vma_fast_read() of our own VMAs against smaps:
 * the same VMAs, the same flags, and the same answer to what the dump asks
 * of the counters (a guard empty or not, private memory holding anonymous
 * pages or huge ones).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "mem-scan.h"
#include "proc-parse.h"
#include "util.h"
#include "vma-fast.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

static void test_raw(void **state)
{
	unsigned long vmf;

	(void)state;
	/* rd wr mr mw me ac: a plain private heap */
	assert_true(vmf_from_raw(0x1 | 0x2 | 0x10 | 0x20 | 0x40 | 0x100000, &vmf));
	assert_int_equal(vmf, VMF_RD | VMF_WR | VMF_MR | VMF_MW | VMF_ME | VMF_AC);
	assert_true(vmf_from_raw(0x8 | 0x80, &vmf));
	assert_int_equal(vmf, VMF_SH | VMF_MS);
	assert_true(vmf_from_raw(1UL << 29, &vmf));
	assert_int_equal(vmf, VMF_HG);
	assert_true(vmf_from_raw(1UL << 30, &vmf));
	assert_int_equal(vmf, VMF_NH);
	assert_true(vmf_from_raw(1UL << 25 | 1UL << 17 | 1UL << 26, &vmf));
	assert_int_equal(vmf, VMF_WF | VMF_DC | VMF_DD);
	assert_true(vmf_from_raw(1UL << 13 | 1UL << 19, &vmf));
	assert_int_equal(vmf, VMF_LO | VMF_LF);
	assert_true(vmf_from_raw(0, &vmf));
	assert_int_equal(vmf, 0);
	/* bit 11, a protection key, anything above: not known, smaps is read */
	assert_false(vmf_from_raw(0x1 | 1UL << 11, &vmf));
	assert_false(vmf_from_raw(0x1 | 1UL << 32, &vmf));
	assert_false(vmf_from_raw(1UL << 63, &vmf));
}

static struct vma_bpf *bpf_or_skip(void)
{
	struct vma_bpf *b = NULL;

	if (geteuid() || access("/sys/kernel/btf/vmlinux", R_OK) || vma_bpf_open(&b)) {
		print_message("not root, or no BTF or BPF iterator: skipped\n");
		skip();
	}
	return b;
}

static const struct vma_entry *find(const struct vma_list *l, unsigned long start)
{
	for (unsigned int i = 0; i < l->nr; i++)
		if (l->vmas[i].start == start)
			return &l->vmas[i];
	return NULL;
}

/* The VMA holding @p (areas of the same flags side by side make one). */
static const struct vma_entry *holding(const struct vma_list *l, const void *p)
{
	for (unsigned int i = 0; i < l->nr; i++)
		if (l->vmas[i].start <= (unsigned long)p && (unsigned long)p < l->vmas[i].end)
			return &l->vmas[i];
	fail_msg("no VMA holds %p", p);
	return NULL;
}

/* Areas of each kind the counters tell apart, kept mapped during the reads. */
struct areas {
	char *guard, *guard_full, *zero, *anon, *thp, *file;
	size_t thp_len;
	FILE *f;
};

static void areas_make(struct areas *a)
{
	char *p;

	a->guard = mmap(NULL, 4 * PAGE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a->guard_full = mmap(NULL, 4 * PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* read only: a VMA of its own, holding the zero page only */
	a->zero = mmap(NULL, 4 * PAGE_SIZE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a->anon = mmap(NULL, 4 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	assert_true(a->guard != MAP_FAILED && a->guard_full != MAP_FAILED &&
		    a->zero != MAP_FAILED && a->anon != MAP_FAILED);
	a->guard_full[PAGE_SIZE] = 1;
	assert_int_equal(mprotect(a->guard_full, 4 * PAGE_SIZE, PROT_NONE), 0);
	assert_int_equal(*(volatile char *)a->zero, 0); /* no Rss in smaps where shared */
	a->anon[0] = 1;
	/* 2 MiB aligned, written, collapsed into a huge page without MADV_HUGEPAGE */
	a->thp_len = 4UL << 20;
	p = mmap(NULL, a->thp_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	a->thp = (char *)(((unsigned long)p + (2UL << 20) - 1) & ~((2UL << 20) - 1));
	memset(a->thp, 1, 2UL << 20);
	if (madvise(a->thp, 2UL << 20, MADV_COLLAPSE))
		print_message("MADV_COLLAPSE: %m (the huge page case is not tested)\n");
	a->thp = p;
	/* a private file mapping with one page COWed */
	a->f = tmpfile();
	assert_non_null(a->f);
	assert_int_equal(ftruncate(fileno(a->f), 4 * PAGE_SIZE), 0);
	a->file = mmap(NULL, 4 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fileno(a->f), 0);
	assert_true(a->file != MAP_FAILED);
	assert_int_equal(*(volatile char *)(a->file + PAGE_SIZE), 0);
	a->file[0] = 1;
}

static void areas_free(struct areas *a)
{
	munmap(a->guard, 4 * PAGE_SIZE);
	munmap(a->guard_full, 4 * PAGE_SIZE);
	munmap(a->zero, 4 * PAGE_SIZE);
	munmap(a->anon, 4 * PAGE_SIZE);
	munmap(a->thp, a->thp_len);
	munmap(a->file, 4 * PAGE_SIZE);
	fclose(a->f);
}

/* The two reads list the same VMAs (a malloc between them may map one: tried again). */
static void read_both(struct vma_bpf *b, struct vma_list *fast, struct vma_list *smaps)
{
	for (int tries = 0; tries < 5; tries++) {
		assert_int_equal(vma_fast_read(b, getpid(), fast), 0);
		assert_int_equal(proc_parse_maps(getpid(), true, smaps), 0);
		if (fast->nr == smaps->nr)
			return;
		vma_list_fini(fast);
		vma_list_fini(smaps);
	}
	fail_msg("our VMAs kept changing between the two reads");
}

static void test_self(void **state)
{
	struct vma_bpf *b = bpf_or_skip();
	struct vma_list fast = { 0 }, smaps = { 0 };
	struct areas a;
	unsigned int huge = 0;

	(void)state;
	assert_int_equal(vma_fast_verify(b), 0);
	areas_make(&a);
	read_both(b, &fast, &smaps);
	for (unsigned int i = 0; i < smaps.nr; i++) {
		const struct vma_entry *s = &smaps.vmas[i], *f = find(&fast, s->start);

		assert_non_null(f);
		assert_int_equal(f->end, s->end);
		assert_true(f->has_smaps);
		assert_int_equal(f->kernel_page_size, s->kernel_page_size);
		if (f->vm_flags != s->vm_flags)
			fail_msg("%lx-%lx: flags %#lx, smaps %#lx", s->start, s->end, f->vm_flags,
				 s->vm_flags);
		if (!s->prot) {
			assert_int_equal(!!f->rss, !!s->rss);
			assert_int_equal(!!f->swap, !!s->swap);
		}
		if (!s->shared && !!f->anonymous != !!s->anonymous)
			fail_msg("%lx-%lx %s: anonymous %lu, smaps %lu", s->start, s->end,
				 s->path ?: "", f->anonymous, s->anonymous);
		if (!s->shared && !(s->vm_flags & (VMF_HG | VMF_NH))) {
			if (!!f->anon_huge != !!s->anon_huge)
				fail_msg("%lx-%lx: AnonHugePages %lu, smaps %lu", s->start, s->end,
					 f->anon_huge, s->anon_huge);
			huge += !!s->anon_huge;
		}
	}
	/* the areas really are of the kinds meant */
	assert_int_equal(holding(&fast, a.guard)->rss, 0);
	assert_int_not_equal(holding(&fast, a.guard_full)->rss, 0);
	/* a read maps the zero page, or a page of its own where none is shared (mem-scan.c) */
	if (mem_zero_pfn())
		assert_int_equal(holding(&fast, a.zero)->anonymous, 0);
	else
		assert_int_not_equal(holding(&fast, a.zero)->anonymous, 0);
	assert_int_not_equal(holding(&fast, a.anon)->anonymous, 0);
	assert_int_not_equal(holding(&fast, a.file)->anonymous, 0);
	print_message("%u VMAs, %u with huge pages, agree with smaps\n", smaps.nr, huge);
	vma_list_fini(&fast);
	vma_list_fini(&smaps);
	areas_free(&a);
	vma_bpf_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
