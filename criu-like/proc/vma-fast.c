// SPDX-License-Identifier: GPL-2.0
/*
 * The dump's VMAs without smaps' page table walk (include/vma-fast.h).
 *
 * smaps_account() looks at every present page (for a page a forked child
 * shares with its parent, at its mapcount too): 10 ms of CPU per 256 MiB
 * here, 30 ms per GiB, paid for each task of a tree in the freeze. What the
 * dump takes from smaps is the VmFlags of each VMA, and of the counters only
 * whether a VMA holds some pages of a kind: the layout comes from maps (no
 * walk), the flags from the BPF iterator (proc/vma-bpf.c), the counters from
 * one PAGEMAP_SCAN per VMA that needs them, which reports runs, not pages.
 */
#define LOG_PREFIX "proc: "

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compat.h"
#include "log.h"
#include "util.h"
#include "vma-fast.h"

/*
 * The kernel's VM_* bits (include/linux/mm.h, the same from 4.x to 6.18 for
 * these) and smaps' mnemonic for each (show_smap_vma_flags()). Bit 11 (once
 * VM_DENYWRITE), the protection keys (32-36) and the flags above them
 * (shadow stack, seal, uffd minor, droppable: their bits moved between
 * releases) are not here: a VMA holding one is read through smaps.
 */
static const struct {
	unsigned char bit;
	unsigned long vmf;
} raw_bits[] = {
	{ 0, VMF_RD },	{ 1, VMF_WR },	{ 2, VMF_EX },	{ 3, VMF_SH },	{ 4, VMF_MR },
	{ 5, VMF_MW },	{ 6, VMF_ME },	{ 7, VMF_MS },	{ 8, VMF_GD },	{ 9, VMF_UM },
	{ 10, VMF_PF }, { 12, VMF_UW }, { 13, VMF_LO }, { 14, VMF_IO }, { 15, VMF_SR },
	{ 16, VMF_RR }, { 17, VMF_DC }, { 18, VMF_DE }, { 19, VMF_LF }, { 20, VMF_AC },
	{ 21, VMF_NR }, { 22, VMF_HT }, { 23, VMF_SF }, { 24, VMF_AR }, { 25, VMF_WF },
	{ 26, VMF_DD }, { 27, VMF_SD }, { 28, VMF_MM }, { 29, VMF_HG }, { 30, VMF_NH },
	{ 31, VMF_MG },
};

bool vmf_from_raw(unsigned long raw, unsigned long *vmf)
{
	unsigned long out = 0;

	for (unsigned int i = 0; i < ARRAY_SIZE(raw_bits); i++) {
		if (raw & (1UL << raw_bits[i].bit)) {
			out |= raw_bits[i].vmf;
			raw &= ~(1UL << raw_bits[i].bit);
		}
	}
	*vmf = out;
	return raw == 0;
}

/* ---- the check of the table ---------------------------------------------------------- */

struct probe {
	int prot, flags, advice; /* advice -1: none; flags MAP_LOCKED: mlock() */
	const char *what;
};

