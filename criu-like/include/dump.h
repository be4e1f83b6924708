/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_DUMP_H
#define CRIU_LIKE_DUMP_H

/*
 * The dump. cr_dump() in dump.c builds a
 * dump_ctx from the options and runs the steps below; each object kind has
 * its own file, called once per task (or once per dump for shared objects)
 * while every task is seized and infected. A step writes its images into
 * ctx->dirfd and returns 0 or -errno after logging what failed, naming the
 * pid and the object. A failing step must leave the tasks as they were: it
 * may read and drain, never change task state.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cow-share.h"
#include "image.h"
#include "kerndat.h"
#include "mem-scan.h"
#include "ns.h"
#include "options.h"
#include "proc-parse.h"
#include "seize.h"
#include "task-bpf.h"
#include "util.h"
#include "track.h"

struct par_run;
struct lazy_dump;
struct parasite_ctl;
struct ps_conn;
struct snapshot;

/* The host SysV shm segments the tree has attached: ids, and a task attaching each. */
struct sysv_shm_set {
	size_t n;
	int *ids;
	pid_t *pids;
};
struct file_table;

struct cow_parent;

struct dump_task {
	struct seized_task *t; /* from seize_tree() */
	struct parasite_ctl *ctl; /* NULL for zombies */
	struct proc_stat stat; /* /proc/PID/stat read while frozen */
	struct proc_status status; /* /proc/PID/status read while frozen */
	struct vma_list vmas; /* smaps while frozen */
	/* maps read on the tracer thread before the infection (prepare.c), stale areas gone */
	struct vma_list maps;
	struct mem_plan plan; /* pages to save */
	struct mem_runs parent_runs; /* pre-dump chain: pages unchanged since the parent */
	bool *untracked; /* pre-dump chain: per VMA, not write-tracked since the parent */
	/* the same physical pages as the parent task's, saved there (PE_PARENT_SHARED) */
	struct mem_runs shared_runs;
	pid_t shared_pid; /* that parent, as the image names it (0: none) */
	struct cow_parent *cow; /* as a parent: its pagemap over what it saved, for its children */
	struct cow_pagemap cow_pm; /* its own, read ahead (prepare.c) */
	bool files_shared_with_parent; /* files/fdtable.c: its fd table is its parent's */
	/* pre-dump: its address space ended once the tree ran again (exit or exec) */
	bool mm_gone;
	/* /proc/PID/limits read before the infection (the parasite may raise RLIMIT_NOFILE) */
	char *limits;
	/* core.c: the leader's signal queues and rseq, read in its seize stop (NULL: none) */
	struct leader_reads *leader_pre;
	/* files/fd-seen.c: its fds' links and stats, for its children's (NULL: none kept) */
	struct fd_seen_set *fds_seen;
	/*
	 * mem.c: its /proc/PID/pagemap while its memory is dumped (pagemap_open),
	 * opened once for the scan, the comparison with its parent's and the
	 * guard regions, by the one thread that dumps it
	 */
	int pagemap;
	bool pagemap_open;
};

void fd_seen_free(struct fd_seen_set *s);

/* For stats-dump (image/stats.c): CRIU's counters, times in ns (CLOCK_MONOTONIC). */
struct dump_stats {
	uint64_t freezing_ns; /* seize_tree() */
	uint64_t frozen_start_ns; /* seize_tree() returned: every task frozen */
	uint64_t frozen_ns; /* from then to the tree resumed or killed */
	uint64_t
		prearm_frozen_ns; /* --snapshot: the short freeze to arm before (snapshot-prearm.c) */
	uint64_t memdump_ns, memwrite_ns;
	uint64_t pages_scanned, pages_written, bytes_written; /* pages_written: shmem too */
	uint64_t shpages_scanned, shpages_written; /* shared anonymous memory */
	/* pages not written: unchanged since the parent image (PE_PARENT entries) */
	uint64_t pages_skipped_parent, shpages_skipped_parent;
	uint64_t page_pipes, page_pipe_bufs; /* page transfers and the pipes they used */
};

/*
 * mm-img.c: the FileEntry id of each file mapped so far, by what smaps shows of
 * it (device, inode and path), so that the same library mapped by every task
 * of a tree is opened through map_files once, not once per task.
 */
struct mapped_file_id {
	unsigned int dev_major, dev_minor;
	unsigned long ino;
	char *path;
	uint32_t id;
};

struct mapped_file_ids {
	struct mapped_file_id *v;
	unsigned int nr, cap;
};

