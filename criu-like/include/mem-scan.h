/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_MEM_SCAN_H
#define CRIU_LIKE_MEM_SCAN_H

/*
 * Which pages of a task a dump must save, and where they are (issue 4 item 4,
 * Documentation/memory.md). Two steps:
 *
 *   1. policy (mem-policy.c): each VMA of /proc/PID/smaps gets a mem_policy (pure function);
 *      what cannot be restored yet is refused with -EOPNOTSUPP.
 *   2. scan (mem-scan.c): the VMAs whose policy saves pages are scanned with the
 *      PAGEMAP_SCAN ioctl (6.7), or by reading /proc/PID/pagemap entries
 *      when the ioctl is missing, giving sorted runs of pages.
 *
 * Private pages (anonymous, and the written pages of private file mappings)
 * go into the task's mem_plan. Pages of shared anonymous memory go into a
 * shmem_set shared by all tasks of the dump, so an object mapped by several
 * processes is saved once. Runs: mem-runs.c; shmem objects: shmem-set.c.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc-parse.h"

enum mem_policy {
	MEM_SKIP_RECREATED, /* [vdso] [vvar] [vvar_vclock] [vsyscall], AIO rings: rebuilt at restore */
	MEM_SKIP_IO, /* VM_IO/VM_PFNMAP: no pages that pagemap or vmsplice can read */
	MEM_SKIP_GUARD, /* PROT_NONE without pages: only the layout is recorded */
	MEM_SKIP_FILE_SHARED, /* MAP_SHARED of a file: the file itself holds the data */
	MEM_SAVE_ANON, /* private anonymous: pages present or swapped */
	MEM_SAVE_COW, /* private file: only the written (COWed, anonymous) pages */
	MEM_SKIP_SYSV, /* a SysV shm attach: the segment is saved by id (mem/sysv-shm.c) */
	MEM_SAVE_SHMEM, /* shared anonymous/memfd: once per object, see shmem_set */
	MEM_POLICY_NR,
};

static inline bool mem_policy_saves(enum mem_policy p)
{
	return p == MEM_SAVE_ANON || p == MEM_SAVE_COW || p == MEM_SAVE_SHMEM;
}

const char *mem_policy_name(enum mem_policy p);
/* A SysV shm attach ("/SYSV<key> (deleted)", shared): its inode number is the segment id. */
bool vma_is_sysv(const struct vma_entry *v);
/* A private anonymous hugetlb mapping (MAP_HUGETLB), saved like anonymous memory. */
bool vma_is_hugetlb_anon(const struct vma_entry *v);
/* MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, saved as shared memory (MEM_SAVE_SHMEM). */
bool vma_is_hugetlb_shared_anon(const struct vma_entry *v);

/* PAGEMAP_SCAN tells the pages of guard regions (PAGE_IS_GUARD, 6.14): probed once. */
bool mem_scan_knows_guards(void);
/*
 * The guard regions (MADV_GUARD_INSTALL) in [@start, @end) of the task whose
 * pagemap is @pagemap_fd: start, end pairs in *@ret (malloc'ed, *@nr values).
 * None when the kernel cannot tell them.
 */
int mem_scan_guards(int pagemap_fd, unsigned long start, unsigned long end, uint64_t **ret,
		    size_t *nr);

struct page_region;
/*
 * Where a walk of [@start, @end) goes on after a PAGEMAP_SCAN call that
 * returned the @n regions of @vec (room for @vec_len) and @walk_end: *@next,
 * @end when the walk is done. -EIO when the regions are not in order inside
 * the range or the walk makes no progress. Pure; see mem-scan.c for why
 * walk_end alone is not enough.
 */
int mem_scan_resume(unsigned long start, unsigned long end, unsigned long walk_end,
		    const struct page_region *vec, size_t n, size_t vec_len, unsigned long *next);

/*
 * The policy of one VMA of task @pid. Returns 0 and sets *ret, or
 * -EOPNOTSUPP (logged with the pid, the range and the reason) for what cannot
 * be dumped yet: hugetlb, device and unknown special mappings, shared
 * mappings of unlinked regular files.
 */
int mem_vma_policy(pid_t pid, const struct vma_entry *v, enum mem_policy *ret);

/* A run of pages: an address range of a task, or page offsets in a shmem object. */
struct mem_run {
	unsigned long start; /* address, or object offset in pages for shmem_obj runs */
	unsigned long nr_pages;
	enum mem_policy policy;
};

