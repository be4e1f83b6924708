/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORE_MEM_H
#define CRIU_LIKE_RESTORE_MEM_H

/*
 * Internals of the memory and task-state half of the restore
 * (Documentation/restore.md): restore-mem-plan.c is pure logic over image
 * records (test/unit/test-restore-mem.c), restore-mem.c reads the images
 * in the controller, restore-task.c builds the restorer's arguments in the
 * restored task and jumps into the blob.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "restore.h"
#include "restorer.h"

#include "creds.pb-c.h"
#include "mm.pb-c.h"
#include "pagemap.pb-c.h"

/* Highest user address + 1 the restorer handles (4-level paging). */
#define RST_TASK_SIZE ((1UL << 47) - 4096)

/* rst_task->mem: what rst_mem_prepare() read for one live task. */
/* @len bytes at @vaddr: at file offset @off of chain_fd, data offset @src_off of srcs[@src]. */
struct rst_deferred {
	uint64_t vaddr, len, off, src_off;
	uint32_t src, pad;
};

/* A pages image, by its directory (relative to the images directory) and id. */
struct rst_defer_src {
	char dir[256];
	uint32_t pages_id;
};

struct rst_mem_plan {
	MmEntry *mm;
	CredsEntry *creds;
	uint32_t pages_id;
	size_t nr_runs;
	struct rst_page_run *runs; /* merged, in pages file order */
	size_t nr_crcs;
	struct rst_page_crc *crcs; /* one per pagemap entry that has its crc32c */
	bool *crc_done; /* per crcs[i]: checked as its pages were read before the forks */
	bool *vma_fill; /* per mm->vmas[i]: saved pages land in it */
	uint64_t pages_bytes; /* data bytes the runs read from pages-ID.img */
	bool *vma_lazy; /* per mm->vmas[i], --lazy-pages: registered with the uffd, left empty */
	uint64_t lazy_bytes; /* saved bytes left to the lazy-pages daemon */
	bool has_chain_fd; /* a pre-dump chain: the runs read from chain_fd instead */
	int chain_fd; /* memfd with the chain's pages flattened, laid out as a pages image */
	/* copy-on-write sharing across fork (mem/restore-cow.c, memory.md section 7) */
	uint32_t shared_pid; /* PagemapHead.shared_pid: whose pages PE_PARENT_SHARED are */
	size_t nr_shared;
	struct rst_range *shared; /* the PE_PARENT_SHARED ranges of pagemap-PID.img, sorted */
	/*
	 * Pages of the flattened chain that are another task's (PE_PARENT_SHARED):
	 * left as holes in chain_fd, read by the task itself only where it does
	 * not get them from its parent by fork (rst_cow_prepare()).
	 */
	size_t nr_deferred;
	struct rst_deferred *deferred;
	size_t nr_srcs;
	struct rst_defer_src *srcs;
	bool *vma_keep; /* per VMA: to be mapped with its pages before the forks */
	bool *vma_kept; /* per VMA, in the task: it was (the blob keeps it: RST_VMA_KEEP) */
};

/* One image of a pre-dump chain: level 0 is the dump, 1 its parent, ... */
struct rst_chain_level {
	const char *name; /* the directory, for messages */
	PagemapEntry **pe; /* the entries of pagemap-PID.img (head excluded) */
	size_t n;
	uint64_t *off; /* data offset of each PE_PRESENT entry (rst_chain_offsets()) */
	/*
	 * The level of PE_PARENT parts (0: the next one, k + 1) and of
	 * PE_PARENT_SHARED parts (the parent task's pagemap; 0: none). Both
	 * must be above k: the levels of a task's parent come after its own.
	 */
	unsigned int next, shared;
};

/* A piece of memory and the level whose pages image holds it. */
struct rst_chain_seg {
	uint64_t vaddr, len;
	unsigned int level;
	size_t entry; /* index of its PagemapEntry in that level */
	uint64_t off; /* data offset of vaddr in that level's pages image */
};

struct rst_chain_segs {
	size_t n, cap;
	struct rst_chain_seg *seg;
};

/* Fill @l->off. 0 or -ENOMEM. */
int rst_chain_offsets(struct rst_chain_level *l);
/* pagemap-PID.img's head and entries (restore-mem.c): -EINVAL without a head. */
int rst_read_pagemap_recs(int dirfd, pid_t pid, ProtobufCMessage ***recs, size_t *n);
/*
 * restore-chain.c: @p's runs read through the chain its pagemap (@h, @pe,
 * @n entries) needs, flattened into p->chain_fd (rst_mem_prepare()).
 */
int rst_read_chain(struct restore_ctx *ctx, const CoreEntry *core, pid_t pid,
		   struct rst_mem_plan *p, const PagemapHead *h, PagemapEntry **pe, size_t n);