struct dump_ctx {
	const struct cr_options *opts;
	int dirfd; /* the image directory */
	struct pstree *tree;
	unsigned int nr_tasks;
	struct dump_task *tasks; /* same order as tree->tasks */
	struct kerndat kd;
	struct shmem_set shm; /* shared anonymous memory of every task */
	struct sysv_shm_set sysv; /* host SysV segments attached by some task (mem/sysv-shm.c) */
	struct file_table *files; /* open file descriptions, deduplicated (files.c) */
	uint32_t next_pages_id; /* ids of pages-%u.img files */
	struct dump_stats stats;
	bool progress; /* stderr is a terminal: print memory progress */
	struct netlock *netlock; /* net-lock.c: the packets of the tree's connections dropped */
	struct img_list images; /* every image written so far, for the inventory (image.c) */
	struct ns_dump_plan ns; /* the namespaces of the tree (ns.c) */
	bool pre_dump; /* the pre-dump command: memory only, copied once the tree runs */
	int prev_dirfd; /* --prev-images-dir, or -1 */
	struct track_set track; /* the write tracking's uffds (mem/track.c) */
	struct ps_conn *ps; /* --page-server: pagemaps and pages go there (page-server.h) */
	bool resumed; /* --snapshot: the tree runs again, ctx->tree is a shadow (dump.c) */
	bool failed; /* the dump failed: the kinds' dump_fini() undo what they made */
	struct snapshot *snap; /* --snapshot: the pages copied once the tree runs (snapshot.h) */
	struct kcmp_set fs_owners; /* fs.c: tasks whose fs context is not their parent's */
	struct mapped_file_ids mapped; /* mm-img.c: file ids of mapped files */
	struct smaps_bg *smaps_bg; /* prepare.c: smaps read in the background */
	struct early_reads *early; /* prepare.c: /proc reads from the seize on */
	struct pages_spare *spare; /* pages-spare.c: room for the first pages image */
	struct vma_fast_setup *vma_fast; /* vma-fast-dump.c: smaps without its walk */
	struct proc_threads *thr; /* thread-facts.c: [i] for tasks[i], or NULL */
	struct thr_prefetch *thr_load; /* thread-facts.c: the iterator loaded in a thread */
	struct par_run *par; /* dump-par.c: the run of dump_tasks_par() under way, or NULL */
	struct lazy_dump *lazy; /* --lazy-pages: the pages left in the tasks (lazy-dump.h) */
	uint64_t lazy_id; /* --lazy-pages: InventoryEntry.lazy_dump.id, random */
};

/*
 * mem/vma-fast-dump.c: for a tree with much anonymous memory, the BPF
 * iterator that stands in for smaps' walk (vma-fast.h) made in a thread
 * (begin), before the seize; ready: joined, and used from then on if it
 * works on this kernel; end: smaps again, the iterator closed.
 */
void vma_fast_begin(struct dump_ctx *ctx);
void vma_fast_ready(struct dump_ctx *ctx);
void vma_fast_end(struct dump_ctx *ctx);

/*
 * thread-facts.c: the threads of each multithreaded process listed with
 * what they share (task-bpf.h) into ctx->thr, once the tree is frozen;
 * nothing when the iterator is not worth it or not there.
 */
void dump_threads_read(struct dump_ctx *ctx);
void dump_threads_fini(struct dump_ctx *ctx);
/* thread-facts.c: before the seize, the iterator loaded in a thread for a root of many threads. */
void dump_threads_prefetch(struct dump_ctx *ctx);
/* thread-facts.c: the threads of @dt's process as listed, or NULL. */
const struct proc_threads *dump_threads_of(const struct dump_ctx *ctx, const struct dump_task *dt);
/*
 * thread-facts.c: the first thread of @t whose @f is not its leader's
 * (told by @p, or else by kcmp() of @kcmp_type), or 0.
 */
pid_t thread_apart(const struct proc_threads *p, const struct seized_task *t, enum thread_field f,
		   int kcmp_type);

/*
 * pages-spare.c: before the freeze, on a tmpfs, room for the first pages
 * image (the root's anonymous memory, allocated: not by the frozen copy);
 * nothing when not worth it or not possible.
 */
void pages_spare_make(struct dump_ctx *ctx);
/*
 * pages-spare.c: the room, if any, linked as @name in ctx->dirfd for the
 * image of @pid's @size bytes: 1 (open it with IMG_KEEP: not truncated), 0
 * without room or when left to the root's image (another task's of under half
 * the room), or -errno. Taken once.
 */