struct mem_runs {
	unsigned int nr, cap;
	struct mem_run *runs;
};

/*
 * Append a run that starts at or after the end of the last one; it is merged
 * with the last run when they touch and have the same policy. 0 or -ENOMEM.
 */
int mem_runs_append(struct mem_runs *r, unsigned long start, unsigned long nr_pages,
		    enum mem_policy policy);
void mem_runs_fini(struct mem_runs *r);

/* ---- breakpoints in code (mem-breakpoints.c) ---- */
/* @task differs from @file only by int3 bytes, at least one. */
bool mem_page_only_breakpoints(const uint8_t *task, const uint8_t *file, size_t len);
/* A private read-only code mapping of a file, where uprobes write breakpoints. */
bool mem_vma_may_hold_breakpoints(const struct vma_entry *v);
/*
 * The written pages @in of such a VMA @v of @pid appended to @out, but those
 * that differ from the file by breakpoints only (their count in *@dropped):
 * the restore takes the file's page, the kernel puts the uprobes back.
 */
int mem_drop_breakpoint_pages(pid_t pid, const struct vma_entry *v, const struct mem_runs *in,
			      struct mem_runs *out, uint64_t *dropped);

struct mem_stats {
	uint64_t pages_scanned; /* pages of address space walked */
	uint64_t pages_to_save; /* private pages in runs plus shmem pages seen in this task */
	uint64_t scan_ns; /* wall time of mem_scan_task() */
	unsigned int nr_ioctls; /* PAGEMAP_SCAN calls (0 on the fallback path) */
	bool fallback; /* /proc/PID/pagemap was read instead of PAGEMAP_SCAN */
};

struct mem_plan {
	pid_t pid;
	unsigned int nr_vmas;
	enum mem_policy *policy; /* one per VMA, same index as the vma_list */
	struct mem_runs runs; /* MEM_SAVE_ANON and MEM_SAVE_COW pages, sorted by address */
	struct mem_stats stats;
	/* MEM_SCAN_UNPROTECTED: the MEM_SAVE_ANON pages that read as written, sorted */
	struct mem_runs unprotected;
};

void mem_plan_fini(struct mem_plan *p);

/* One shared anonymous object (key: device and inode from maps). */
struct shmem_obj {
	unsigned int dev_major, dev_minor;
	unsigned long ino;
	unsigned long size; /* bytes: the largest pgoff + length seen in any mapping */
	pid_t pid; /* a task that maps it, for /proc/PID/map_files/START-END */
	unsigned long vma_start, vma_end;
	struct mem_runs runs; /* object page offsets, sorted, merged (policy MEM_SAVE_SHMEM) */
	unsigned long huge; /* hugetlb: its huge page size in bytes; 0 for shmem */
};

struct shmem_set {
	unsigned int nr, cap;
	struct shmem_obj *objs;
};

void shmem_set_fini(struct shmem_set *s);
/* The object with this key, or NULL. */
struct shmem_obj *shmem_set_find(struct shmem_set *s, unsigned int dev_major,
				 unsigned int dev_minor, unsigned long ino);

/*
 * After every task is scanned, while they are still stopped: add the pages
 * each object holds that no task had mapped (swapped out, or mapped only by
 * a task outside the dump), found with SEEK_DATA on /proc/PID/map_files.
 * 0 or -errno (logged).
 */
int shmem_set_add_unmapped(struct shmem_set *s);

/*
 * The PFN of the shared zero page, as the pagemap fallback uses it to skip
 * pages that were only read; 0 when unknown (no CAP_SYS_ADMIN) or when read
 * faults of private anonymous memory map no shared zero page on this kernel.
 * Never the PFN of an ordinary page.
 */
uint64_t mem_zero_pfn(void);

/* mem_scan_task() flags */
#define MEM_SCAN_FALLBACK (1U << 0) /* read /proc/PID/pagemap even if PAGEMAP_SCAN works */
/*
 * Also the private anonymous pages found that are not uffd-write-protected
 * (PAGE_IS_WRITTEN), in plan->unprotected, in the same walk: --snapshot armed
 * before its freeze protects those again. -EOPNOTSUPP on the pagemap path.
 */
#define MEM_SCAN_UNPROTECTED (1U << 1)
/* Leave out the VMAs mem_scan_since() takes (mem_vma_since_ok()): a final dump on a chain. */
#define MEM_SCAN_NO_SINCE (1U << 2)