/* Once every task's chain is read: the memfd they share sized (0 or -errno); closed. */
int rst_chain_done(void);
void rst_chain_fini(void);
/*
 * Resolve every entry of level 0 through the chain: PE_PRESENT parts from
 * their own level, PE_PARENT parts from the first level below that has
 * them PE_PRESENT, PE_PARENT_SHARED parts from the parent task's levels
 * (lv[k].shared) the same way, in address order. Refuses (naming the level) a part
 * that no level holds, and lazy entries. Pure: test-restore-mem.c.
 */
int rst_chain_resolve(pid_t pid, const struct rst_chain_level *lv, unsigned int nlv,
		      struct rst_chain_segs *out);
/*
 * The same for the parts of level 0 in @ranges only (each inside an entry
 * of level 0): a lazy restore resolves what it reads itself, not what the
 * lazy-pages daemon serves. Pure: test-restore-mem.c.
 */
int rst_chain_resolve_ranges(pid_t pid, const struct rst_chain_level *lv, unsigned int nlv,
			     const struct rst_chain_segs *ranges, struct rst_chain_segs *out);
/* Level 0's entries as they are, as segments (level 0, their index, offset 0). */
int rst_chain_top(const struct rst_chain_level *top, struct rst_chain_segs *out);

/*
 * Every saved page of one task, resolved through its pre-dump chain: the
 * lazy-pages daemon's view of the images (mem/lazy-src.c). pages[level] is
 * that level's pages image (NULL when it has none).
 */
struct cr_img;
struct rst_pages_map {
	unsigned int n;
	struct cr_img **pages;
	char **dirs; /* [n]: each level's directory relative to level 0's ("." first) */
	struct rst_chain_segs segs;
};

int rst_pages_map_open(int dirfd, const char *name, pid_t pid, struct rst_pages_map *m);
void rst_pages_map_fini(struct rst_pages_map *m);

/*
 * --lazy-pages: which VMAs are left to the daemon (private anonymous ones
 * holding saved pages, unless locked or PROT_NONE), and the pages that are
 * read all the same because the kernel writes them before the daemon holds
 * the uffd (each thread's rseq area). Pure: test-lazy.c.
 */
bool rst_lazy_vma(const VmaEntry *v);
/*
 * The pages a lazy restore reads all the same (and a lazy dump writes):
 * each thread's rseq area, which the kernel writes before the daemon holds
 * the uffd, and the arguments and the environment, which /proc/PID/cmdline
 * and environ read through the kernel without waiting for the daemon (they
 * would read empty). Appended to the @n in @out, then all sorted, each once:
 * their number. rst_eager_pages_max() is what @out must hold beyond @n.
 */
size_t rst_eager_pages_max(const MmEntry *mm, const CoreEntry *core);
size_t rst_eager_pages(const MmEntry *mm, const CoreEntry *core, uint64_t *out, size_t n,
		       size_t max);
/* Keep, of @in, what lands outside lazy VMAs or on an eager page; mark vma_lazy. */
int rst_lazy_filter(const MmEntry *mm, const uint64_t *eager, size_t nr_eager, bool *vma_lazy,
		    const struct rst_chain_segs *in, struct rst_chain_segs *out,
		    uint64_t *lazy_bytes);

/* One shared anonymous memory object, created by the controller and filled. */
struct rst_shmem_obj {
	uint64_t shmid;
	uint64_t size;
	int fd; /* >= ctx->service_fd_base */
	uint32_t huge_flags; /* MAP_HUGETLB and the page size bits of its VMAs: hugetlb memory */
};

/* A SysV shm segment of the host's IPC namespace (mem/sysv-shm.c). */
struct rst_sysv_seg {
	int id;
	bool created; /* by this restore: removed again if it fails */
	bool dest; /* to be marked IPC_RMID once every task attached it */
};

struct rst_shmem {
	size_t n;
	struct rst_shmem_obj *objs;
	size_t nr_sysv;
	struct rst_sysv_seg *sysv;
	bool sysv_done; /* rst_sysv_shm_late() ran: the restore went through */
};

/*
 * sysv-shm.c, before the first fork: every segment of sysv-shm.img exists
 * with its id: the one still there (same key, size and owner, else refused),
 * or created again with its contents.
 */
int rst_sysv_shm_prepare(struct restore_ctx *ctx, struct rst_shmem *s);
/* Once every task attached its segments: IPC_RMID the ones that were marked. */
int rst_sysv_shm_late(struct restore_ctx *ctx);
/* At the end: a failed restore removes the segments it created. */
void rst_sysv_shm_fini(struct rst_shmem *s);

/* struct rst_range: restorer.h */
/*
 * Copy-on-write sharing at restore (mem/restore-cow.c). rst_cow_plan(), in
 * the controller before the first fork: which VMAs of each task are mapped
 * with their pages before it forks its children. rst_cow_prepare(), in
 * each task before its first fork: keeps what it inherited from its parent
 * where its pages are the parent's (PE_PARENT_SHARED), writes its own pages
 * there, maps the other VMAs to keep with their pages. rst_cow_finish(), in
 * the task before the restorer's arguments are built: checks the pages it
 * wrote against their crc32c, and drops those runs from what the blob reads.
 */