static const struct probe probes[] = {
	{ PROT_READ | PROT_WRITE, MAP_PRIVATE, -1, "private" },
	{ PROT_READ | PROT_WRITE, MAP_SHARED, -1, "shared" },
	{ PROT_READ | PROT_EXEC, MAP_PRIVATE, -1, "executable" },
	{ PROT_NONE, MAP_PRIVATE, -1, "inaccessible" },
	{ PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, -1, "MAP_NORESERVE" },
	{ PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_GROWSDOWN, -1, "MAP_GROWSDOWN" },
	{ PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_LOCKED, -1, "mlock" },
	{ PROT_READ | PROT_WRITE, MAP_PRIVATE, MADV_HUGEPAGE, "MADV_HUGEPAGE" },
	{ PROT_READ | PROT_WRITE, MAP_PRIVATE, MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE" },
	{ PROT_READ | PROT_WRITE, MAP_PRIVATE, MADV_DONTFORK, "MADV_DONTFORK" },
	{ PROT_READ | PROT_WRITE, MAP_PRIVATE, MADV_WIPEONFORK, "MADV_WIPEONFORK" },
	{ PROT_READ | PROT_WRITE, MAP_PRIVATE, MADV_DONTDUMP, "MADV_DONTDUMP" },
	{ PROT_READ | PROT_WRITE, MAP_PRIVATE, MADV_SEQUENTIAL, "MADV_SEQUENTIAL" },
	{ PROT_READ | PROT_WRITE, MAP_PRIVATE, MADV_RANDOM, "MADV_RANDOM" },
};

/* Each probe one page, a page apart in one reservation (so no two merge). */
static char *probes_map(size_t *len)
{
	size_t n = ARRAY_SIZE(probes);
	char *base;

	*len = (2 * n + 1) * PAGE_SIZE;
	base = mmap(NULL, *len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct probe *p = &probes[i];
		char *at = base + (2 * i + 1) * PAGE_SIZE;

		if (mmap(at, PAGE_SIZE, p->prot,
			 (p->flags & ~MAP_LOCKED) | MAP_ANONYMOUS | MAP_FIXED, -1,
			 0) == MAP_FAILED ||
		    (p->advice >= 0 && madvise(at, PAGE_SIZE, p->advice)) ||
		    ((p->flags & MAP_LOCKED) && mlock(at, PAGE_SIZE))) {
			pr_debug("vma-fast: probe %s: %m\n", p->what);
			munmap(base, *len);
			return NULL;
		}
		if (p->prot & PROT_WRITE)
			at[0] = 1;
	}
	return base;
}

/* Is probe @i's page inside [@start, @end)? */
static bool probe_in(const char *base, size_t i, unsigned long start, unsigned long end)
{
	unsigned long at = (unsigned long)base + (2 * i + 1) * PAGE_SIZE;

	return start <= at && at < end;
}

int vma_fast_verify(struct vma_bpf *b)
{
	struct vma_list smaps = { 0 };
	struct vma_raw *r = NULL;
	unsigned int nr = 0, j = 0;
	bool checked[ARRAY_SIZE(probes)] = { false };
	size_t len = 0;
	char *base = probes_map(&len);
	int err = base ? 0 : -errno;

	if (!err)
		err = proc_parse_maps(getpid(), true, &smaps);
	if (!err)
		err = vma_bpf_read(b, getpid(), &r, &nr);
	for (unsigned int i = 0; !err && i < smaps.nr; i++) {
		const struct vma_entry *v = &smaps.vmas[i];
		bool ours = v->start < (unsigned long)base + len && v->end > (unsigned long)base;
		unsigned long vmf;

		while (j < nr && r[j].start < v->start)
			j++;
		if (j == nr || r[j].start != v->start || r[j].end != v->end)
			continue;
		if (!vmf_from_raw(r[j].flags, &vmf) || v->vm_flags_unknown) {
			if (ours)
				pr_info("vma-fast: flags %#lx of a probe of ours not known\n",
					r[j].flags);
			continue;
		}
		if (vmf != v->vm_flags) {
			pr_info("vma-fast: %lx-%lx: kernel flags %#lx read as %#lx, smaps says "
				"%#lx\n",
				v->start, v->end, r[j].flags, vmf, v->vm_flags);
			err = -EPROTO;
		}
		for (size_t k = 0; ours && k < ARRAY_SIZE(probes); k++)
			checked[k] |= probe_in(base, k, v->start, v->end);
	}
	for (size_t k = 0; !err && k < ARRAY_SIZE(probes); k++) {
		if (!checked[k]) {
			pr_info("vma-fast: the probe %s not found with known flags\n",
				probes[k].what);
			err = -EPROTO;
		}
	}
	if (err == -EPROTO)
		pr_info("vma-fast: the kernel's VMA flags are not the ones known here: smaps is "
			"read\n");
	free(r);
	vma_list_fini(&smaps);
	if (base) {
		munlock(base, len);
		munmap(base, len);
	}
	return err;
}

/* ---- the counters ------------------------------------------------------------------- */

/*
 * Does [@start, @end) hold a page whose categories, @inverted ones
 * inverted, have all of @mask and, when @anyof, one of @anyof? One
 * PAGEMAP_SCAN that stops at the first such page. 1, 0 or -errno.
 */
static int vma_has(int pm, const struct vma_entry *v, uint64_t mask, uint64_t inverted,
		   uint64_t anyof)
{
	struct page_region reg;
	struct pm_scan_arg a = {
		.size = sizeof(a),
		.start = v->start,
		.end = v->end,
		.vec = (uintptr_t)&reg,
		.vec_len = 1,
		.max_pages = 1,
		.category_inverted = inverted,
		.category_mask = mask,
		.category_anyof_mask = anyof,
		.return_mask = mask | anyof,
	};
	long n = ioctl(pm, PAGEMAP_SCAN, &a);

	return n < 0 ? -errno : n > 0;
}

/*
 * Fill @v's counters the dump looks at, as smaps counts them (the zero page
 * has no struct page: smaps counts it nowhere): Rss and Swap of a guard
 * (PROT_NONE: mem-policy.c), Anonymous and AnonHugePages of private memory
 * (COW sharing: cow-share.c; THP: mm-img.c), each from a scan that stops at
 * the first page that answers. PAGE_IS_FILE (not an anonymous page) costs a
 * look at each page's struct page: not asked in plain anonymous memory,
 * which holds no other (a file's pages, the vDSO's are others).
 */
static int vma_counters(int pm, struct vma_entry *v)
{
	bool plain = v->kind == VMA_ANON || v->kind == VMA_HEAP || v->kind == VMA_STACK ||
		     v->kind == VMA_ANON_NAMED;
	uint64_t file = plain ? 0 : PAGE_IS_FILE;
	uint64_t anon = PAGE_IS_PRESENT | PAGE_IS_PFNZERO | file, not = PAGE_IS_PFNZERO | file;
	int r;

	/* no page table to walk (and smaps walks none either) */
	if (v->vm_flags & (VMF_PF | VMF_IO))
		return 0;
	if (!v->prot) {
		r = vma_has(pm, v, PAGE_IS_PRESENT | PAGE_IS_PFNZERO, PAGE_IS_PFNZERO, 0);
		if (r < 0)
			return r;
		v->rss = r ? 4 : 0;
		r = vma_has(pm, v, PAGE_IS_SWAPPED, 0, 0);
		if (r < 0)
			return r;
		v->swap = r ? 4 : 0;
	}
	if (v->shared)
		return 0;
	r = vma_has(pm, v, anon, not, 0);
	if (r < 0)
		return r;
	v->anonymous = r ? 4 : 0;
	if (!r || (v->vm_flags & (VMF_HG | VMF_NH)))
		return 0;
	r = vma_has(pm, v, anon | PAGE_IS_HUGE, not, 0);
	if (r < 0)
		return r;
	v->anon_huge = r ? 2048 : 0;
	return 0;
}

/* ---- the read --------------------------------------------------------------------------- */

/* The flags smaps prints for the gate VMA (not of the mm: no iterator entry). */
static unsigned long gate_flags(const struct vma_entry *v)
{
	return (v->prot & PROT_READ ? VMF_RD : 0) | (v->prot & PROT_EXEC ? VMF_EX : 0);
}

/* The translated flags must say what maps' columns say. */
static bool flags_agree(const struct vma_entry *v, unsigned long vmf)
{
	unsigned int prot = (vmf & VMF_RD ? PROT_READ : 0) | (vmf & VMF_WR ? PROT_WRITE : 0) |
			    (vmf & VMF_EX ? PROT_EXEC : 0);

	return prot == v->prot && !!(vmf & VMF_MS) == v->shared;
}

static int vma_fill(const struct vma_raw *r, unsigned int nr, int pm, struct vma_list *l)
{
	unsigned int j = 0;

	for (unsigned int i = 0; i < l->nr; i++) {
		struct vma_entry *v = &l->vmas[i];
		unsigned long vmf;
		int err;

		v->has_smaps = true;
		v->kernel_page_size = PAGE_SIZE >> 10;
		if (v->kind == VMA_VSYSCALL) {
			v->vm_flags = gate_flags(v);
			continue;
		}
		if (j == nr || r[j].start != v->start || r[j].end != v->end)
			return -EAGAIN; /* not the same VMAs (the task not stopped?) */
		if (!vmf_from_raw(r[j].flags, &vmf) || (vmf & VMF_HT) || !flags_agree(v, vmf))
			return -EAGAIN; /* a flag not known here; hugetlb: its page size */
		j++;
		v->vm_flags = vmf;
		err = vma_counters(pm, v);
		if (err)
			return err == -ENOTTY || err == -EINVAL ? -EAGAIN : err;
	}
	return j == nr ? 0 : -EAGAIN;
}

int vma_fast_read(struct vma_bpf *b, pid_t pid, struct vma_list *ret)
{
	struct vma_list l = { 0 };
	_cleanup_free_ struct vma_raw *r = NULL;
	_cleanup_close_ int pm = -1;
	unsigned int nr = 0;
	char path[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	pm = open(path, O_RDONLY | O_CLOEXEC);
	if (pm < 0)
		return -errno;
	err = proc_parse_maps(pid, false, &l);
	if (!err)
		err = vma_bpf_read(b, pid, &r, &nr);
	if (!err)
		err = vma_fill(r, nr, pm, &l);
	if (err) {
		vma_list_fini(&l);
		return err;
	}
	*ret = l;
	return 0;
}