/*
 * Classify every VMA of @vmas (smaps of @pid, which must be stopped) and scan
 * the ones that save pages, through @pagemap_fd (its /proc/PID/pagemap
 * opened by the caller, -1: opened here). Private runs land in *ret (set
 * only on success); shmem pages are added to @shm, which collects the
 * objects of all tasks. Returns 0, -EOPNOTSUPP for a VMA that cannot be
 * dumped, or -errno.
 */
int mem_scan_task(pid_t pid, int pagemap_fd, const struct vma_list *vmas, unsigned int flags,
		  struct shmem_set *shm, struct mem_plan *ret);

/*
 * Dirty tracking for pre-dump and migration rounds on kernels without
 * soft-dirty (ARCHITECTURE.md 8). The task must have registered every
 * private VMA that saves pages with userfaultfd, UFFDIO_REGISTER_MODE_WP
 * and UFFD_FEATURE_WP_ASYNC (6.7) (the parasite does that). Each call
 * reports, like mem_scan_task(), the saving private pages written since the
 * previous call (all existing ones the first time) and write-protects them
 * again in the same walk. Shared memory is not tracked: the final dump saves
 * it whole. -EPERM when a VMA is not registered, -EOPNOTSUPP without
 * PAGEMAP_SCAN (there is no fallback); both logged.
 */
int mem_scan_written(pid_t pid, const struct vma_list *vmas, struct mem_plan *ret);

/*
 * The same per VMA, for a round of a pre-dump chain: every private VMA whose
 * @policy saves pages (save-anon, save-cow) is scanned for the pages written
 * since the last round, and protected again. A VMA that is not registered
 * (created, moved or remapped since, or its uffd lost) is marked in
 * @untracked[i] and all its saving pages are appended instead. Runs are
 * appended to @written (sorted). 0 or -errno (logged).
 */
int mem_scan_tracked(pid_t pid, const struct vma_list *vmas, const enum mem_policy *policy,
		     bool skip_since, struct mem_runs *written, bool *untracked);

/*
 * The pages of [@start, @end) that @policy saves, appended to @out (sorted);
 * with @unprotected, only those that read as written (no uffd-wp bit). 0 or
 * -errno.
 */
int mem_scan_range(pid_t pid, int pagemap_fd, unsigned long start, unsigned long end,
		   enum mem_policy policy, bool unprotected, struct mem_runs *out);

/* ---- the final dump of a tracked chain (scan-since.c) ---- */
/* A VMA whose pages mem_scan_since() finds: private anonymous, not hugetlb. */
bool mem_vma_since_ok(const struct vma_entry *v, enum mem_policy policy);
/*
 * Whether the fast written walk of PAGEMAP_SCAN reports every page that is
 * not write-protected (dropped, never faulted, no page table): 6.10 and a
 * try on our own memory, once.
 */
bool mem_scan_since_works(void);
/*
 * For each VMA of mem_vma_since_ok() of stopped @pid, through its pagemap
 * @fd: the pages still write-protected since a round (the chain holds them)
 * to @parent, the present pages of the rest to @data, both appended sorted;
 * a VMA that is not registered is marked in @untracked[i] and its present
 * pages go to @data. Counted in @st. 0 or -errno (logged). Only for a dump
 * that keeps no tracking: nothing is protected again.
 */
int mem_scan_since(pid_t pid, int fd, const struct vma_list *vmas, const enum mem_policy *policy,
		   struct mem_runs *data, struct mem_runs *parent, bool *untracked,
		   struct mem_stats *st);

/*
 * Cut the runs of @present (sorted, in bytes) by @written (sorted): the
 * parts also in @written go to @data, the rest to @parent (pages unchanged
 * since the parent image). Pure; 0 or -ENOMEM.
 */
struct iovec;
/*
 * The parts of @runs (sorted, addresses) inside the @n ranges @r (sorted,
 * disjoint; a run may span two of them, it is clipped to each), as ranges in
 * @ret (malloc'ed, *@ret_n of them; at most @runs->nr + @n). Pure; 0 or
 * -ENOMEM.
 */
int mem_runs_within(const struct mem_runs *runs, const struct iovec *r, unsigned int n,
		    struct iovec **ret, unsigned int *ret_n);

int mem_runs_split(const struct mem_runs *present, const struct mem_runs *written,
		   struct mem_runs *data, struct mem_runs *parent);

#endif