int pages_spare_take(struct dump_ctx *ctx, const char *name, pid_t pid, uint64_t size);
/* pages-spare.c: an image written into the room gives back what lies beyond its end. */
void pages_spare_trim(int fd);
/* pages-spare.c: the room not taken, freed. */
void pages_spare_drop(struct dump_ctx *ctx);

/* mm-img.c: forget every mapped file's id. */
void mapped_file_ids_fini(struct mapped_file_ids *m);

/* core.c: core-PID.img (threads and task state), creds-PID.img. */
/*
 * core.c: what needs the leader in a ptrace stop (its signal queues, the
 * process-wide one, its rseq registration), read before its infection while
 * it sits in its seize stop, for dump_task_core(): once infected, it runs
 * the parasite and had to be interrupted for them. Freed by
 * dump_leader_reads_free().
 */
int dump_leader_prefetch(struct dump_task *dt);
void dump_leader_reads_free(struct leader_reads *lr);
/*
 * prepare.c: what /proc shows of a frozen task (stat, status, limits, maps)
 * read, then the task infected (dt->ctl); @o (NULL: none) for
 * --allow-uprobes.
 */
struct cr_options;
int dump_task_prepare(const struct cr_options *o, struct dump_task *dt);
/* prepare.c: the same for every live task of ctx, see there for @background. */
int dump_prepare_tasks(struct dump_ctx *ctx, bool background);
/*
 * Right after the seize, the /proc reads of every live task that need no
 * ptrace (stat, limits, status, maps) started on a thread of their own, so
 * that they run beside the namespaces' and cgroups' reads;
 * dump_prepare_tasks() takes them. dump_early_reads_stop(): joined (any
 * failure of the dump: no more task is read), nothing else done.
 */
void dump_early_reads_start(struct dump_ctx *ctx);
void dump_early_reads_stop(struct dump_ctx *ctx);
/*
 * prepare.c: the smaps read in the background in every task's dt->vmas. 0
 * or -errno. @failed: the dump failed, nothing more is read (the tasks are
 * cured sooner), nothing is kept.
 */
int dump_vmas_wait(struct dump_ctx *ctx, bool failed);
/*
 * prepare.c: whether the smaps read in the background can be taken task by
 * task (threads read them: dump_vmas_take() does not wait forever).
 */
bool dump_vmas_by_task(const struct dump_ctx *ctx);
/*
 * prepare.c: @dt's smaps read in the background into dt->vmas, once it is
 * in (the other workers of a parallel dump go on meanwhile); 0 for a task
 * not read in the background. dump_vmas_wait() then leaves it alone.
 */
int dump_vmas_take(struct dump_ctx *ctx, struct dump_task *dt);
/* prepare.c: alive or stopped (a zombie is neither). */
bool dump_task_live(const struct dump_task *dt);
int dump_task_core(struct dump_ctx *ctx, struct dump_task *dt);
/* dump-par.c: work for dump_tasks_par(). */
struct par_job {
	/* for each task, on a worker */
	int (*fn)(struct dump_ctx *ctx, struct dump_task *dt);
	/* a task only once its parent (if among them) is done or released (dump_par_release()) */
	bool after_parent;
	/* on the tracer thread meanwhile, before it serves the workers (NULL: none) */
	int (*tracer)(struct dump_ctx *ctx, struct dump_task **dts, unsigned int n);
};
/*
 * dump-par.c: @job for each of the @n tasks @dts on worker threads; the
 * calling thread, the tracer, does @job's part and then serves the workers'
 * ptrace requests. No task is started after one failed (or after @job's
 * tracer part failed); the first failure in @dts' order is returned, or the
 * tracer part's.
 */
int dump_tasks_par(struct dump_ctx *ctx, struct dump_task **dts, unsigned int n,
		   const struct par_job *job);
/*
 * dump-par.c: from @job->fn on a worker, holding the big lock: @dt's children
 * may start while its own steps go on (what they need of it is final). A
 * no-op outside dump_tasks_par().
 */
void dump_par_release(struct dump_ctx *ctx, const struct dump_task *dt);
/* dump-par.c: how many workers dump_tasks_par() starts for @n_tasks. */
unsigned int dump_par_workers(unsigned int n_tasks);
/* mem.c: mm-PID.img (mm-img.c), pagemap-PID.img and its pages image. */
int dump_task_mm(struct dump_ctx *ctx, struct dump_task *dt);
/*
 * mem.c: dump_task_mm() once dump_task_mm_plan() is done: its images and
 * pages; its pagemap closed after (mem_task_pagemap_close()).
 */