struct restore_ctx;
struct rst_task;
int rst_cow_plan(struct restore_ctx *ctx);
int rst_cow_prepare(struct restore_ctx *ctx, struct rst_task *t);
int rst_cow_finish(struct restore_ctx *ctx, struct rst_task *t);

/*
 * The parts of @in (@n runs, by address) outside every range of @out
 * (sorted, disjoint; @nout), clipped to [@lo, @hi), appended to @ret (room
 * for @n + @nout runs), offsets kept in step. Returns how many. Pure:
 * test-restore-mem.c.
 */
size_t rst_cow_cut(const struct rst_page_run *in, size_t n, const struct rst_range *out,
		   size_t nout, uint64_t lo, uint64_t hi, struct rst_page_run *ret);

/*
 * Check the VMAs of @mm: page aligned, sorted, not overlapping, below
 * RST_TASK_SIZE, each kind with what it needs (shmid, file_id).
 */
int rst_plan_check_vmas(pid_t pid, const MmEntry *mm);

/*
 * From the @n PagemapEntry records of pagemap-PID.img (the head excluded),
 * fill @p's runs (data offsets from IMG_RAW_DATA_OFF on, merged when both the
 * addresses and the data touch), crcs, vma_fill and pages_bytes. Refuses a run
 * that is not PE_PRESENT (parent or lazy pages), out of order, or not
 * entirely inside private VMAs. @p->mm must be set and checked.
 */
int rst_plan_runs(pid_t pid, struct rst_mem_plan *p, PagemapEntry *const *pe, size_t n);
void rst_plan_free(struct rst_mem_plan *p);

/*
 * The highest @size-byte range inside [@lo, @hi) that keeps a guard page
 * from each of the @n @busy ranges (any order). 0 and *@ret, or -ENOMEM.
 */
int rst_find_hole(const struct rst_range *busy, size_t n, uint64_t size, uint64_t lo, uint64_t hi,
		  uint64_t *ret);

/* Per-thread placement in the restorer area; offsets are from struct rst_args. */
struct rst_thread_layout {
	uint64_t pending_off, log_off, stack_top_off, frame_off;
};

struct rst_layout_in {
	uint64_t blob_size;
	uint32_t nr_vmas, nr_runs, nr_crcs, nr_threads, nr_timers;
	uint32_t nr_shared_pending, nr_groups, nr_close_fds, nr_guards, nr_tpidfds;
	uint32_t nr_aios;
	uint64_t aio_event_bytes; /* the unreaped events of every AIO ring */
	uint32_t nr_uring_regs, nr_uring_iovs;
	const uint32_t *thread_pending; /* [nr_threads] */
	const uint64_t *frame_size; /* [nr_threads], arch_sigframe_size() */
	uint64_t scratch_size; /* for the special mappings on their way */
};

struct rst_layout {
	uint64_t args_off; /* from the area start, page aligned */
	uint64_t vmas_off, runs_off, crcs_off, threads_off, timers_off; /* from struct rst_args */
	uint64_t shared_pending_off, groups_off, close_fds_off, guards_off, tpidfds_off;
	uint64_t aios_off, aio_events_off;
	uint64_t uring_regs_off, uring_iovs_off;
	uint64_t args_size; /* struct rst_args and its arrays */
	struct rst_thread_layout *threads; /* [nr_threads], allocated by the caller */
	uint64_t scratch_off; /* from the area start, page aligned */
	uint64_t total; /* page aligned */
};

/* Place everything; -E2BIG when a count would overflow. */
int rst_layout_compute(const struct rst_layout_in *in, struct rst_layout *out);

/*
 * restore-task-resume.c, in the controller once every thread is at the
 * barrier: set RST_STAGE_RESUME, follow every thread out of the restorer
 * (ptrace), unmap the restorer area and the shared area from every task,
 * detach (a task restored stopped stays stopped). Returns 0 once the tree
 * runs in its saved state, or -errno (the tree is then to be killed).
 */
int rst_resume_tasks(struct restore_ctx *ctx);
/*
 * After rst_resume_tasks() and the network's let-go: wait (1 s at most, 0.5
 * ms polls) until every thread dumped inside a restartable syscall
 * (sigsuspend, ppoll...) is in it again, so that what /proc shows of the
 * tree when the restore returns is what the dump saw (SigBlk, for
 * sigsuspend's temporary mask). Not before the let-go: the held packets do
 * not wait for it.
 */
void rst_settle_tasks(struct restore_ctx *ctx);

/*
 * Task @pid's restorer refused one of its page runs (-EBADMSG): read its runs
 * again from its pages image and name the bad one, its file and byte offset
 * (the restorer can only log it). Logs and returns -EBADMSG when found, 0
 * when the file checks out (the -EBADMSG came from elsewhere, or the read did).
 */
int rst_mem_report_bad_pages(struct restore_ctx *ctx, pid_t pid);

/* struct rst_shmem lookup, for the plan of VMAs. */
const struct rst_shmem_obj *rst_shmem_find(const struct rst_shmem *s, uint64_t shmid);

#endif