int dump_task_mm_pages(struct dump_ctx *ctx, struct dump_task *dt);
/* mem.c: dt->pagemap closed, if open. */
void mem_task_pagemap_close(struct dump_task *dt);
/*
 * mem.c: the scan alone (dt->plan; with a parent image, dt->parent_runs) and,
 * for a pre-dump or --track-mem, arming the write tracking into ctx->track.
 */
int dump_task_mm_plan(struct dump_ctx *ctx, struct dump_task *dt);
/* mem.c: pagemap-PID.img and its pages image from dt->plan (pre-dump: read through /proc). */
int dump_private_pages(struct dump_ctx *ctx, struct dump_task *dt);
/*
 * mem.c: pagemap-PID.img for @runs, whose data is in pages-@pages_id.img with
 * the crc32c @crcs of each run (--snapshot writes the pages itself).
 */
int dump_pagemap(struct dump_ctx *ctx, struct dump_task *dt, uint32_t pages_id,
		 const struct mem_runs *runs, const uint32_t *crcs);
/* mem.c: the same for a lazy dump, the runs @lazy[i] (a hole in the image) without crc32c. */
int dump_pagemap_lazy(struct dump_ctx *ctx, struct dump_task *dt, uint32_t pages_id,
		      const struct mem_runs *runs, const uint32_t *crcs, const bool *lazy);
/* mem.c: once all tasks are done: pagemap-shmem-ID.img and pages of each object. */
int dump_shmem(struct dump_ctx *ctx);
/*
 * sysv-shm.c: check the SysV attaches of @pid (whole attaches only) and note
 * the segments of the host's IPC namespace among them.
 */
int sysv_shm_dump_task(struct dump_ctx *ctx, pid_t pid, const struct vma_list *vmas,
		       const struct mem_plan *plan);
/* sysv-shm.c: after every task: sysv-shm.img and sysv-shm-data.img. */
int dump_sysv_shm(struct dump_ctx *ctx);
/* files.c: fdinfo-PID.img, and files.img / pipes-data.img / ghost-ID.img entries. */
int dump_task_files(struct dump_ctx *ctx, struct dump_task *dt);
/* files.c: the tree frozen, before the first infection: each kind's early work. */
int dump_files_start(struct dump_ctx *ctx);
/* files.c: after every task: each kind's own images, then files.img. */
int dump_files_finish(struct dump_ctx *ctx);
/*
 * files.c: at the end of every dump, the tree still frozen; @resume: it goes
 * on (-R or a failure), so every kind undoes what it did to it (TCP repair).
 */
void dump_files_fini(struct dump_ctx *ctx, bool resume);
void file_table_free(struct file_table *ft);
/*
 * files.c: the FileEntry id of the file behind @fd (an fd of the dumper, e.g.
 * from /proc/PID/map_files/A-B or /proc/PID/exe), added to files.img once per
 * file (deduplicated by dev/ino) with @path as its name and @flags as its open
 * flags. For mm-img.c: file mappings and the exe link. Unlinked files get a ghost
 * image like unlinked open files.
 */
/*
 * files/io_uring.c, for mm-img.c: the FileEntry id of the file of a mapping of
 * an anonymous inode (@path "anon_inode:[...]", inode @dev/@ino): an io_uring
 * instance whose fd was dumped; else refused (logged).
 */
int dump_anon_mapping(struct dump_ctx *ctx, pid_t pid, const char *path, dev_t dev, ino_t ino,
		      uint32_t *id);
int dump_file_by_fd(struct dump_ctx *ctx, pid_t pid, int fd, const char *path, int flags,
		    uint32_t *id);
struct vma_entry;
/*
 * files/packet-ring.c: the FileEntry id of the packet socket whose rings @v
 * ("socket:[INO]") maps, dumped already from an fd of the tree; -EOPNOTSUPP
 * (logged) for another socket or a part of the rings.
 */
int packet_ring_mapping(struct dump_ctx *ctx, pid_t pid, const struct vma_entry *v, uint32_t *id);
/* fs.c: fs-PID.img (cwd, root, umask). */
int dump_task_fs(struct dump_ctx *ctx, struct dump_task *dt);

/* The command: dump the tree at opts->tree into opts->images_dir. */
int cr_dump(const struct cr_options *o);
/* pre-dump: the memory of the tree at opts->tree, copied once it runs again, tracking armed. */
int cr_pre_dump(const struct cr_options *o);

#endif
